package lb

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// newBalancer builds a Balancer over bs or fails the test.
func newBalancer(t testing.TB, cfg BalancerConfig, clk clock.Clock, bs []Backend) *Balancer {
	t.Helper()
	b, err := NewBalancer(cfg, clk)
	if err != nil {
		t.Fatalf("NewBalancer(%+v): %v", cfg, err)
	}
	if err := b.SetBackends(bs); err != nil {
		t.Fatalf("SetBackends: %v", err)
	}
	return b
}

// udpFlow is a UDP/IPv4 key, told apart by its source port.
func udpFlow(i int) FlowKey { return key4(ipA, ipB, protoUDP, uint16(i), 53) }

// withState returns a copy of bs with backend id in state s.
func withState(bs []Backend, id int, s BackendState) []Backend {
	out := slices.Clone(bs)
	for i := range out {
		if out[i].ID == id {
			out[i].State = s
		}
	}
	return out
}

func TestParseMethod(t *testing.T) {
	cases := []struct {
		in      string
		want    Method
		wantErr string
	}{
		{"maglev", MethodMaglev, ""},
		{"hash", MethodHash, ""},
		{"roundrobin", MethodRoundRobin, ""},
		{"rr", 0, `lb method "rr": want maglev, hash or roundrobin`},
		{"", 0, "want maglev"},
	}
	for _, c := range cases {
		got, err := ParseMethod(c.in)
		switch {
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("ParseMethod(%q) = %v, %v; want %v", c.in, got, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("ParseMethod(%q) = %v, %v; want an error containing %q", c.in, got, err, c.wantErr)
		case c.wantErr == "" && got.String() != c.in:
			t.Errorf("%v.String() = %q, want %q (round trip)", got, got.String(), c.in)
		}
	}
	if s, err := ParseBackendState("draining"); err != nil || s != Draining || s.String() != "draining" {
		t.Errorf("ParseBackendState(draining) = %v, %v; want draining", s, err)
	}
}

func TestNewBalancerErrors(t *testing.T) {
	cases := []struct {
		cfg     BalancerConfig
		wantErr string
	}{
		{BalancerConfig{Method: 7}, "lb method 7: want maglev, hash or roundrobin"},
		{BalancerConfig{TableSize: 65536}, "maglev table size 65536: not a prime"},
		{BalancerConfig{ConnTableSize: -3}, "connection table size -3"},
		{BalancerConfig{Method: MethodRoundRobin, ConnIdle: -time.Second}, "idle time -1s"},
	}
	for _, c := range cases {
		if _, err := NewBalancer(c.cfg, clock.NewFake()); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("NewBalancer(%+v): error %v, want one containing %q", c.cfg, err, c.wantErr)
		}
	}
	b := newBalancer(t, BalancerConfig{}, clock.NewFake(), backends(3))
	bad := append(backends(3), Backend{ID: 1, Addr: netip.MustParseAddr("10.1.1.1"), Weight: 1})
	if err := b.SetBackends(bad); err == nil || !strings.Contains(err.Error(), "ID already used") {
		t.Errorf("SetBackends with a duplicate ID: error %v, want one containing %q", err, "ID already used")
	}
	if got := b.Backends(); !slices.Equal(got, backends(3)) {
		t.Errorf("after a refused SetBackends: backends %v, want the previous set %v", got, backends(3))
	}
}

// TestBalancerNoBackend checks that every method answers -1 with no
// backend, or only down ones, or only draining ones for a new flow.
func TestBalancerNoBackend(t *testing.T) {
	sets := []struct {
		name string
		bs   []Backend
	}{
		{"no backends", nil},
		{"all down", withState(withState(backends(2), 0, Down), 1, Down)},
		{"only draining", withState(backends(1), 0, Draining)},
	}
	for _, m := range []Method{MethodMaglev, MethodHash, MethodRoundRobin} {
		for _, s := range sets {
			clk := clock.NewFake()
			b := newBalancer(t, BalancerConfig{Method: m}, clk, s.bs)
			for _, k := range []FlowKey{flow(1), udpFlow(1), key4(ipA, ipB, 0, 0, 0)} {
				if got := b.Pick(k, clk.Now()); got != -1 {
					t.Errorf("%v, %s: Pick(%v:%d proto %d) = %d, want -1", m, s.name, k.SrcAddr(), k.SrcPort, k.Proto, got)
				}
			}
		}
	}
}

