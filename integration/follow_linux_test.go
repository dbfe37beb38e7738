package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// Interfaces follow the kernel (issue 15): renamed members stay members,
// deleted and recreated ones come back, and MTU changes re-size the ports
// and the TAPs.

// rename renames dev in ns to name, as an administrator would: a link is
// renamed down.
func rename(ns *netnstest.NS, dev, name string) {
	ns.Run("ip", "link", "set", dev, "down")
	ns.Run("ip", "link", "set", dev, "name", name)
	ns.Run("ip", "link", "set", name, "up")
}

// sysfs reads /sys/class/net/DEV/ATTR in ns; "" when dev does not exist.
func sysfs(ns *netnstest.NS, dev, attr string) string {
	out, err := ns.Try("cat", "/sys/class/net/"+dev+"/"+attr)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// savedConfig returns the daemon's configuration file.
func (tb *testbed) savedConfig() string {
	tb.t.Helper()
	b, err := os.ReadFile(tb.configPath())
	if err != nil {
		tb.t.Fatal(err)
	}
	return string(b)
}

// trunkPorts returns the names trunk show lists for trunk0, and how many
// of them are up.
func (tb *testbed) trunkPorts() (names []string, up int) {
	for _, p := range tb.trunk("trunk0").Ports {
		names = append(names, p.Name)
		if p.Link == "up" {
			up++
		}
	}
	return names, up
}

func TestIntegrationRenamedBridgeMemberStays(t *testing.T) {
	tb := newTestbed(t, 2)
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	h1, h2 := tb.hosts[0], tb.hosts[1]
	mustPing(t, h1, h2.ip)

	rename(tb.dut, "p1", "uplink1")
	netnstest.Eventually(t, 10*time.Second, "bridge0's members to be uplink1 and p2", func() bool {
		m := tb.members("bridge0")
		return len(m) == 2 && has(m, "uplink1") && has(m, "p2")
	})
	netnstest.Eventually(t, 10*time.Second, "uplink1 attached and up", func() bool { return tb.port("uplink1").Link == "up" })
	if cfg := tb.savedConfig(); !strings.Contains(cfg, "uplink1") || strings.Contains(cfg, "p1") {
		t.Errorf("configuration after p1 was renamed uplink1 should name uplink1 only:\n%s", cfg)
	}
	mustPing(t, h1, h2.ip)
	if promiscuity(t, tb.dut, "uplink1") != 1 {
		t.Errorf("uplink1: promiscuity %d, want 1 (one membership, the reopened port's)", promiscuity(t, tb.dut, "uplink1"))
	}

	// The next start finds it under its new name.
	tb.stop(syscall.SIGTERM)
	tb.start()
	netnstest.Eventually(t, 10*time.Second, "uplink1 attached after a restart", func() bool { return tb.port("uplink1").Link == "up" })
	mustPing(t, h1, h2.ip)
}

// A renamed trunk port stays a port with the trunk's MAC, and gets its
// own MAC back under its new name when the daemon stops, and from
// recover after a crash (defect 1: it kept the trunk's MAC).
func TestIntegrationRenamedTrunkPortStays(t *testing.T) {
	tp := newTrunkPair(t, 2)
	ipA, ipB := tp.createTrunks(t)
	mustPingNS(t, tp.a.dut, ipB)
	a := tp.a.dut
	own2, trunkMAC := fmt.Sprintf("02:a0:00:%02x:00:02", tp.a.subnet), sysfs(a, "a1", "address")
	if got := sysfs(a, "a2", "address"); got != trunkMAC {
		t.Fatalf("a2 has %s, want the trunk's %s (the lladdr policy)", got, trunkMAC)
	}

	rename(a, "a2", "lag0b")
	netnstest.Eventually(t, 10*time.Second, "trunk0's ports to be a1 and lag0b, both up", func() bool {
		names, up := tp.a.trunkPorts()
		return len(names) == 2 && has(names, "lag0b") && up == 2
	})
	if got := sysfs(a, "lag0b", "address"); got != trunkMAC {
		t.Errorf("lag0b (was a2) has MAC %s, want the trunk's %s", got, trunkMAC)
	}
	if cfg := tp.a.savedConfig(); !strings.Contains(cfg, "lag0b") || strings.Contains(cfg, "a2") {
		t.Errorf("configuration after a2 was renamed lag0b should name lag0b only:\n%s", cfg)
	}
	// Traffic over the renamed port alone.
	tp.b.dut.Run("ip", "link", "set", "b1", "down")
	mustPingNS(t, tp.b.dut, ipA)
	tp.b.dut.Run("ip", "link", "set", "b1", "up")

	tp.a.stop(syscall.SIGTERM)
	if got := sysfs(a, "lag0b", "address"); got != own2 {
		t.Errorf("after SIGTERM: lag0b (was a2) has %s, want its own %s back", got, own2)
	}

	tp.a.start()
	netnstest.Eventually(t, 10*time.Second, "lag0b a port with the trunk's MAC after a restart", func() bool {
		return sysfs(a, "lag0b", "address") == trunkMAC
	})
	tp.a.stop(syscall.SIGKILL)
	rename(a, "lag0b", "lag0c")
	out, err := a.Try(swctlBin, "recover", "--state-dir", tp.a.dir+"/state")
	if err != nil {
		t.Fatalf("swctl recover: %v\n%s", err, out)
	}
	if got := sysfs(a, "lag0c", "address"); got != own2 {
		t.Errorf("after SIGKILL, a rename and recover: lag0c has %s, want its own %s\n%s", got, own2, out)
	}

	// The same crash, then the next start recovers it.
	rename(a, "lag0c", "lag0b")
	tp.a.start()
	netnstest.Eventually(t, 10*time.Second, "lag0b a port with the trunk's MAC again", func() bool {
		return sysfs(a, "lag0b", "address") == trunkMAC
	})
	tp.a.stop(syscall.SIGKILL)
	rename(a, "lag0b", "lag0d")
	tp.a.start()
	if got := sysfs(a, "lag0d", "address"); got != own2 {
		t.Errorf("after SIGKILL, a rename and a restart: lag0d has %s, want its own %s", got, own2)
	}
}

// A trunk port deleted and made again joins again, with the trunk's MAC,
// as a bridge member does.
func TestIntegrationRecreatedTrunkPortRejoins(t *testing.T) {
	tp := newTrunkPair(t, 2)
	_, ipB := tp.createTrunks(t)
	a := tp.a.dut
	trunkMAC := sysfs(a, "a1", "address")
	own2 := fmt.Sprintf("02:a0:00:%02x:00:02", tp.a.subnet)

	a.Run("ip", "link", "del", "a2")
	netnstest.Eventually(t, 10*time.Second, "a2 shown absent", func() bool {
		_, up := tp.a.trunkPorts()
		return up == 1
	})
	netnstest.Veth(t, a, "a2", own2, tp.b.dut, "b2", fmt.Sprintf("02:b0:00:%02x:00:02", tp.a.subnet))
	netnstest.Eventually(t, 10*time.Second, "a2 a port again, up, with the trunk's MAC", func() bool {
		_, up := tp.a.trunkPorts()
		return up == 2 && sysfs(a, "a2", "address") == trunkMAC
	})
	tp.a.dut.Run("ip", "link", "set", "a1", "down")
	mustPingNS(t, a, ipB)
}

// setMTU sets the MTU of each dev in ns.
func setMTU(ns *netnstest.NS, mtu int, devs ...string) {
	for _, d := range devs {
		ns.Run("ip", "link", "set", d, "mtu", strconv.Itoa(mtu))
	}
}

// pingDF reports whether one ping of size bytes, not fragmented, from ns
// to ip is answered.
func pingDF(ns *netnstest.NS, ip string, size int) bool {
	_, got, _ := nsPing(ns, ip, "-c", "1", "-M", "do", "-s", strconv.Itoa(size))
	return got == 1
}

// Raising every end to 9000 carries 8000-byte pings through the bridge
// without re-adding members; the local TAP follows the smallest member.
func TestIntegrationBridgeFollowsMTU(t *testing.T) {
	tb := newTestbed(t, 2)
	tb.start()
	tb.swctl("bridge", "create", "bridge0", "--local")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	h1, h2 := tb.hosts[0], tb.hosts[1]
	mustPing(t, h1, h2.ip)

	setMTU(h1.NS, 9000, "eth0")
	setMTU(h2.NS, 9000, "eth0")
	setMTU(tb.dut, 9000, "p1")
	netnstest.Eventually(t, 10*time.Second, "p1 reopened at 9000, the local TAP still 1500 (p2 is)", func() bool {
		return sysfs(tb.dut, "bridge0", "mtu") == "1500" && tb.port("p1").Link == "up"
	})
	setMTU(tb.dut, 9000, "p2")
	netnstest.Eventually(t, 10*time.Second, "the local TAP at 9000", func() bool { return sysfs(tb.dut, "bridge0", "mtu") == "9000" })
	netnstest.Eventually(t, 10*time.Second, "ping -M do -s 8000 h1 -> h2 through the bridge", func() bool {
		return pingDF(h1.NS, h2.ip, 8000)
	})
	setMTU(tb.dut, 1500, "p2")
	netnstest.Eventually(t, 10*time.Second, "the local TAP back at 1500", func() bool { return sysfs(tb.dut, "bridge0", "mtu") == "1500" })
}

// Raising every link to 9000 carries 8000-byte pings over the trunk and
// raises the trunk's TAP to 9000; one link back at 1500 brings it down.
func TestIntegrationTrunkFollowsMTU(t *testing.T) {
	tp := newTrunkPair(t, 2)
	_, ipB := tp.createTrunks(t, "--proto", "roundrobin")
	mustPingNS(t, tp.a.dut, ipB)

	setMTU(tp.a.dut, 9000, "a1", "a2")
	setMTU(tp.b.dut, 9000, "b1", "b2")
	for _, s := range []*testbed{tp.a, tp.b} {
		netnstest.Eventually(t, 10*time.Second, s.dut.Name+": trunk0's TAP at 9000", func() bool { return sysfs(s.dut, "trunk0", "mtu") == "9000" })
	}
	netnstest.Eventually(t, 10*time.Second, "ping -M do -s 8000 over the trunk", func() bool {
		return pingDF(tp.a.dut, ipB, 8000)
	})
	// Several in a row: round robin takes both links.
	if _, got, out := nsPing(tp.a.dut, ipB, "-c", "4", "-i", "0.2", "-M", "do", "-s", "8000"); got != 4 {
		t.Errorf("4 pings of 8000 bytes over both links: %d answered\n%s", got, out)
	}
	setMTU(tp.a.dut, 1500, "a2")
	netnstest.Eventually(t, 10*time.Second, "A's trunk0 TAP back at 1500", func() bool { return sysfs(tp.a.dut, "trunk0", "mtu") == "1500" })
}
