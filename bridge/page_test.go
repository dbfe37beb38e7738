package bridge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
)

// walkPages lists b's table page by page, limit entries each, passing each
// page's last entry to the next, and returns every entry in the order
// listed.
func walkPages(b *Bridge, limit int) []Addr {
	var all []Addr
	var after *Addr
	for {
		page := b.AddrPage(after, limit)
		if len(page) > limit {
			panic(fmt.Sprintf("AddrPage(limit %d) returned %d entries", limit, len(page)))
		}
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = &page[len(page)-1]
	}
}

// TestAddrPageMatchesAddrs: whatever the page size, the pages put end to
// end are the table in the order Addrs gives, statics, several VLANs and
// expired entries included.
func TestAddrPageMatchesAddrs(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: time.Minute, MaxAddr: 10000}, false, "e1", "e2")
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		key := fdbKey(uint16(r.IntN(5)), r.Uint64()&macMask&^(1<<40))
		fx.b.fdb.learn(key, fx.b.Member([]string{"e1", "e2"}[i%2]), fx.b.since(fx.clk.Now()))
		if i == 1000 {
			fx.clk.Advance(40 * time.Second)
		}
	}
	if err := fx.b.AddStatic(mac(7), 9, "e2"); err != nil {
		t.Fatal(err)
	}
	fx.clk.Advance(30 * time.Second) // the first thousand have expired, unswept
	want := fx.b.Addrs()
	if len(want) < 1900 || len(want) > 2001 {
		t.Fatalf("Addrs: %d entries, want about 2000 (1000 expired of 3001)", len(want))
	}
	for _, limit := range []int{1, 2, 7, 64, 1000, len(want), len(want) + 1, 100000} {
		if got := walkPages(fx.b, limit); !slices.Equal(got, want) {
			t.Errorf("pages of %d: %d entries, want the %d of Addrs in its order", limit, len(got), len(want))
		}
	}
	if got := fx.b.AddrPage(nil, 0); len(got) != 0 {
		t.Errorf("AddrPage(nil, 0) = %d entries, want none", len(got))
	}
	last := want[len(want)-1]
	if got := fx.b.AddrPage(&last, 10); len(got) != 0 {
		t.Errorf("AddrPage(after the last entry) = %s, want none", addrsString(got))
	}
}

