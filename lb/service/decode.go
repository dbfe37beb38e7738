package service

import (
	"encoding/binary"

	"github.com/swctl/swctl/frame"
)

// Header sizes and fields the per-frame path reads.
const (
	ethLen     = frame.HeaderLen
	arpLen     = 28 // Ethernet/IPv4 ARP
	ipv6Len    = 40
	icmpv6NS   = 135
	icmpv6NA   = 136
	ndMinLen   = 24 // type, code, checksum, flags or reserved, target
	optSrcLL   = 1  // source link-layer address option
	optTgtLL   = 2  // target link-layer address option
	protoICMP6 = 58
	arpRequest = 1
	arpReply   = 2
)

// arpHeader is an Ethernet/IPv4 ARP packet, checked by decodeARP.
type arpHeader []byte

// decodeARP returns p as an ARP header for IPv4 over Ethernet, or false
// when it is shorter than one, describes other addresses, or is neither
// a request nor a reply.
func decodeARP(p []byte) (arpHeader, bool) {
	if len(p) < arpLen {
		return nil, false
	}
	a := arpHeader(p)
	if binary.BigEndian.Uint16(a[0:]) != 1 || binary.BigEndian.Uint16(a[2:]) != frame.TypeIPv4 || a[4] != 6 || a[5] != 4 {
		return nil, false
	}
	if op := a.op(); op != arpRequest && op != arpReply {
		return nil, false
	}
	return a, true
}

func (a arpHeader) op() uint16           { return binary.BigEndian.Uint16(a[6:]) }
func (a arpHeader) senderMAC() frame.MAC { return frame.MAC(a[8:14]) }
func (a arpHeader) senderIP() [4]byte    { return [4]byte(a[14:18]) }
func (a arpHeader) targetIP() [4]byte    { return [4]byte(a[24:28]) }

// ndMessage is an ICMPv6 neighbour solicitation or advertisement in its
// IPv6 packet, checked by decodeND.
type ndMessage struct {
	// typ is icmpv6NS or icmpv6NA.
	typ uint8
	// src is the IPv6 source address.
	src [16]byte
	// target is the target address.
	target [16]byte
	// ll is the link-layer address option (source for NS, target for
	// NA); ok says whether there was one.
	ll   frame.MAC
	llOK bool
}

// isND reports whether p, an IPv6 packet, carries ICMPv6 directly (no
// extension headers, as ND never has) with an NS or NA type: the frames
// decodeND must accept or count as malformed.
func isND(p []byte) bool {
	return len(p) >= ipv6Len+1 && p[6] == protoICMP6 && (p[ipv6Len] == icmpv6NS || p[ipv6Len] == icmpv6NA)
}

// decodeND reads an NS or NA from p, an IPv6 packet for which isND
// holds. It refuses, as RFC 4861 section 7.1.1 asks, a hop limit other
// than 255, a code other than 0, a message shorter than 24 bytes or than
// the payload length says, and an option of length 0 or running past
// the message.
func decodeND(p []byte) (m ndMessage, ok bool) {
	plen := int(binary.BigEndian.Uint16(p[4:]))
	if p[7] != 255 || plen < ndMinLen || len(p) < ipv6Len+plen {
		return m, false
	}
	icmp := p[ipv6Len : ipv6Len+plen]
	if icmp[1] != 0 {
		return m, false
	}
	m.typ = icmp[0]
	copy(m.src[:], p[8:24])
	copy(m.target[:], icmp[8:24])
	want := uint8(optSrcLL)
	if m.typ == icmpv6NA {
		want = optTgtLL
	}
	for opts := icmp[ndMinLen:]; len(opts) > 0; {
		if len(opts) < 2 || opts[1] == 0 || int(opts[1])*8 > len(opts) {
			return m, false
		}
		n := int(opts[1]) * 8
		if opts[0] == want && n >= 8 {
			m.ll, m.llOK = frame.MAC(opts[2:8]), true
		}
		opts = opts[n:]
	}
	return m, true
}
