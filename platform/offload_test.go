package platform_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/platform"
)

// pkt describes a test frame; build makes it with gopacket, checksums and
// lengths computed by gopacket (the reference the code under test is
// compared with).
type pkt struct {
	vlan    uint16 // 0: untagged
	v6      bool
	udp     bool
	id      uint16 // IPv4 ID
	seq     uint32
	flags   string // TCP flags among "SAFPRCE" ... only F, P, C, A used
	payload []byte
}

func (p pkt) build(t testing.TB) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}}
	var ls []gopacket.SerializableLayer
	ls = append(ls, eth)
	l3type := layers.EthernetTypeIPv4
	if p.v6 {
		l3type = layers.EthernetTypeIPv6
	}
	if p.vlan != 0 {
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: p.vlan, Type: l3type})
	} else {
		eth.EthernetType = l3type
	}
	proto := layers.IPProtocolTCP
	if p.udp {
		proto = layers.IPProtocolUDP
	}
	var nl gopacket.NetworkLayer
	if p.v6 {
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto,
			SrcIP: net.ParseIP("2001:db8::1"), DstIP: net.ParseIP("2001:db8::2")}
		nl, ls = ip, append(ls, ip)
	} else {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, Id: p.id, Flags: layers.IPv4DontFragment,
			SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
		nl, ls = ip, append(ls, ip)
	}
	if p.udp {
		u := &layers.UDP{SrcPort: 4000, DstPort: 9}
		u.SetNetworkLayerForChecksum(nl)
		ls = append(ls, u)
	} else {
		tcp := &layers.TCP{SrcPort: 40000, DstPort: 5201, Seq: p.seq, Ack: 77, Window: 500, ACK: true,
			Options: []layers.TCPOption{{OptionType: layers.TCPOptionKindNop}, {OptionType: layers.TCPOptionKindNop},
				{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: make([]byte, 8)}}}
		for _, c := range p.flags {
			switch c {
			case 'F':
				tcp.FIN = true
			case 'P':
				tcp.PSH = true
			case 'C':
				tcp.CWR = true
			}
		}
		tcp.SetNetworkLayerForChecksum(nl)
		ls = append(ls, tcp)
	}
	ls = append(ls, gopacket.Payload(p.payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// offsets returns the L4 offset, the checksum offset within L4 and the
// header length of p's frames.
func (p pkt) offsets() (l4, csumOff, hdrEnd int) {
	l4 = 14
	if p.vlan != 0 {
		l4 += 4
	}
	if p.v6 {
		l4 += 40
	} else {
		l4 += 20
	}
	if p.udp {
		return l4, 6, l4 + 8
	}
	return l4, 16, l4 + 32
}

// naiveSum is a plain RFC 1071 sum, 16 bits at a time, unfolded.
func naiveSum(b []byte) uint32 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// partial turns a complete frame into what a local stack with checksum
// offload hands the device: the L4 checksum field holds the folded
// pseudo-header sum, and the Offload says where to finish it.
func (p pkt) partial(f []byte) ([]byte, platform.Offload) {
	f = append([]byte(nil), f...)
	l4, off, _ := p.offsets()
	l3 := 14
	if p.vlan != 0 {
		l3 += 4
	}
	var s uint32
	if p.v6 {
		s = naiveSum(f[l3+8 : l3+40])
	} else {
		s = naiveSum(f[l3+12 : l3+20])
	}
	proto := uint32(6)
	if p.udp {
		proto = 17
	}
	s += proto + uint32(len(f)-l4)
	binary.BigEndian.PutUint16(f[l4+off:], fold(s))
	return f, platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: uint16(l4), CsumOffset: uint16(off)}
}

func payload(n int) []byte {
	b := make([]byte, n)
	x := uint32(12345)
	for i := range b {
		x = x*1103515245 + 12345
		b[i] = byte(x >> 16)
	}
	return b
}

func TestFinishChecksum(t *testing.T) {
	cases := []struct {
		name string
		p    pkt
	}{
		{"TCP/IPv4", pkt{seq: 1, payload: payload(1000)}},
		{"TCP/IPv4 odd length", pkt{seq: 1, payload: payload(999)}},
		{"TCP/IPv4 802.1Q", pkt{vlan: 100, seq: 7, payload: payload(1448)}},
		{"TCP/IPv6", pkt{v6: true, seq: 9, payload: payload(1200)}},
		{"UDP/IPv4", pkt{udp: true, payload: payload(333)}},
		{"UDP/IPv6 802.1Q", pkt{udp: true, v6: true, vlan: 5, payload: payload(1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.p.build(t)
			f, o := c.p.partial(want)
			if bytes.Equal(f, want) {
				t.Fatal("test setup: the partial frame equals the complete one")
			}
			if err := platform.FinishChecksum(f, o); err != nil {
				t.Fatalf("FinishChecksum: %v", err)
			}
			if !bytes.Equal(f, want) {
				l4, off, _ := c.p.offsets()
				t.Fatalf("checksum %#04x, want %#04x (gopacket)", f[l4+off:l4+off+2], want[l4+off:l4+off+2])
			}
		})
	}
	t.Run("no NEEDS_CSUM leaves the frame alone", func(t *testing.T) {
		f := pkt{payload: payload(10)}.build(t)
		g := append([]byte(nil), f...)
		if err := platform.FinishChecksum(g, platform.Offload{Flags: platform.OffloadDataValid}); err != nil || !bytes.Equal(f, g) {
			t.Fatalf("FinishChecksum changed a complete frame (err %v)", err)
		}
	})
	t.Run("checksum outside the frame", func(t *testing.T) {
		f := pkt{payload: payload(10)}.build(t)
		o := platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: uint16(len(f) - 10), CsumOffset: 16}
		if err := platform.FinishChecksum(f, o); !errors.Is(err, platform.ErrOffloadBadFrame) {
			t.Fatalf("FinishChecksum = %v, want ErrOffloadBadFrame", err)
		}
	})
}

func TestSegment(t *testing.T) {
	const mss = 1448
	cases := []struct {
		name    string
		p       pkt
		gso     uint8
		mss     int
		partial bool // the super-frame's checksum is partial (as from a stack)
	}{
		{"TCP/IPv4 3 segments, FIN PSH CWR", pkt{id: 0xfffe, seq: 0xfffff000, flags: "FPC", payload: payload(2*mss + 100)}, platform.GSOTCPv4 | platform.GSOECN, mss, true},
		{"TCP/IPv4 exact multiple", pkt{id: 9, seq: 5, flags: "P", payload: payload(4 * 1000)}, platform.GSOTCPv4, 1000, true},
		{"TCP/IPv4 one segment", pkt{id: 9, seq: 5, payload: payload(100)}, platform.GSOTCPv4, mss, true},
		{"TCP/IPv4 802.1Q, complete checksum", pkt{vlan: 100, id: 1, seq: 1, payload: payload(3 * mss)}, platform.GSOTCPv4, mss, false},
		{"TCP/IPv6 802.1Q", pkt{v6: true, vlan: 42, seq: 77, flags: "P", payload: payload(5*1428 + 1)}, platform.GSOTCPv6, 1428, true},
		{"UDP/IPv4 GSO", pkt{udp: true, id: 3, payload: payload(3*1200 + 30)}, platform.GSOUDPL4, 1200, true},
		{"UDP/IPv6 GSO", pkt{udp: true, v6: true, payload: payload(2 * 1000)}, platform.GSOUDPL4, 1000, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			super := c.p.build(t)
			o := platform.Offload{}
			if c.partial {
				super, o = c.p.partial(super)
			}
			o.GSOType, o.GSOSize = c.gso, uint16(c.mss)
			orig := append([]byte(nil), super...)

			// The expected segments, built by gopacket.
			var want [][]byte
			pl := c.p.payload
			for i := 0; i == 0 || len(pl) > 0; i++ {
				n := min(c.mss, len(pl))
				s := c.p
				s.payload = pl[:n]
				pl = pl[n:]
				s.id = c.p.id + uint16(i)
				s.seq = c.p.seq + uint32(i*c.mss)
				s.flags = ""
				for _, f := range c.p.flags {
					if (f == 'C' && i == 0) || (f != 'C' && len(pl) == 0) {
						s.flags += string(f)
					}
				}
				want = append(want, s.build(t))
			}

			size, err := platform.SegmentedLen(super, o)
			if err != nil {
				t.Fatalf("SegmentedLen: %v", err)
			}
			total := 0
			for _, w := range want {
				total += len(w)
			}
			if size != total {
				t.Fatalf("SegmentedLen = %d, want %d", size, total)
			}
			_, _, hdrEnd := c.p.offsets()
			wantPL := hdrEnd - 14 + c.mss
			if c.p.vlan != 0 {
				wantPL -= 4
			}
			if len(want) == 1 {
				wantPL = len(want[0]) - 14
				if c.p.vlan != 0 {
					wantPL -= 4
				}
			}
			if got := platform.SegmentPayloadLen(super, o); got != wantPL {
				t.Errorf("SegmentPayloadLen = %d, want %d", got, wantPL)
			}
			buf := make([]byte, size)
			segs, err := platform.Segment(super, o, buf, nil)
			if err != nil {
				t.Fatalf("Segment: %v", err)
			}
			if len(segs) != len(want) {
				t.Fatalf("Segment made %d segments, want %d", len(segs), len(want))
			}
			for i := range want {
				if !bytes.Equal(segs[i], want[i]) {
					t.Errorf("segment %d of %d differs from gopacket's:\ngot  % x\nwant % x", i, len(want), segs[i][:min(80, len(segs[i]))], want[i][:min(80, len(want[i]))])
				}
			}
			if !bytes.Equal(super, orig) {
				t.Error("Segment changed its input frame")
			}
		})
	}
}