// TestBalancerStickiness is the connection table's promise, per method:
// which flows keep their backend when the set changes.
func TestBalancerStickiness(t *testing.T) {
	const flows = 3000
	type change struct {
		name string
		set  func([]Backend) []Backend
		// keepTCP: every TCP flow not on the changed backend keeps its
		// backend; flows on it move unless keepOwn.
		keepOwn bool
	}
	extra := Backend{ID: 9, Addr: netip.MustParseAddr("10.0.0.99"), Weight: 1}
	changes := []change{
		{"a backend added", func(bs []Backend) []Backend { return append(bs, extra) }, true},
		{"backend 2 draining", func(bs []Backend) []Backend { return withState(bs, 2, Draining) }, true},
		{"backend 2 down", func(bs []Backend) []Backend { return withState(bs, 2, Down) }, false},
		{"backend 2 removed", func(bs []Backend) []Backend {
			return slices.DeleteFunc(slices.Clone(bs), func(b Backend) bool { return b.ID == 2 })
		}, false},
		{"backend 2 weight tripled", func(bs []Backend) []Backend { bs = slices.Clone(bs); bs[2].Weight = 3; return bs }, true},
	}
	for _, m := range []Method{MethodMaglev, MethodRoundRobin} {
		for _, c := range changes {
			clk := clock.NewFake()
			b := newBalancer(t, BalancerConfig{Method: m}, clk, backends(5))
			before := make([]int, flows)
			for i := range before {
				before[i] = b.Pick(flow(i), clk.Now())
			}
			next := c.set(backends(5))
			if err := b.SetBackends(next); err != nil {
				t.Fatal(err)
			}
			// Without the connection table, Maglev would move flows the
			// new table places elsewhere: the test means something only
			// if there are some.
			wouldMove := 0
			if table, _ := NewMaglev(next, 0); m == MethodMaglev {
				for i := range before {
					if k := flow(i); table.Lookup(k.Hash()) != before[i] {
						wouldMove++
					}
				}
				if wouldMove == 0 {
					t.Fatalf("%v, %s: the new table moves no flow; want a change that moves some", m, c.name)
				}
			}
			clk.Advance(time.Second)
			moved := 0
			for i := range before {
				got := b.Pick(flow(i), clk.Now())
				own := before[i] == 2
				switch {
				case got < 0:
					t.Fatalf("%v, %s: flow %d got no backend", m, c.name, i)
				case (!own || c.keepOwn) && got != before[i]:
					t.Fatalf("%v, %s: TCP flow %d moved from backend %d to %d; want it kept", m, c.name, i, before[i], got)
				case own && !c.keepOwn && got == 2:
					t.Fatalf("%v, %s: TCP flow %d stayed on backend 2; want it moved", m, c.name, i)
				case got != before[i]:
					moved++
				}
			}
			// A new flow never goes to a draining backend.
			if c.name == "backend 2 draining" {
				for i := flows; i < 2*flows; i++ {
					if got := b.Pick(flow(i), clk.Now()); got == 2 {
						t.Fatalf("%v, %s: new flow %d went to the draining backend 2", m, c.name, i)
					}
				}
			}
			t.Logf("%v, %s: %d of %d TCP flows moved (the table alone would move %d)", m, c.name, moved, flows, wouldMove)
		}
	}
}

// TestBalancerMaglevUDPFollowsTable checks that Maglev keeps only TCP in
// the connection table: UDP flows follow the table, so when a backend is
// added the UDP flows the new table gives it move there.
func TestBalancerMaglevUDPFollowsTable(t *testing.T) {
	clk := clock.NewFake()
	b := newBalancer(t, BalancerConfig{}, clk, backends(4))
	for i := range 2000 {
		b.Pick(udpFlow(i), clk.Now())
	}
	if n := b.ConnTable().Len(); n != 0 {
		t.Errorf("after 2000 UDP flows: connection table holds %d, want 0", n)
	}
	bs := append(backends(4), Backend{ID: 4, Addr: netip.MustParseAddr("10.0.0.99"), Weight: 1})
	if err := b.SetBackends(bs); err != nil {
		t.Fatal(err)
	}
	table, _ := NewMaglev(bs, 0)
	onNew := 0
	for i := range 2000 {
		k := udpFlow(i)
		got := b.Pick(k, clk.Now())
		if want := table.Lookup(k.Hash()); got != want {
			t.Fatalf("UDP flow %d: backend %d, the table says %d", i, got, want)
		}
		if got == 4 {
			onNew++
		}
	}
	if onNew == 0 {
		t.Errorf("no UDP flow went to the added backend; want about a fifth")
	}
}

