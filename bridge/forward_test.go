package bridge

import (
	"slices"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// tx is a frame received on a member.
type tx struct {
	in string
	f  []byte
}

var (
	stA, stB, stC, stX = mac(0xa), mac(0xb), mac(0xc), mac(0x99)
	multicast4         = frame.MAC{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}
)

// TestForward checks where one frame goes on a bridge of members a, b, c,
// d with default flags: setup runs first, then the bridge sees the frames
// before, then then runs, then the frame send is received.
func TestForward(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(fx *fixture)
		before []tx
		then   func(fx *fixture)
		send   tx
		want   []string
		count  string
	}{
		{
			name:  "unknown unicast floods to every other member",
			send:  tx{"a", ip4(stB, stA)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:   "known unicast goes to exactly its member",
			before: []tx{{"b", ip4(stA, stB)}},
			send:   tx{"a", ip4(stB, stA)},
			want:   []string{"b"},
			count:  "Forwarded",
		},
		{
			name:  "broadcast floods to every other member",
			send:  tx{"a", eth(frame.Broadcast, stA, frame.TypeARP, 60)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "multicast floods to every other member",
			send:  tx{"a", ip4(multicast4, stA)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "broadcast reaches a member without Discover",
			setup: func(fx *fixture) { fx.b.SetPortFlags("d", PortFlags{Learning: true}) },
			send:  tx{"a", eth(frame.Broadcast, stA, frame.TypeARP, 60)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "unknown unicast skips a member without Discover",
			setup: func(fx *fixture) { fx.b.SetPortFlags("d", PortFlags{Learning: true}) },
			send:  tx{"a", ip4(stB, stA)},
			want:  []string{"b", "c"},
			count: "Flooded",
		},
		{
			name:   "known unicast reaches a member without Discover",
			setup:  func(fx *fixture) { fx.b.SetPortFlags("d", PortFlags{Learning: true}) },
			before: []tx{{"d", ip4(stA, stX)}},
			send:   tx{"a", ip4(stX, stA)},
			want:   []string{"d"},
			count:  "Forwarded",
		},
		{
			name:   "destination learned on the ingress member is dropped",
			before: []tx{{"a", ip4(stC, stB)}},
			send:   tx{"a", ip4(stB, stA)},
			want:   nil,
			count:  "DroppedSamePort",
		},
		{
			name:  "BPDU (01:80:c2:00:00:00) floods while no spanning tree runs, as Linux with STP off",
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 0x0026, 60)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "BPDU is not forwarded while a spanning tree runs",
			setup: func(fx *fixture) { fx.b.SetSpanningTree(true) },
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 0x0026, 60)},
			want:  nil,
			count: "DroppedLinkLocal",
		},
		{
			name:  "BPDU floods again once the spanning tree stops",
			setup: func(fx *fixture) { fx.b.SetSpanningTree(true); fx.b.SetSpanningTree(false) },
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 0x0026, 60)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "LLDP floods when the forward mask has bit 0x0e",
			setup: func(fx *fixture) { mustForwardMask(fx, 1<<0x0e) },
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0x0e}, stA, 0x88cc, 60)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "802.1X (0x03) stays local when the mask names only LLDP",
			setup: func(fx *fixture) { mustForwardMask(fx, 1<<0x0e) },
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 3}, stA, 0x888e, 60)},
			want:  nil,
			count: "DroppedLinkLocal",
		},
		{
			name:  "LACP is not forwarded while no spanning tree runs",
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, stA, frame.TypeSlow, 124)},
			want:  nil,
			count: "DroppedLinkLocal",
		},
		{
			name:  "LACP destination 01:80:c2:00:00:02 is never forwarded",
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, stA, frame.TypeSlow, 124)},
			want:  nil,
			count: "DroppedLinkLocal",
		},
		{
			name:  "LLDP destination 01:80:c2:00:00:0e is never forwarded",
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0x0e}, stA, 0x88cc, 60)},
			want:  nil,
			count: "DroppedLinkLocal",
		},
		{
			name:  "01:80:c2:00:00:10 is ordinary multicast",
			send:  tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0x10}, stA, frame.TypeIPv4, 60)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "runt of 13 bytes is dropped",
			send:  tx{"a", eth(stB, stA, frame.TypeIPv4, 60)[:13]},
			want:  nil,
			count: "DroppedRunt",
		},
		{
			name:  "bare 14-byte header is forwarded",
			send:  tx{"a", eth(stB, stA, frame.TypeIPv4, 14)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "multicast source is dropped",
			send:  tx{"a", ip4(stB, multicast4)},
			want:  nil,
			count: "DroppedBadSource",
		},
		{
			name:  "broadcast source is dropped",
			send:  tx{"a", ip4(stB, frame.Broadcast)},
			want:  nil,
			count: "DroppedBadSource",
		},
		{
			name:  "zero source is dropped",
			send:  tx{"a", ip4(stB, frame.MAC{})},
			want:  nil,
			count: "DroppedBadSource",
		},
		{
			name:   "tagged frame to a station learned in its VLAN goes to one member",
			before: []tx{{"c", tagged(stA, stC, frame.TypeVLAN, 5, frame.TypeIPv4, 64)}},
			send:   tx{"a", tagged(stC, stA, frame.TypeVLAN, 5, frame.TypeIPv4, 64)},
			want:   []string{"c"},
			count:  "Forwarded",
		},
		{
			name:   "a station learned untagged is unknown in VLAN 7",
			before: []tx{{"c", ip4(stA, stC)}},
			send:   tx{"a", tagged(stC, stA, frame.TypeVLAN, 7, frame.TypeIPv4, 64)},
			want:   []string{"b", "c", "d"},
			count:  "Flooded",
		},
		{
			name:   "a station learned in VLAN 7 is unknown untagged",
			before: []tx{{"c", tagged(stA, stC, frame.TypeVLAN, 7, frame.TypeIPv4, 64)}},
			send:   tx{"a", ip4(stC, stA)},
			want:   []string{"b", "c", "d"},
			count:  "Flooded",
		},
		{
			name:   "priority-tagged frame (VID 0) is in VLAN 0",
			before: []tx{{"c", ip4(stA, stC)}},
			send:   tx{"a", tagged(stC, stA, frame.TypeVLAN, 0x6000, frame.TypeIPv4, 64)},
			want:   []string{"c"},
			count:  "Forwarded",
		},
		{
			name:   "802.1ad-tagged frame is learned in its outer VLAN",
			before: []tx{{"c", tagged(stA, stC, frame.TypeQinQ, 100, frame.TypeVLAN, 64)}},
			send:   tx{"a", tagged(stC, stA, frame.TypeQinQ, 100, frame.TypeVLAN, 64)},
			want:   []string{"c"},
			count:  "Forwarded",
		},
		{
			name:   "a station that moves is forwarded to its new member at once",
			before: []tx{{"b", ip4(stA, stX)}, {"c", ip4(stA, stX)}},
			send:   tx{"a", ip4(stX, stA)},
			want:   []string{"c"},
			count:  "Forwarded",
		},
		{
			name:  "a static station stays put when it shows up elsewhere",
			setup: func(fx *fixture) { fx.b.AddStatic(stX, 0, "b") },
			before: []tx{
				{"c", ip4(stA, stX)},
			},
			send:  tx{"a", ip4(stX, stA)},
			want:  []string{"b"},
			count: "Forwarded",
		},
		{
			name:  "frames from a static station seen elsewhere are still forwarded",
			setup: func(fx *fixture) { fx.b.AddStatic(stX, 0, "b") },
			send:  tx{"c", ip4(stB, stX)},
			want:  []string{"a", "b", "d"},
			count: "Flooded",
		},
		{
			name: "a jumbo frame is not sent to a member whose MTU it exceeds",
			setup: func(fx *fixture) {
				fx.ports["c"].mtu.Store(1500)
				fx.ports["b"].mtu.Store(9000)
				fx.ports["d"].mtu.Store(9000)
			},
			send:  tx{"a", eth(frame.Broadcast, stA, frame.TypeIPv4, 14+1501)},
			want:  []string{"b", "d"},
			count: "DroppedOversize",
		},
		{
			name:  "a full-size tagged frame fits a 1500 MTU (one tag allowed)",
			send:  tx{"a", tagged(stB, stA, frame.TypeVLAN, 5, frame.TypeIPv4, 18+1500)},
			want:  []string{"b", "c", "d"},
			count: "Flooded",
		},
		{
			name:  "a member whose link is down is not sent to",
			setup: func(fx *fixture) { fx.ports["c"].SetLink(platform.LinkDown) },
			send:  tx{"a", ip4(stB, stA)},
			want:  []string{"b", "d"},
			count: "DroppedLinkDown",
		},
		{
			name:   "known unicast to a member whose link is down is dropped",
			before: []tx{{"c", ip4(stA, stC)}},
			then:   func(fx *fixture) { fx.ports["c"].SetLink(platform.LinkDown) },
			send:   tx{"a", ip4(stC, stA)},
			want:   nil,
			count:  "DroppedLinkDown",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "a", "b", "c", "d")
			if tc.setup != nil {
				tc.setup(fx)
			}
			for _, b := range tc.before {
				fx.send(b.in, b.f)
			}
			if tc.then != nil {
				tc.then(fx)
			}
			fx.reset()
			before := fx.b.Stats()
			fx.send(tc.send.in, tc.send.f)
			if got := fx.receivers(tc.send.f); !slices.Equal(got, tc.want) {
				t.Errorf("frame went to %v, want %v", got, tc.want)
			}
			wantDelta(t, "after the frame", before, fx.b.Stats(), map[string]uint64{tc.count: 1, "Received": 1})
		})
	}
}

