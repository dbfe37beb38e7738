package bridge

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
)

// TestAddStatic checks which static entries AddStatic accepts.
func TestAddStatic(t *testing.T) {
	tests := []struct {
		name    string
		mac     frame.MAC
		vlan    uint16
		port    string
		wantErr string // "" for success
	}{
		{"unicast on a member", stX, 0, "a", ""},
		{"unicast in VLAN 4095", stX, 4095, "a", ""},
		{"multicast address", multicast4, 0, "a", "bridge0: static 01:00:5e:00:00:01: multicast address"},
		{"broadcast address", frame.Broadcast, 0, "a", "multicast address"},
		{"zero address", frame.MAC{}, 0, "a", "zero address"},
		{"VLAN 4096", stX, 4096, "a", "VLAN ID out of range"},
		{"unknown port", stX, 0, "eth9", "bridge0: static 02:00:00:00:00:99 on eth9: not a member"},
		{"span port", stX, 0, "span0", "span0: not a member"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "a", "b")
			if err := fx.b.AddSpan(newTestPort("span0", false)); err != nil {
				t.Fatal(err)
			}
			err := fx.b.AddStatic(tc.mac, tc.vlan, tc.port)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("AddStatic = %v, want success", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("AddStatic = %v, want an error containing %q", err, tc.wantErr)
			case tc.wantErr != "":
				if got := fx.b.Addrs(); len(got) != 0 {
					t.Errorf("table after a refused static = %s, want empty", addrsString(got))
				}
				return
			}
			want := []Addr{{MAC: tc.mac, VLAN: tc.vlan, Port: tc.port, Static: true}}
			if got := fx.b.Addrs(); !slices.Equal(got, want) {
				t.Errorf("table = %s, want %s", addrsString(got), addrsString(want))
			}
		})
	}
}

// TestAddStaticReplacesDynamic checks that a static entry takes over a
// learned one for the same address, without counting it twice.
func TestAddStaticReplacesDynamic(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.send("a", ip4(stB, stX))
	if err := fx.b.AddStatic(stX, 0, "b"); err != nil {
		t.Fatal(err)
	}
	want := []Addr{{MAC: stX, Port: "b", Static: true}}
	if got := fx.b.Addrs(); !slices.Equal(got, want) {
		t.Errorf("table = %s, want %s", addrsString(got), addrsString(want))
	}
	if got := fx.b.fdb.len(); got != 1 {
		t.Errorf("table size = %d, want 1", got)
	}
}

// TestDeleteAddr checks that DeleteAddr removes an address in every VLAN,
// static or dynamic, and nothing else.
func TestDeleteAddr(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.send("a", ip4(stB, stX), tagged(stB, stX, frame.TypeVLAN, 5, frame.TypeIPv4, 64), ip4(stB, stA))
	if err := fx.b.AddStatic(stX, 9, "b"); err != nil {
		t.Fatal(err)
	}
	n, err := fx.b.DeleteAddr(stX)
	if err != nil || n != 3 {
		t.Errorf("DeleteAddr(%s) = %d, %v, want 3, nil", stX, n, err)
	}
	want := []Addr{{MAC: stA, Port: "a"}}
	if got := fx.b.Addrs(); !slices.Equal(got, want) {
		t.Errorf("table = %s, want %s", addrsString(got), addrsString(want))
	}
	n, err = fx.b.DeleteAddr(stX)
	if wantErr := "bridge0: delete address 02:00:00:00:00:99: not in the address table"; n != 0 || err == nil || err.Error() != wantErr {
		t.Errorf("second DeleteAddr(%s) = %d, %v, want 0, %q", stX, n, err, wantErr)
	}
}

// TestDeleteEntry checks that DeleteEntry removes one address in one VLAN,
// static or dynamic, and nothing else.
func TestDeleteEntry(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.send("a", ip4(stB, stX), tagged(stB, stX, frame.TypeVLAN, 5, frame.TypeIPv4, 64))
	if err := fx.b.AddStatic(stX, 9, "b"); err != nil {
		t.Fatal(err)
	}
	for _, vlan := range []uint16{9, 5} {
		if err := fx.b.DeleteEntry(stX, vlan); err != nil {
			t.Errorf("DeleteEntry(%s, %d): want nil, got %v", stX, vlan, err)
		}
	}
	want := []Addr{{MAC: stX, Port: "a"}}
	if got := fx.b.Addrs(); !slices.Equal(got, want) {
		t.Errorf("table = %s, want %s", addrsString(got), addrsString(want))
	}
	if got := fx.b.fdb.len(); got != 1 {
		t.Errorf("table size = %d, want 1", got)
	}
	err := fx.b.DeleteEntry(stX, 5)
	if wantErr := "bridge0: delete address 02:00:00:00:00:99 vlan 5: not in the address table"; err == nil || err.Error() != wantErr {
		t.Errorf("second DeleteEntry(%s, 5) = %v, want %q", stX, err, wantErr)
	}
}

