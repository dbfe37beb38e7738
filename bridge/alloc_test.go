package bridge

import (
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// batchOf returns n copies of f.
func batchOf(n int, f []byte) [][]byte {
	b := make([][]byte, n)
	for i := range b {
		b[i] = f
	}
	return b
}

// TestForwardAllocatesNothing checks that forwarding known traffic,
// refreshing learned addresses, flooding and looking up allocate nothing
// once a Worker is warm.
func TestForwardAllocatesNothing(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout}, false, "a", "b", "c", "d")
	if err := fx.b.AddSpan(newTestPort("span0", false)); err != nil {
		t.Fatal(err)
	}
	fx.send("b", ip4(stA, stB))
	a, now := fx.b.Member("a"), fx.clk.Now()
	ts := fx.b.since(now)
	unicast := batchOf(64, ip4(stB, stA))
	flood := batchOf(64, ip4(frame.Broadcast, stA))
	unknown := batchOf(64, ip4(stX, stA))
	tagged := batchOf(64, tagged(stB, stA, frame.TypeVLAN, 5, frame.TypeIPv4, 64))
	mixed := [][]byte{ip4(stB, stA), ip4(frame.Broadcast, stA), make([]byte, 5), eth(stB, stA, frame.TypeIPv4, 2000)}
	keyB, keyA := fdbKey(0, stB.Key()), fdbKey(0, stA.Key())
	tests := []struct {
		name string
		run  func()
	}{
		{"known unicast batch of 64", func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: unicast}, now) }},
		{"flood batch of 64 to 3 members and a span", func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: flood}, now) }},
		{"unknown unicast batch of 64", func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: unknown}, now) }},
		{"tagged batch of 64", func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: tagged}, now) }},
		{"mixed batch with drops", func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: mixed}, now) }},
		{"learning refresh", func() { fx.b.fdb.learn(keyA, a, ts) }},
		{"lookup", func() { fx.b.fdb.lookup(keyB, ts) }},
	}
	for _, tc := range tests {
		tc.run() // warm the Worker: its scratch grows on first use
		if got := testing.AllocsPerRun(100, tc.run); got != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tc.name, got)
		}
	}
}