// TestForwardBatchKeepsOrder checks that frames of one batch reach each
// member in the order they were received.
func TestForwardBatchKeepsOrder(t *testing.T) {
	fx := newFixture(t, "a", "b")
	var batch [][]byte
	for i := range 10 {
		f := ip4(stB, stA)
		f[20] = byte(i)
		batch = append(batch, f)
	}
	fx.send("a", batch...)
	got := fx.ports["b"].take()
	if len(got) != len(batch) {
		t.Fatalf("b got %d frames, want %d", len(got), len(batch))
	}
	for i := range got {
		if got[i][20] != byte(i) {
			t.Errorf("frame %d at b carries sequence %d, want %d", i, got[i][20], i)
		}
	}
}

// TestForwardSplitsToEgressBatchSize checks that a member with a small
// batch size is never given more frames than that in one WriteBatch.
func TestForwardSplitsToEgressBatchSize(t *testing.T) {
	fx := newFixtureOpts(t, Options{}, true, "a")
	small := newTestPort("b", true)
	small.batch = 3
	if err := fx.b.AddPort(&maxBatchPort{testPort: small, t: t}, DefaultPortFlags()); err != nil {
		t.Fatal(err)
	}
	var batch [][]byte
	for range 10 {
		batch = append(batch, ip4(stB, stA))
	}
	fx.send("a", batch...)
	if got := len(small.take()); got != 10 {
		t.Errorf("b got %d frames, want 10", got)
	}
}