// TestFlush checks that Flush(false) keeps static entries and Flush(true)
// does not.
func TestFlush(t *testing.T) {
	tests := []struct {
		all  bool
		want []Addr
	}{
		{false, []Addr{{MAC: stX, Port: "b", Static: true}}},
		{true, []Addr{}},
	}
	for _, tc := range tests {
		fx := newFixture(t, "a", "b")
		fx.send("a", ip4(stB, stA))
		fx.b.AddStatic(stX, 0, "b")
		fx.b.Flush(tc.all)
		if got := fx.b.Addrs(); !slices.Equal(got, tc.want) {
			t.Errorf("after Flush(%v): table = %s, want %s", tc.all, addrsString(got), addrsString(tc.want))
		}
	}
}

// TestFlushPort checks that FlushPort removes only the named member's
// addresses, static ones only when all is set.
func TestFlushPort(t *testing.T) {
	tests := []struct {
		all  bool
		want []Addr
	}{
		{false, []Addr{{MAC: stB, Port: "b"}, {MAC: stX, Port: "a", Static: true}}},
		{true, []Addr{{MAC: stB, Port: "b"}}},
	}
	for _, tc := range tests {
		fx := newFixture(t, "a", "b")
		fx.send("a", ip4(stB, stA))
		fx.send("b", ip4(stA, stB))
		fx.b.AddStatic(stX, 0, "a")
		if n, err := fx.b.FlushPort("a", tc.all); err != nil || n != 3-len(tc.want) {
			t.Errorf("FlushPort(a, %v) = %d, %v, want %d, nil", tc.all, n, err, 3-len(tc.want))
		}
		if got := fx.b.Addrs(); !slices.Equal(got, tc.want) {
			t.Errorf("after FlushPort(a, %v): table = %s, want %s", tc.all, addrsString(got), addrsString(tc.want))
		}
	}
	fx := newFixture(t, "a")
	if _, err := fx.b.FlushPort("c", false); err == nil || err.Error() != "bridge0: flush c: not a member" {
		t.Errorf("FlushPort(c): want \"bridge0: flush c: not a member\", got %v", err)
	}
}

// TestAddrsSortedWithAges checks the order of Addrs (VLAN, then MAC) and
// the ages it reports.
func TestAddrsSortedWithAges(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.send("a", tagged(stB, mac(3), frame.TypeVLAN, 2, frame.TypeIPv4, 64))
	fx.clk.Advance(10 * time.Second)
	fx.send("b", ip4(stA, mac(2)))
	fx.send("a", ip4(stB, mac(1)))
	fx.b.AddStatic(mac(4), 1, "b")
	fx.clk.Advance(5 * time.Second)
	want := []Addr{
		{MAC: mac(1), VLAN: 0, Port: "a", Age: 5 * time.Second},
		{MAC: mac(2), VLAN: 0, Port: "b", Age: 5 * time.Second},
		{MAC: mac(4), VLAN: 1, Port: "b", Static: true},
		{MAC: mac(3), VLAN: 2, Port: "a", Age: 15 * time.Second},
	}
	if got := fx.b.Addrs(); !slices.Equal(got, want) {
		t.Errorf("table = %s\nwant    %s", addrsString(got), addrsString(want))
	}
}

