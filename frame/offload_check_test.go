package frame_test

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
)

// crashUDPGSO is the first frame of the hotfix report: a broadcast UDP
// frame whose UDP_L4 GSO header puts csum_start inside the IPv4 header.
// Segmenting it read past the end of its 32-byte segments.
func crashUDPGSO(t testing.TB) ([]byte, frame.Offload) {
	f := platformtest.Packet{UDP: true, Payload: platformtest.Payload(20)}.Build(t)
	copy(f[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	return f, frame.Offload{Flags: frame.OffloadNeedsCsum, GSOType: frame.GSOUDPL4, GSOSize: 4, CsumStart: 20, CsumOffset: 6}
}

// crashTCPGSO is the second frame of the hotfix report: a TCPv4
// super-frame whose TCP header claims a data offset of 2 (8 bytes), so
// that the headers copied into each 1-byte segment end before the TCP
// checksum field Segment wrote.
func crashTCPGSO(t testing.TB) ([]byte, frame.Offload) {
	f := platformtest.Packet{Payload: platformtest.Payload(8)}.Build(t)
	f[14+20+12] = 2 << 4
	return f, frame.Offload{Flags: frame.OffloadNeedsCsum, GSOType: frame.GSOTCPv4, GSOSize: 1, CsumStart: 34, CsumOffset: 16}
}

// v6ExtFrame is a TCP/IPv6 frame with a hop-by-hop options header (8
// bytes) between the IPv6 header and TCP.
func v6ExtFrame(t testing.TB) []byte {
	f := platformtest.Packet{V6: true, Payload: platformtest.Payload(100)}.Build(t)
	g := make([]byte, 0, len(f)+8)
	g = append(g, f[:54]...)
	g = append(g, 6, 0, 1, 4, 0, 0, 0, 0) // next TCP, length 0 (8 bytes), PadN
	g = append(g, f[54:]...)
	g[14+6] = 0 // the IPv6 next header: hop-by-hop
	binary.BigEndian.PutUint16(g[14+4:], uint16(len(g)-54))
	return g
}

func TestCheckOffload(t *testing.T) {
	tcp := platformtest.Packet{Payload: platformtest.Payload(3000)}.Build(t)
	tcpPartial, tp := platformtest.Packet{Payload: platformtest.Payload(3000)}.Partial(tcp)
	udp6Partial, up := platformtest.Packet{UDP: true, V6: true, Payload: platformtest.Payload(3000)}.Partial(platformtest.Packet{UDP: true, V6: true, Payload: platformtest.Payload(3000)}.Build(t))
	crash1, o1 := crashUDPGSO(t)
	crash2, o2 := crashTCPGSO(t)
	ext := v6ExtFrame(t)
	with := func(o frame.Offload, edit func(*frame.Offload)) frame.Offload { edit(&o); return o }
	gso := func(typ uint8, size uint16) func(*frame.Offload) {
		return func(o *frame.Offload) { o.GSOType, o.GSOSize = typ, size }
	}
	edited := func(f []byte, edit func([]byte)) []byte { g := append([]byte(nil), f...); edit(g); return g }
	cases := []struct {
		name string
		f    []byte
		o    frame.Offload
		want error // nil: valid
	}{
		{"plain frame, any bytes", []byte{1, 2, 3}, frame.Offload{}, nil},
		{"data-valid alone is plain", []byte{1, 2, 3}, frame.Offload{Flags: frame.OffloadDataValid}, nil},
		{"TCP/IPv4 partial checksum", tcpPartial, tp, nil},
		{"TCP/IPv4 super-frame", tcpPartial, with(tp, gso(frame.GSOTCPv4, 1448)), nil},
		{"TCP/IPv4 super-frame with ECN", tcpPartial, with(tp, gso(frame.GSOTCPv4|frame.GSOECN, 1448)), nil},
		{"TCP/IPv4 super-frame without partial checksum", tcp, frame.Offload{GSOType: frame.GSOTCPv4, GSOSize: 1448}, nil},
		{"UDP/IPv6 super-frame", udp6Partial, with(up, gso(frame.GSOUDPL4, 1000)), nil},
		{"TCP/IPv6 behind a hop-by-hop header, csum_start after it", ext, frame.Offload{Flags: frame.OffloadNeedsCsum, CsumStart: 62, CsumOffset: 16, GSOType: frame.GSOTCPv6, GSOSize: 50}, nil},
		{"TCP/IPv6 behind a hop-by-hop header, no partial checksum", ext, frame.Offload{GSOType: frame.GSOTCPv6, GSOSize: 50}, nil},
		{"partial checksum of an encapsulated header", tcpPartial, with(tp, func(o *frame.Offload) { o.CsumStart += 20 }), nil},

		{"report frame 1: UDP GSO, csum_start inside the IPv4 header", crash1, o1, frame.ErrOffloadCsumStart},
		{"report frame 2: TCP GSO, data offset 2", crash2, o2, frame.ErrOffloadL4Header},
		{"data offset past the frame", edited(tcpPartial[:60], func(g []byte) { binary.BigEndian.PutUint16(g[16:], 46) }), tp, frame.ErrOffloadL4Header},
		{"not IP", edited(tcp, func(g []byte) { g[12], g[13] = 0x88, 0xb5 }), with(tp, gso(frame.GSOTCPv4, 1000)), frame.ErrOffloadNotIP},
		{"three tags", append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 2, 0x81, 0, 0, 3}, tcp[12:]...), tp, frame.ErrOffloadNotIP},
		{"runt", tcp[:20], tp, frame.ErrOffloadIPHeader},
		{"IPv4 header length 4", edited(tcpPartial, func(g []byte) { g[14] = 0x44 }), tp, frame.ErrOffloadIPHeader},
		{"IPv4 version 6 in an IPv4 frame", edited(tcpPartial, func(g []byte) { g[14] = 0x65 }), tp, frame.ErrOffloadIPHeader},
		{"IPv4 total length past the frame", edited(tcpPartial, func(g []byte) { binary.BigEndian.PutUint16(g[16:], 4000) }), tp, frame.ErrOffloadIPLength},
		{"IPv4 total length shorter than its header", edited(tcpPartial, func(g []byte) { binary.BigEndian.PutUint16(g[16:], 10) }), tp, frame.ErrOffloadIPLength},
		{"super-frame with trailing bytes past the IP length", append(append([]byte(nil), tcpPartial...), 0, 0), with(tp, gso(frame.GSOTCPv4, 1000)), frame.ErrOffloadIPLength},
		{"IPv6 payload length past the frame", edited(udp6Partial, func(g []byte) { binary.BigEndian.PutUint16(g[18:], 5000) }), up, frame.ErrOffloadIPLength},
		{"csum_start past the frame", tcpPartial, with(tp, func(o *frame.Offload) { o.CsumStart = 4000 }), frame.ErrOffloadCsumStart},
		{"csum_start leaves no room for the TCP header", tcpPartial, with(tp, func(o *frame.Offload) { o.CsumStart = uint16(len(tcpPartial) - 10) }), frame.ErrOffloadL4Header},
		{"csum_offset of no protocol", tcpPartial, with(tp, func(o *frame.Offload) { o.CsumOffset = 10 }), frame.ErrOffloadCsumOffset},
		{"csum_offset names UDP on a TCP header", tcpPartial, with(tp, func(o *frame.Offload) { o.CsumOffset = 6 }), frame.ErrOffloadCsumProto},
		{"GSO size 0", tcpPartial, with(tp, gso(frame.GSOTCPv4, 0)), frame.ErrOffloadGSOSize},
		{"too many segments", tcpPartial, with(tp, gso(frame.GSOTCPv4, 1)), frame.ErrOffloadGSOSize},
		{"UFO", tcpPartial, with(tp, gso(frame.GSOUDP, 1000)), frame.ErrOffloadGSOType},
		{"unknown GSO type", tcpPartial, with(tp, gso(9, 1000)), frame.ErrOffloadGSOType},
		{"TCPv6 type on an IPv4 frame", tcpPartial, with(tp, gso(frame.GSOTCPv6, 1000)), frame.ErrOffloadGSOMismatch},
		{"UDP type on a TCP frame", tcpPartial, with(tp, gso(frame.GSOUDPL4, 1000)), frame.ErrOffloadGSOMismatch},
		{"UDP type with ECN", udp6Partial, with(up, gso(frame.GSOUDPL4|frame.GSOECN, 1000)), frame.ErrOffloadGSOMismatch},
		{"super-frame that is an IPv4 fragment (found by FuzzSegment)", edited(tcpPartial, func(g []byte) { g[20] |= 0x20 }), with(tp, gso(frame.GSOTCPv4, 1000)), frame.ErrOffloadGSOMismatch},
		{"super-frame of an encapsulated header", tcpPartial, with(tp, func(o *frame.Offload) { o.CsumStart += 20; o.GSOType, o.GSOSize = frame.GSOTCPv4, 1000 }), frame.ErrOffloadGSOMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := frame.CheckOffload(c.f, c.o)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("CheckOffload = %v, want %v", err, c.want)
			}
			if err != nil && !errors.Is(err, frame.ErrOffloadBadFrame) && !errors.Is(err, frame.ErrOffloadUnsupported) {
				t.Errorf("%v wraps neither ErrOffloadBadFrame nor ErrOffloadUnsupported", err)
			}
			if c.o.GSOType == frame.GSONone {
				return
			}
			// Segment refuses exactly what CheckOffload refuses.
			buf := make([]byte, 1<<20)
			if _, serr := frame.Segment(c.f, c.o, buf, nil); !errors.Is(serr, c.want) || (serr == nil) != (c.want == nil) {
				t.Errorf("Segment = %v, want %v", serr, c.want)
			}
		})
	}
}