// TestAddrPageUnderChurn: while other goroutines learn, move, delete and
// age addresses, a walk lists keys in strictly increasing order, and every
// address present during the whole walk exactly once.
func TestAddrPageUnderChurn(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: time.Minute, MaxAddr: 1 << 20}, false, "e1", "e2")
	e1, e2 := fx.b.Member("e1"), fx.b.Member("e2")
	// Stable addresses: static (they never age), in VLAN 1, which the
	// churn below never touches.
	const stable = 5000
	for i := range stable {
		if err := fx.b.AddStatic(frame.MACFromKey(uint64(0x020000000000+i*3)), 1, "e2"); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Churn lives in VLANs 0 and 2, around and between the
				// stable keys' VLAN.
				key := fdbKey(uint16(r.IntN(2)*2), 0x020000000000|r.Uint64N(20000))
				now := fx.b.since(fx.clk.Now())
				switch r.IntN(4) {
				case 0, 1:
					fx.b.fdb.learn(key, []*Member{e1, e2}[r.IntN(2)], now)
				case 2:
					fx.b.fdb.deleteKey(key)
				default:
					fx.b.fdb.expire(now)
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				fx.clk.Advance(time.Second)
				time.Sleep(time.Millisecond)
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	for _, limit := range []int{1, 3, 100, 4096} {
		got := walkPages(fx.b, limit)
		seen := 0
		for i, a := range got {
			if i > 0 && a.key() <= got[i-1].key() {
				t.Fatalf("pages of %d: entry %d (%s vlan %d) does not follow entry %d (%s vlan %d)",
					limit, i, a.MAC, a.VLAN, i-1, got[i-1].MAC, got[i-1].VLAN)
			}
			if a.VLAN == 1 {
				seen++
			}
		}
		if seen != stable {
			t.Errorf("pages of %d: %d entries in VLAN 1, want each of the %d stable ones once", limit, seen, stable)
		}
	}
}

// TestFDBIndexOrder: the index of a shard, after random inserts and
// deletes, holds exactly the shard's keys and walks them in order (a
// naive sorted list as the reference).
func TestFDBIndexOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var x fdbIndex
	ref := map[uint64]bool{}
	for range 20000 {
		k := r.Uint64N(5000)
		if ref[k] {
			x.delete(k)
			delete(ref, k)
		} else {
			x.insert(&fdbEntry{key: k})
			ref[k] = true
		}
	}
	var want, got []uint64
	for k := range ref {
		want = append(want, k)
	}
	slices.Sort(want)
	var c fdbCursor
	c.seek(&x, 0, true)
	for e := c.next(); e != nil; e = c.next() {
		got = append(got, e.key)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("index walk: %d keys, want the %d inserted and not deleted, in order", len(got), len(want))
	}
	checkHeap(t, x.root)
	// A sweep removes the keys it is asked to, tells each once, and
	// leaves a treap of the rest.
	var gone, kept []uint64
	x.removeWhere(func(e *fdbEntry) bool { return e.key%3 == 0 }, func(e *fdbEntry) { gone = append(gone, e.key) })
	slices.Sort(gone)
	wantGone := slices.DeleteFunc(slices.Clone(want), func(k uint64) bool { return k%3 != 0 })
	want = slices.DeleteFunc(want, func(k uint64) bool { return k%3 == 0 })
	c.seek(&x, 0, true)
	for e := c.next(); e != nil; e = c.next() {
		kept = append(kept, e.key)
	}
	if !slices.Equal(gone, wantGone) || !slices.Equal(kept, want) {
		t.Fatalf("removeWhere(key%%3 == 0): %d told gone, %d kept; want %d and %d", len(gone), len(kept), len(wantGone), len(want))
	}
	checkHeap(t, x.root)
	for _, tc := range []struct {
		key  uint64
		from bool
		want uint64
	}{{want[0], false, want[1]}, {want[1], true, want[1]}, {want[1] + 1, true, want[2]}} {
		c.seek(&x, tc.key, tc.from)
		if e := c.next(); e == nil || e.key != tc.want {
			t.Errorf("seek(%d, from=%v) then next = %v, want the entry of %d", tc.key, tc.from, e, tc.want)
		}
	}
}

// checkHeap fails t unless every node's priority is at least its
// children's: the treap's balance rests on it.
func checkHeap(t *testing.T, n *fdbEntry) {
	t.Helper()
	for _, c := range n.child {
		if c == nil {
			continue
		}
		if c.prio > n.prio {
			t.Fatalf("entry %d (priority %d) under entry %d (priority %d)", c.key, c.prio, n.key, n.prio)
		}
		checkHeap(t, c)
	}
}

// benchTable returns a bridge whose table holds n learned addresses.
func benchTable(b *testing.B, n int) *Bridge {
	fx := newFixtureOpts(b, Options{Timeout: time.Hour, MaxAddr: n}, false, "e1")
	m, now := fx.b.Member("e1"), fx.b.since(fx.clk.Now())
	for i := range n {
		fx.b.fdb.learn(fdbKey(0, frame.MAC{2, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}.Key()), m, now)
	}
	if got := fx.b.AddrCount(); got != n {
		b.Fatalf("table holds %d addresses, want %d", got, n)
	}
	return fx.b
}

// BenchmarkAddrPage: one page of 1000 entries from the middle of tables of
// 10 k and 1 M entries, and the count bridge show gives. The cost per
// page should not follow the table's size (compare the sub-benchmarks).
func BenchmarkAddrPage(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		br := benchTable(b, n)
		mid := br.AddrPage(nil, n/2)[n/2-1]
		b.Run(fmt.Sprintf("page1000/table%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(br.AddrPage(&mid, 1000)) != 1000 {
					b.Fatal("short page")
				}
			}
		})
		b.Run(fmt.Sprintf("count/table%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if br.AddrCount() != n {
					b.Fatal("wrong count")
				}
			}
		})
	}
}
