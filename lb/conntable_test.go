package lb

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// flow returns a TCP/IPv4 key from 192.0.2.1 to 192.0.2.2, told apart by
// its source port and, past 65535 flows, its source address.
func flow(i int) FlowKey {
	return key4([4]byte{192, 0, byte(2 + i>>16), 1}, ipB, protoTCP, uint16(i), 80)
}

// mustConnTable builds a table or fails the test.
func mustConnTable(t testing.TB, size int, idle time.Duration, clk clock.Clock) *ConnTable {
	t.Helper()
	c, err := NewConnTable(size, idle, clk)
	if err != nil {
		t.Fatalf("NewConnTable(%d, %v): %v", size, idle, err)
	}
	return c
}

func TestNewConnTable(t *testing.T) {
	cases := []struct {
		size       int
		idle       time.Duration
		wantSize   int
		wantIdle   time.Duration
		wantShards int
		wantErr    string
	}{
		{0, 0, DefaultConnTableSize, DefaultConnIdle, 64, ""},
		{1, time.Second, 1, time.Second, 1, ""},
		{2047, time.Minute, 2047, time.Minute, 1, ""},
		{2048, time.Minute, 2048, time.Minute, 2, ""},
		{100000, time.Minute, 100000, time.Minute, 64, ""},
		{-1, 0, 0, 0, 0, "connection table size -1: want 1 to 67108864 (default 65536)"},
		{MaxConnTableSize + 1, 0, 0, 0, 0, "want 1 to 67108864"},
		{10, -time.Second, 0, 0, 0, "connection table idle time -1s: want a positive duration (default 15m0s)"},
	}
	for _, c := range cases {
		ct, err := NewConnTable(c.size, c.idle, clock.NewFake())
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("NewConnTable(%d, %v): error %v, want one containing %q", c.size, c.idle, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewConnTable(%d, %v): %v", c.size, c.idle, err)
			continue
		}
		capacity := 0
		for i := range ct.shards {
			capacity += len(ct.shards[i].entries)
		}
		if ct.Size() != c.wantSize || capacity != c.wantSize || ct.Idle() != c.wantIdle || len(ct.shards) != c.wantShards {
			t.Errorf("NewConnTable(%d, %v): size %d, capacity %d, idle %v, %d shards; want %d, %d, %v, %d",
				c.size, c.idle, ct.Size(), capacity, ct.Idle(), len(ct.shards), c.wantSize, c.wantSize, c.wantIdle, c.wantShards)
		}
	}
}

