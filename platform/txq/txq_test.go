package txq

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/platform"
)

// frameOf returns an n-byte frame whose bytes say which it is.
func frameOf(id, n int) []byte {
	f := make([]byte, n)
	for i := range f {
		f[i] = byte(id + i)
	}
	return f
}

// TestBound checks the byte and frame bounds: Push keeps a frame exactly
// when the queued bytes stay within the limit and a frame slot is free,
// and counts every other frame in Overflow.
func TestBound(t *testing.T) {
	clk := clock.NewFake()
	tests := []struct {
		name              string
		limit, maxFrames  int
		pushes            []int
		wantKept          []bool
		wantBytes, wantOF int
	}{
		{"fills to the byte", 3000, 16, []int{1000, 1000, 1000, 1}, []bool{true, true, true, false}, 3000, 1},
		{"a small frame after a refused big one", 3000, 16, []int{2000, 1500, 1000}, []bool{true, false, true}, 3000, 1},
		{"frame limit", 1 << 20, 2, []int{60, 60, 60}, []bool{true, true, false}, 120, 1},
		{"longer than the limit", 1000, 4, []int{1001}, []bool{false}, 0, 1},
		{"a super-frame", 256 << 10, 4, []int{MaxFrameLen, MaxFrameLen + 1}, []bool{true, false}, MaxFrameLen, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New(tc.limit, tc.maxFrames, 64, 0)
			for i, n := range tc.pushes {
				if got := q.Push(frameOf(i, n), platform.Offload{}, clk.Now()); got != tc.wantKept[i] {
					t.Errorf("push %d of %d bytes at %d queued: expected kept %v, got %v", i, n, q.Bytes(), tc.wantKept[i], got)
				}
			}
			if q.Bytes() != tc.wantBytes || q.Stats().Overflow != uint64(tc.wantOF) {
				t.Errorf("expected %d bytes queued and %d overflows, got %d and %d", tc.wantBytes, tc.wantOF, q.Bytes(), q.Stats().Overflow)
			}
		})
	}
}

// TestStale checks the delay bound on a fake clock: Head drops, and
// counts in Stale, the frames at the head that waited longer than the
// limit, and keeps those that did not.
func TestStale(t *testing.T) {
	clk := clock.NewFake()
	q := New(1<<20, 64, 64, 5*time.Millisecond)
	for i := range 3 {
		q.Push(frameOf(i, 100), platform.Offload{}, clk.Now())
	}
	clk.Advance(4 * time.Millisecond)
	q.Push(frameOf(3, 100), platform.Offload{}, clk.Now())
	clk.Advance(time.Millisecond)
	if b := q.Head(64, clk.Now()); b.Len() != 4 || q.Stats().Stale != 0 {
		t.Fatalf("after exactly the delay limit: expected 4 frames and no stale drop, got %d and %d", b.Len(), q.Stats().Stale)
	}
	clk.Advance(time.Nanosecond)
	b := q.Head(64, clk.Now())
	if b.Len() != 1 || !bytes.Equal(b.Frames[0], frameOf(3, 100)) || q.Stats().Stale != 3 || q.Bytes() != 100 {
		t.Fatalf("past the limit for the first 3: expected frame 3 alone, 3 stale drops, 100 bytes; got %d frames, %d stale, %d bytes",
			b.Len(), q.Stats().Stale, q.Bytes())
	}
	clk.Advance(time.Hour)
	if b := q.Head(64, clk.Now()); b.Len() != 0 || q.Len() != 0 || q.Stats().Stale != 4 {
		t.Fatalf("an hour later: expected an empty queue and 4 stale drops, got %d frames and %d", q.Len(), q.Stats().Stale)
	}
}