func TestCheckOffloadZeroAllocs(t *testing.T) {
	f, o := platformtest.Packet{Payload: platformtest.Payload(3000)}.Partial(platformtest.Packet{Payload: platformtest.Payload(3000)}.Build(t))
	o.GSOType, o.GSOSize = frame.GSOTCPv4, 1448
	bad, bo := crashTCPGSO(t)
	if n := testing.AllocsPerRun(100, func() {
		_ = frame.CheckOffload(f, o)
		_ = frame.CheckOffload(bad, bo)
	}); n != 0 {
		t.Fatalf("CheckOffload allocates %.1f times per call, want 0", n)
	}
}

// FuzzSegment feeds arbitrary frames and virtio headers to the software
// offload functions. None may panic; every segment of a super-frame that
// CheckOffload accepts must decode (gopacket) with IP and L4 lengths that
// match it and valid IPv4 header and L4 checksums, computed here by a
// plain RFC 1071 sum, not by the code under test.
func FuzzSegment(f *testing.F) {
	add := func(fr []byte, o frame.Offload) {
		f.Add(fr, o.Flags, o.GSOType, o.HdrLen, o.GSOSize, o.CsumStart, o.CsumOffset)
	}
	add(crashUDPGSO(f))
	add(crashTCPGSO(f))
	for _, p := range []platformtest.Packet{
		{Payload: platformtest.Payload(3000), Flags: "FPC"},
		{V6: true, VLAN: 7, Payload: platformtest.Payload(2500)},
		{UDP: true, Payload: platformtest.Payload(2000)},
		{UDP: true, V6: true, Payload: platformtest.Payload(1000)},
	} {
		fr, o := p.Partial(p.Build(f))
		add(fr, o)
		o.GSOSize = 700
		switch {
		case p.UDP:
			o.GSOType = frame.GSOUDPL4
		case p.V6:
			o.GSOType = frame.GSOTCPv6
		default:
			o.GSOType = frame.GSOTCPv4 | frame.GSOECN
		}
		add(fr, o)
	}
	add(v6ExtFrame(f), frame.Offload{Flags: frame.OffloadNeedsCsum, CsumStart: 62, CsumOffset: 16, GSOType: frame.GSOTCPv6, GSOSize: 30})
	f.Fuzz(func(t *testing.T, fr []byte, flags, gsoType uint8, hdrLen, gsoSize, csumStart, csumOffset uint16) {
		o := frame.Offload{Flags: flags, GSOType: gsoType, HdrLen: hdrLen, GSOSize: gsoSize, CsumStart: csumStart, CsumOffset: csumOffset}
		orig := append([]byte(nil), fr...)
		checkErr := frame.CheckOffload(fr, o)
		_ = frame.SegmentPayloadLen(fr, o)
		_ = frame.FinishChecksum(append([]byte(nil), fr...), o)
		var fin platform.SoftwareFinisher
		_, _ = fin.Add(fr, o)
		if o.GSOType == frame.GSONone {
			return
		}
		n, lerr := frame.SegmentedLen(fr, o)
		if (lerr == nil) != (checkErr == nil) {
			t.Fatalf("SegmentedLen error %v, CheckOffload error %v: they must agree", lerr, checkErr)
		}
		if lerr != nil {
			return
		}
		segs, err := frame.Segment(fr, o, make([]byte, n), nil)
		if err != nil {
			t.Fatalf("Segment refused a frame CheckOffload accepts: %v", err)
		}
		for i, s := range segs {
			if msg := verifySegment(s, int(o.GSOSize)); msg != "" {
				t.Fatalf("segment %d of %d: %s\n% x", i, len(segs), msg, s)
			}
		}
		if string(fr) != string(orig) {
			t.Fatal("Segment changed its input")
		}
	})
}

