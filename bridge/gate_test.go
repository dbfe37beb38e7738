package bridge

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// Port states of a testGate, as the spanning tree names them.
const (
	discarding uint32 = iota
	learning
	forwarding
)

// testGate is a Gate whose state the test sets.
type testGate struct {
	// state is discarding, learning or forwarding. Atomic.
	state atomic.Uint32
}

func newTestGate(state uint32) *testGate {
	g := &testGate{}
	g.state.Store(state)
	return g
}

func (g *testGate) Learning() bool   { return g.state.Load() != discarding }
func (g *testGate) Forwarding() bool { return g.state.Load() == forwarding }

// setGate gives member name the gate g, or none when g is nil.
func (fx *fixture) setGate(name string, g *testGate) {
	fx.t.Helper()
	var gate Gate
	if g != nil {
		gate = g
	}
	if err := fx.b.SetPortGate(name, gate); err != nil {
		fx.t.Fatalf("SetPortGate(%s) = %v, want nil", name, err)
	}
}

// TestGateIngress checks what a member's gate does to the frames it
// receives: a discarding member neither learns nor forwards, a learning
// one learns only, a forwarding one (or one without a gate) does both.
func TestGateIngress(t *testing.T) {
	tests := []struct {
		name      string
		gate      *testGate
		flags     PortFlags
		wantTo    []string
		wantLearn bool
		counter   string
	}{
		{"no gate", nil, DefaultPortFlags(), []string{"b", "c"}, true, "Flooded"},
		{"forwarding", newTestGate(forwarding), DefaultPortFlags(), []string{"b", "c"}, true, "Flooded"},
		{"learning", newTestGate(learning), DefaultPortFlags(), nil, true, "DroppedDiscarding"},
		{"discarding", newTestGate(discarding), DefaultPortFlags(), nil, false, "DroppedDiscarding"},
		{"learning, member flag Learning off", newTestGate(learning), PortFlags{Discover: true}, nil, false, "DroppedDiscarding"},
		{"forwarding, member flag Learning off", newTestGate(forwarding), PortFlags{Discover: true}, []string{"b", "c"}, false, "Flooded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "b", "c")
			fx.add("a", tc.flags, true)
			fx.setGate("a", tc.gate)
			f := ip4(frame.Broadcast, stA)
			before := fx.b.Stats()
			fx.send("a", f)
			if got := fx.receivers(f); !slices.Equal(got, tc.wantTo) {
				t.Errorf("frame went to %v, want %v", got, tc.wantTo)
			}
			wantDelta(t, "after the frame", before, fx.b.Stats(), map[string]uint64{tc.counter: 1})
			learned := len(fx.b.Addrs()) == 1
			if learned != tc.wantLearn {
				t.Errorf("source learned = %v, want %v (table %s)", learned, tc.wantLearn, addrsString(fx.b.Addrs()))
			}
		})
	}
}

// TestGateEgress checks that a member whose gate does not forward gets no
// copies, flooded or known unicast, and that each is counted.
func TestGateEgress(t *testing.T) {
	for _, state := range []uint32{discarding, learning} {
		fx := newFixture(t, "a", "b", "c")
		if err := fx.b.AddStatic(stC, 0, "c"); err != nil {
			t.Fatal(err)
		}
		fx.setGate("c", newTestGate(state))
		before := fx.b.Stats()
		flood := ip4(frame.Broadcast, stA)
		fx.send("a", flood)
		if got, want := fx.receivers(flood), []string{"b"}; !slices.Equal(got, want) {
			t.Errorf("state %d: broadcast went to %v, want %v", state, got, want)
		}
		unicast := ip4(stC, stA)
		fx.send("a", unicast)
		if got := fx.receivers(unicast); len(got) != 0 {
			t.Errorf("state %d: unicast to a station on the blocked member went to %v, want nowhere", state, got)
		}
		wantDelta(t, "after a broadcast and a unicast", before, fx.b.Stats(), map[string]uint64{"DroppedDiscardingOut": 2, "Sent": 1})
	}
}

// TestGateChanges checks that a new gate state, and taking the gate away,
// apply to the next frames.
func TestGateChanges(t *testing.T) {
	fx := newFixture(t, "a", "b")
	g := newTestGate(discarding)
	fx.setGate("b", g)
	f := ip4(frame.Broadcast, stA)
	for _, step := range []struct {
		name   string
		change func()
		wantTo []string
	}{
		{"discarding", func() {}, nil},
		{"forwarding", func() { g.state.Store(forwarding) }, []string{"b"}},
		{"discarding again", func() { g.state.Store(discarding) }, nil},
		{"gate removed", func() { fx.setGate("b", nil) }, []string{"b"}},
	} {
		step.change()
		fx.send("a", f)
		if got := fx.receivers(f); !slices.Equal(got, step.wantTo) {
			t.Errorf("%s: frame went to %v, want %v", step.name, got, step.wantTo)
		}
	}
}

