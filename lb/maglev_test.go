package lb

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// backends returns n serving backends of weight 1, IDs 0 to n-1, at
// 10.0.0.1 upwards.
func backends(n int) []Backend {
	bs := make([]Backend, n)
	for i := range bs {
		bs[i] = Backend{ID: i, Addr: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i + 1)}), Weight: 1}
	}
	return bs
}

// mustMaglev builds a table or fails the test.
func mustMaglev(t testing.TB, bs []Backend, size int) *Maglev {
	t.Helper()
	m, err := NewMaglev(bs, size)
	if err != nil {
		t.Fatalf("NewMaglev(%d backends, size %d): %v", len(bs), size, err)
	}
	return m
}

// addrAt returns the address of the backend holding entry e of m.
func addrAt(m *Maglev, bs []Backend, e int) netip.Addr {
	id := int(m.entries[e])
	for _, b := range bs {
		if b.ID == id {
			return b.Addr
		}
	}
	return netip.Addr{}
}

// TestPopulateByHand checks the fill against a table worked out by hand
// with the permutations of the paper's example (7 entries; preference
// lists 3 0 4 1 5 2 6, then 0 2 4 6 1 3 5, then 3 4 5 6 0 1 2).
func TestPopulateByHand(t *testing.T) {
	cases := []struct {
		name                 string
		offset, skip, weight []int
		want                 []int32
	}{
		{"three backends", []int{3, 0, 3}, []int{4, 2, 1}, []int{1, 1, 1}, []int32{1, 0, 1, 0, 2, 2, 0}},
		{"the second removed", []int{3, 3}, []int{4, 1}, []int{1, 1}, []int32{0, 0, 0, 0, 1, 1, 1}},
		// Weight 2 against 1: the first takes a turn every pass, the
		// second every other pass, so 5 entries against 2.
		{"first weighs double", []int{3, 3}, []int{4, 1}, []int{2, 1}, []int32{0, 0, 0, 0, 1, 1, 0}},
		{"one backend holds all", []int{5}, []int{3}, []int{1}, []int32{0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got := populate(7, slices.Clone(c.offset), c.skip, c.weight)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: table %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMaglevTableSize(t *testing.T) {
	cases := []struct {
		size     int
		wantSize int
		wantErr  string
	}{
		{0, DefaultTableSize, ""},
		{65537, 65537, ""},
		{101, 101, ""},
		{16777213, 16777213, ""},
		{65536, 0, "maglev table size 65536: not a prime (the next prime is 65537)"},
		{100, 0, "maglev table size 100: want a prime from 101 to 16777216"},
		{97, 0, "want a prime from 101"},
		{-7, 0, "want a prime"},
		{1<<24 + 43, 0, "want a prime"},
	}
	for _, c := range cases {
		got, err := checkTableSize(c.size)
		switch {
		case c.wantErr == "" && (err != nil || got != c.wantSize):
			t.Errorf("size %d: %d, %v; want %d", c.size, got, err, c.wantSize)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("size %d: %d, %v; want an error containing %q", c.size, got, err, c.wantErr)
		}
		if c.wantSize > 0 && c.wantSize <= DefaultTableSize {
			if m, err := NewMaglev(backends(3), c.size); err != nil || m.Size() != c.wantSize || len(m.entries) != c.wantSize {
				t.Errorf("NewMaglev(size %d): %v; want %d entries", c.size, err, c.wantSize)
			}
		}
		if c.wantErr != "" {
			if _, err := NewMaglev(backends(3), c.size); err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("NewMaglev(size %d): error %v, want one containing %q", c.size, err, c.wantErr)
			}
		}
	}
}

func TestMaglevBackendErrors(t *testing.T) {
	a1, a2 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	cases := []struct {
		name    string
		bs      []Backend
		wantErr string
	}{
		{"no address", []Backend{{ID: 1, Weight: 1}}, "backend 1: no address"},
		{"weight 0", []Backend{{ID: 2, Addr: a1}}, "backend 2 (192.0.2.1): weight 0: want 1 to 1000"},
		{"weight too high", []Backend{{ID: 2, Addr: a1, Weight: 1001}}, "weight 1001: want 1 to 1000"},
		{"negative ID", []Backend{{ID: -1, Addr: a1, Weight: 1}}, "ID out of range: want 0 to 4095"},
		{"ID too high", []Backend{{ID: MaxBackends, Addr: a1, Weight: 1}}, "ID out of range"},
		{"duplicate ID", []Backend{{ID: 3, Addr: a1, Weight: 1}, {ID: 3, Addr: a2, Weight: 1}}, "backend 3 (192.0.2.2): ID already used by 192.0.2.1"},
		{"duplicate address", []Backend{{ID: 3, Addr: a1, Weight: 1}, {ID: 4, Addr: a1, Weight: 1}}, "backend 4 (192.0.2.1): address already used by backend 3"},
		{"zoned address", []Backend{{ID: 0, Addr: netip.MustParseAddr("fe80::1%eth0"), Weight: 1}}, "zoned address"},
		{"unknown state", []Backend{{ID: 0, Addr: a1, Weight: 1, State: 9}}, "unknown state 9"},
		{"too many backends", backends(MaxBackends + 1), "4097 backends: want at most 4096"},
		{"more backends than entries", backends(102), "maglev table size 101: smaller than its 102 serving backends"},
	}
	for _, c := range cases {
		if _, err := NewMaglev(c.bs, 101); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		}
	}
}

// TestMaglevServingOnly checks that draining and down backends hold no
// entry, and that a table without serving backends answers -1.
func TestMaglevServingOnly(t *testing.T) {
	bs := backends(4)
	bs[1].State, bs[3].State = Draining, Down
	m := mustMaglev(t, bs, 0)
	for _, b := range bs {
		want := b.State == Serving
		if got := m.Held(b.ID) > 0; got != want {
			t.Errorf("%v, %v: holds %d entries; want entries=%v", &b, b.State, m.Held(b.ID), want)
		}
	}
	for i := range bs {
		bs[i].State = Down
	}
	m = mustMaglev(t, bs, 0)
	if m.Serving() || m.Lookup(12345) != -1 {
		t.Errorf("all down: Serving()=%v Lookup=%d, want false and -1", m.Serving(), m.Lookup(12345))
	}
}

// TestMaglevEvenness is the evenness bound: with equal weights the
// busiest backend holds at most 1% more entries than the idlest.
func TestMaglevEvenness(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 10, 16, 50, 100, 200} {
		m := mustMaglev(t, backends(n), 0)
		lo, hi := m.size, 0
		for id := range n {
			lo, hi = min(lo, m.Held(id)), max(hi, m.Held(id))
		}
		excess := float64(hi)/float64(lo) - 1
		t.Logf("%3d backends: entries %d to %d, busiest holds %.4f%% more than idlest", n, lo, hi, 100*excess)
		if excess > 0.01 {
			t.Errorf("%d backends: busiest holds %d entries, idlest %d (%.3f%% more); want at most 1%% more", n, hi, lo, 100*excess)
		}
	}
}

// changed returns the fraction of entries whose backend address differs
// between a (over as) and b (over bs).
func changed(a *Maglev, as []Backend, b *Maglev, bs []Backend) float64 {
	n := 0
	for e := range a.entries {
		if addrAt(a, as, e) != addrAt(b, bs, e) {
			n++
		}
	}
	return float64(n) / float64(len(a.entries))
}

// TestMaglevDisruption is the disruption bound: removing one of N
// backends moves at most 1/N + 1% of the entries (every backend of the
// set is tried as the one removed), and adding one to N backends moves
// at most 1/(N+1) + 1% (several new addresses tried).
func TestMaglevDisruption(t *testing.T) {
	for n := 3; n <= 10; n++ {
		all := backends(n)
		full := mustMaglev(t, all, 0)
		worstRemove, worstAdd := 0.0, 0.0
		for j := range n {
			rest := slices.Delete(slices.Clone(all), j, j+1)
			moved := changed(full, all, mustMaglev(t, rest, 0), rest)
			worstRemove = max(worstRemove, moved)
			if bound := 1/float64(n) + 0.01; moved > bound {
				t.Errorf("%d backends, remove %v: %.3f%% of entries moved, want at most %.3f%%", n, &all[j], 100*moved, 100*bound)
			}
		}
		for j := range 8 {
			more := append(slices.Clone(all), Backend{ID: n, Addr: netip.AddrFrom4([4]byte{172, 16, 0, byte(j + 1)}), Weight: 1})
			moved := changed(full, all, mustMaglev(t, more, 0), more)
			worstAdd = max(worstAdd, moved)
			if bound := 1/float64(n+1) + 0.01; moved > bound {
				t.Errorf("%d backends, add %v: %.3f%% of entries moved, want at most %.3f%%", n, &more[n], 100*moved, 100*bound)
			}
		}
		t.Logf("%2d backends: worst removal moves %.3f%% (1/N = %.3f%%); worst addition (N+1 = %d) moves %.3f%% (1/(N+1) = %.3f%%)",
			n, 100*worstRemove, 100/float64(n), n+1, 100*worstAdd, 100/float64(n+1))
	}
}

// TestMaglevWeights checks that each backend's share of the entries is
// its share of the total weight, within 1% of that share (or one entry,
// for a share under 100 entries).
func TestMaglevWeights(t *testing.T) {
	cases := [][]int{
		{1, 2},
		{1, 2, 3, 4},
		{10, 1, 1},
		{5, 5, 5, 1},
		{1000, 1},
		{3, 7, 11, 13, 17, 19},
	}
	for _, ws := range cases {
		bs := backends(len(ws))
		total := 0
		for i, w := range ws {
			bs[i].Weight = w
			total += w
		}
		m := mustMaglev(t, bs, 0)
		worst := 0.0
		for i, w := range ws {
			want := float64(m.size) * float64(w) / float64(total)
			off := float64(m.Held(i)) - want
			worst = max(worst, off/want, -off/want)
			if tol := max(0.01*want, 1); off > tol || off < -tol {
				t.Errorf("weights %v: backend %d (weight %d) holds %d entries, want %.1f within %.1f", ws, i, w, m.Held(i), want, tol)
			}
		}
		t.Logf("weights %v: worst share off by %.4f%%", ws, 100*worst)
	}
}

// TestMaglevOrderIndependence builds tables over the same backends given
// in different orders and numbered differently (as two hosts that added
// them in different orders would): every entry names the same address.
func TestMaglevOrderIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 3, 7, 20} {
		bs := backends(n)
		bs = append(bs, Backend{ID: n, Addr: netip.MustParseAddr("2001:db8::7"), Weight: 3},
			Backend{ID: n + 1, Addr: netip.MustParseAddr("::ffff:10.0.0.1"), Weight: 2},
			Backend{ID: n + 2, Addr: netip.MustParseAddr("10.9.9.9"), Weight: 1, State: Draining})
		first := mustMaglev(t, bs, 0)
		for round := range 5 {
			other := slices.Clone(bs)
			r.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
			for i := range other {
				other[i].ID = len(other) - 1 - i // numbered in the new order
			}
			m := mustMaglev(t, other, 0)
			for e := range first.entries {
				if a, b := addrAt(first, bs, e), addrAt(m, other, e); a != b {
					t.Fatalf("%d backends, order %d: entry %d is %v, was %v in the first order; want equal", len(bs), round, e, b, a)
				}
			}
		}
	}
}

