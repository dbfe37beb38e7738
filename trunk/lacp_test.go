package trunk

import (
	"net"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/platform/memport"
)

// TestLACPBackToBack cables two LACP trunks port to port and checks that
// every member ends up collecting and distributing on both sides, then
// that a silent partner takes a member out of distribution.
func TestLACPBackToBack(t *testing.T) {
	clk := clock.NewFake()
	mk := func(name string, mac byte) *Trunk {
		tr, err := New(name, Options{
			Protocol: NewLACP(lacp.Config{Timeout: lacp.Fast}), Seed: 1, Clock: clk, TickInterval: -1,
			Logger: quiet, MAC: net.HardwareAddr{0x02, mac, 0, 0, 0, 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	a, b := mk("trunkA", 0xa), mk("trunkB", 0xb)
	var cables [][2]*memport.Port
	for i := 0; i < 2; i++ {
		pa, pb := memport.Pair("a"+string(rune('0'+i)), net.HardwareAddr{0x02, 0xa, 0, 0, 1, byte(i)},
			"b"+string(rune('0'+i)), net.HardwareAddr{0x02, 0xb, 0, 0, 1, byte(i)})
		if err := a.AddPort(pa, PortConfig{}); err != nil {
			t.Fatal(err)
		}
		if err := b.AddPort(pb, PortConfig{}); err != nil {
			t.Fatal(err)
		}
		cables = append(cables, [2]*memport.Port{pa, pb})
	}
	step := func() {
		clk.Advance(100 * time.Millisecond)
		a.Tick()
		b.Tick()
	}
	allDistributing := func(tr *Trunk) bool {
		for _, p := range tr.Ports() {
			if !hasFlag(p.Flags, "collecting") || !hasFlag(p.Flags, "distributing") {
				return false
			}
		}
		return true
	}
	waitFor(t, "both trunks collecting and distributing on every member", func() bool {
		step()
		return allDistributing(a) && allDistributing(b)
	})
	if !a.Active() || !b.Active() {
		t.Errorf("negotiated trunks: Active() = %v, %v, want true, true", a.Active(), b.Active())
	}
	// Cable 1 stops carrying B's LACPDUs to A (B's end goes silent):
	// after the fast timeout A takes that member out of distribution.
	cables[1][1].SetLink(0)
	waitFor(t, "a1 out of distribution after the partner went silent", func() bool {
		step()
		for _, p := range a.Ports() {
			if p.Name == "a1" {
				return !hasFlag(p.Flags, "distributing")
			}
		}
		return false
	})
	for _, p := range a.Ports() {
		if p.Name == "a0" && !hasFlag(p.Flags, "distributing") {
			t.Errorf("a0 stopped distributing though its partner still talks")
		}
	}
}

func hasFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}
