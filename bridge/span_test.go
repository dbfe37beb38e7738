package bridge

import (
	"bytes"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// TestSpanGetsForwardedFrames checks that each span port gets one copy of
// each frame the bridge forwards, and nothing of what it drops.
func TestSpanGetsForwardedFrames(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(fx *fixture)
		before []tx
		send   tx
		copies int
	}{
		{name: "flooded to three members: one copy", send: tx{"a", ip4(frame.Broadcast, stA)}, copies: 1},
		{name: "unknown unicast: one copy", send: tx{"a", ip4(stB, stA)}, copies: 1},
		{name: "known unicast: one copy", before: []tx{{"b", ip4(stA, stB)}}, send: tx{"a", ip4(stB, stA)}, copies: 1},
		{name: "flood blocked at every egress: still one copy", setup: blockNonIPEverywhere, send: tx{"a", eth(frame.Broadcast, stA, 0x8137, 60)}, copies: 1},
		{name: "destination on the ingress member: none", before: []tx{{"a", ip4(stC, stB)}}, send: tx{"a", ip4(stB, stA)}, copies: 0},
		{name: "link-local (LACP): none", send: tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, stA, frame.TypeSlow, 124)}, copies: 0},
		{name: "BPDU with no spanning tree: flooded, one copy", send: tx{"a", eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, stA, 0x26, 60)}, copies: 1},
		{name: "runt: none", send: tx{"a", make([]byte, 10)}, copies: 0},
		{name: "bad source: none", send: tx{"a", ip4(stB, frame.Broadcast)}, copies: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "a", "b", "c", "d")
			if tc.setup != nil {
				tc.setup(fx)
			}
			s1, s2 := newTestPort("span1", true), newTestPort("span2", true)
			if err := fx.b.AddSpan(s1); err != nil {
				t.Fatal(err)
			}
			if err := fx.b.AddSpan(s2); err != nil {
				t.Fatal(err)
			}
			for _, b := range tc.before {
				fx.send(b.in, b.f)
			}
			s1.take()
			s2.take()
			fx.send(tc.send.in, tc.send.f)
			for _, s := range []*testPort{s1, s2} {
				got := s.take()
				if len(got) != tc.copies {
					t.Errorf("%s got %d copies, want %d", s.name, len(got), tc.copies)
				}
				for _, f := range got {
					if !bytes.Equal(f, tc.send.f) {
						t.Errorf("%s got %x, want %x", s.name, f, tc.send.f)
					}
				}
			}
		})
	}
}

// blockNonIPEverywhere sets BlockNonIP on members b, c and d.
func blockNonIPEverywhere(fx *fixture) {
	for _, n := range []string{"b", "c", "d"} {
		fx.b.SetPortFlags(n, PortFlags{BlockNonIP: true})
	}
}

// TestSpanLinkAndMTU checks that a span port gets nothing while down and
// nothing larger than its MTU.
func TestSpanLinkAndMTU(t *testing.T) {
	fx := newFixture(t, "a", "b")
	s := newTestPort("span0", true)
	fx.b.AddSpan(s)
	s.mtu.Store(100)
	small, big := ip4(stB, stA), eth(stB, stA, frame.TypeIPv4, 14+101)
	before := fx.b.Stats()
	fx.send("a", small, big)
	if got := s.take(); len(got) != 1 || !bytes.Equal(got[0], small) {
		t.Errorf("span with MTU 100 got %d frames, want only the small one", len(got))
	}
	if got := len(fx.ports["b"].take()); got != 2 {
		t.Errorf("b got %d frames, want 2 (the span's MTU does not limit members)", got)
	}
	wantDelta(t, "after two frames", before, fx.b.Stats(), map[string]uint64{"DroppedOversize": 1, "SpanSent": 1, "Sent": 2})
	s.SetLink(platform.LinkDown)
	fx.send("a", small)
	if got := len(s.take()); got != 0 {
		t.Errorf("span with link down got %d frames, want 0", got)
	}
}

// TestSpanIsNotAMember checks that what a span port receives from its
// wire is neither learned nor forwarded, and that RemoveSpan closes it.
func TestSpanIsNotAMember(t *testing.T) {
	fx := newFixture(t, "a", "b")
	spanEnd, wire := memport.Pair("span0", nil, "wire", nil)
	if err := fx.b.AddSpan(spanEnd); err != nil {
		t.Fatal(err)
	}
	f := ip4(frame.Broadcast, stX)
	if _, err := wire.WriteBatch(platform.Batch{Frames: [][]byte{f}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the span reader to drain its port", func() bool { return spanEnd.Pending() == 0 })
	time.Sleep(10 * time.Millisecond)
	if got := fx.b.Stats().Received; got != 0 {
		t.Errorf("bridge received %d frames from a span port, want 0", got)
	}
	if got := fx.b.Addrs(); len(got) != 0 {
		t.Errorf("table = %s, want empty", addrsString(got))
	}
	if fx.b.Forward(fx.w, fx.b.Member("span0"), platform.Batch{Frames: [][]byte{f}}, fx.clk.Now()); fx.b.Stats().Received != 0 {
		t.Errorf("Forward from a span port handle counted frames, want ignored")
	}
	if err := fx.b.SetPortFlags("span0", DefaultPortFlags()); err == nil {
		t.Errorf("SetPortFlags(span0) = nil, want an error")
	}
	for _, tc := range []struct {
		remove func(string) error
		name   string
		want   string
	}{
		{fx.b.RemovePort, "span0", "bridge0: delete span0: a span port, not a member"},
		{fx.b.RemoveSpan, "a", "bridge0: delete span a: a member, not a span port"},
		{fx.b.RemoveSpan, "eth9", "bridge0: delete span eth9: not a span port"},
	} {
		if err := tc.remove(tc.name); err == nil || err.Error() != tc.want {
			t.Errorf("remove %s = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := fx.b.RemoveSpan("span0"); err != nil {
		t.Fatalf("RemoveSpan(span0) = %v", err)
	}
	if _, err := spanEnd.ReadBatch(platform.Batch{Frames: make([][]byte, 1)}); err != platform.ErrClosed {
		t.Errorf("span port after RemoveSpan: ReadBatch error %v, want ErrClosed", err)
	}
}
