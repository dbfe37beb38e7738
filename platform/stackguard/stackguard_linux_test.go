package stackguard_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform/stackguard"
)

// childEnv, when set to an interface name, makes the test binary a child
// that guards that interface, prints "ready" and waits to be killed.
const childEnv = "SWCTL_STACKGUARD_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		g, err := stackguard.Attach(0, name)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready", g.Index())
		select {} // hold the guard until killed
	}
	os.Exit(m.Run())
}

// pair is namespace a (eth0 10.91.0.1/24) cabled to namespace b (eth0
// 10.91.0.2/24); b is the guarded member.
type pair struct {
	a, b    *netnstest.NS
	bIndex  int
	bTarget string
}

func newPair(t *testing.T) *pair {
	t.Helper()
	netnstest.Require(t)
	p := &pair{a: netnstest.New(t, "sga"), b: netnstest.New(t, "sgb"), bTarget: "10.91.0.2"}
	netnstest.Veth(t, p.a, "eth0", "02:00:00:00:5a:01", p.b, "eth0", "02:00:00:00:5b:01")
	p.a.Run("ip", "addr", "add", "10.91.0.1/24", "dev", "eth0")
	p.b.Run("ip", "addr", "add", p.bTarget+"/24", "dev", "eth0")
	p.b.Do(func() {
		ifi, err := net.InterfaceByName("eth0")
		if err == nil {
			p.bIndex = ifi.Index
		}
	})
	if p.bIndex == 0 {
		t.Fatal("no eth0 in b")
	}
	p.mustAnswer(t, "before any guard")
	return p
}

// answers pings b from a once, after forgetting b's MAC so that ARP must
// work too. The one-second wait is ping's own reply timeout.
func (p *pair) answers() bool {
	_, _ = p.a.Try("ip", "neigh", "flush", "dev", "eth0")
	_, err := p.a.Try("ping", "-c", "1", "-W", "1", p.bTarget)
	return err == nil
}

func (p *pair) mustAnswer(t *testing.T, when string) {
	t.Helper()
	netnstest.Eventually(t, 10*time.Second, p.bTarget+" does not answer "+when, p.answers)
}

