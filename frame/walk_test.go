package frame_test

import (
	"encoding/binary"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform/platformtest"
)

// withExt returns the IPv6 frame f with extension header ext (whose
// first byte is set to the frame's next header) put in front of its L4
// header, and next as the IPv6 next header.
func withExt(f []byte, next uint8, ext []byte) []byte {
	g := append([]byte(nil), f[:54]...)
	ext = append([]byte(nil), ext...)
	ext[0] = f[14+6]
	g = append(g, ext...)
	g = append(g, f[54:]...)
	g[14+6] = next
	binary.BigEndian.PutUint16(g[18:], uint16(len(g)-54))
	return g
}

// withTag returns f with a VLAN tag of TPID tpid and VLAN ID vid put in
// front of its ethertype: the new outer tag.
func withTag(f []byte, tpid, vid uint16) []byte {
	g := append([]byte(nil), f[:12]...)
	g = binary.BigEndian.AppendUint16(g, tpid)
	g = binary.BigEndian.AppendUint16(g, vid)
	return append(g, f[12:]...)
}

func TestWalk(t *testing.T) {
	tcp4 := platformtest.Packet{Payload: platformtest.Payload(10)}.Build(t)
	udp6 := platformtest.Packet{V6: true, UDP: true, Payload: platformtest.Payload(10)}.Build(t)
	tagged := platformtest.Packet{VLAN: 42, Payload: platformtest.Payload(10)}.Build(t)
	edit := func(f []byte, fn func([]byte)) []byte { g := append([]byte(nil), f...); fn(g); return g }
	qinq := withTag(tagged, frame.TypeQinQ, 7)
	three := withTag(qinq, frame.TypeVLAN, 9)
	cases := []struct {
		name string
		f    []byte
		want frame.Headers
	}{
		{"runt", tcp4[:13], frame.Headers{L3: -1, L3End: -1, L4: -1}},
		{"TCP/IPv4", tcp4, frame.Headers{EtherType: frame.TypeIPv4, L3: 14, L3End: 34, L4: 34, Proto: frame.ProtoTCP}},
		{"UDP/IPv6", udp6, frame.Headers{EtherType: frame.TypeIPv6, L3: 14, L3End: 54, IPv6: true, L4: 54, Proto: frame.ProtoUDP}},
		{"802.1Q tag", tagged, frame.Headers{EtherType: frame.TypeIPv4, Tags: 1, VLAN: 42, L3: 18, L3End: 38, L4: 38, Proto: frame.ProtoTCP}},
		{"802.1ad outer tag, VLAN from the outer one", qinq, frame.Headers{EtherType: frame.TypeIPv4, Tags: 2, VLAN: 7, L3: 22, L3End: 42, L4: 42, Proto: frame.ProtoTCP}},
		{"802.1ad and 802.1Q tags, UDP/IPv6", withTag(withTag(udp6, frame.TypeVLAN, 5), frame.TypeQinQOld, 6), frame.Headers{EtherType: frame.TypeIPv6, Tags: 2, VLAN: 6, L3: 22, L3End: 62, IPv6: true, L4: 62, Proto: frame.ProtoUDP}},
		{"802.1Q tag, IPv4 with options", edit(tagged, func(g []byte) { g[18] = 0x46 }), frame.Headers{EtherType: frame.TypeIPv4, Tags: 1, VLAN: 42, L3: 18, L3End: 42, L4: 42, Proto: frame.ProtoTCP}},
		{"802.1Q tag, IPv4 later fragment", edit(tagged, func(g []byte) { g[24], g[25] = 0, 0x10 }), frame.Headers{EtherType: frame.TypeIPv4, Tags: 1, VLAN: 42, L3: 18, L3End: 38, L4: -1, Proto: frame.ProtoTCP, Fragment: true}},
		{"802.1Q tag, ARP", edit(tagged, func(g []byte) { g[16], g[17] = 0x08, 0x06 }), frame.Headers{EtherType: frame.TypeARP, Tags: 1, VLAN: 42, L3: -1, L3End: -1, L4: -1}},
		{"802.1Q tag, IPv4 header cut short", tagged[:40], frame.Headers{EtherType: frame.TypeIPv4, Tags: 1, VLAN: 42, L3: 18, L3End: 38, L4: 38, Proto: frame.ProtoTCP}},
		{"802.1Q tag, frame cut behind the ethertype", tagged[:20], frame.Headers{EtherType: frame.TypeIPv4, Tags: 1, VLAN: 42, L3: -1, L3End: -1, L4: -1}},
		{"three tags: the walk stops at the third", three, frame.Headers{EtherType: frame.TypeVLAN, Tags: 2, VLAN: 9, L3: -1, L3End: -1, L4: -1}},
		{"ARP: no L3", edit(tcp4, func(g []byte) { g[12], g[13] = 0x08, 0x06 }), frame.Headers{EtherType: frame.TypeARP, L3: -1, L3End: -1, L4: -1}},
		{"IPv4 header length 4", edit(tcp4, func(g []byte) { g[14] = 0x44 }), frame.Headers{EtherType: frame.TypeIPv4, L3: -1, L3End: -1, L4: -1}},
		{"IPv4 header longer than the frame", edit(tcp4, func(g []byte) { g[14] = 0x4f })[:50], frame.Headers{EtherType: frame.TypeIPv4, L3: -1, L3End: -1, L4: -1}},
		{"IPv4 with 4 bytes of options", edit(tcp4, func(g []byte) { g[14] = 0x46 }), frame.Headers{EtherType: frame.TypeIPv4, L3: 14, L3End: 38, L4: 38, Proto: frame.ProtoTCP}},
		{"IPv4 first fragment: L4 reachable", edit(tcp4, func(g []byte) { g[20] |= 0x20 }), frame.Headers{EtherType: frame.TypeIPv4, L3: 14, L3End: 34, L4: 34, Proto: frame.ProtoTCP, Fragment: true}},
		{"IPv4 later fragment: no L4", edit(tcp4, func(g []byte) { g[20], g[21] = 0, 0x10 }), frame.Headers{EtherType: frame.TypeIPv4, L3: 14, L3End: 34, L4: -1, Proto: frame.ProtoTCP, Fragment: true}},
		{"IPv6 behind hop-by-hop", withExt(udp6, frame.ProtoHopByHop, make([]byte, 8)), frame.Headers{EtherType: frame.TypeIPv6, L3: 14, L3End: 54, IPv6: true, L4: 62, Proto: frame.ProtoUDP}},
		{"IPv6 first fragment", withExt(udp6, frame.ProtoFragment, make([]byte, 8)), frame.Headers{EtherType: frame.TypeIPv6, L3: 14, L3End: 54, IPv6: true, L4: 62, Proto: frame.ProtoUDP, Fragment: true}},
		{"IPv6 later fragment", withExt(udp6, frame.ProtoFragment, []byte{0, 0, 0, 0x08, 0, 0, 0, 1}), frame.Headers{EtherType: frame.TypeIPv6, L3: 14, L3End: 54, IPv6: true, L4: -1, Fragment: true}},
		{"IPv6 extension header cut short", withExt(udp6, frame.ProtoRouting, []byte{0, 9, 0, 0, 0, 0, 0, 0})[:70], frame.Headers{EtherType: frame.TypeIPv6, L3: 14, L3End: 54, IPv6: true, L4: -1}},
	}
	// reused is filled in place by every case in turn, as a per-frame
	// caller does: nothing of the previous frame may remain.
	var reused frame.Headers
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := frame.Walk(c.f); got != c.want {
				t.Errorf("Walk =\n %+v, want\n %+v", got, c.want)
			}
			if reused.Walk(c.f); reused != c.want {
				t.Errorf("Headers.Walk after the previous case =\n %+v, want\n %+v", reused, c.want)
			}
			if got, want := frame.FlowOf(c.f), flowOfHeaders(c.f, c.want); got != want {
				t.Errorf("FlowOf = %+v, want %+v", got, want)
			}
			switch c.want.EtherType {
			case frame.TypeIPv4, frame.TypeIPv6, frame.TypeVLAN, frame.TypeQinQ, frame.TypeQinQOld:
				if !frame.Ethernet(c.f).MayCarryIP() {
					t.Errorf("MayCarryIP = false, want true")
				}
			case 0:
			default:
				if c.want.Tags == 0 && frame.Ethernet(c.f).MayCarryIP() {
					t.Errorf("MayCarryIP = true, want false for an untagged %#04x frame", c.want.EtherType)
				}
			}
		})
	}
}