// TestBalancerRoundRobin checks that new flows take the serving backends
// in turn, in address order, and that a flow, whatever its kind, keeps
// its backend.
func TestBalancerRoundRobin(t *testing.T) {
	clk := clock.NewFake()
	bs := backends(4)
	slices.Reverse(bs) // the given order must not matter
	bs = withState(bs, 1, Draining)
	b := newBalancer(t, BalancerConfig{Method: MethodRoundRobin}, clk, bs)
	var got []int
	keys := []FlowKey{flow(1), udpFlow(1), key4(ipA, ipC, 0, 0, 0), flow(2), udpFlow(2), key6(1, 2, 0, 0, 0)}
	for _, k := range keys {
		got = append(got, b.Pick(k, clk.Now()))
	}
	if want := []int{0, 2, 3, 0, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("six new flows went to %v, want %v (serving backends in address order, in turn)", got, want)
	}
	for i, k := range keys {
		for range 3 {
			if again := b.Pick(k, clk.Now()); again != got[i] {
				t.Errorf("flow %d again: backend %d, want %d (kept)", i, again, got[i])
			}
		}
	}
}

// TestBalancerHash checks the stateless method: serving backends only,
// the same flow on the same backend, a fair spread, and no memory (a
// flow follows the set).
func TestBalancerHash(t *testing.T) {
	clk := clock.NewFake()
	b := newBalancer(t, BalancerConfig{Method: MethodHash}, clk, withState(backends(5), 3, Draining))
	if b.ConnTable() != nil {
		t.Errorf("hash method has a connection table, want none")
	}
	count := make([]int, 5)
	const flows = 50000
	for i := range flows {
		id := b.Pick(flow(i), clk.Now())
		if id < 0 || id == 3 || id >= 5 {
			t.Fatalf("flow %d: backend %d, want a serving one (0, 1, 2, 4)", i, id)
		}
		if again := b.Pick(flow(i), clk.Now()); again != id {
			t.Fatalf("flow %d: backend %d then %d, want the same", i, id, again)
		}
		count[id]++
	}
	for _, id := range []int{0, 1, 2, 4} {
		if c := count[id]; c < flows/4*9/10 || c > flows/4*11/10 {
			t.Errorf("backend %d got %d of %d flows, want %d within 10%%", id, c, flows, flows/4)
		}
	}
}

// TestBalancerFragments checks that every fragment of a datagram, first
// included, goes where the addresses alone lead, with every method.
func TestBalancerFragments(t *testing.T) {
	for _, m := range []Method{MethodMaglev, MethodHash, MethodRoundRobin} {
		clk := clock.NewFake()
		b := newBalancer(t, BalancerConfig{Method: m}, clk, backends(7))
		for src := range 50 {
			s := [4]byte{198, 51, 100, byte(src)}
			frames := [][]byte{
				eth(macB, macA, nil, typeIPv4, ip4(s, ipB, protoUDP, 0x2000, l4(uint16(1000+src), 53))),
				eth(macB, macA, nil, typeIPv4, ip4(s, ipB, protoUDP, 0x2000|185, []byte("middle"))),
				eth(macB, macA, nil, typeIPv4, ip4(s, ipB, protoUDP, 370, []byte("last"))),
			}
			var ids []int
			for _, f := range frames {
				k, ok := FlowKeyOf(f)
				if !ok {
					t.Fatalf("fragment from %v: no key", s)
				}
				ids = append(ids, b.Pick(k, clk.Now()))
			}
			if ids[0] < 0 || ids[1] != ids[0] || ids[2] != ids[0] {
				t.Fatalf("%v: fragments from %v went to %v, want one backend", m, s, ids)
			}
		}
	}
}

