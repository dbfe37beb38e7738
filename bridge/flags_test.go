package bridge

import (
	"bytes"
	"slices"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// TestLearningFlag checks that a member without Learning teaches the
// bridge nothing, and that its frames are still forwarded.
func TestLearningFlag(t *testing.T) {
	fx := newFixture(t, "a", "c")
	fx.add("b", PortFlags{Discover: true}, true)
	fx.send("b", ip4(stA, stB))
	if got := fx.b.Addrs(); len(got) != 0 {
		t.Errorf("table after a frame on a non-learning member = %s, want empty", addrsString(got))
	}
	if got, want := fx.receivers(ip4(stA, stB)), []string{"a", "c"}; !slices.Equal(got, want) {
		t.Errorf("frame from a non-learning member went to %v, want %v", got, want)
	}
	f := ip4(stB, stA)
	fx.send("a", f)
	if got, want := fx.receivers(f), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("frame to a station behind a non-learning member went to %v, want flooded to %v", got, want)
	}
	fx.b.SetPortFlags("b", DefaultPortFlags())
	fx.send("b", ip4(stA, stB))
	fx.reset()
	fx.send("a", f)
	if got, want := fx.receivers(f), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("after Learning was set: frame went to %v, want %v", got, want)
	}
}

// TestBlockNonIP checks which frames a BlockNonIP member lets in and out.
func TestBlockNonIP(t *testing.T) {
	tests := []struct {
		name string
		f    []byte
		pass bool
	}{
		{"IPv4", eth(frame.Broadcast, stA, frame.TypeIPv4, 60), true},
		{"IPv6", eth(frame.Broadcast, stA, frame.TypeIPv6, 60), true},
		{"ARP", eth(frame.Broadcast, stA, frame.TypeARP, 60), true},
		{"RARP", eth(frame.Broadcast, stA, frame.TypeRARP, 60), true},
		{"IPX", eth(frame.Broadcast, stA, 0x8137, 60), false},
		{"802.3 length field (LLC)", eth(frame.Broadcast, stA, 46, 60), false},
		{"802.1Q-tagged IPv4", tagged(frame.Broadcast, stA, frame.TypeVLAN, 5, frame.TypeIPv4, 64), false},
		{"802.1ad-tagged IPv4", tagged(frame.Broadcast, stA, frame.TypeQinQ, 5, frame.TypeIPv4, 64), false},
	}
	for _, tc := range tests {
		t.Run(tc.name+" entering", func(t *testing.T) {
			fx := newFixture(t, "b", "c")
			fx.add("a", PortFlags{Learning: true, Discover: true, BlockNonIP: true}, true)
			before := fx.b.Stats()
			fx.send("a", tc.f)
			want, counter := []string{"b", "c"}, "Flooded"
			if !tc.pass {
				want, counter = nil, "DroppedBlockNonIP"
			}
			if got := fx.receivers(tc.f); !slices.Equal(got, want) {
				t.Errorf("frame went to %v, want %v", got, want)
			}
			wantDelta(t, "after the frame", before, fx.b.Stats(), map[string]uint64{counter: 1})
			if !tc.pass && len(fx.b.Addrs()) != 0 {
				t.Errorf("blocked frame's source was learned: %s", addrsString(fx.b.Addrs()))
			}
		})
		t.Run(tc.name+" leaving", func(t *testing.T) {
			fx := newFixture(t, "a", "b")
			fx.add("c", PortFlags{Learning: true, Discover: true, BlockNonIP: true}, true)
			before := fx.b.Stats()
			fx.send("a", tc.f)
			want, out := []string{"b", "c"}, uint64(0)
			if !tc.pass {
				want, out = []string{"b"}, 1
			}
			if got := fx.receivers(tc.f); !slices.Equal(got, want) {
				t.Errorf("frame went to %v, want %v", got, want)
			}
			wantDelta(t, "after the frame", before, fx.b.Stats(), map[string]uint64{"Flooded": 1, "DroppedBlockNonIPOut": out})
		})
	}
}

// TestSetPortFlagsErrors checks that flags are only set on members.
func TestSetPortFlagsErrors(t *testing.T) {
	fx := newFixture(t, "a")
	fx.b.AddSpan(newTestPort("s", false))
	for _, name := range []string{"eth9", "s"} {
		want := "bridge0: set flags of " + name + ": not a member"
		if err := fx.b.SetPortFlags(name, PortFlags{}); err == nil || err.Error() != want {
			t.Errorf("SetPortFlags(%s) = %v, want %q", name, err, want)
		}
	}
}

// TestLinkLocalHandler checks that link-local frames go to the ingress
// member's handler, and to nothing else.
func TestLinkLocalHandler(t *testing.T) {
	fx := newFixture(t, "a", "b")
	var got [][]byte
	if err := fx.b.SetLinkLocalHandler("a", func(f []byte) { got = append(got, bytes.Clone(f)) }); err != nil {
		t.Fatal(err)
	}
	lacp := eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, stA, frame.TypeSlow, 124)
	fx.send("a", lacp, ip4(stB, stA))
	fx.send("b", lacp)
	if len(got) != 1 || !bytes.Equal(got[0], lacp) {
		t.Errorf("handler of a got %d frames, want the one LACPDU a received", len(got))
	}
	if n := len(fx.ports["b"].take()); n != 1 {
		t.Errorf("b got %d frames, want only the IPv4 frame", n)
	}
	if err := fx.b.SetLinkLocalHandler("a", nil); err != nil {
		t.Fatal(err)
	}
	fx.send("a", lacp)
	if len(got) != 1 {
		t.Errorf("removed handler still called")
	}
	if err := fx.b.SetLinkLocalHandler("eth9", nil); err == nil {
		t.Errorf("SetLinkLocalHandler(eth9) = nil, want a not-a-member error")
	}
}

// TestLinkChanged checks that a member going down loses its dynamic
// addresses, keeps its static ones, and is not sent to.
func TestLinkChanged(t *testing.T) {
	fx := newFixture(t, "a", "b", "c")
	fx.send("b", ip4(stA, stB))
	fx.send("c", ip4(stA, stC))
	fx.b.AddStatic(stX, 0, "b")
	fx.ports["b"].SetLink(platform.LinkDown)
	fx.b.LinkChanged("b")
	want := []Addr{{MAC: stC, Port: "c"}, {MAC: stX, Port: "b", Static: true}}
	if got := fx.b.Addrs(); !slices.Equal(got, want) {
		t.Errorf("table after b went down = %s, want %s", addrsString(got), addrsString(want))
	}
	fx.reset()
	f := ip4(stB, stA)
	fx.send("a", f)
	if got, want := fx.receivers(f), []string{"c"}; !slices.Equal(got, want) {
		t.Errorf("frame to b's station went to %v, want %v", got, want)
	}
	fx.ports["b"].SetLink(platform.LinkUp)
	fx.b.LinkChanged("b")
	fx.send("a", f)
	if got, want := fx.receivers(f), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("after b came up: frame went to %v, want %v", got, want)
	}
	fx.b.LinkChanged("eth9") // unknown: ignored
}