// maxBatchPort fails the test when WriteBatch gets more than BatchSize frames.
type maxBatchPort struct {
	*testPort
	t *testing.T
}

func (p *maxBatchPort) WriteBatch(b platform.Batch) (int, error) {
	if b.Len() > p.BatchSize() {
		p.t.Errorf("WriteBatch got %d frames, want at most BatchSize %d", b.Len(), p.BatchSize())
	}
	return p.testPort.WriteBatch(b)
}

// TestForwardFromRemovedMember checks that Forward ignores a member handle
// that has left the bridge.
func TestForwardFromRemovedMember(t *testing.T) {
	fx := newFixture(t, "a", "b")
	m := fx.b.Member("a")
	if err := fx.b.RemovePort("a"); err != nil {
		t.Fatal(err)
	}
	fx.b.Forward(fx.w, m, platform.Batch{Frames: [][]byte{ip4(stB, stA)}}, fx.clk.Now())
	if got := fx.receivers(ip4(stB, stA)); len(got) != 0 {
		t.Errorf("frame from a removed member went to %v, want nowhere", got)
	}
	if got := fx.b.Stats().Received; got != 0 {
		t.Errorf("Received = %d, want 0", got)
	}
}

// TestForwardSentCountsAcceptedCopies checks Sent against what members got.
func TestForwardSentCountsAcceptedCopies(t *testing.T) {
	fx := newFixture(t, "a", "b", "c")
	fx.send("a", ip4(stB, stA), ip4(frame.Broadcast, stA))
	if got, want := fx.b.Stats().Sent, uint64(4); got != want {
		t.Errorf("Sent = %d, want %d (two flooded frames to two members)", got, want)
	}
}

// mustForwardMask sets the bridge's forward mask or fails the test.
func mustForwardMask(fx *fixture, mask uint16) {
	fx.t.Helper()
	if err := fx.b.SetForwardMask(mask); err != nil {
		fx.t.Fatal(err)
	}
}

// TestSetForwardMaskRefusesRestrictedGroups checks that BPDUs, pause and
// slow protocols cannot be put in the forward mask, and that a refused
// mask changes nothing.
func TestSetForwardMaskRefusesRestrictedGroups(t *testing.T) {
	fx := newFixture(t, "a", "b")
	mustForwardMask(fx, 1<<0x0e)
	for _, c := range []struct {
		mask uint16
		want string
	}{
		{1 << 0, "bridge0: fwd-mask 0x0001: bit 0 (BPDUs, 01:80:c2:00:00:00: they follow the spanning tree setting) cannot be forwarded"},
		{1<<1 | 1<<0x0e, "bridge0: fwd-mask 0x4002: bit 1 (MAC control/pause, 01:80:c2:00:00:01) cannot be forwarded"},
		{1 << 2, "bridge0: fwd-mask 0x0004: bit 2 (slow protocols: LACP and marker, 01:80:c2:00:00:02) cannot be forwarded"},
	} {
		if err := fx.b.SetForwardMask(c.mask); err == nil || err.Error() != c.want {
			t.Errorf("SetForwardMask(0x%04x) = %v, want %q", c.mask, err, c.want)
		}
	}
	if got := fx.b.ForwardMask(); got != 1<<0x0e {
		t.Errorf("ForwardMask after refusals = 0x%04x, want 0x4000 (unchanged)", got)
	}
}