// TestHeadAndPop checks that Head returns at most max and at most the
// batch size of the oldest frames, with their offloads, and that Pop
// takes exactly those.
func TestHeadAndPop(t *testing.T) {
	clk := clock.NewFake()
	q := New(1<<20, 64, 4, 0)
	for i := range 6 {
		q.Push(frameOf(i, 64+i), platform.Offload{GSOSize: uint16(i)}, clk.Now())
	}
	for _, c := range []struct{ max, want, first int }{{2, 2, 0}, {100, 4, 0}} {
		b := q.Head(c.max, clk.Now())
		if b.Len() != c.want || !bytes.Equal(b.Frames[0], frameOf(c.first, 64+c.first)) {
			t.Errorf("Head(%d): expected %d frames from frame %d, got %d", c.max, c.want, c.first, b.Len())
		}
		for i := range b.Len() {
			if b.Offs[i].GSOSize != uint16(i) {
				t.Errorf("Head(%d): frame %d carries the offload of frame %d", c.max, i, b.Offs[i].GSOSize)
			}
		}
	}
	q.Pop(5)
	if b := q.Head(100, clk.Now()); b.Len() != 1 || !bytes.Equal(b.Frames[0], frameOf(5, 69)) || q.Bytes() != 69 {
		t.Errorf("after Pop(5): expected frame 5 alone (69 bytes), got %d frames, %d bytes", b.Len(), q.Bytes())
	}
}

// TestRandomAgainstSlice pushes and pops frames of random sizes and
// checks the queue against a plain slice of copies: the same frames, in
// order, byte for byte, and a refusal exactly when the slice's bytes
// would pass the limit (the arena never refuses below it).
func TestRandomAgainstSlice(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		limit := 2000 + rng.IntN(200000)
		q := New(limit, 1<<16, 64, 0)
		var model [][]byte
		modelBytes := 0
		now := time.Unix(0, 0)
		for step := range 5000 {
			if rng.IntN(3) != 0 {
				n := 14 + rng.IntN(min(limit, 9000))
				if rng.IntN(50) == 0 {
					n = 14 + rng.IntN(min(limit, MaxFrameLen)-14)
				}
				f := frameOf(step, n)
				kept := q.Push(f, platform.Offload{}, now)
				if want := modelBytes+n <= limit; kept != want {
					t.Fatalf("seed %d step %d: push %d bytes with %d of %d queued: expected kept %v, got %v", seed, step, n, modelBytes, limit, want, kept)
				}
				if kept {
					model, modelBytes = append(model, f), modelBytes+n
				}
				continue
			}
			k := rng.IntN(8)
			b := q.Head(k, now)
			if b.Len() != min(k, len(model)) {
				t.Fatalf("seed %d step %d: Head(%d) with %d queued: got %d frames", seed, step, k, len(model), b.Len())
			}
			for i, f := range b.Frames {
				if !bytes.Equal(f, model[i]) {
					t.Fatalf("seed %d step %d: frame %d differs from what was pushed", seed, step, i)
				}
				modelBytes -= len(f)
			}
			model = model[b.Len():]
			q.Pop(b.Len())
			if q.Bytes() != modelBytes || q.Len() != len(model) {
				t.Fatalf("seed %d step %d: expected %d frames, %d bytes; got %d, %d", seed, step, len(model), modelBytes, q.Len(), q.Bytes())
			}
		}
	}
}

// TestZeroAllocs checks that Push, Head and Pop allocate nothing.
func TestZeroAllocs(t *testing.T) {
	q := New(1<<20, 1024, 64, time.Second)
	f := frameOf(1, 1500)
	now := time.Unix(0, 0)
	allocs := testing.AllocsPerRun(100, func() {
		for range 64 {
			q.Push(f, platform.Offload{}, now)
		}
		b := q.Head(64, now)
		q.Pop(b.Len())
	})
	if allocs != 0 {
		t.Errorf("Push, Head and Pop of 64 frames: expected 0 allocations, got %v", allocs)
	}
}

