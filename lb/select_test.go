package lb

import (
	"math/rand/v2"
	"testing"
)

// fullSet returns the set of IDs 0 to k-1.
func fullSet(k int) Set { return Set(1<<uint(k) - 1) }

// flowHashes returns n pseudo-random flow hashes, always the same ones.
func flowHashes(n int) []uint32 {
	r := rand.New(rand.NewPCG(1, 2))
	hs := make([]uint32, n)
	for i := range hs {
		hs[i] = r.Uint32()
	}
	return hs
}

func TestSet(t *testing.T) {
	s := Set(0).With(1).With(4).With(9)
	cases := []struct {
		name      string
		got, want int
	}{
		{"Len", s.Len(), 3},
		{"First", s.First(), 1},
		{"First of empty", Set(0).First(), -1},
		{"Nth(0)", s.Nth(0), 1},
		{"Nth(1)", s.Nth(1), 4},
		{"Nth(2)", s.Nth(2), 9},
		{"Nth(3) wraps", s.Nth(3), 1},
		{"Nth of empty", Set(0).Nth(5), -1},
		{"Without(4) Len", s.Without(4).Len(), 2},
		{"With(64) ignored", s.With(64).Len(), 3},
		{"With(-1) ignored", s.With(-1).Len(), 3},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if !s.Has(4) || s.Has(5) || s.Has(-1) || s.Has(64) {
		t.Errorf("Has on %b: got 4:%v 5:%v -1:%v 64:%v, want true false false false", s, s.Has(4), s.Has(5), s.Has(-1), s.Has(64))
	}
}

func TestPickEmptyAndSingle(t *testing.T) {
	sel := NewSelector(1)
	cases := []struct {
		name string
		up   Set
		want int
	}{
		{"empty set", 0, -1},
		{"only 0", Set(0).With(0), 0},
		{"only 63", Set(0).With(63), 63},
	}
	for _, c := range cases {
		for _, h := range flowHashes(50) {
			if got := sel.Pick(h, c.up); got != c.want {
				t.Fatalf("%s: Pick(%#x) = %d, want %d", c.name, h, got, c.want)
			}
		}
	}
}

// TestPickStable is the stability property: with N flows over K ports,
// taking port j out of the set moves only the flows that were on j, and
// putting it back returns every flow to where it was.
func TestPickStable(t *testing.T) {
	const n = 20000
	hashes := flowHashes(n)
	cases := []struct {
		name string
		up   Set
		j    int
	}{
		{"2 ports, remove 0", fullSet(2), 0},
		{"2 ports, remove 1", fullSet(2), 1},
		{"3 ports, remove 1", fullSet(3), 1},
		{"4 ports, remove 3", fullSet(4), 3},
		{"8 ports, remove 5", fullSet(8), 5},
		{"sparse IDs, remove 40", Set(0).With(2).With(17).With(40).With(63), 40},
	}
	for _, c := range cases {
		sel := NewSelector(99)
		before := make([]int, n)
		for i, h := range hashes {
			before[i] = sel.Pick(h, c.up)
		}
		down := c.up.Without(c.j)
		moved := 0
		for i, h := range hashes {
			got := sel.Pick(h, down)
			switch {
			case before[i] != c.j && got != before[i]:
				t.Fatalf("%s: flow %d was on %d, moved to %d when %d went down; want it to stay", c.name, i, before[i], got, c.j)
			case before[i] == c.j && (got == c.j || !down.Has(got)):
				t.Fatalf("%s: flow %d on the removed port %d went to %d, want a port in %b", c.name, i, c.j, got, down)
			case before[i] == c.j:
				moved++
			}
		}
		if moved == 0 {
			t.Errorf("%s: no flow was on port %d; want some", c.name, c.j)
		}
		for i, h := range hashes {
			if got := sel.Pick(h, c.up); got != before[i] {
				t.Fatalf("%s: flow %d was on %d, on %d after %d came back; want it back", c.name, i, before[i], got, c.j)
			}
		}
	}
}

// TestPickDistribution spreads many flows over K ports: no port gets more
// than 1.5 times its fair share, whether the flow hashes are random or
// come from a Hasher over frames that differ only in a source port.
func TestPickDistribution(t *testing.T) {
	const n = 100000
	random := flowHashes(n)
	h := NewHasher(5, AllFields)
	fromFrames := make([]uint32, n)
	f := tcp4(0, 443)
	for i := range fromFrames {
		f[14+20], f[14+21] = byte(i>>8), byte(i)
		f[14+12] = byte(i >> 16) // vary the source address past 65536 flows
		fromFrames[i] = h.Hash(f)
	}
	for _, src := range []struct {
		name   string
		hashes []uint32
	}{{"random hashes", random}, {"hashed frames", fromFrames}} {
		for _, k := range []int{2, 3, 4, 5, 8, 16, 64} {
			sel := NewSelector(3)
			count := make([]int, k)
			up := fullSet(k)
			if k == 64 {
				up = ^Set(0)
			}
			for _, hv := range src.hashes {
				count[sel.Pick(hv, up)]++
			}
			fair := float64(n) / float64(k)
			for id, c := range count {
				if float64(c) > 1.5*fair {
					t.Errorf("%s, %d ports: port %d got %d flows, want at most %.0f (1.5 x fair share %.0f)", src.name, k, id, c, 1.5*fair, fair)
				}
			}
		}
	}
}

func TestPickAllocs(t *testing.T) {
	sel := NewSelector(1)
	if got := testing.AllocsPerRun(100, func() { sel.Pick(12345, fullSet(4)) }); got != 0 {
		t.Errorf("Pick allocates %v times per call, want 0", got)
	}
}