// TestGateKeepsLinkLocal checks that a discarding member still hands
// BPDUs to its link-local handler while a spanning tree runs, and that
// it forwards none of the groups the forward mask lets through.
func TestGateKeepsLinkLocal(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.b.SetSpanningTree(true)
	mustForwardMask(fx, 1<<0x0e)
	fx.setGate("a", newTestGate(discarding))
	var got [][]byte
	if err := fx.b.SetLinkLocalHandler("a", func(f []byte) { got = append(got, f) }); err != nil {
		t.Fatal(err)
	}
	bpdu := eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 39, 60)
	lldp := eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0x0e}, stA, 0x88cc, 60)
	before := fx.b.Stats()
	fx.send("a", bpdu, lldp)
	if len(got) != 1 || !slices.Equal(got[0], bpdu) {
		t.Errorf("link-local handler got %x, want the BPDU only", got)
	}
	if who := fx.receivers(lldp); len(who) != 0 {
		t.Errorf("LLDP from a discarding member went to %v, want nowhere", who)
	}
	wantDelta(t, "after a BPDU and an LLDP frame", before, fx.b.Stats(), map[string]uint64{"DroppedLinkLocal": 1, "DroppedDiscarding": 1})
}

// TestSetPortGateRefuses checks the errors of SetPortGate.
func TestSetPortGateRefuses(t *testing.T) {
	fx := newFixture(t, "a")
	if err := fx.b.AddSpan(newTestPort("s0", false)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"eth9", "bridge0: set gate of eth9: not a member"},
		{"s0", "bridge0: set gate of s0: not a member"},
	} {
		if err := fx.b.SetPortGate(c.name, newTestGate(forwarding)); err == nil || err.Error() != c.want {
			t.Errorf("SetPortGate(%s) = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestForwardWithGatesAllocatesNothing checks that forwarding between
// members that all have gates allocates nothing, in every state.
func TestForwardWithGatesAllocatesNothing(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout}, false, "a", "b", "c")
	gates := map[string]*testGate{}
	for _, n := range []string{"a", "b", "c"} {
		gates[n] = newTestGate(forwarding)
		fx.setGate(n, gates[n])
	}
	fx.send("b", ip4(stA, stB))
	a, now := fx.b.Member("a"), fx.clk.Now()
	unicast := batchOf(64, ip4(stB, stA))
	flood := batchOf(64, ip4(frame.Broadcast, stA))
	for _, tc := range []struct {
		name  string
		state uint32
		batch [][]byte
	}{
		{"known unicast, forwarding", forwarding, unicast},
		{"flood, forwarding", forwarding, flood},
		{"known unicast, ingress learning", learning, unicast},
		{"flood, ingress discarding", discarding, flood},
	} {
		gates["a"].state.Store(tc.state)
		run := func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: tc.batch}, now) }
		run()
		if got := testing.AllocsPerRun(100, run); got != 0 {
			t.Errorf("%s: %v allocations per batch, want 0", tc.name, got)
		}
	}
}

// BenchmarkForwardUnicastGated is BenchmarkForwardUnicast with both
// members behind forwarding gates, as with the spanning tree on.
func BenchmarkForwardUnicastGated(b *testing.B) {
	benchForward(b, 2, 0, func(fx *fixture) [][]byte {
		fx.setGate("a", newTestGate(forwarding))
		fx.setGate("b", newTestGate(forwarding))
		fx.send("b", ip4(stA, stB))
		return batchOf(64, ip4(stB, stA))
	})
}

// TestAddGatedPort checks that a member added with a discarding gate and
// a handler forwards nothing from its first frame on, and hands its
// BPDUs to the handler.
func TestAddGatedPort(t *testing.T) {
	fx := newFixture(t, "b")
	fx.b.SetSpanningTree(true)
	p := newTestPort("a", true)
	bpdus := make(chan []byte, 1)
	if err := fx.b.AddGatedPort(p, DefaultPortFlags(), newTestGate(discarding), func(f []byte) { bpdus <- slices.Clone(f) }); err != nil {
		t.Fatalf("AddGatedPort = %v, want nil", err)
	}
	bpdu := eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 39, 60)
	p.feed(ip4(frame.Broadcast, stA), bpdu)
	got := <-bpdus
	if !slices.Equal(got, bpdu) {
		t.Errorf("handler got %x, want the BPDU %x", got, bpdu)
	}
	eventually(t, "both frames counted", func() bool { return fx.b.Stats().Received == 2 })
	st := fx.b.Stats()
	if st.DroppedDiscarding != 1 || st.Flooded != 0 {
		t.Errorf("after a broadcast and a BPDU on a discarding member: DroppedDiscarding %d, Flooded %d; want 1, 0", st.DroppedDiscarding, st.Flooded)
	}
	if got := fx.ports["b"].take(); len(got) != 0 {
		t.Errorf("b got %d frames from a discarding member, want none", len(got))
	}
}
