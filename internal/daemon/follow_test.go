package daemon

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

// A renamed member stays a member under its new name, attached, with its
// settings, static entries and (for a trunk port) the trunk's MAC; the
// file names it as it is now called, so running state and file agree.
// The new names are free interfaces of the base, deleted first; another
// interface then takes the old name, and is left alone. (The checks give
// each name its own MAC, so the renamed one takes the new name's.)
func TestFollowRename(t *testing.T) {
	cases := []struct {
		name, old, new string
	}{
		{"bridge member with a static entry", "eth1", "eth7"},
		{"span port", "eth3", "eth8"},
		{"LACP trunk port, trunk given to the host", "eth4", "eth9"},
		{"port of a trunk that is a bridge member", "eth5", "eth7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, sys, path := reconcileBase(t)
			sys.mu.Lock()
			delete(sys.links, c.new)
			own := sys.macs[c.old]
			if _, trunkPort := sys.orig[c.old]; !trunkPort {
				sys.macs[c.old] = sys.macs[c.new]
			}
			mac := sys.macs[c.old]
			sys.mu.Unlock()
			sys.rename(c.old, c.new)
			sys.mu.Lock()
			sys.macs[c.old] = own
			sys.mu.Unlock()
			sys.setLink(c.old, platform.LinkUp)
			checkAgree(t, e, sys, path)
			saved, err := os.ReadFile(path)
			mustDo(t, err)
			if strings.Contains(string(saved), c.old+"\n") || strings.Contains(string(saved), c.old+" ") || !strings.Contains(string(saved), c.new) {
				t.Errorf("file after %s was renamed %s names the old name, or not the new one:\n%s", c.old, c.new, saved)
			}
			if open, _ := sys.counts(c.new); open != 1 {
				t.Errorf("%s (was %s): %d ports open, want 1: a renamed member stays attached", c.new, c.old, open)
			}
			sys.mu.Lock()
			now := sys.macs[c.new]
			sys.mu.Unlock()
			if now.String() != mac.String() {
				t.Errorf("%s (was %s) has MAC %s after the rename, want %s, unchanged", c.new, c.old, now, mac)
			}
		})
	}
}

// A rename that cannot be followed (the new name is configured already)
// leaves the old name absent, as before, and the file as it was.
func TestFollowRenameClash(t *testing.T) {
	e, sys, path := reconcileBase(t)
	before, err := os.ReadFile(path)
	mustDo(t, err)
	sys.setLink("eth2", platform.LinkAbsent)
	sys.rename("eth1", "eth2")
	after, err := os.ReadFile(path)
	mustDo(t, err)
	if string(after) != string(before) {
		t.Errorf("a rename onto a configured name changed the file:\n%s", after)
	}
	show, err := e.PortShow(bg, "eth2")
	mustDo(t, err)
	if show[0].Link != platform.LinkUp.String() {
		t.Errorf("eth2, configured and now present: link %s, want up (attached as a member that appeared)", show[0].Link)
	}
}

// A trunk port renamed gives its own MAC back under its new name when it
// leaves; a trunk port deleted and made again joins again.
func TestFollowTrunkPortLifecycle(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	sys.macs["eth1"] = mac6(0x11)
	sys.macs["eth2"] = mac6(0x22)
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}))
	trunkMAC := e.cfg.Trunk("trunk0").LLAddr

	sys.rename("eth2", "up2")
	if saved, err := config.Load(path); err != nil || saved.Trunk("trunk0").Port("up2") == nil {
		t.Fatalf("file after eth2 was renamed up2: %v, %+v; want up2 a port of trunk0", err, saved)
	}
	sys.setLink("eth1", platform.LinkAbsent)
	if open, guards := sys.counts("eth1"); open != 0 || guards != 0 {
		t.Fatalf("eth1 deleted: %d ports, %d guards open; want none", open, guards)
	}
	sys.setLink("eth1", platform.LinkUp)
	if open, guards := sys.counts("eth1"); open != 1 || guards != 1 || sys.macs["eth1"].String() != trunkMAC.String() {
		t.Fatalf("eth1 made again: %d ports, %d guards, MAC %s; want it a port again with the trunk's MAC %s", open, guards, sys.macs["eth1"], trunkMAC)
	}
	mustDo(t, e.Change(bg, api.TrunkDestroyRequest{Name: "trunk0"}))
	if got := sys.macs["up2"].String(); got != mac6(0x22).String() {
		t.Errorf("up2 (was eth2) after the trunk went: MAC %s, want its own %s", got, mac6(0x22))
	}
}

// An MTU change reopens the member's port for the new MTU, its counters
// going on; the bridge's local TAP and the trunk's TAP take their
// members' smallest MTU.
func TestFollowMTU(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth4", "eth5")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0", Local: true}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth4", "eth5"}}))

	if _, err := sys.far["eth1"].WriteBatch(platform.Batch{Frames: [][]byte{broadcast(1)}}); err != nil {
		t.Fatal(err)
	}
	rx := func() uint64 {
		show, err := e.PortShow(bg, "eth1")
		mustDo(t, err)
		return show[0].RxPackets
	}
	netnstest.Eventually(t, 10*time.Second, "eth1 counted the frame", func() bool { return rx() == 1 })

	localMTU := func() int { return e.graph.bridges["bridge0"].local.MTU() }
	trunkMTU := func() int { return e.graph.trunks["trunk0"].tap.MTU() }
	steps := []struct {
		iface           string
		mtu             int
		local, trunkTap int
	}{
		{"eth1", 9000, 1500, 1500},
		{"eth2", 9000, 9000, 1500},
		{"eth4", 9000, 9000, 1500},
		{"eth5", 9000, 9000, 9000},
		{"eth5", 1500, 9000, 1500},
		{"eth1", 1500, 1500, 1500},
	}
	for _, s := range steps {
		sys.setMTU(s.iface, s.mtu)
		var port platform.Port
		if po := e.graph.bridges["bridge0"].ports[s.iface]; po != nil {
			port = po.port
		} else {
			port = e.graph.trunks["trunk0"].ports[s.iface].port
		}
		if open, guards := sys.counts(s.iface); open != 1 || guards != 1 || port == nil || port.MTU() != s.mtu {
			t.Fatalf("%s at MTU %d: %d ports and %d stack guards open, port %v; want one each, reopened for the MTU", s.iface, s.mtu, open, guards, port)
		}
		if localMTU() != s.local || trunkMTU() != s.trunkTap {
			t.Errorf("after %s went to MTU %d: local TAP %d, trunk TAP %d; want %d and %d", s.iface, s.mtu, localMTU(), trunkMTU(), s.local, s.trunkTap)
		}
	}
	if n := rx(); n != 1 {
		t.Errorf("eth1 after two reopens counts %d frames received, want 1: counters go on across a reopen", n)
	}
}

// mac6 is the MAC 02:00:00:00:00:b.
func mac6(b byte) net.HardwareAddr { return net.HardwareAddr{2, 0, 0, 0, 0, b} }
