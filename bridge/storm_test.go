package bridge

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// TestStormLimit checks that a member's storm limit bounds the frames it
// floods (broadcast, multicast, unknown unicast) to the limit plus its
// burst per second, counting the rest in DroppedStorm, and leaves known
// unicast alone.
func TestStormLimit(t *testing.T) {
	const (
		limit   = 1000
		burst   = limit / 10
		perStep = 30 // frames every 10 ms: 3000 frames/s, three times the limit
		steps   = 100
	)
	tests := []struct {
		name    string
		frame   []byte
		limited bool
	}{
		{"broadcast", ip4(frame.Broadcast, stA), true},
		{"multicast", ip4(frame.MAC{0x01, 0x00, 0x5e, 0, 0, 1}, stA), true},
		{"unknown unicast", ip4(stX, stA), true},
		{"BPDU with no spanning tree", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 39, 60), true},
		{"known unicast", ip4(stB, stA), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "a", "b")
			fx.send("b", ip4(stA, stB))
			fx.reset()
			if err := fx.b.SetStormLimit("a", limit); err != nil {
				t.Fatalf("SetStormLimit(a, %d) = %v, want nil", limit, err)
			}
			before := fx.b.Stats()
			got := 0
			for range steps {
				fx.send("a", batchOf(perStep, tc.frame)...)
				got += len(fx.ports["b"].take())
				fx.clk.Advance(10 * time.Millisecond)
			}
			sent := perStep * steps
			st := fx.b.Stats()
			if !tc.limited {
				if got != sent || st.DroppedStorm != before.DroppedStorm {
					t.Errorf("b got %d of %d frames, DroppedStorm +%d; want all, +0", got, sent, st.DroppedStorm-before.DroppedStorm)
				}
				return
			}
			// One second of frames: at most the limit and the burst,
			// at least the limit less one step's share.
			if got > limit+burst || got < limit-perStep {
				t.Errorf("b got %d frames in 1 s at %d frames/s over a limit of %d, want %d to %d", got, sent, limit, limit-perStep, limit+burst)
			}
			wantDelta(t, "storm", before, st, map[string]uint64{"DroppedStorm": uint64(sent - got), "Flooded": uint64(got), "Received": uint64(sent)})
		})
	}
}

// TestStormLimitOff checks that a limit of 0 turns storm control off and
// that bad limits and unknown members are refused with nothing changed.
func TestStormLimitOff(t *testing.T) {
	fx := newFixture(t, "a", "b")
	for _, tc := range []struct {
		name, port string
		pps        int
		wantErr    bool
		wantLimit  int
	}{
		{"set", "a", 10, false, 10},
		{"negative", "a", -1, true, 10},
		{"too high", "a", MaxStormLimit + 1, true, 10},
		{"unknown member", "zz", 5, true, 10},
		{"off", "a", 0, false, 0},
	} {
		err := fx.b.SetStormLimit(tc.port, tc.pps)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: SetStormLimit(%s, %d) = %v, want error %v", tc.name, tc.port, tc.pps, err, tc.wantErr)
		}
		if got := fx.b.Ports()[0].StormLimit; got != tc.wantLimit {
			t.Errorf("%s: a's StormLimit = %d, want %d", tc.name, got, tc.wantLimit)
		}
	}
	f := ip4(frame.Broadcast, stA)
	fx.send("a", batchOf(500, f)...)
	if got := len(fx.ports["b"].take()); got != 500 {
		t.Errorf("with the limit off, b got %d of 500 broadcasts, want all", got)
	}
}

// TestStormBucketShared checks that goroutines sharing one bucket (the
// readers of a multi-queue member) together get exactly its burst at one
// instant: the limit is the member's, not each reader's.
func TestStormBucketShared(t *testing.T) {
	s := newStormBucket(1000)
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if s.allow(0) {
					passed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := passed.Load(); got != 100 {
		t.Errorf("8 goroutines at one instant passed %d frames, want the burst of 100", got)
	}
}

// bpdu is a configuration BPDU's destination on a frame from stA.
var bpdu = eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 39, 60)