// TestMaglevLookupSpread looks up many random hashes: each backend gets
// the share of lookups its entries give it, within 3%.
func TestMaglevLookupSpread(t *testing.T) {
	bs := backends(4)
	bs[3].Weight = 2
	m := mustMaglev(t, bs, 0)
	const n = 400000
	got := make([]int, len(bs))
	r := rand.New(rand.NewPCG(5, 6))
	for range n {
		got[m.Lookup(r.Uint64())]++
	}
	for id := range bs {
		want := float64(n) * float64(m.Held(id)) / float64(m.size)
		if dev := float64(got[id])/want - 1; dev > 0.03 || dev < -0.03 {
			t.Errorf("backend %d: %d of %d lookups, want %.0f within 3%%", id, got[id], n, want)
		}
	}
}

func TestMaglevLookupAllocs(t *testing.T) {
	m := mustMaglev(t, backends(8), 0)
	if got := testing.AllocsPerRun(1000, func() { m.Lookup(0x1234_5678_9abc_def0) }); got != 0 {
		t.Errorf("Lookup allocates %v times per call, want 0", got)
	}
}

func BenchmarkMaglevBuild(b *testing.B) {
	for _, n := range []int{3, 10, 100} {
		b.Run(fmt.Sprintf("backends=%d", n), func(b *testing.B) {
			bs := backends(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewMaglev(bs, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
