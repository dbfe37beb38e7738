package trunk

import (
	"slices"
	"strings"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

func TestParseProto(t *testing.T) {
	cases := []struct {
		in      string
		want    Proto
		wantErr bool
	}{
		{"failover", ProtoFailover, false},
		{"RoundRobin", ProtoRoundRobin, false},
		{" loadbalance ", ProtoLoadBalance, false},
		{"broadcast", ProtoBroadcast, false},
		{"lacp", ProtoLACP, false},
		{"none", ProtoNone, false},
		{"bonding", "", true},
		{"", "", true},
	}
	for _, c := range cases {
		got, err := ParseProto(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseProto(%q) = %q, %v; want %q, error=%v", c.in, got, err, c.want, c.wantErr)
		}
	}
}

func TestNewProtocol(t *testing.T) {
	cases := []struct {
		in      Proto
		want    Proto
		wantErr string
	}{
		{ProtoFailover, ProtoFailover, ""},
		{"", ProtoFailover, ""},
		{ProtoRoundRobin, ProtoRoundRobin, ""},
		{ProtoLoadBalance, ProtoLoadBalance, ""},
		{ProtoBroadcast, ProtoBroadcast, ""},
		{ProtoNone, ProtoNone, ""},
		{ProtoLACP, ProtoLACP, ""},
		{"bogus", "", "unknown trunk protocol"},
	}
	for _, c := range cases {
		p, err := NewProtocol(c.in)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("NewProtocol(%q): error %v, want one containing %q", c.in, err, c.wantErr)
		case c.wantErr == "" && err != nil:
			t.Errorf("NewProtocol(%q): error %v, want %s", c.in, err, c.want)
		case c.wantErr == "" && p.Name() != c.want:
			t.Errorf("NewProtocol(%q).Name() = %q, want %q", c.in, p.Name(), c.want)
		}
	}
}

// TestTxChoice sends a batch of frames through three-port trunks and
// checks how many each far end got, per protocol, priority and link
// states.
func TestTxChoice(t *testing.T) {
	const frames = 12
	cases := []struct {
		name  string
		proto Proto
		prio  [3]int
		down  []int
		want  [3]int
		// wantDrop is Stats().TxNoPort after the batch.
		wantDrop uint64
	}{
		{"failover: first added is primary", ProtoFailover, [3]int{}, nil, [3]int{frames, 0, 0}, 0},
		{"failover: highest priority is primary", ProtoFailover, [3]int{0, 5, 1}, nil, [3]int{0, frames, 0}, 0},
		{"failover: priority ties go to first added", ProtoFailover, [3]int{0, 5, 5}, nil, [3]int{0, frames, 0}, 0},
		{"failover: primary down, next by priority", ProtoFailover, [3]int{0, 5, 1}, []int{1}, [3]int{0, 0, frames}, 0},
		{"failover: first down, second", ProtoFailover, [3]int{}, []int{0}, [3]int{0, frames, 0}, 0},
		{"failover: all down", ProtoFailover, [3]int{}, []int{0, 1, 2}, [3]int{}, frames},
		{"roundrobin: all up", ProtoRoundRobin, [3]int{}, nil, [3]int{4, 4, 4}, 0},
		{"roundrobin: skips down port", ProtoRoundRobin, [3]int{}, []int{1}, [3]int{6, 0, 6}, 0},
		{"roundrobin: one up", ProtoRoundRobin, [3]int{}, []int{0, 2}, [3]int{0, frames, 0}, 0},
		{"broadcast: all up", ProtoBroadcast, [3]int{}, nil, [3]int{frames, frames, frames}, 0},
		{"broadcast: skips down port", ProtoBroadcast, [3]int{}, []int{2}, [3]int{frames, frames, 0}, 0},
		{"loadbalance: one up takes all", ProtoLoadBalance, [3]int{}, []int{0, 1}, [3]int{0, 0, frames}, 0},
		{"loadbalance: all down", ProtoLoadBalance, [3]int{}, []int{0, 1, 2}, [3]int{}, frames},
		{"none: nothing", ProtoNone, [3]int{}, nil, [3]int{}, frames},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, c.proto, PortConfig{Priority: c.prio[0]}, PortConfig{Priority: c.prio[1]}, PortConfig{Priority: c.prio[2]})
			for _, i := range c.down {
				fx.setLink(i, false)
			}
			var batch [][]byte
			for i := 0; i < frames; i++ {
				batch = append(batch, udp4(uint16(i), uint32(i)))
			}
			fx.write(batch...)
			if got := fx.drainCounts(); !slices.Equal(got, c.want[:]) {
				t.Errorf("frames per port = %v, want %v", got, c.want)
			}
			if got := fx.tr.Stats().TxNoPort; got != c.wantDrop {
				t.Errorf("TxNoPort = %d, want %d", got, c.wantDrop)
			}
		})
	}
}