func (p *pair) attach(t *testing.T) *stackguard.Guard {
	t.Helper()
	var g *stackguard.Guard
	var err error
	p.b.Do(func() { g, err = stackguard.Attach(p.bIndex, "eth0") })
	if err != nil {
		t.Fatalf("Attach(%d, eth0): %v", p.bIndex, err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// packetSocket opens an AF_PACKET socket for ethertype proto on b's eth0.
func (p *pair) packetSocket(t *testing.T, ethertype uint16) int {
	t.Helper()
	var fd int
	var err error
	proto := htons(ethertype)
	p.b.Do(func() {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
		if err == nil {
			err = unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: p.bIndex})
		}
	})
	if err != nil {
		t.Fatalf("AF_PACKET socket on b eth0: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// sawARPRequest reports whether fd has received an ARP request for target.
func sawARPRequest(fd int, target net.IP) bool {
	buf := make([]byte, 2048)
	for {
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		if err != nil {
			return false
		}
		f := buf[:n]
		if n >= 42 && binary.BigEndian.Uint16(f[12:]) == 0x0806 &&
			binary.BigEndian.Uint16(f[20:]) == 1 && net.IP(f[38:42]).Equal(target) {
			return true
		}
	}
}

func TestIntegrationGuardSilencesStackNotPacketSockets(t *testing.T) {
	p := newPair(t)
	all := p.packetSocket(t, unix.ETH_P_ALL)
	arp := p.packetSocket(t, unix.ETH_P_ARP)
	g := p.attach(t)
	if g.Name() != "eth0" || g.Index() != p.bIndex {
		t.Errorf("guard is on %s/%d, want eth0/%d", g.Name(), g.Index(), p.bIndex)
	}
	if p.answers() {
		t.Fatalf("%s answered a ping with the guard attached", p.bTarget)
	}
	// The ping asked for b's MAC: an ETH_P_ALL packet socket (a tap,
	// delivered before tcx ingress) saw the request.
	netnstest.Eventually(t, 5*time.Second, "ETH_P_ALL AF_PACKET socket on the guarded eth0 saw no ARP request", func() bool {
		return sawARPRequest(all, net.ParseIP(p.bTarget))
	})
	// A socket bound to one ethertype is delivered after tcx ingress, in
	// the same pass: it saw nothing. The engine must bind ETH_P_ALL.
	if sawARPRequest(arp, net.ParseIP(p.bTarget)) {
		t.Errorf("an ETH_P_ARP packet socket saw the dropped request; expected only ETH_P_ALL sockets to")
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	p.mustAnswer(t, "after Close")
}

func TestIntegrationGuardByNameOnly(t *testing.T) {
	p := newPair(t)
	var g *stackguard.Guard
	var err error
	p.b.Do(func() { g, err = stackguard.Attach(0, "eth0") })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Index() != p.bIndex {
		t.Errorf("Attach(0, eth0) guards index %d, want %d", g.Index(), p.bIndex)
	}
	if p.answers() {
		t.Fatalf("%s answered with the guard attached", p.bTarget)
	}
}

func TestIntegrationAttachErrors(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "sge")
	cases := []struct {
		name  string
		index int
		iface string
		want  []string
	}{
		{"no such index", 99999, "eth9", []string{"eth9", "99999", "no such interface"}},
		{"no such name", 0, "eth9", []string{"eth9", "no such interface"}},
		{"index is another interface", 1, "eth9", []string{"eth9", "index 1 is lo"}},
		{"nothing given", 0, "", []string{"no interface given"}},
	}
	for _, c := range cases {
		var err error
		ns.Do(func() {
			var g *stackguard.Guard
			if g, err = stackguard.Attach(c.index, c.iface); err == nil {
				g.Close()
			}
		})
		if err == nil {
			t.Errorf("%s: Attach(%d, %q): no error", c.name, c.index, c.iface)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
	}
}

// The drop is held by the process: SIGKILL it and the stack answers again.
func TestIntegrationDropVanishesWithProcess(t *testing.T) {
	p := newPair(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := p.b.Command(ctx, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=eth0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("child: %q, %v; want ready", line, err)
	}
	if idx, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready "))); idx != p.bIndex {
		t.Fatalf("child guarded index %d, want %d", idx, p.bIndex)
	}
	if p.answers() {
		t.Fatalf("%s answered while the child held a guard", p.bTarget)
	}
	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	p.mustAnswer(t, "after the guarding process was killed")
}

func TestIntegrationAttachAddrsDropsOnlyThoseAddresses(t *testing.T) {
	p := newPair(t)
	for _, ns := range []*netnstest.NS{p.a, p.b} {
		ns.Run("sysctl", "-qw", "net.ipv6.conf.eth0.disable_ipv6=0")
	}
	p.a.Run("ip", "addr", "add", "fd00:91::1/64", "dev", "eth0", "nodad")
	for _, a := range []string{"10.91.0.3/24", "fd00:91::2/64", "fd00:91::3/64"} {
		p.b.Run("ip", "addr", "add", a, "dev", "eth0", "nodad")
	}
	pings := func(addr string) bool {
		_, err := p.a.Try("ping", "-c", "1", "-W", "1", addr)
		return err == nil
	}
	guarded := []netip.Addr{netip.MustParseAddr("10.91.0.3"), netip.MustParseAddr("fd00:91::3")}
	var g *stackguard.Guard
	var err error
	p.b.Do(func() { g, err = stackguard.AttachAddrs(p.bIndex, "eth0", guarded) })
	if err != nil {
		t.Fatalf("AttachAddrs(%v): %v", guarded, err)
	}
	t.Cleanup(func() { g.Close() })
	for _, a := range []string{"10.91.0.2", "fd00:91::2"} {
		netnstest.Eventually(t, 10*time.Second, a+" (not guarded) does not answer", func() bool { return pings(a) })
	}
	for _, a := range guarded {
		if pings(a.String()) {
			t.Errorf("%s answered a ping; its packets should be dropped before the stack", a)
		}
	}
	g.Close()
	for _, a := range guarded {
		netnstest.Eventually(t, 10*time.Second, a.String()+" does not answer after Close", func() bool { return pings(a.String()) })
	}
}

func TestAttachAddrsRefusesBadLists(t *testing.T) {
	for _, addrs := range [][]netip.Addr{nil, {{}}, {netip.MustParseAddr("::ffff:10.0.0.1")}} {
		if _, err := stackguard.AttachAddrs(1, "eth0", addrs); err == nil {
			t.Errorf("AttachAddrs(%v) succeeded; want an error naming the address list", addrs)
		}
	}
}