func TestWalkZeroAllocs(t *testing.T) {
	f := platformtest.Packet{V6: true, Payload: platformtest.Payload(100)}.Build(t)
	if n := testing.AllocsPerRun(100, func() { _ = frame.Walk(f) }); n != 0 {
		t.Fatalf("Walk allocates %.1f times per call, want 0", n)
	}
	var h frame.Headers
	if n := testing.AllocsPerRun(100, func() { h.Walk(f) }); n != 0 {
		t.Fatalf("Headers.Walk allocates %.1f times per call, want 0", n)
	}
}

// FuzzWalk checks that Walk never panics, that every offset it gives
// lies inside the frame, in order, and that FlowOf agrees with it.
func FuzzWalk(f *testing.F) {
	f.Add(platformtest.Packet{Payload: platformtest.Payload(10)}.Build(f))
	f.Add(platformtest.Packet{V6: true, VLAN: 3, UDP: true, Payload: platformtest.Payload(10)}.Build(f))
	f.Add(platformtest.Packet{V6: true, UDP: true, Payload: platformtest.Payload(10)}.Build(f))
	f.Add(withExt(platformtest.Packet{V6: true, Payload: platformtest.Payload(10)}.Build(f), frame.ProtoHopByHop, make([]byte, 16)))
	qinq := withTag(platformtest.Packet{VLAN: 10, Payload: platformtest.Payload(10)}.Build(f), frame.TypeQinQ, 100)
	f.Add(qinq)
	f.Add(withTag(platformtest.Packet{V6: true, VLAN: 10, UDP: true, Payload: platformtest.Payload(10)}.Build(f), frame.TypeQinQOld, 100))
	f.Add(withTag(qinq, frame.TypeVLAN, 7))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := frame.Walk(b)
		if got, want := frame.FlowOf(b), flowOfHeaders(b, h); got != want {
			t.Fatalf("FlowOf = %+v, want %+v from Walk's %+v", got, want, h)
		}
		if len(b) >= frame.HeaderLen && !frame.Ethernet(b).MayCarryIP() && frame.FlowOf(b) != (frame.Flow{VLAN: -1, L3: -1, Ports: -1}) {
			t.Fatalf("MayCarryIP = false, but FlowOf = %+v", frame.FlowOf(b))
		}
		if h.L3 < 0 {
			if h.L3End != -1 || h.L4 != -1 {
				t.Fatalf("no L3 but L3End %d, L4 %d", h.L3End, h.L4)
			}
			return
		}
		if h.L3 < frame.HeaderLen || h.L3End <= h.L3 || h.L3End > len(b) {
			t.Fatalf("L3 %d..%d outside the %d-byte frame", h.L3, h.L3End, len(b))
		}
		if h.L4 >= 0 && (h.L4 < h.L3End || h.L4 > len(b)) {
			t.Fatalf("L4 %d outside %d..%d", h.L4, h.L3End, len(b))
		}
	})
}

