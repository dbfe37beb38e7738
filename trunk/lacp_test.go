package trunk

import (
	"errors"
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

// refusingProto is fakeProto that refuses every LACP port priority change.
type refusingProto struct{ fakeProto }

func (*refusingProto) setLACPPortPriority(*Member) error { return errors.New("refused") }

// TestLACPPortPriority checks what LACP port priority a member
// advertises: the default for a zero PortConfig, 0 when 0 is given as
// exact, and a new one at once when SetLACPPortPriority changes it in
// place; a refusal leaves the old one.
func TestLACPPortPriority(t *testing.T) {
	advertised := func(fx *fixture, name string) (uint16, uint16) {
		t.Helper()
		for _, p := range fx.tr.Ports() {
			if p.Name == name {
				st, ok := p.Detail.(lacp.PortState)
				if !ok {
					t.Fatalf("%s: expected an LACP port state, got %T", name, p.Detail)
				}
				return p.LACPPortPriority, st.Actor.PortPriority
			}
		}
		t.Fatalf("%s: not a port", name)
		return 0, 0
	}
	fx := newFixture(t, ProtoLACP, PortConfig{}, PortConfig{ExactLACPPortPriority: true}, PortConfig{LACPPortPriority: 7})
	for _, c := range []struct {
		port string
		want uint16
	}{{"eth0", DefaultLACPPortPriority}, {"eth1", 0}, {"eth2", 7}} {
		if cfg, adv := advertised(fx, c.port); cfg != c.want || adv != c.want {
			t.Errorf("%s added: expected LACP port priority %d configured and advertised, got %d and %d", c.port, c.want, cfg, adv)
		}
	}
	for _, prio := range []uint16{0, 100, DefaultLACPPortPriority} {
		if err := fx.tr.SetLACPPortPriority("eth0", prio); err != nil {
			t.Fatalf("SetLACPPortPriority(eth0, %d): %v", prio, err)
		}
		if cfg, adv := advertised(fx, "eth0"); cfg != prio || adv != prio {
			t.Errorf("eth0 set to %d: expected it configured and advertised, got %d and %d", prio, cfg, adv)
		}
	}
	if err := fx.tr.SetLACPPortPriority("eth9", 1); err == nil || err.Error() != "trunk0: set LACP port priority of eth9: not a port" {
		t.Errorf("SetLACPPortPriority(eth9): expected a not-a-port error, got %v", err)
	}

	// Under a protocol that refuses, the member keeps its priority.
	if err := fx.tr.SetProtocol(&refusingProto{}); err != nil {
		t.Fatal(err)
	}
	err := fx.tr.SetLACPPortPriority("eth2", 1)
	if err == nil || err.Error() != "trunk0: set LACP port priority of eth2: refused" {
		t.Errorf("refused change: expected \"trunk0: set LACP port priority of eth2: refused\", got %v", err)
	}
	for _, p := range fx.tr.Ports() {
		if p.Name == "eth2" && p.LACPPortPriority != 7 {
			t.Errorf("refused change: expected eth2 to keep LACP port priority 7, got %d", p.LACPPortPriority)
		}
	}

	// Under another protocol the priority is kept for when LACP runs.
	if err := fx.tr.SetProtocol(builtin(t, ProtoLoadBalance)); err != nil {
		t.Fatal(err)
	}
	if err := fx.tr.SetLACPPortPriority("eth2", 0); err != nil {
		t.Fatalf("SetLACPPortPriority under loadbalance: %v", err)
	}
	if err := fx.tr.SetProtocol(NewLACP(lacp.Config{})); err != nil {
		t.Fatal(err)
	}
	if cfg, adv := advertised(fx, "eth2"); cfg != 0 || adv != 0 {
		t.Errorf("eth2 set to 0 under loadbalance, then LACP: expected 0 configured and advertised, got %d and %d", cfg, adv)
	}
}