// TestRoundRobinOrder checks that roundrobin takes the up ports in turn,
// frame by frame, across WriteBatch calls.
func TestRoundRobinOrder(t *testing.T) {
	fx := newFixture(t, ProtoRoundRobin, PortConfig{}, PortConfig{}, PortConfig{})
	fx.setLink(1, false)
	for i := 0; i < 6; i++ {
		fx.write(udp4(1, uint32(i)))
	}
	got := [3][]uint32{}
	for i := range fx.far {
		for _, f := range fx.drain(i) {
			got[i] = append(got[i], seqOf(f))
		}
	}
	// Port 0 and port 2 alternate; which one starts is not specified.
	a, b := got[0], got[2]
	if len(a) != 3 || len(b) != 3 || len(got[1]) != 0 {
		t.Fatalf("seqs per port = %v, want 3, 0, 3", got)
	}
	for i := range a {
		if a[i]%2 != a[0]%2 || b[i]%2 != b[0]%2 || a[0]%2 == b[0]%2 {
			t.Fatalf("seqs per port = %v, want ports 0 and 2 to alternate", got)
		}
	}
}

// TestTurnsAgreeWithNth checks that round-robin's turns give frame i of a
// batch the member Set.Nth gives for the position plus i, skipped turns
// (invalid frames) included.
func TestTurnsAgreeWithNth(t *testing.T) {
	sets := []lb.Set{0b11, 0b111, 0b101, 0b1011_0100, 1<<63 | 1, ^lb.Set(0)}
	for _, set := range sets {
		for _, pos := range []uint64{0, 1, 5, 63, 64, 1<<40 + 3} {
			var turn turns
			turn.deal(set, pos)
			for i := range 150 {
				want := set.Nth(pos + uint64(i))
				if i%7 == 3 {
					turn.skip()
					continue
				}
				if got := turn.take(); got != want {
					t.Fatalf("set %#x from %d: frame %d to member %d, want %d (Nth)", uint64(set), pos, i, got, want)
				}
			}
		}
	}
}

// TestRxAcceptance sends frames in from each far end and checks which are
// passed up and which refused.
func TestRxAcceptance(t *testing.T) {
	cases := []struct {
		name  string
		proto Proto
		down  []int
		// accept says, per port, whether its frames are passed up.
		accept [3]bool
	}{
		{"failover: active port only", ProtoFailover, nil, [3]bool{true, false, false}},
		{"failover: primary down, next is active", ProtoFailover, []int{0}, [3]bool{false, true, false}},
		{"roundrobin: any port", ProtoRoundRobin, nil, [3]bool{true, true, true}},
		{"loadbalance: any port", ProtoLoadBalance, nil, [3]bool{true, true, true}},
		{"broadcast: any port", ProtoBroadcast, nil, [3]bool{true, true, true}},
		{"none: nothing", ProtoNone, nil, [3]bool{false, false, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, c.proto, PortConfig{}, PortConfig{}, PortConfig{})
			for _, i := range c.down {
				// Only the trunk end goes down: the far end can still send
				// into it (memport only checks both ends on send).
				fx.near[i].SetLink(platform.LinkDown)
				fx.tr.LinkChanged(fx.near[i].Name())
				fx.near[i].SetLink(platform.LinkUp)
			}
			fx.consume()
			var wantUp, wantRefused uint64
			for i := range fx.far {
				fx.sendFar(i, udp4(uint16(i), uint32(i)), udp4(uint16(i), uint32(100+i)))
				if c.accept[i] {
					wantUp += 2
				} else {
					wantRefused += 2
				}
			}
			fx.settled(6)
			got := map[uint32]bool{}
			for _, f := range fx.received() {
				got[seqOf(f)] = true
			}
			for i := range fx.far {
				if got[uint32(i)] != c.accept[i] || got[uint32(100+i)] != c.accept[i] {
					t.Errorf("port %d: frames passed up = %v, want %v", i, got[uint32(i)], c.accept[i])
				}
			}
			s := fx.tr.Stats()
			if s.RxPackets != wantUp || s.RxRefused != wantRefused {
				t.Errorf("RxPackets, RxRefused = %d, %d; want %d, %d", s.RxPackets, s.RxRefused, wantUp, wantRefused)
			}
		})
	}
}