// verifySegment decodes s with gopacket and checks its lengths and
// checksums; it returns what is wrong, or "".
func verifySegment(s []byte, mss int) string {
	pk := gopacket.NewPacket(s, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true})
	if el := pk.ErrorLayer(); el != nil {
		return "gopacket cannot decode it: " + el.Error().Error()
	}
	var src, dst net.IP
	var proto layers.IPProtocol
	switch ip := pk.NetworkLayer().(type) {
	case *layers.IPv4:
		if int(ip.Length) != len(ip.Contents)+len(ip.Payload) {
			return "IPv4 total length does not match the segment"
		}
		if platformtest.Fold(platformtest.NaiveSum(ip.Contents)) != 0xffff {
			return "bad IPv4 header checksum"
		}
		src, dst = ip.SrcIP, ip.DstIP
	case *layers.IPv6:
		l3 := 14
		for _, l := range pk.Layers() {
			if l.LayerType() == layers.LayerTypeDot1Q {
				l3 += 4
			}
		}
		if int(ip.Length) != len(s)-l3-40 {
			return "IPv6 payload length does not match the segment"
		}
		src, dst = ip.SrcIP, ip.DstIP
	default:
		return "no IP layer"
	}
	switch tl := pk.TransportLayer().(type) {
	case *layers.TCP:
		proto = layers.IPProtocolTCP
		if len(tl.Payload) > mss {
			return "TCP payload larger than gso_size"
		}
	case *layers.UDP:
		proto = layers.IPProtocolUDP
		if int(tl.Length) != len(tl.Contents)+len(tl.Payload) {
			return "UDP length does not match the segment"
		}
		if len(tl.Payload) > mss {
			return "UDP payload larger than gso_size"
		}
	default:
		return "no TCP or UDP layer"
	}
	l4 := s[len(s)-len(pk.TransportLayer().LayerContents())-len(pk.TransportLayer().LayerPayload()):]
	ps := platformtest.NaiveSum(src) + platformtest.NaiveSum(dst) + uint32(proto) + uint32(len(l4))
	if platformtest.Fold(ps+platformtest.NaiveSum(l4)) != 0xffff {
		return "bad L4 checksum"
	}
	return ""
}

func TestVirtioHdrRoundTrip(t *testing.T) {
	o := frame.Offload{Flags: frame.OffloadNeedsCsum, GSOType: frame.GSOTCPv6 | frame.GSOECN, HdrLen: 86, GSOSize: 1428, CsumStart: 58, CsumOffset: 16}
	var b [frame.VirtioHdrLen]byte
	o.EncodeVirtioHdr(b[:])
	if got := frame.DecodeVirtioHdr(b[:]); got != o {
		t.Fatalf("DecodeVirtioHdr(EncodeVirtioHdr(%+v)) = %+v", o, got)
	}
}