// TestConnTableSpec runs scripts of operations on one-shard tables (so
// that the LRU order is exact) on a fake clock, each step saying what it
// expects.
func TestConnTableSpec(t *testing.T) {
	type step struct {
		op      string // "put", "get", "del", "wait", "expire"
		flow    int    // the flow (put, get, del)
		backend int    // put: the backend; get: the expected one
		want    bool   // get, del: expected found; expire: ignored
		n       int    // expire: expected count; wait: seconds
	}
	put := func(f, b int) step { return step{op: "put", flow: f, backend: b} }
	get := func(f, b int) step { return step{op: "get", flow: f, backend: b, want: true} }
	miss := func(f int) step { return step{op: "get", flow: f} }
	wait := func(s int) step { return step{op: "wait", n: s} }
	cases := []struct {
		name  string
		size  int
		steps []step
	}{
		{"a flow is found on the backend it was put on", 4, []step{put(1, 7), get(1, 7), miss(2)}},
		{"put again moves the flow", 4, []step{put(1, 7), put(1, 3), get(1, 3)}},
		{"full: the least recently put flow goes", 3, []step{put(1, 1), put(2, 2), put(3, 3), put(4, 4), miss(1), get(2, 2), get(3, 3), get(4, 4)}},
		{"a lookup makes a flow recent", 3, []step{put(1, 1), put(2, 2), put(3, 3), get(1, 1), put(4, 4), miss(2), get(1, 1), get(3, 3), get(4, 4)}},
		{"a put of a held flow makes it recent", 3, []step{put(1, 1), put(2, 2), put(3, 3), put(1, 5), put(4, 4), miss(2), get(1, 5)}},
		{"size 1 holds the last flow", 1, []step{put(1, 1), put(2, 2), miss(1), get(2, 2)}},
		{"delete forgets", 4, []step{put(1, 1), put(2, 2), {op: "del", flow: 1, want: true}, miss(1), get(2, 2), {op: "del", flow: 1}}},
		{"room freed by delete is reused", 2, []step{put(1, 1), put(2, 2), {op: "del", flow: 1, want: true}, put(3, 3), get(2, 2), get(3, 3)}},
		{"idle up to the idle time: kept", 4, []step{put(1, 1), wait(10), get(1, 1)}},
		{"idle past the idle time: forgotten", 4, []step{put(1, 1), wait(11), miss(1), put(1, 2), get(1, 2)}},
		{"each lookup restarts the idle time", 4, []step{put(1, 1), wait(8), get(1, 1), wait(8), get(1, 1), wait(8), get(1, 1)}},
		{"expire forgets idle flows only", 4, []step{put(1, 1), wait(6), put(2, 2), wait(6), {op: "expire", n: 1}, miss(1), get(2, 2), wait(11), {op: "expire", n: 1}, {op: "expire", n: 0}}},
		{"backend IDs out of range are not recorded", 4, []step{put(1, -1), miss(1), put(1, MaxBackends), miss(1), put(1, MaxBackends-1), get(1, MaxBackends-1)}},
	}
	for _, c := range cases {
		clk := clock.NewFake()
		ct := mustConnTable(t, c.size, 10*time.Second, clk)
		for i, s := range c.steps {
			where := fmt.Sprintf("%s: step %d (%s flow %d)", c.name, i, s.op, s.flow)
			switch s.op {
			case "put":
				ct.Put(flow(s.flow), s.backend, clk.Now())
			case "get":
				b, ok := ct.Lookup(flow(s.flow), clk.Now())
				if ok != s.want || (ok && b != s.backend) {
					t.Errorf("%s: got backend %d, found %v; want %d, found %v", where, b, ok, s.backend, s.want)
				}
			case "del":
				if got := ct.Delete(flow(s.flow)); got != s.want {
					t.Errorf("%s: Delete = %v, want %v", where, got, s.want)
				}
			case "wait":
				clk.Advance(time.Duration(s.n) * time.Second)
			case "expire":
				if got := ct.Expire(clk.Now()); got != s.n {
					t.Errorf("%s: Expire = %d, want %d", where, got, s.n)
				}
			}
			if n := ct.Len(); n > c.size {
				t.Errorf("%s: Len = %d, want at most the size %d", where, n, c.size)
			}
			checkShards(t, where, ct)
		}
	}
}

// checkShards checks the invariants of every shard: the LRU list and the
// hash chains each hold exactly the n flows, every flow once, each in the
// bucket of its hash, and the free list holds the rest.
func checkShards(t *testing.T, where string, ct *ConnTable) {
	t.Helper()
	for si := range ct.shards {
		s := &ct.shards[si]
		s.mu.Lock()
		var lru []int32
		prev := int32(-1)
		for i := s.head; i >= 0 && len(lru) <= len(s.entries); i = s.entries[i].next {
			if s.entries[i].prev != prev {
				t.Fatalf("%s: shard %d: entry %d has prev %d, want %d", where, si, i, s.entries[i].prev, prev)
			}
			lru, prev = append(lru, i), i
		}
		if prev != s.tail || len(lru) != s.n {
			t.Fatalf("%s: shard %d: LRU list of %d ending at %d; want %d ending at the tail %d", where, si, len(lru), prev, s.n, s.tail)
		}
		var chained []int32
		for b, head := range s.buckets {
			for i := head; i >= 0 && len(chained) <= len(s.entries); i = s.entries[i].chain {
				if got := uint64(s.entries[i].key.Hash()) & s.mask; got != uint64(b) {
					t.Fatalf("%s: shard %d: entry %d in bucket %d, its hash says %d", where, si, i, b, got)
				}
				chained = append(chained, i)
			}
		}
		slices.Sort(lru)
		slices.Sort(chained)
		if !slices.Equal(lru, chained) {
			t.Fatalf("%s: shard %d: LRU holds %v, chains hold %v; want the same entries", where, si, lru, chained)
		}
		free := 0
		for i := s.free; i >= 0 && free <= len(s.entries); i = s.entries[i].next {
			free++
		}
		if free+s.n != len(s.entries) {
			t.Fatalf("%s: shard %d: %d free + %d held, want %d entries", where, si, free, s.n, len(s.entries))
		}
		s.mu.Unlock()
	}
}