// TestTableFull checks what happens when the table is full: new addresses
// are not learned and counted in Exceeded, frames to them still flood,
// known addresses are still refreshed and moved, static entries count
// toward the size and are refused when there is no room.
func TestTableFull(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout, MaxAddr: 3}, true, "a", "b", "c")
	fx.b.AddStatic(stX, 0, "c")
	fx.send("a", ip4(stB, mac(1)))
	fx.send("b", ip4(stA, mac(2)))
	before := fx.b.Stats()
	fx.send("a", ip4(mac(2), mac(3)))
	wantDelta(t, "frame from a new address with the table full", before, fx.b.Stats(),
		map[string]uint64{"Exceeded": 1, "Learned": 0, "Forwarded": 1})
	f := ip4(mac(3), mac(2))
	fx.reset()
	fx.send("b", f)
	if got, want := fx.receivers(f), []string{"a", "c"}; !slices.Equal(got, want) {
		t.Errorf("frame to an address not learned went to %v, want flooded to %v", got, want)
	}
	fx.send("c", ip4(stA, mac(2)))
	if got := fx.b.Member("c"); fx.b.fdb.lookup(fdbKey(0, mac(2).Key()), 0) != got {
		t.Errorf("known address did not move to c with the table full")
	}
	if err := fx.b.AddStatic(mac(7), 0, "a"); err == nil || !strings.Contains(err.Error(), "address table full (3 entries)") {
		t.Errorf("AddStatic with the table full = %v, want an address-table-full error", err)
	}
	if got := len(fx.b.Addrs()); got != 3 {
		t.Errorf("table holds %d entries, want 3 (MaxAddr)", got)
	}
	if _, err := fx.b.DeleteAddr(mac(1)); err != nil {
		t.Fatal(err)
	}
	before = fx.b.Stats()
	fx.send("a", ip4(stB, mac(3)))
	wantDelta(t, "frame from a new address after one entry was deleted", before, fx.b.Stats(),
		map[string]uint64{"Exceeded": 0, "Learned": 1})
}

// TestSetMaxAddr checks that lowering MaxAddr trims the least recently
// seen dynamic entries and keeps static ones.
func TestSetMaxAddr(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.b.AddStatic(stX, 0, "b")
	for i := 1; i <= 4; i++ {
		fx.send("a", ip4(stB, mac(i)))
		fx.clk.Advance(time.Second)
	}
	if err := fx.b.SetMaxAddr(3); err != nil {
		t.Fatalf("SetMaxAddr(3) = %v", err)
	}
	var got []frame.MAC
	for _, a := range fx.b.Addrs() {
		got = append(got, a.MAC)
	}
	if want := []frame.MAC{mac(3), mac(4), stX}; !slices.Equal(got, want) {
		t.Errorf("table after SetMaxAddr(3) holds %v, want the two most recent and the static: %v", got, want)
	}
	if err := fx.b.SetMaxAddr(0); err != nil {
		t.Fatalf("SetMaxAddr(0) = %v", err)
	}
	if got := fx.b.Addrs(); len(got) != 1 || !got[0].Static {
		t.Errorf("table after SetMaxAddr(0) = %s, want the static entry only", addrsString(got))
	}
	if err := fx.b.SetMaxAddr(-1); err == nil || err.Error() != "bridge0: maxaddr -1: negative" {
		t.Errorf("SetMaxAddr(-1) = %v, want a negative-size error", err)
	}
}