// TestBPDUGuard checks that a BPDU received on a guarded member disables
// it, with or without a spanning tree: nothing then crosses it either
// way, until EnablePort. An unguarded member is not disabled.
func TestBPDUGuard(t *testing.T) {
	for _, tc := range []struct {
		name          string
		stp, guard    bool
		wantDisabled  bool
		wantForwarded []string // who gets the BPDU
	}{
		{"guarded, no spanning tree", false, true, true, nil},
		{"guarded, spanning tree", true, true, true, nil},
		{"not guarded, no spanning tree", false, false, false, []string{"b"}},
		{"not guarded, spanning tree", true, false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "a", "b")
			fx.b.SetSpanningTree(tc.stp)
			handled := 0
			if err := fx.b.SetLinkLocalHandler("a", func([]byte) { handled++ }); err != nil {
				t.Fatal(err)
			}
			if err := fx.b.SetBPDUGuard("a", tc.guard); err != nil {
				t.Fatalf("SetBPDUGuard(a) = %v, want nil", err)
			}
			from := ip4(frame.Broadcast, stA)
			to := ip4(frame.Broadcast, stB)
			fx.send("a", bpdu, from) // the broadcast after the BPDU, in its batch
			fx.send("b", to)
			a := fx.b.Ports()[0]
			if a.Disabled != tc.wantDisabled || a.BPDUGuard != tc.guard {
				t.Fatalf("after a BPDU: a Disabled %v, BPDUGuard %v; want %v, %v", a.Disabled, a.BPDUGuard, tc.wantDisabled, tc.guard)
			}
			gotB := fx.ports["b"].take()
			gotA := fx.ports["a"].take()
			if tc.wantDisabled {
				if len(gotB) != 0 || len(gotA) != 0 || handled != 0 {
					t.Errorf("disabled a: b got %d frames, a got %d, handler called %d times; want none", len(gotB), len(gotA), handled)
				}
				if err := fx.b.EnablePort("a"); err != nil {
					t.Fatalf("EnablePort(a) = %v, want nil", err)
				}
				if fx.b.Ports()[0].Disabled {
					t.Fatal("a still disabled after EnablePort")
				}
				fx.send("a", from)
				if got := fx.receivers(from); len(got) != 1 || got[0] != "b" {
					t.Errorf("after EnablePort, a's broadcast reached %v, want [b]", got)
				}
				fx.send("b", to)
				if got := fx.receivers(to); len(got) != 1 || got[0] != "a" {
					t.Errorf("after EnablePort, b's broadcast reached %v, want [a]", got)
				}
				return
			}
			want := len(tc.wantForwarded) + 1 // and the broadcast
			if len(gotB) != want || len(gotA) != 1 {
				t.Errorf("not disabled: b got %d frames, a got %d; want %d, 1", len(gotB), len(gotA), want)
			}
		})
	}
	fx := newFixture(t, "a")
	if err := fx.b.SetBPDUGuard("zz", true); err == nil {
		t.Error("SetBPDUGuard(zz) on a bridge without zz = nil, want an error")
	}
	if err := fx.b.EnablePort("zz"); err == nil {
		t.Error("EnablePort(zz) on a bridge without zz = nil, want an error")
	}
}

// TestForwardWithStormLimitAllocatesNothing checks that a storm limit,
// passing or dropping, costs no allocation.
func TestForwardWithStormLimitAllocatesNothing(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout}, false, "a", "b", "c")
	if err := fx.b.SetStormLimit("a", 1000); err != nil {
		t.Fatal(err)
	}
	a := fx.b.Member("a")
	flood := batchOf(64, ip4(frame.Broadcast, stA))
	run := func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: flood}, fx.clk.Now()) }
	run()
	if got := testing.AllocsPerRun(100, run); got != 0 {
		t.Errorf("flood under a storm limit: %v allocations per batch, want 0", got)
	}
}