// TestConnTableAgainstModel runs random operations on a one-shard table
// and on a naive model (a slice in LRU order) and compares every answer.
func TestConnTableAgainstModel(t *testing.T) {
	const size, flows = 64, 200
	type held struct{ flow, backend, seen int }
	r := rand.New(rand.NewPCG(11, 12))
	clk := clock.NewFake()
	ct := mustConnTable(t, size, 50*time.Second, clk)
	var model []held // most recent first
	now := 0
	find := func(f int) int { return slices.IndexFunc(model, func(h held) bool { return h.flow == f }) }
	for op := range 100000 {
		f := r.IntN(flows)
		switch x := r.IntN(100); {
		case x < 45:
			b := r.IntN(MaxBackends)
			ct.Put(flow(f), b, clk.Now())
			if i := find(f); i >= 0 {
				model = slices.Delete(model, i, i+1)
			} else if len(model) == size {
				model = model[:size-1]
			}
			model = slices.Insert(model, 0, held{f, b, now})
		case x < 90:
			b, ok := ct.Lookup(flow(f), clk.Now())
			want, wantOK := 0, false
			if i := find(f); i >= 0 && now-model[i].seen <= 50 {
				h := model[i]
				want, wantOK = h.backend, true
				h.seen = now
				model = slices.Insert(slices.Delete(model, i, i+1), 0, h)
			} else if i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
			if b != want || ok != wantOK {
				t.Fatalf("op %d: Lookup(flow %d) = %d, %v; the model says %d, %v", op, f, b, ok, want, wantOK)
			}
		case x < 95:
			i := find(f)
			if i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
			if got := ct.Delete(flow(f)); got != (i >= 0) {
				t.Fatalf("op %d: Delete(flow %d) = %v, the model says %v", op, f, got, i >= 0)
			}
		default:
			clk.Advance(time.Second)
			now++
		}
		if ct.Len() != len(model) {
			t.Fatalf("op %d: Len = %d, the model holds %d", op, ct.Len(), len(model))
		}
	}
	checkShards(t, "after the random run", ct)
}

// TestConnTableConcurrent runs forwarding workers and a sweeper on one
// table at once; run it with -race. Every answer names a backend that
// was put for that flow, and the table stays within its size.
func TestConnTableConcurrent(t *testing.T) {
	clk := clock.NewFake()
	ct := mustConnTable(t, 4096, time.Minute, clk)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 20000 {
				f := r.IntN(10000)
				now := clk.Now()
				if b, ok := ct.Lookup(flow(f), now); ok && b != f%MaxBackends {
					errs <- fmt.Errorf("flow %d found on backend %d, want %d", f, b, f%MaxBackends)
					return
				} else if !ok {
					ct.Put(flow(f), f%MaxBackends, now)
				}
				if r.IntN(50) == 0 {
					ct.Delete(flow(r.IntN(10000)))
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			clk.Advance(time.Second)
			ct.Expire(clk.Now())
			if n := ct.Len(); n > ct.Size() {
				errs <- fmt.Errorf("Len %d over the size %d", n, ct.Size())
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkShards(t, "after the concurrent run", ct)
}

func TestConnTableAllocs(t *testing.T) {
	clk := clock.NewFake()
	ct := mustConnTable(t, 1024, time.Minute, clk)
	now := clk.Now()
	for i := range 1024 {
		ct.Put(flow(i), i%MaxBackends, now)
	}
	i := 0
	cases := []struct {
		name string
		run  func()
	}{
		{"Lookup, found", func() { ct.Lookup(flow(1000), now) }},
		{"Lookup, not found", func() { ct.Lookup(flow(5000), now) }},
		{"Put, held flow", func() { ct.Put(flow(1000), 3, now) }},
		{"Put, new flow into a full table", func() { i++; ct.Put(flow(2000+i), 3, now) }},
		{"Delete", func() { ct.Delete(flow(1000)) }},
	}
	for _, c := range cases {
		if got := testing.AllocsPerRun(1, func() {
			for range 200 {
				c.run()
			}
		}); got != 0 {
			t.Errorf("%s: %v allocations in 200 calls, want 0", c.name, got)
		}
	}
}

func BenchmarkConnTable(b *testing.B) {
	clk := clock.NewFake()
	const size = 1 << 16
	ct := mustConnTable(b, size, time.Minute, clk)
	now := clk.Now()
	for i := range size {
		ct.Put(flow(i), i%MaxBackends, now)
	}
	b.Run("lookup-hit", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			ct.Lookup(flow(i&(size-1)), now)
			i++
		}
	})
	b.Run("put-evict", func(b *testing.B) {
		b.ReportAllocs()
		i := size
		for b.Loop() {
			ct.Put(flow(i), 1, now)
			i++
		}
	})
	b.Run("lookup-hit-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				ct.Lookup(flow(i&(size-1)), now)
				i += 7
			}
		})
	})
}
