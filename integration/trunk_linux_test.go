package integration

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// trunkPair is two systems, A and B, each a namespace running its own swctl
// daemon, cabled by n veth pairs a<i> <-> b<i>.
type trunkPair struct {
	a, b *testbed
	n    int
}

func newTrunkPair(t *testing.T, n int) *trunkPair {
	tp := &trunkPair{a: newTestbed(t, 0), b: newTestbed(t, 0), n: n}
	for i := 1; i <= n; i++ {
		netnstest.Veth(t, tp.a.dut, fmt.Sprintf("a%d", i), fmt.Sprintf("02:a0:00:%02x:00:%02x", tp.a.subnet, i),
			tp.b.dut, fmt.Sprintf("b%d", i), fmt.Sprintf("02:b0:00:%02x:00:%02x", tp.a.subnet, i))
	}
	tp.a.start()
	tp.b.start()
	return tp
}

func (tp *trunkPair) ports(side string) []string {
	var ps []string
	for i := 1; i <= tp.n; i++ {
		ps = append(ps, "--port", fmt.Sprintf("%s%d", side, i))
	}
	return ps
}

// createTrunks makes trunk0 on both sides with args, puts an address on
// each TAP (offloads off, as for hosts) and returns B's address.
func (tp *trunkPair) createTrunks(t *testing.T, args ...string) (ipA, ipB string) {
	t.Helper()
	tp.a.swctl(append(append([]string{"trunk", "create", "trunk0"}, tp.ports("a")...), args...)...)
	tp.b.swctl(append(append([]string{"trunk", "create", "trunk0"}, tp.ports("b")...), args...)...)
	ipA = fmt.Sprintf("10.67.%d.1", tp.a.subnet)
	ipB = fmt.Sprintf("10.67.%d.2", tp.a.subnet)
	for _, s := range []struct {
		tb *testbed
		ip string
	}{{tp.a, ipA}, {tp.b, ipB}} {
		s.tb.dut.Run("ip", "addr", "add", s.ip+"/24", "dev", "trunk0")
		s.tb.dut.Run("ethtool", "-K", "trunk0", "tx", "off", "gso", "off")
	}
	return ipA, ipB
}

// trunkInfo is the part of `trunk show -o json` the tests read.
type trunkInfo struct {
	Name   string `json:"name"`
	Proto  string `json:"proto"`
	LLAddr string `json:"lladdr"`
	Active bool   `json:"active"`
	Ports  []struct {
		Name  string   `json:"name"`
		Link  string   `json:"link"`
		Flags []string `json:"flags"`
		LACP  *struct {
			Actor   struct{ State []string } `json:"actor"`
			Partner struct {
				System string   `json:"system"`
				State  []string `json:"state"`
			} `json:"partner"`
		} `json:"lacp"`
	} `json:"ports"`
}

func (tb *testbed) trunk(name string) trunkInfo {
	tb.t.Helper()
	var ts []trunkInfo
	tb.swctlJSON(&ts, "trunk", "show", name)
	return ts[0]
}

// distributing reports whether trunk0 has n ports, each collecting and
// distributing.
func (tb *testbed) distributing(n int) bool {
	ti := tb.trunk("trunk0")
	for _, p := range ti.Ports {
		if !has(p.Flags, "collecting") || !has(p.Flags, "distributing") {
			return false
		}
	}
	return len(ti.Ports) == n
}