func TestSegmentRefuses(t *testing.T) {
	tcp := pkt{payload: payload(3000)}.build(t)
	tcpPartial, po := pkt{payload: payload(3000)}.partial(tcp)
	cases := []struct {
		name string
		f    []byte
		o    platform.Offload
		want error
	}{
		{"UFO", tcp, platform.Offload{GSOType: platform.GSOUDP, GSOSize: 1000}, platform.ErrOffloadUnsupported},
		{"GSO size 0", tcp, platform.Offload{GSOType: platform.GSOTCPv4}, platform.ErrOffloadBadFrame},
		{"TCPv6 type on an IPv4 frame", tcp, platform.Offload{GSOType: platform.GSOTCPv6, GSOSize: 1000}, platform.ErrOffloadBadFrame},
		{"UDP type on a TCP frame", tcp, platform.Offload{GSOType: platform.GSOUDPL4, GSOSize: 1000}, platform.ErrOffloadBadFrame},
		{"csum start past the end", tcpPartial, platform.Offload{Flags: po.Flags, CsumStart: 4000, CsumOffset: 16, GSOType: platform.GSOTCPv4, GSOSize: 1000}, platform.ErrOffloadBadFrame},
		{"not IP", append(append([]byte(nil), tcp[:12]...), append([]byte{0x88, 0xb5}, tcp[14:]...)...), platform.Offload{GSOType: platform.GSOTCPv4, GSOSize: 1000}, platform.ErrOffloadUnsupported},
		{"runt", tcp[:30], platform.Offload{GSOType: platform.GSOTCPv4, GSOSize: 1000}, platform.ErrOffloadBadFrame},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, 10000)
			if _, err := platform.Segment(c.f, c.o, buf, nil); !errors.Is(err, c.want) {
				t.Fatalf("Segment = %v, want %v", err, c.want)
			}
			// The MTU figure of a frame that cannot be parsed is its own.
			if got, want := platform.SegmentPayloadLen(c.f, c.o), len(c.f)-14; got != want && c.name != "csum start past the end" {
				t.Errorf("SegmentPayloadLen = %d, want the frame's own %d", got, want)
			}
		})
	}
	t.Run("buffer too small", func(t *testing.T) {
		o := po
		o.GSOType, o.GSOSize = platform.GSOTCPv4, 1000
		n, _ := platform.SegmentedLen(tcpPartial, o)
		if _, err := platform.Segment(tcpPartial, o, make([]byte, n-1), nil); !errors.Is(err, platform.ErrOffloadBadFrame) {
			t.Fatalf("Segment into %d of %d bytes = %v, want ErrOffloadBadFrame", n-1, n, err)
		}
	})
}

func TestSegmentZeroAllocs(t *testing.T) {
	p := pkt{seq: 1, payload: payload(60000)}
	f, o := p.partial(p.build(t))
	o.GSOType, o.GSOSize = platform.GSOTCPv4, 1448
	n, _ := platform.SegmentedLen(f, o)
	buf := make([]byte, n)
	segs := make([][]byte, 0, 64)
	c := append([]byte(nil), f...)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if segs, err = platform.Segment(f, o, buf, segs[:0]); err != nil {
			t.Fatal(err)
		}
		copy(c, f)
		if err := platform.FinishChecksum(c, o); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Segment + FinishChecksum: %v allocations per run, want 0", allocs)
	}
}

func BenchmarkSegment(b *testing.B) {
	p := pkt{seq: 1, payload: payload(64000)}
	f, o := p.partial(p.build(b))
	o.GSOType, o.GSOSize = platform.GSOTCPv4, 1448
	n, _ := platform.SegmentedLen(f, o)
	buf := make([]byte, n)
	segs := make([][]byte, 0, 64)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		segs, _ = platform.Segment(f, o, buf, segs[:0])
	}
}