// TestFailoverSequence walks a failover trunk through link changes: each
// step's TX port is the one wanted right after LinkChanged returns.
func TestFailoverSequence(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{Priority: 1}, PortConfig{Priority: 2}, PortConfig{Priority: 1})
	steps := []struct {
		name string
		port int
		up   bool
		want int // far end that gets the frame; -1: none
	}{
		{"start on the highest priority", -1, true, 1},
		{"primary down: first added of the rest", 1, false, 0},
		{"that one down too: the last", 0, false, 2},
		{"first back: it preempts the last", 0, true, 0},
		{"primary back: traffic returns", 1, true, 1},
		{"all down: nothing", -2, false, -1},
		{"last back: it takes over", 2, true, 2},
	}
	for s, st := range steps {
		switch st.port {
		case -1:
		case -2:
			for i := range fx.near {
				fx.setLink(i, false)
			}
		default:
			fx.setLink(st.port, st.up)
		}
		fx.write(udp4(1, uint32(s)))
		got := -1
		for i, c := range fx.drainCounts() {
			if c > 0 {
				got = i
			}
		}
		if got != st.want {
			t.Fatalf("step %d (%s): frame left by port %d, want %d", s, st.name, got, st.want)
		}
	}
	if got, want := fx.activeCalls(), []bool{true, false, true}; !slices.Equal(got, want) {
		t.Errorf("OnActiveChange calls = %v, want %v", got, want)
	}
}

// TestLoadBalanceFlows checks that a flow always leaves by the same port,
// that flows spread, and that a port going down moves only its flows,
// which return when it comes back.
func TestLoadBalanceFlows(t *testing.T) {
	const flows = 400
	fx := newFixture(t, ProtoLoadBalance, PortConfig{}, PortConfig{}, PortConfig{}, PortConfig{})
	before := flowPorts(fx, flows, 0)
	again := flowPorts(fx, flows, 1)
	perPort := make([]int, len(fx.far))
	for sport, p := range before {
		if again[sport] != p {
			t.Fatalf("flow %d left by port %d, then by %d; want the same port", sport, p, again[sport])
		}
		perPort[p]++
	}
	for p, n := range perPort {
		if n < flows/4/2 {
			t.Errorf("port %d carries %d of %d flows, want at least %d (spread over 4 ports)", p, n, flows, flows/8)
		}
	}
	fx.setLink(2, false)
	down := flowPorts(fx, flows, 2)
	for sport, p := range before {
		if p != 2 && down[sport] != p {
			t.Fatalf("flow %d moved from port %d to %d when port 2 went down; want it to stay", sport, p, down[sport])
		}
		if down[sport] == 2 {
			t.Fatalf("flow %d left by port 2 while it was down", sport)
		}
	}
	fx.setLink(2, true)
	back := flowPorts(fx, flows, 3)
	for sport, p := range before {
		if back[sport] != p {
			t.Fatalf("flow %d was on port %d, on %d after port 2 came back; want it back", sport, p, back[sport])
		}
	}
}

// TestSlowProtocolsNotDelivered sends slow-protocols frames (and a data
// frame) into every protocol: the slow ones reach the protocol, never
// ReadBatch.
func TestSlowProtocolsNotDelivered(t *testing.T) {
	for _, proto := range []Proto{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast, ProtoNone} {
		t.Run(string(proto), func(t *testing.T) {
			fx := newFixture(t, proto, PortConfig{}, PortConfig{})
			fx.consume()
			for i := range fx.far {
				fx.sendFar(i, slowFrame(farMAC(i)), udp4(1, 7), slowFrame(farMAC(i)))
			}
			fx.settled(6)
			for _, f := range fx.received() {
				if frame.Ethernet(f).IsSlowProtocol() {
					t.Fatalf("ReadBatch returned a slow-protocols frame: % x", f[:16])
				}
			}
			if got := fx.tr.Stats().RxControl; got != 4 {
				t.Errorf("RxControl = %d, want 4", got)
			}
		})
	}
}