// TestBalancerAgreesAcrossHosts builds balancers as two hosts behind one
// ECMP router would: the same backends, added in different orders and
// numbered differently. Every flow goes to the same address on both.
func TestBalancerAgreesAcrossHosts(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	bs := backends(6)
	bs[1].Weight, bs[4].State = 4, Down
	other := slices.Clone(bs)
	r.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
	for i := range other {
		other[i].ID = 10 + i
	}
	addrOf := func(set []Backend, id int) netip.Addr {
		for _, b := range set {
			if b.ID == id {
				return b.Addr
			}
		}
		return netip.Addr{}
	}
	for _, m := range []Method{MethodMaglev, MethodHash} {
		clk := clock.NewFake()
		a, b := newBalancer(t, BalancerConfig{Method: m}, clk, bs), newBalancer(t, BalancerConfig{Method: m}, clk, other)
		for i := range 20000 {
			k := flow(i)
			if i%2 == 1 {
				k = udpFlow(i)
			}
			if x, y := addrOf(bs, a.Pick(k, clk.Now())), addrOf(other, b.Pick(k, clk.Now())); x != y || !x.IsValid() {
				t.Fatalf("%v: flow %d went to %v on one host, %v on the other; want the same backend", m, i, x, y)
			}
		}
	}
}

// TestBalancerConcurrent picks from several workers while the set flips
// between two generations; run it with -race. Every pick is a backend of
// one of the generations.
func TestBalancerConcurrent(t *testing.T) {
	for _, m := range []Method{MethodMaglev, MethodHash, MethodRoundRobin} {
		clk := clock.NewFake()
		gen := [2][]Backend{backends(4), withState(append(backends(4), Backend{ID: 7, Addr: netip.MustParseAddr("10.0.7.7"), Weight: 2}), 1, Down)}
		b := newBalancer(t, BalancerConfig{Method: m, TableSize: 1009}, clk, gen[0])
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20000 {
					k := flow(w*100000 + i%3000)
					if id := b.Pick(k, clk.Now()); id != 0 && id != 1 && id != 2 && id != 3 && id != 7 {
						errs <- fmt.Errorf("%v: flow %d: backend %d, in neither generation", m, i, id)
						return
					}
				}
			}()
		}
		for i := range 200 {
			if err := b.SetBackends(gen[i%2]); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Millisecond)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// TestBalancerAllocs checks that the per-frame path, FlowKeyOf then Pick,
// allocates nothing with any method, for new flows and known ones.
func TestBalancerAllocs(t *testing.T) {
	tcp, udp := tcp4(40000, 443), eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoUDP, 0, l4(5353, 53)))
	for _, m := range []Method{MethodMaglev, MethodHash, MethodRoundRobin} {
		clk := clock.NewFake()
		b := newBalancer(t, BalancerConfig{Method: m, ConnTableSize: 64}, clk, backends(4))
		now := clk.Now()
		port := uint16(0)
		cases := []struct {
			name string
			run  func()
		}{
			{"known TCP flow", func() { k, _ := FlowKeyOf(tcp); b.Pick(k, now) }},
			{"UDP flow", func() { k, _ := FlowKeyOf(udp); b.Pick(k, now) }},
			{"new TCP flow, table full", func() {
				port++
				k, _ := FlowKeyOf(tcp)
				k.SrcPort = port
				b.Pick(k, now)
			}},
		}
		for _, c := range cases {
			if got := testing.AllocsPerRun(1, func() {
				for range 200 {
					c.run()
				}
			}); got != 0 {
				t.Errorf("%v, %s: %v allocations in 200 frames, want 0", m, c.name, got)
			}
		}
	}
}

func BenchmarkPickFrame(b *testing.B) {
	frames := make([][]byte, 1024)
	for i := range frames {
		frames[i] = tcp4(uint16(1024+i), 443)
	}
	for _, m := range []Method{MethodMaglev, MethodHash, MethodRoundRobin} {
		b.Run(m.String(), func(b *testing.B) {
			clk := clock.NewFake()
			bal := newBalancer(b, BalancerConfig{Method: m}, clk, backends(8))
			now := clk.Now()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k, _ := FlowKeyOf(frames[i&1023])
				bal.Pick(k, now)
				i++
			}
		})
	}
}