// TestRemovePortForgetsAddresses checks that removing a member forgets the
// dynamic and static addresses on it, closes it, and no longer sends to it.
func TestRemovePortForgetsAddresses(t *testing.T) {
	fx := newFixture(t, "a", "b", "c")
	fx.send("b", ip4(stA, stB))
	fx.b.AddStatic(stX, 0, "b")
	fx.send("a", ip4(stC, stA))
	if err := fx.b.RemovePort("b"); err != nil {
		t.Fatalf("RemovePort(b) = %v", err)
	}
	want := []Addr{{MAC: stA, Port: "a"}}
	if got := fx.b.Addrs(); !slices.Equal(got, want) {
		t.Errorf("table = %s, want %s", addrsString(got), addrsString(want))
	}
	if !fx.ports["b"].isClosed() {
		t.Errorf("b is open after RemovePort, want closed")
	}
	delete(fx.ports, "b")
	f := ip4(stB, stA)
	fx.reset()
	fx.send("a", f)
	if got, want := fx.receivers(f), []string{"c"}; !slices.Equal(got, want) {
		t.Errorf("frame to b's old station went to %v, want %v", got, want)
	}
	for _, tc := range []struct{ name, want string }{
		{"b", "bridge0: delete b: not a member"},
		{"eth9", "bridge0: delete eth9: not a member"},
	} {
		if err := fx.b.RemovePort(tc.name); err == nil || err.Error() != tc.want {
			t.Errorf("RemovePort(%s) = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestAddPortTwice checks that a name is a member or a span port only once.
func TestAddPortTwice(t *testing.T) {
	fx := newFixture(t, "a")
	fx.b.AddSpan(newTestPort("s", false))
	tests := []struct {
		name string
		add  func() error
		want string
	}{
		{"member again", func() error { return fx.b.AddPort(newTestPort("a", false), DefaultPortFlags()) }, "bridge0: add a: already a member"},
		{"member as span", func() error { return fx.b.AddSpan(newTestPort("a", false)) }, "bridge0: add a: already a member"},
		{"span as member", func() error { return fx.b.AddPort(newTestPort("s", false), DefaultPortFlags()) }, "bridge0: add s: already a span port"},
		{"nil port", func() error { return fx.b.AddPort(nil, DefaultPortFlags()) }, "bridge0: add: no port"},
	}
	for _, tc := range tests {
		if err := tc.add(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestPorts checks what Ports reports.
func TestPorts(t *testing.T) {
	fx := newFixture(t, "a")
	fx.add("b", PortFlags{BlockNonIP: true}, true)
	fx.b.AddSpan(newTestPort("s", false))
	fx.ports["a"].SetLink(0)
	want := []PortInfo{
		{Name: "a", Flags: DefaultPortFlags(), Link: 0, MTU: 1500},
		{Name: "b", Flags: PortFlags{BlockNonIP: true}, Link: 1, MTU: 1500},
		{Name: "s", Span: true, Link: 1, MTU: 1500},
	}
	if got := fx.b.Ports(); !slices.Equal(got, want) {
		t.Errorf("Ports() = %+v\nwant      %+v", got, want)
	}
}

// TestCloseClosesPorts checks that Close closes every port, empties the
// table, refuses new ports, and may be called again.
func TestCloseClosesPorts(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.send("a", ip4(stB, stA))
	if err := fx.b.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	for name, p := range fx.ports {
		if !p.isClosed() {
			t.Errorf("%s open after Close, want closed", name)
		}
	}
	if got := fx.b.Addrs(); len(got) != 0 {
		t.Errorf("table after Close = %s, want empty", addrsString(got))
	}
	if err := fx.b.AddPort(newTestPort("c", false), DefaultPortFlags()); err == nil || err.Error() != "bridge0: add c: bridge closed" {
		t.Errorf("AddPort after Close = %v, want a bridge-closed error", err)
	}
	if err := fx.b.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

// modelEntry is an address in the naive model of the table.
type modelEntry struct {
	port   *Member
	seen   int64
	static bool
}

// fdbModel is the obvious, slow address table the fdb is checked against.
type fdbModel struct {
	m       map[uint64]modelEntry
	max     int
	timeout int64
}

func (md *fdbModel) expired(e modelEntry, now int64) bool {
	return !e.static && md.timeout > 0 && now-e.seen >= md.timeout
}

func (md *fdbModel) learn(key uint64, m *Member, now int64) learnResult {
	e, ok := md.m[key]
	switch {
	case ok && e.static && e.port == m:
		return learnRefreshed
	case ok && e.static:
		return learnStatic
	case ok && md.expired(e, now):
		md.m[key] = modelEntry{port: m, seen: now}
		return learnNew
	case ok && e.port != m:
		md.m[key] = modelEntry{port: m, seen: now}
		return learnMoved
	case ok:
		e.seen = max(e.seen, now)
		md.m[key] = e
		return learnRefreshed
	case len(md.m) >= md.max:
		return learnFull
	}
	md.m[key] = modelEntry{port: m, seen: now}
	return learnNew
}

func (md *fdbModel) lookup(key uint64, now int64) *Member {
	if e, ok := md.m[key]; ok && !md.expired(e, now) {
		return e.port
	}
	return nil
}

func (md *fdbModel) addrs(now int64) []Addr {
	out := []Addr{}
	for k, e := range md.m {
		if md.expired(e, now) {
			continue
		}
		a := Addr{MAC: frame.MACFromKey(k & macMask), VLAN: uint16(k >> 48), Port: e.port.name, Static: e.static}
		if !e.static {
			a.Age = time.Duration(now - e.seen)
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Addr) int {
		return cmp.Or(cmp.Compare(a.VLAN, b.VLAN), cmp.Compare(a.MAC.Key(), b.MAC.Key()))
	})
	return out
}

func (md *fdbModel) deleteWhere(drop func(modelEntry) bool) int {
	n := 0
	for k, e := range md.m {
		if drop(e) {
			delete(md.m, k)
			n++
		}
	}
	return n
}

// TestFDBMatchesModel runs random operations on the fdb and on a naive map
// and checks that they agree after each one (as wireguard-go's
// allowedips_rand_test does for its trie).
func TestFDBMatchesModel(t *testing.T) {
	const (
		ops      = 200000
		nMACs    = 40
		nVLANs   = 3
		nMembers = 4
		maxAddr  = 64
	)
	rng := rand.New(rand.NewPCG(1, 2))
	members := make([]*Member, nMembers)
	for i := range members {
		members[i] = &Member{name: string(rune('a' + i))}
	}
	f := newFDB(maxAddr, 0)
	md := &fdbModel{m: map[uint64]modelEntry{}, max: maxAddr}
	var now int64
	randKey := func() uint64 {
		// Some MACs share their low bits but differ in their OUI, so that
		// several land in one shard.
		m := mac(rng.IntN(nMACs)).Key() | uint64(rng.IntN(2))<<44
		return fdbKey(uint16(rng.IntN(nVLANs)), m)
	}
	for i := range ops {
		key, m := randKey(), members[rng.IntN(nMembers)]
		var what string
		switch op := rng.IntN(100); {
		case op < 50:
			what = "learn"
			if got, want := f.learn(key, m, now), md.learn(key, m, now); got != want {
				t.Fatalf("op %d: learn(%x, %s) = %d, want %d", i, key, m.name, got, want)
			}
		case op < 75:
			what = "lookup"
			if got, want := f.lookup(key, now), md.lookup(key, now); got != want {
				t.Fatalf("op %d: lookup(%x) = %v, want %v", i, key, got, want)
			}
		case op < 80:
			what = "advance"
			now += rng.Int64N(int64(20 * time.Second))
		case op < 83:
			what = "static"
			_, exists := md.m[key]
			ok := exists || len(md.m) < md.max
			if ok {
				md.m[key] = modelEntry{port: m, seen: now, static: true}
			}
			if got := f.addStatic(key, m, now); got != ok {
				t.Fatalf("op %d: addStatic(%x) = %v, want %v", i, key, got, ok)
			}
		case op < 86:
			what = "delete"
			mac := key & macMask
			want := 0
			for k := range md.m {
				if k&macMask == mac {
					delete(md.m, k)
					want++
				}
			}
			if got := f.deleteMAC(mac); got != want {
				t.Fatalf("op %d: deleteMAC = %d, want %d", i, got, want)
			}
		case op < 89:
			what = "flush member"
			all := rng.IntN(2) == 0
			want := md.deleteWhere(func(e modelEntry) bool { return (all || !e.static) && e.port == m })
			if got := f.flush(all, m); got != want {
				t.Fatalf("op %d: flush(%v, %s) = %d, want %d", i, all, m.name, got, want)
			}
		case op < 90:
			what = "flush"
			all := rng.IntN(4) == 0
			want := md.deleteWhere(func(e modelEntry) bool { return all || !e.static })
			if got := f.flush(all, nil); got != want {
				t.Fatalf("op %d: flush(%v) = %d, want %d", i, all, got, want)
			}
		case op < 95:
			what = "expire"
			want := md.deleteWhere(func(e modelEntry) bool { return md.expired(e, now) })
			if got := f.expire(now); got != want {
				t.Fatalf("op %d: expire = %d, want %d", i, got, want)
			}
		default:
			what = "timeout"
			d := []int64{0, int64(30 * time.Second), int64(240 * time.Second)}[rng.IntN(3)]
			md.timeout = d
			f.timeout.Store(d)
		}
		if got, want := f.len(), len(md.m); got != want {
			t.Fatalf("op %d (%s): size %d, want %d", i, what, got, want)
		}
		if i%97 == 0 {
			if got, want := f.addrs(now), md.addrs(now); !slices.Equal(got, want) {
				t.Fatalf("op %d (%s): table\n%s\nwant\n%s", i, what, addrsString(got), addrsString(want))
			}
		}
	}
}
