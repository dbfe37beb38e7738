package stp

import (
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// TestSteadyStateAllocatesNothing checks that, once converged, receiving
// BPDUs, ticking (periodic transmissions included) and the data path's
// Gate reads allocate nothing: the forwarding path stays allocation-free
// with the spanning tree on.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	clk := clock.NewFake()
	var last [FrameLen]byte // what we sent last, copied without allocating
	sends, flushes := 0, 0
	b, err := New(DefaultConfig(), clk, Outputs{
		Send:  func(_ int, f []byte) { copy(last[:], f); sends++ },
		Flush: func(int) { flushes++ },
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 3; id++ {
		if err := b.AddPort(id, "p", mac(byte(0x50+id)), up, DefaultPortConfig()); err != nil {
			t.Fatal(err)
		}
	}
	root := rootPeer(0x01, 0).rst()
	agree := peer{root: bid(4096, 0x01), cost: 40000, bridge: bid(32768, 0x99), port: NewPortID(128, 1), flags: rootRole(FlagAgreement)}.rst()
	step := func() {
		clk.Advance(tick)
		b.Input(1, root)
		b.Input(2, agree)
		b.Tick()
	}
	for range 100 {
		step()
	}
	g1, g2, g3 := b.Gate(1), b.Gate(2), b.Gate(3)
	if !g1.Forwarding() || !g2.Forwarding() || !g3.Forwarding() {
		t.Fatalf("not converged: %+v", b.Ports())
	}
	tests := []struct {
		name string
		run  func()
	}{
		{"Input and Tick, 100 ms apart", step},
		{"a second apart: Input, then Tick sending periodic BPDUs", func() {
			clk.Advance(time.Second)
			b.Input(1, root)
			b.Input(2, agree)
			b.Tick()
		}},
		{"a malformed frame", func() { b.Input(1, root[:20]) }},
		{"Gate reads", func() { _ = g1.Forwarding() && g2.Learning() && g3.State() == Forwarding }},
	}
	for _, tc := range tests {
		before := sends
		// AllocsPerRun truncates its average; count the allocations of
		// 200 runs as one, so that a single allocation shows.
		if got := testing.AllocsPerRun(1, func() {
			for range 200 {
				tc.run()
			}
		}); got != 0 {
			t.Errorf("%s: got %v allocations in 200 runs, want 0", tc.name, got)
		}
		if !g1.Forwarding() || !g2.Forwarding() || !g3.Forwarding() {
			t.Errorf("%s: a port stopped forwarding: %+v", tc.name, b.Ports())
		}
		t.Logf("%s: %d frames sent", tc.name, sends-before)
	}
}

// BenchmarkGate measures the per-frame cost of the data path's state read.
func BenchmarkGate(b *testing.B) {
	g := &Gate{}
	g.set(Forwarding)
	b.ReportAllocs()
	for b.Loop() {
		if !g.Forwarding() {
			b.Fatal("not forwarding")
		}
	}
}
