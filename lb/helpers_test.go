package lb

import (
	"encoding/binary"

	"github.com/swctl/swctl/frame"
)

// Ethertypes and IP protocol numbers, as the test builders name them.
const (
	typeIPv4    = frame.TypeIPv4
	typeIPv6    = frame.TypeIPv6
	typeVLAN    = frame.TypeVLAN
	typeQinQ    = frame.TypeQinQ
	typeQinQOld = frame.TypeQinQOld

	protoHopByHop = frame.ProtoHopByHop
	protoTCP      = frame.ProtoTCP
	protoUDP      = frame.ProtoUDP
	protoRouting  = frame.ProtoRouting
	protoFragment = frame.ProtoFragment
	protoAH       = frame.ProtoAH
	protoDstOpts  = frame.ProtoDestOpts
	protoSCTP     = frame.ProtoSCTP
)

// Test frames are built field by field; every builder returns a fresh slice.

var (
	macA = [6]byte{0x02, 0, 0, 0, 0, 0x0a}
	macB = [6]byte{0x02, 0, 0, 0, 0, 0x0b}
)

// eth returns an Ethernet header from src to dst with the given tags
// (TPID, VID pairs) and ethertype, followed by payload.
func eth(dst, src [6]byte, tags [][2]uint16, etype uint16, payload []byte) []byte {
	b := append(append([]byte{}, dst[:]...), src[:]...)
	for _, t := range tags {
		b = binary.BigEndian.AppendUint16(b, t[0])
		b = binary.BigEndian.AppendUint16(b, t[1])
	}
	b = binary.BigEndian.AppendUint16(b, etype)
	return append(b, payload...)
}

// ip4 returns an IPv4 header (no options) with protocol proto, the given
// flags-and-fragment-offset word, from src to dst, followed by payload.
func ip4(src, dst [4]byte, proto byte, frag uint16, payload []byte) []byte {
	b := make([]byte, 20)
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(20+len(payload)))
	binary.BigEndian.PutUint16(b[6:], frag)
	b[8] = 64
	b[9] = proto
	copy(b[12:], src[:])
	copy(b[16:], dst[:])
	return append(b, payload...)
}

// ip6 returns an IPv6 header with flow label flow and next header next,
// from an address ending in srcLow to one ending in dstLow, followed by
// payload (extension headers included).
func ip6(flow uint32, next byte, srcLow, dstLow byte, payload []byte) []byte {
	b := make([]byte, 40)
	binary.BigEndian.PutUint32(b[0:], 6<<28|flow&0xfffff)
	binary.BigEndian.PutUint16(b[4:], uint16(len(payload)))
	b[6] = next
	b[7] = 64
	b[8], b[9], b[23] = 0x20, 0x01, srcLow
	b[24], b[25], b[39] = 0x20, 0x01, dstLow
	return append(b, payload...)
}

// l4 returns a transport header of 20 bytes with the given ports.
func l4(sport, dport uint16) []byte {
	b := make([]byte, 20)
	binary.BigEndian.PutUint16(b[0:], sport)
	binary.BigEndian.PutUint16(b[2:], dport)
	return b
}

// ext6 returns an IPv6 extension header (hop-by-hop, routing or
// destination options layout) of 8 bytes with next header next.
func ext6(next byte) []byte { return []byte{next, 0, 1, 4, 0, 0, 0, 0} }

// frag6 returns an IPv6 fragment header with next header next, offset
// off (in 8-byte units) and the more-fragments bit.
func frag6(next byte, off uint16, more bool) []byte {
	w := off << 3
	if more {
		w |= 1
	}
	b := []byte{next, 0, 0, 0, 0, 0, 0, 42}
	binary.BigEndian.PutUint16(b[2:], w)
	return b
}

var (
	ipA = [4]byte{192, 0, 2, 1}
	ipB = [4]byte{192, 0, 2, 2}
	ipC = [4]byte{198, 51, 100, 7}
)

// tcp4 is a TCP/IPv4 frame from ipA:sport to ipB:dport.
func tcp4(sport, dport uint16) []byte {
	return eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoTCP, 0, l4(sport, dport)))
}

// sampleFrames are frames of every shape the parser knows, for the
// no-panic test and the fuzz seed corpus.
func sampleFrames() [][]byte {
	return [][]byte{
		tcp4(1234, 80),
		eth(macB, macA, [][2]uint16{{typeVLAN, 10}}, typeIPv4, ip4(ipA, ipB, protoUDP, 0, l4(53, 53))),
		eth(macB, macA, [][2]uint16{{typeQinQ, 100}, {typeVLAN, 10}}, typeIPv4, ip4(ipA, ipB, protoSCTP, 0, l4(9, 9))),
		eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoUDP, 0x2000, l4(53, 53))),
		eth(macB, macA, nil, typeIPv6, ip6(7, protoTCP, 1, 2, l4(1, 2))),
		eth(macB, macA, nil, typeIPv6, ip6(7, protoHopByHop, 1, 2, append(ext6(protoRouting), append(ext6(protoUDP), l4(5, 6)...)...))),
		eth(macB, macA, nil, typeIPv6, ip6(7, protoFragment, 1, 2, append(frag6(protoUDP, 0, true), l4(5, 6)...))),
		eth(macB, macA, nil, typeIPv6, ip6(7, protoAH, 1, 2, append([]byte{protoTCP, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, l4(5, 6)...))),
		eth(macB, macA, nil, 0x0806, make([]byte, 28)),
		eth(macB, macA, [][2]uint16{{typeVLAN, 10}, {typeVLAN, 20}, {typeVLAN, 30}}, typeIPv4, ip4(ipA, ipB, protoTCP, 0, l4(1, 2))),
	}
}
