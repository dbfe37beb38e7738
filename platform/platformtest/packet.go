package platformtest

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/platform"
)

// Packet describes a test frame; build makes it with gopacket, checksums and
// lengths computed by gopacket (the reference the code under test is
// compared with).
type Packet struct {
	VLAN    uint16 // 0: untagged
	V6      bool
	UDP     bool
	ID      uint16 // IPv4 ID
	Seq     uint32
	Flags   string // TCP flags among "SAFPRCE" ... only F, P, C, A used
	Payload []byte
}

func (p Packet) Build(t testing.TB) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}}
	var ls []gopacket.SerializableLayer
	ls = append(ls, eth)
	l3type := layers.EthernetTypeIPv4
	if p.V6 {
		l3type = layers.EthernetTypeIPv6
	}
	if p.VLAN != 0 {
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: p.VLAN, Type: l3type})
	} else {
		eth.EthernetType = l3type
	}
	proto := layers.IPProtocolTCP
	if p.UDP {
		proto = layers.IPProtocolUDP
	}
	var nl gopacket.NetworkLayer
	if p.V6 {
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto,
			SrcIP: net.ParseIP("2001:db8::1"), DstIP: net.ParseIP("2001:db8::2")}
		nl, ls = ip, append(ls, ip)
	} else {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, Id: p.ID, Flags: layers.IPv4DontFragment,
			SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
		nl, ls = ip, append(ls, ip)
	}
	if p.UDP {
		u := &layers.UDP{SrcPort: 4000, DstPort: 9}
		u.SetNetworkLayerForChecksum(nl)
		ls = append(ls, u)
	} else {
		tcp := &layers.TCP{SrcPort: 40000, DstPort: 5201, Seq: p.Seq, Ack: 77, Window: 500, ACK: true,
			Options: []layers.TCPOption{{OptionType: layers.TCPOptionKindNop}, {OptionType: layers.TCPOptionKindNop},
				{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: make([]byte, 8)}}}
		for _, c := range p.Flags {
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
	ls = append(ls, gopacket.Payload(p.Payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// offsets returns the L4 offset, the checksum offset within L4 and the
// header length of p's frames.
func (p Packet) Offsets() (l4, csumOff, hdrEnd int) {
	l4 = 14
	if p.VLAN != 0 {
		l4 += 4
	}
	if p.V6 {
		l4 += 40
	} else {
		l4 += 20
	}
	if p.UDP {
		return l4, 6, l4 + 8
	}
	return l4, 16, l4 + 32
}

// NaiveSum is a plain RFC 1071 sum, 16 bits at a time, unfolded.
func NaiveSum(b []byte) uint32 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

// Fold folds a sum to 16 bits.
func Fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// partial turns a complete frame into what a local stack with checksum
// offload hands the device: the L4 checksum field holds the folded
// pseudo-header sum, and the Offload says where to finish it.
func (p Packet) Partial(f []byte) ([]byte, platform.Offload) {
	f = append([]byte(nil), f...)
	l4, off, _ := p.Offsets()
	l3 := 14
	if p.VLAN != 0 {
		l3 += 4
	}
	var s uint32
	if p.V6 {
		s = NaiveSum(f[l3+8 : l3+40])
	} else {
		s = NaiveSum(f[l3+12 : l3+20])
	}
	proto := uint32(6)
	if p.UDP {
		proto = 17
	}
	s += proto + uint32(len(f)-l4)
	binary.BigEndian.PutUint16(f[l4+off:], Fold(s))
	return f, platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: uint16(l4), CsumOffset: uint16(off)}
}

// TCPFrame builds a TCP/IPv4 frame from src to dst with n payload bytes,
// behind an 802.1Q tag when vlan is not 0, its checksum left partial as a
// local stack with offloads hands it to a device, and its Offload
// (NEEDS_CSUM). With mss > 0 it is a super-frame: the Offload also says
// TCPv4 with GSO size mss and the header length. For tests only: it
// allocates.
func TCPFrame(t testing.TB, dst, src net.HardwareAddr, vlan uint16, n, mss int) ([]byte, platform.Offload) {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ls := []gopacket.SerializableLayer{eth}
	l4 := 14 + 20
	if vlan != 0 {
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: vlan, Type: layers.EthernetTypeIPv4})
		l4 += 4
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, Flags: layers.IPv4DontFragment,
		SrcIP: net.IP{10, 9, 0, 1}, DstIP: net.IP{10, 9, 0, 2}}
	tcp := &layers.TCP{SrcPort: 40000, DstPort: 9, Seq: 1, Ack: 1, ACK: true, Window: 100}
	tcp.SetNetworkLayerForChecksum(ip)
	pl := make([]byte, n)
	for i := range pl {
		pl[i] = byte(i*7 + 1)
	}
	ls = append(ls, ip, tcp, gopacket.Payload(pl))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	f := buf.Bytes()
	// The partial checksum: the folded pseudo-header sum.
	binary.BigEndian.PutUint16(f[l4+16:], Fold(NaiveSum(f[l4-8:l4])+6+uint32(len(f)-l4)))
	o := platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: uint16(l4), CsumOffset: 16}
	if mss > 0 {
		o.GSOType, o.GSOSize, o.HdrLen = platform.GSOTCPv4, uint16(mss), uint16(l4+20)
	}
	return f, o
}

// Payload returns n pseudo-random bytes, the same every time.
func Payload(n int) []byte {
	b := make([]byte, n)
	x := uint32(12345)
	for i := range b {
		x = x*1103515245 + 12345
		b[i] = byte(x >> 16)
	}
	return b
}