// portFlags returns the flags of trunk port p.
func (ti trunkInfo) portFlags(p string) []string {
	for _, x := range ti.Ports {
		if x.Name == p {
			return x.Flags
		}
	}
	return nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nsPing pings from a namespace and returns how many replies came back.
func nsPing(ns *netnstest.NS, ip string, args ...string) (sent, received int, out string) {
	out, _ = ns.Try(append([]string{"ping", "-W", "1"}, append(args, ip)...)...)
	m := regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`).FindStringSubmatch(out)
	if m != nil {
		sent, _ = strconv.Atoi(m[1])
		received, _ = strconv.Atoi(m[2])
	}
	return sent, received, out
}

func TestIntegrationTrunkEveryProtocolCarriesTraffic(t *testing.T) {
	for _, proto := range []string{"failover", "roundrobin", "loadbalance", "broadcast", "lacp"} {
		t.Run(proto, func(t *testing.T) {
			tp := newTrunkPair(t, 2)
			args := []string{"--proto", proto}
			if proto == "lacp" {
				args = append(args, "--lacp-timeout", "fast")
			}
			_, ipB := tp.createTrunks(t, args...)
			netnstest.Eventually(t, 15*time.Second, "trunk0 A -> B answered over "+proto, func() bool {
				_, rcv, _ := nsPing(tp.a.dut, ipB, "-c", "2", "-i", "0.2")
				return rcv > 0
			})
			ti := tp.a.trunk("trunk0")
			if ti.Proto != proto || !ti.Active {
				t.Errorf("trunk show: proto %q active %v, want %q and active", ti.Proto, ti.Active, proto)
			}
		})
	}
}

func TestIntegrationTrunkFailover(t *testing.T) {
	tp := newTrunkPair(t, 2)
	_, ipB := tp.createTrunks(t, "--proto", "failover")
	mustPingNS(t, tp.a.dut, ipB)
	ti := tp.a.trunk("trunk0")
	if !has(ti.portFlags("a1"), "master") || !has(ti.portFlags("a1"), "active") || has(ti.portFlags("a2"), "active") {
		t.Fatalf("failover before the cut: want a1 master+active, a2 not active; got %+v", ti.Ports)
	}
	// A flood ping runs while the active port loses its link.
	done := make(chan [3]any, 1)
	go func() {
		s, r, out := nsPing(tp.a.dut, ipB, "-c", "1500", "-i", "0.002")
		done <- [3]any{s, r, out}
	}()
	time.Sleep(300 * time.Millisecond)
	tp.a.dut.Run("ip", "link", "set", "a1", "down")
	netnstest.Eventually(t, 5*time.Second, "a2 takes over", func() bool {
		return has(tp.a.trunk("trunk0").portFlags("a2"), "active")
	})
	res := <-done
	sent, rcv := res[0].(int), res[1].(int)
	t.Logf("failover while a 2 ms ping ran: %d sent, %d received, %d lost", sent, rcv, sent-rcv)
	if rcv == 0 {
		t.Fatalf("no replies at all across the failover:\n%s", res[2])
	}
	mustPingNS(t, tp.a.dut, ipB)
	// The primary comes back and takes over again.
	tp.a.dut.Run("ip", "link", "set", "a1", "up")
	netnstest.Eventually(t, 5*time.Second, "a1 active again", func() bool {
		return has(tp.a.trunk("trunk0").portFlags("a1"), "active")
	})
	mustPingNS(t, tp.a.dut, ipB)
}

func mustPingNS(t *testing.T, ns *netnstest.NS, ip string) {
	t.Helper()
	netnstest.Eventually(t, 10*time.Second, fmt.Sprintf("ping %s from %s", ip, ns.Name), func() bool {
		_, r, _ := nsPing(ns, ip, "-c", "2", "-i", "0.2")
		return r > 0
	})
}

func TestIntegrationTrunkLACPNegotiatesAndExpires(t *testing.T) {
	tp := newTrunkPair(t, 2)
	start := time.Now()
	_, ipB := tp.createTrunks(t, "--proto", "lacp", "--lacp-timeout", "fast")
	netnstest.Eventually(t, 5*time.Second, "LACP collecting+distributing on every port of both ends", func() bool {
		return tp.a.distributing(2) && tp.b.distributing(2)
	})
	t.Logf("LACP reached collecting+distributing on both ends in %v", time.Since(start).Round(10*time.Millisecond))
	ti := tp.a.trunk("trunk0")
	if ti.Ports[0].LACP == nil || ti.Ports[0].LACP.Partner.System == "" {
		t.Errorf("trunk show: want LACP actor and partner shown, got %+v", ti.Ports[0])
	}
	mustPingNS(t, tp.a.dut, ipB)

	// B stops answering: A takes its ports out of distribution after the
	// fast timeout (3 s).
	tp.b.daemon.Process.Signal(syscall.SIGSTOP)
	defer tp.b.daemon.Process.Signal(syscall.SIGCONT)
	netnstest.Eventually(t, 10*time.Second, "A stops distributing once B is silent", func() bool {
		for _, p := range tp.a.trunk("trunk0").Ports {
			if has(p.Flags, "distributing") {
				return false
			}
		}
		return true
	})
	tp.b.daemon.Process.Signal(syscall.SIGCONT)
	netnstest.Eventually(t, 10*time.Second, "LACP back after B resumes", func() bool {
		return tp.a.distributing(2) && tp.b.distributing(2)
	})
}

func TestIntegrationTrunkLLAddrPolicyIsUndone(t *testing.T) {
	tp := newTrunkPair(t, 2)
	macOf := func(dev string) string {
		return strings.TrimSpace(tp.a.dut.Run("cat", "/sys/class/net/"+dev+"/address"))
	}
	own1, own2 := macOf("a1"), macOf("a2")
	tp.a.swctl("trunk", "create", "trunk0", "--port", "a1", "--port", "a2")
	ti := tp.a.trunk("trunk0")
	if ti.LLAddr != own1 || macOf("a2") != own1 || macOf("trunk0") != own1 {
		t.Fatalf("lladdr policy: trunk %s, a2 %s, TAP %s; want all %s (a1's MAC)", ti.LLAddr, macOf("a2"), macOf("trunk0"), own1)
	}
	if got := promiscuity(t, tp.a.dut, "a2"); got != 0 {
		t.Errorf("lladdr policy: a2 promiscuity %d, want 0", got)
	}
	tp.a.swctl("trunk", "del", "trunk0", "a2")
	if got := macOf("a2"); got != own2 {
		t.Errorf("after trunk del: a2 has %s, want its own %s back", got, own2)
	}
	tp.a.swctl("trunk", "add", "trunk0", "a2")
	if got := macOf("a2"); got != own1 {
		t.Fatalf("after trunk add: a2 has %s, want the trunk's %s", got, own1)
	}
	// SIGTERM: the daemon puts it back.
	tp.a.stop(syscall.SIGTERM)
	if got := macOf("a2"); got != own2 {
		t.Errorf("after SIGTERM: a2 has %s, want %s", got, own2)
	}
	// SIGKILL: the MAC stays changed until recover (or the next start).
	tp.a.start()
	netnstest.Eventually(t, 5*time.Second, "a2 carries the trunk's MAC again after restart", func() bool { return macOf("a2") == own1 })
	tp.a.stop(syscall.SIGKILL)
	if got := macOf("a2"); got != own1 {
		t.Fatalf("after SIGKILL: a2 has %s; the test expects the change to survive the crash", got)
	}
	out, err := tp.a.dut.Try(swctlBin, "recover", "--state-dir", tp.a.dir+"/state")
	if err != nil {
		t.Fatalf("swctl recover: %v\n%s", err, out)
	}
	if got := macOf("a2"); got != own2 {
		t.Errorf("after SIGKILL and recover: a2 has %s, want %s\n%s", got, own2, out)
	}
}

func TestIntegrationTrunkPromiscPolicy(t *testing.T) {
	tp := newTrunkPair(t, 2)
	own2 := strings.TrimSpace(tp.a.dut.Run("cat", "/sys/class/net/a2/address"))
	tp.a.swctl("trunk", "create", "trunk0", "--port", "a1", "--port", "a2", "--promisc")
	if got := strings.TrimSpace(tp.a.dut.Run("cat", "/sys/class/net/a2/address")); got != own2 {
		t.Errorf("--promisc: a2's MAC changed to %s", got)
	}
	if got := promiscuity(t, tp.a.dut, "a2"); got != 1 {
		t.Errorf("--promisc: a2 promiscuity %d, want 1", got)
	}
	tp.a.stop(syscall.SIGKILL)
	netnstest.Eventually(t, 5*time.Second, "promiscuity dropped with the killed daemon", func() bool {
		return promiscuity(t, tp.a.dut, "a2") == 0
	})
}

func TestIntegrationTrunkAsBridgeMember(t *testing.T) {
	tp := newTrunkPair(t, 2)
	h1 := tp.a.addHost(1) // h1:eth0 <-> A:p1
	_, ipB := tp.createTrunks(t, "--proto", "loadbalance")
	tp.a.swctl("bridge", "create", "bridge0")
	tp.a.swctl("bridge", "add", "bridge0", "trunk0", "p1")
	netnstest.Eventually(t, 5*time.Second, "trunk0's TAP removed while it is a bridge member", func() bool {
		_, err := tp.a.dut.Try("ip", "link", "show", "trunk0")
		return err != nil
	})
	// h1 is in B's trunk0 subnet: reach it across A's bridge and trunk.
	h1.Run("ip", "addr", "flush", "dev", "eth0")
	h1.Run("ip", "addr", "add", fmt.Sprintf("10.67.%d.9/24", tp.a.subnet), "dev", "eth0")
	mustPing(t, h1, ipB)
	tp.a.swctl("bridge", "del", "bridge0", "trunk0")
	netnstest.Eventually(t, 5*time.Second, "trunk0's TAP back after it left the bridge", func() bool {
		_, err := tp.a.dut.Try("ip", "link", "show", "trunk0")
		return err == nil
	})
}

func TestIntegrationTrunkRefusals(t *testing.T) {
	tp := newTrunkPair(t, 2)
	tp.a.addHost(1)
	tp.a.swctl("bridge", "create", "bridge0")
	tp.a.swctl("bridge", "add", "bridge0", "p1")
	tp.a.swctl("trunk", "create", "trunk0", "--port", "a1")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"trunk", "add", "trunk0", "p1"}, "already a port of bridge bridge0"},
		{[]string{"trunk", "create", "trunk1", "--port", "a1"}, "already a port of trunk trunk0"},
		{[]string{"bridge", "add", "bridge0", "a1"}, "already a port of trunk trunk0"},
		{[]string{"trunk", "add", "trunk0", "nosuch0"}, "trunk0: add nosuch0: no such interface"},
		{[]string{"trunk", "create", "bridge0"}, "bridge0"},
	}
	for _, c := range cases {
		_, err := tp.a.try(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("swctl %s: want an error containing %q, got %v", strings.Join(c.args, " "), c.want, err)
		}
	}
}

var _ = exec.Command

// TestIntegrationTrunkLACPLatePassivePartner is the late-partner case of
// the trunk issue: A, active and fast, runs alone long enough for its
// ports to default (we wait 7 s); B, passive, is created after. With the
// default partner asking for fast LACPDUs, A keeps sending every second,
// so B is heard and both ends distribute within 5 s of B's creation
// (before, A sent every 30 s once defaulted: 32 s were seen).
func TestIntegrationTrunkLACPLatePassivePartner(t *testing.T) {
	tp := newTrunkPair(t, 2)
	tp.a.swctl(append(append([]string{"trunk", "create", "trunk0"}, tp.ports("a")...), "--proto", "lacp", "--lacp-timeout", "fast")...)
	netnstest.Eventually(t, 15*time.Second, "A's ports defaulted with no partner", func() bool {
		ti := tp.a.trunk("trunk0")
		for _, p := range ti.Ports {
			if p.LACP == nil || !has(p.LACP.Actor.State, "defaulted") {
				return false
			}
		}
		return len(ti.Ports) == 2
	})
	start := time.Now()
	tp.b.swctl(append(append([]string{"trunk", "create", "trunk0"}, tp.ports("b")...), "--proto", "lacp", "--lacp-mode", "passive", "--lacp-timeout", "fast")...)
	netnstest.Eventually(t, 5*time.Second, "both ends distributing within 5 s of the passive partner's creation", func() bool {
		return tp.a.distributing(2) && tp.b.distributing(2)
	})
	t.Logf("late passive partner distributing after %v", time.Since(start).Round(10*time.Millisecond))
}