// TestSetProtocolAtRuntime switches protocols under a trunk with ports: the
// new one takes the existing ports at once.
func TestSetProtocolAtRuntime(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{}, PortConfig{})
	steps := []struct {
		proto Proto
		want  []int
	}{
		{ProtoBroadcast, []int{1, 1}},
		{ProtoNone, []int{0, 0}},
		{ProtoFailover, []int{1, 0}},
		{ProtoRoundRobin, []int{1, 1}}, // two frames, one per port
	}
	for _, st := range steps {
		if err := fx.tr.SetProtocol(builtin(t, st.proto)); err != nil {
			t.Fatalf("SetProtocol(%s): %v", st.proto, err)
		}
		if got := fx.tr.Proto(); got != st.proto {
			t.Fatalf("Proto() = %s after SetProtocol(%s)", got, st.proto)
		}
		frames := [][]byte{udp4(1, 1)}
		if st.proto == ProtoRoundRobin {
			frames = append(frames, udp4(1, 2))
		}
		fx.write(frames...)
		if got := fx.drainCounts(); !slices.Equal(got, st.want) {
			t.Errorf("%s: frames per port = %v, want %v", st.proto, got, st.want)
		}
	}
}

// TestPortsFlags checks the trunk(4) words Ports reports.
func TestPortsFlags(t *testing.T) {
	cases := []struct {
		proto Proto
		down  []int
		want  []string
	}{
		{ProtoFailover, nil, []string{"master,active,collecting,distributing", "", ""}},
		{ProtoFailover, []int{0}, []string{"master", "active,collecting,distributing", ""}},
		{ProtoLoadBalance, []int{1}, []string{"master,active,collecting,distributing", "", "active,collecting,distributing"}},
		{ProtoNone, nil, []string{"master", "", ""}},
	}
	for _, c := range cases {
		fx := newFixture(t, c.proto, PortConfig{Priority: 3}, PortConfig{}, PortConfig{})
		for _, i := range c.down {
			fx.setLink(i, false)
		}
		var got []string
		for _, p := range fx.tr.Ports() {
			got = append(got, strings.Join(p.Flags, ","))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s, down %v: flags = %q, want %q", c.proto, c.down, got, c.want)
		}
	}
}

func TestAddRemoveErrors(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{})
	dup, dupFar := newMemPair("eth0")
	defer dup.Close()
	defer dupFar.Close()
	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"add a port twice", func() error { return fx.tr.AddPort(dup, PortConfig{}) }, "trunk0: add eth0: already a port"},
		{"add nil", func() error { return fx.tr.AddPort(nil, PortConfig{}) }, "trunk0: add: no port"},
		{"remove unknown", func() error { return fx.tr.RemovePort("eth9") }, "trunk0: delete eth9: not a port"},
		{"set nil protocol", func() error { return fx.tr.SetProtocol(nil) }, "trunk0: set proto: no protocol"},
	}
	for _, c := range cases {
		if err := c.do(); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	_ = fx.tr.Close()
	late, lateFar := newMemPair("eth5")
	defer late.Close()
	defer lateFar.Close()
	if err := fx.tr.AddPort(late, PortConfig{}); err == nil || err.Error() != "trunk0: add eth5: trunk closed" {
		t.Errorf("add after Close: error %v, want %q", err, "trunk0: add eth5: trunk closed")
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name, trunk string
		opts        Options
		want        string
	}{
		{"empty name", "", Options{}, "name must be 1 to 15 bytes"},
		{"long name", "trunk0123456789x", Options{}, "name must be 1 to 15 bytes"},
		{"short MAC", "trunk0", Options{MAC: []byte{1, 2, 3}}, "trunk0: lladdr"},
	}
	for _, c := range cases {
		tr, err := New(c.trunk, c.opts)
		if err == nil {
			tr.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestTrunkProperties checks MTU, Headroom, MAC and Link against members.
func TestTrunkProperties(t *testing.T) {
	tr, err := New("trunk1", Options{TickInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.MTU() != 1500 || tr.Headroom() != 0 || tr.Link() != platform.LinkDown || tr.Active() {
		t.Errorf("empty trunk: MTU %d Headroom %d Link %v Active %v; want 1500 0 down false", tr.MTU(), tr.Headroom(), tr.Link(), tr.Active())
	}
	a, af := newMemPair("eth0")
	defer af.Close()
	b, bf := newMemPair("eth1")
	defer bf.Close()
	b.SetMTU(1400)
	for _, p := range []platform.Port{a, b} {
		if err := tr.AddPort(p, PortConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	if tr.MTU() != 1400 {
		t.Errorf("MTU = %d, want 1400 (smallest member)", tr.MTU())
	}
	if got := tr.HardwareAddr().String(); got != a.HardwareAddr().String() {
		t.Errorf("HardwareAddr = %s, want the first port's %s", got, a.HardwareAddr())
	}
	if tr.Link() != platform.LinkUp {
		t.Errorf("Link = %v with an up member, want up", tr.Link())
	}
}