func ExampleQueue() {
	q := New(3000, 64, 64, 5*time.Millisecond)
	now := time.Unix(0, 0)
	for i := range 3 {
		q.Push(make([]byte, 1500), platform.Offload{}, now.Add(time.Duration(i)*time.Millisecond))
	}
	b := q.Head(64, now.Add(5500*time.Microsecond))
	fmt.Println(b.Len(), "waiting;", q.Stats().Overflow, "overflow,", q.Stats().Stale, "stale")
	// Output: 1 waiting; 1 overflow, 1 stale
}

// TestCoDel checks CoDel's control law on a fake clock (target 5 ms,
// interval 100 ms, no hard delay limit): with a standing queue whose
// head stays above the target, Head drops nothing for an interval, then
// one frame, then more at intervals shrinking with the square root of
// the drops (100 ms, 70.7 ms, 57.7 ms); once the head's sojourn time is
// below the target again it stops; a lone frame is never dropped.
func TestCoDel(t *testing.T) {
	clk := clock.NewFake()
	t0 := clk.Now()
	q := New(1<<20, 1024, 64, 0)
	q.SetCoDel(5*time.Millisecond, 100*time.Millisecond)
	for i := range 100 {
		q.Push(frameOf(i, 100), platform.Offload{}, t0)
	}
	steps := []struct {
		at        time.Duration
		wantDrops uint64
	}{
		{4 * time.Millisecond, 0},   // below target
		{6 * time.Millisecond, 0},   // above: an interval starts, to 106 ms
		{105 * time.Millisecond, 0}, // not yet an interval
		{106 * time.Millisecond, 1}, // the first drop; next at 206 ms
		{205 * time.Millisecond, 1},
		{206 * time.Millisecond, 2}, // next at 206 + 100/√2 = 276.7 ms
		{276 * time.Millisecond, 2},
		{277 * time.Millisecond, 3}, // next at 276.7 + 100/√3 = 334.4 ms
		{334 * time.Millisecond, 3},
		{335 * time.Millisecond, 4},
	}
	for _, s := range steps {
		q.Head(64, t0.Add(s.at))
		if got := q.Stats().CoDel; got != s.wantDrops {
			t.Fatalf("standing queue at %v: expected %d CoDel drops, got %d", s.at, s.wantDrops, got)
		}
	}
	if q.Len() != 96 || q.Stats().Stale != 0 {
		t.Fatalf("expected 96 frames left after 4 drops at the head and none stale, got %d and %+v", q.Len(), q.Stats())
	}
	// The link takes the old frames; new ones wait less than the target.
	now := t0.Add(340 * time.Millisecond)
	f := frameOf(0, 100)
	q.Pop(q.Len())
	q.Push(f, platform.Offload{}, now)
	q.Push(f, platform.Offload{}, now)
	for range 100 {
		now = now.Add(2 * time.Millisecond)
		q.Head(64, now)
		q.Pop(1)
		q.Push(f, platform.Offload{}, now)
	}
	if got := q.Stats().CoDel; got != 4 {
		t.Errorf("head below the target: expected no more CoDel drops than 4, got %d", got)
	}
	// A lone frame, however old, is the link's next: never dropped.
	lone := New(1<<20, 16, 64, 0)
	lone.SetCoDel(5*time.Millisecond, 100*time.Millisecond)
	lone.Push(frameOf(0, 100), platform.Offload{}, t0)
	for _, at := range []time.Duration{time.Millisecond, 200 * time.Millisecond, time.Second} {
		if h := lone.Head(64, t0.Add(at)); h.Len() != 1 {
			t.Fatalf("a lone frame at %v: expected it kept, got %d frames", at, h.Len())
		}
	}
	if a := testing.AllocsPerRun(100, func() {
		now = now.Add(time.Millisecond)
		q.Head(64, now)
		q.Pop(1)
		q.Push(f, platform.Offload{}, now.Add(-time.Second))
	}); a > 0 {
		t.Errorf("Head with CoDel: expected 0 allocations, got %v", a)
	}
}