// flowOfHeaders is FlowOf as its documentation derives it from h, the
// walk of f.
func flowOfHeaders(f []byte, h frame.Headers) frame.Flow {
	fl := frame.Flow{VLAN: -1, L3: h.L3, Ports: -1}
	if h.Tags > 0 {
		fl.VLAN = int(h.VLAN)
	}
	if !h.Fragment && h.L4 >= 0 && len(f)-h.L4 >= 4 && frame.HasPorts(h.Proto) {
		fl.Ports, fl.Proto = h.L4, h.Proto
	}
	return fl
}

func TestIsSlowProtocol(t *testing.T) {
	slow := frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}
	mk := func(dst frame.MAC, typ uint16, n int) frame.Ethernet {
		b := make([]byte, n)
		if n >= frame.HeaderLen {
			frame.Encode(b, dst, frame.MAC{2, 0, 0, 0, 0, 1}, typ)
		}
		return b
	}
	cases := []struct {
		name string
		e    frame.Ethernet
		want bool
	}{
		{"LACPDU", mk(slow, frame.TypeSlow, 124), true},
		{"slow-protocols type to another group", mk(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, frame.TypeSlow, 124), false},
		{"IPv4 to the slow-protocols group", mk(slow, frame.TypeIPv4, 60), false},
		{"runt", mk(slow, frame.TypeSlow, 13), false},
	}
	for _, c := range cases {
		if got := c.e.IsSlowProtocol(); got != c.want {
			t.Errorf("%s: IsSlowProtocol = %v, want %v", c.name, got, c.want)
		}
	}
}
