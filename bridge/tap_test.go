package bridge

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// recordingTap notes every call as "port dir frames@time".
type recordingTap struct {
	mu    sync.Mutex
	calls []string
	// data are copies of the frames it saw, in order.
	data [][]byte
}

func (r *recordingTap) Capture(port string, dir Direction, frames [][]byte, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := map[Direction]string{In: "in", Out: "out"}[dir]
	r.calls = append(r.calls, fmt.Sprintf("%s %s %d@%d", port, d, len(frames), now.Unix()))
	for _, f := range frames {
		r.data = append(r.data, slices.Clone(f))
	}
}

func (r *recordingTap) take() ([]string, [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, d := r.calls, r.data
	r.calls, r.data = nil, nil
	return c, d
}

// TestTapSeesIngressAndEgress checks what a tap sees: each batch a member
// received, once, with its port and time, then each copy the bridge sent,
// per egress port and span port; nothing once it is removed.
func TestTapSeesIngressAndEgress(t *testing.T) {
	fx := newFixture(t, "a", "b", "c")
	if err := fx.b.AddSpan(newTestPort("span0", false)); err != nil {
		t.Fatal(err)
	}
	fx.send("b", ip4(stA, stB)) // learn stB on b
	tap := &recordingTap{}
	fx.b.SetTap(tap)
	at := fx.clk.Now().Unix()
	unicast, flood, runt := ip4(stB, stA), ip4(frame.Broadcast, stA), make([]byte, 5)
	tests := []struct {
		name   string
		in     string
		frames [][]byte
		calls  []string
	}{
		{"known unicast: in on a, out on b and the span", "a", [][]byte{unicast, unicast},
			[]string{fmt.Sprintf("a in 2@%d", at), fmt.Sprintf("b out 2@%d", at), fmt.Sprintf("span0 out 2@%d", at)}},
		{"flood: out on every other member", "a", [][]byte{flood},
			[]string{fmt.Sprintf("a in 1@%d", at), fmt.Sprintf("b out 1@%d", at), fmt.Sprintf("c out 1@%d", at), fmt.Sprintf("span0 out 1@%d", at)}},
		{"a runt is seen coming in, then dropped", "c", [][]byte{runt}, []string{fmt.Sprintf("c in 1@%d", at)}},
	}
	for _, tt := range tests {
		fx.send(tt.in, tt.frames...)
		calls, data := tap.take()
		slices.Sort(calls)
		slices.Sort(tt.calls)
		if !slices.Equal(calls, tt.calls) {
			t.Errorf("%s: tap calls\nexpected %q\ngot      %q", tt.name, tt.calls, calls)
		}
		for _, d := range data {
			if !slices.ContainsFunc(tt.frames, func(f []byte) bool { return slices.Equal(f, d) }) {
				t.Errorf("%s: tap saw %x, which was not sent", tt.name, d)
			}
		}
	}
	fx.b.SetTap(nil)
	fx.send("a", unicast)
	if calls, _ := tap.take(); len(calls) != 0 {
		t.Errorf("after SetTap(nil): expected no calls, got %q", calls)
	}
}

// nopTap takes frames and keeps nothing.
type nopTap struct{}

func (nopTap) Capture(string, Direction, [][]byte, time.Time) {}

// TestTapAllocatesNothing checks that calling a tap costs the forwarding
// path no allocation.
func TestTapAllocatesNothing(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout}, false, "a", "b", "c")
	fx.b.SetTap(nopTap{})
	fx.send("b", ip4(stA, stB))
	a, now := fx.b.Member("a"), fx.clk.Now()
	for _, batch := range [][][]byte{batchOf(64, ip4(stB, stA)), batchOf(64, ip4(frame.Broadcast, stA))} {
		run := func() { fx.b.Forward(fx.w, a, platform.Batch{Frames: batch}, now) }
		run()
		if got := testing.AllocsPerRun(100, run); got != 0 {
			t.Errorf("forward with a tap: %v allocations per run, want 0", got)
		}
	}
}

// TestTapSeesRealReaders runs a tap on a bridge whose members are read
// by their own goroutines, as in the daemon: a frame received on one
// member is seen in and out.
func TestTapSeesRealReaders(t *testing.T) {
	b := New("bridge0", Options{Logger: quietLogger()})
	t.Cleanup(func() { b.Close() })
	ports := map[string]*testPort{}
	for _, n := range []string{"a", "b"} {
		ports[n] = newTestPort(n, true)
		if err := b.AddPort(ports[n], DefaultPortFlags()); err != nil {
			t.Fatal(err)
		}
	}
	tap := &recordingTap{}
	b.SetTap(tap)
	ports["a"].feed(ip4(frame.Broadcast, stA))
	eventually(t, "the tap saw the frame in on a and out on b", func() bool {
		tap.mu.Lock()
		defer tap.mu.Unlock()
		return len(tap.calls) == 2
	})
	calls, _ := tap.take()
	slices.Sort(calls)
	if len(calls) != 2 || calls[0][:5] != "a in " || calls[1][:6] != "b out " {
		t.Errorf("tap calls: expected a in, b out; got %q", calls)
	}
}
