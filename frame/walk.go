package frame

import "encoding/binary"

// IP protocol numbers and limits the header walk knows.
const (
	ProtoHopByHop = 0
	ProtoTCP      = 6
	ProtoUDP      = 17
	ProtoDCCP     = 33
	ProtoRouting  = 43
	ProtoFragment = 44
	ProtoAH       = 51
	ProtoDestOpts = 60
	ProtoSCTP     = 132
	ProtoUDPLite  = 136

	// MaxTags is how many VLAN tags Walk skips.
	MaxTags = 2
	// maxExtHeaders bounds the IPv6 extension-header walk.
	maxExtHeaders = 8
)

// Headers says where the headers of a frame are. Offsets count from the
// frame's first byte (the destination MAC); a header the frame does not
// have, or that is cut short, is at -1.
type Headers struct {
	// EtherType is the type behind the tags: the L3 protocol.
	EtherType uint16
	// Tags is the number of VLAN tags Walk skipped (at most MaxTags), and
	// VLAN the VLAN ID of the outer one (0 untagged).
	Tags int
	VLAN uint16
	// L3 is the offset of the IPv4 or IPv6 header, whose fixed part is
	// whole, and L3End where it ends (the IPv4 header length, or 40 bytes
	// for IPv6); both -1 for anything else.
	L3, L3End int
	// IPv6 is set when L3 is an IPv6 header.
	IPv6 bool
	// L4 is the offset of the transport header the IP header names,
	// behind IPv6 extension headers, and Proto its protocol; L4 is -1
	// when the walk cannot reach one (an extension header cut short or
	// too many of them) and for every fragment but the first.
	L4    int
	Proto uint8
	// Fragment is set for an IPv4 fragment (MF set or a non-zero offset)
	// and for IPv6 with a fragment header, first fragment included.
	Fragment bool
}

// Flow is what a per-frame flow hash reads of a frame: the outer VLAN,
// the IP header and the transport ports. FlowOf finds it with the walk
// behind Headers.Walk; it is small enough to come back in registers, so
// the hash neither clears nor reads back a Headers in memory. (Four
// fields at most: the compiler keeps no larger struct in registers.)
type Flow struct {
	// VLAN is the VLAN ID of the outer tag, -1 for an untagged frame.
	VLAN int
	// L3 is Headers.L3: the offset of a whole fixed IPv4 or IPv6
	// header, -1 for anything else. The walk has checked its version
	// field, so f[L3]>>4 (4 or 6) says which.
	L3 int
	// Ports is the offset of the 16-bit source and destination ports of
	// a transport header that has them (HasPorts), the 4 bytes inside
	// the frame, and Proto its protocol. Ports is -1 and Proto 0 for
	// other protocols, headers cut short and every IP fragment, the
	// first one included: all fragments of a datagram must go alike.
	Ports int
	Proto uint8
}

// FlowOf finds the flow fields of f, walked as Walk does. It reads f only
// during the call, never panics and never allocates, whatever f holds.
func FlowOf(f []byte) Flow {
	// The frames most flows send need no walk (ipv4Flow, ipv6Flow), be
	// they untagged or behind one or two tags (MaxTags), read here: the
	// walk's call and nine results cost as much as the hash. Neither does
	// an untagged frame that is not IP. TestWalk and FuzzWalk check that
	// these answers agree with Walk.
	if len(f) < HeaderLen {
		return Flow{VLAN: -1, L3: -1, Ports: -1}
	}
	switch typ := binary.BigEndian.Uint16(f[12:14]); typ {
	case TypeIPv4:
		if fl, ok := ipv4Flow(f, HeaderLen, -1); ok {
			return fl
		}
	case TypeIPv6:
		if fl, ok := ipv6Flow(f, HeaderLen, -1); ok {
			return fl
		}
	default:
		if !isTag(typ) {
			return Flow{VLAN: -1, L3: -1, Ports: -1}
		}
		if len(f) < HeaderLen+8 {
			break
		}
		vlan, l3, typ := int(binary.BigEndian.Uint16(f[14:16])&vlanIDMask), HeaderLen+4, binary.BigEndian.Uint16(f[16:18])
		if isTag(typ) {
			l3, typ = HeaderLen+8, binary.BigEndian.Uint16(f[20:22])
		}
		switch typ {
		case TypeIPv4:
			if fl, ok := ipv4Flow(f, l3, vlan); ok {
				return fl
			}
		case TypeIPv6:
			if fl, ok := ipv6Flow(f, l3, vlan); ok {
				return fl
			}
		}
	}
	return walkFlow(f)
}

// ipv4Flow is FlowOf's answer for f, whose tags (outer VLAN vlan, -1 for
// none) end at l3 with the IPv4 ethertype, when its IPv4 header there is
// of 20 bytes, not a fragment, in front of TCP or UDP. ok is false for
// any other, which the walk answers.
func ipv4Flow(f []byte, l3, vlan int) (fl Flow, ok bool) {
	if len(f) >= l3+24 {
		ip := f[l3 : l3+24]
		// Version 4 and 5 words; MF clear and a zero fragment offset.
		if p := ip[9]; ip[0] == 0x45 && ip[6]&0x3f|ip[7] == 0 && (p == ProtoTCP || p == ProtoUDP) {
			return Flow{VLAN: vlan, L3: l3, Ports: l3 + 20, Proto: p}, true
		}
	}
	return fl, false
}

// ipv6Flow is ipv4Flow for an IPv6 header without extension headers.
func ipv6Flow(f []byte, l3, vlan int) (fl Flow, ok bool) {
	if len(f) >= l3+44 {
		ip := f[l3 : l3+44]
		if p := ip[6]; ip[0]>>4 == 6 && (p == ProtoTCP || p == ProtoUDP) {
			return Flow{VLAN: vlan, L3: l3, Ports: l3 + 40, Proto: p}, true
		}
	}
	return fl, false
}

// walkFlow is FlowOf by the walk.
func walkFlow(f []byte) Flow {
	_, tags, vlan, l3, _, l4, proto, _, frag := walk(f)
	fl := Flow{VLAN: -1, L3: l3, Ports: -1}
	if tags > 0 {
		fl.VLAN = int(vlan)
	}
	if !frag && l4 >= 0 && len(f)-l4 >= 4 && HasPorts(proto) {
		fl.Ports, fl.Proto = l4, proto
	}
	return fl
}

// MayCarryIP reports whether the outer ethertype of e, a valid frame, is
// IPv4, IPv6 or a VLAN tag. FlowOf finds no flow fields in a frame whose
// is not: a per-frame caller that asks this first (it is inlined) spares
// such frames FlowOf's call.
func (e Ethernet) MayCarryIP() bool {
	t := e.Type()
	return t == TypeIPv4 || t == TypeIPv6 || isTag(t)
}

// HasPorts reports whether a transport header of protocol proto starts
// with 16-bit source and destination ports.
func HasPorts(proto uint8) bool {
	switch proto {
	case ProtoTCP, ProtoUDP, ProtoDCCP, ProtoSCTP, ProtoUDPLite:
		return true
	}
	return false
}

// Walk finds the headers of f: up to MaxTags VLAN tags, an IPv4 or IPv6
// header, and the transport header behind it. It reads f only during the
// call, never panics and never allocates, whatever f holds; a frame
// shorter than an Ethernet header has EtherType 0 and no L3.
func Walk(f []byte) Headers {
	var h Headers
	h.Walk(f)
	return h
}

// Walk sets h to the headers of f, as the function Walk returns them.
// Per-frame callers use it: a Headers returned by value is copied right
// after being written field by field, and that copy stalls on store
// forwarding, which costs more than the walk itself.
func (h *Headers) Walk(f []byte) {
	typ, tags, vlan, l3, l3End, l4, proto, ipv6, frag := walk(f)
	*h = Headers{EtherType: typ, Tags: tags, VLAN: vlan, L3: l3, L3End: l3End, IPv6: ipv6, L4: l4, Proto: proto, Fragment: frag}
}

// walk is the header walk of swctl, behind Headers.Walk and FlowOf. Its
// results are the fields of Headers, returned in registers: no Headers
// is cleared and filled when the caller needs only a few of them.
func walk(f []byte) (typ uint16, tags int, vlan uint16, l3, l3End, l4 int, proto uint8, ipv6, frag bool) {
	l3, l3End, l4 = -1, -1, -1
	if len(f) < HeaderLen {
		return
	}
	off := 12
	typ = binary.BigEndian.Uint16(f[12:14])
	for tags < MaxTags && isTag(typ) && len(f) >= off+6 {
		if tags == 0 {
			vlan = binary.BigEndian.Uint16(f[off+2:off+4]) & vlanIDMask
		}
		tags++
		off += 4
		typ = binary.BigEndian.Uint16(f[off : off+2])
	}
	n := off + 2
	switch typ {
	case TypeIPv4:
		if len(f) < n+20 {
			return
		}
		ip := f[n : n+20]
		ihl := int(ip[0]&0x0f) * 4
		if ip[0]>>4 != 4 || ihl < 20 || len(f) < n+ihl {
			return
		}
		l3, l3End, proto = n, n+ihl, ip[9]
		// MF set or a non-zero fragment offset: a fragment.
		fo := binary.BigEndian.Uint16(ip[6:8])
		frag = fo&0x3fff != 0
		if fo&0x1fff == 0 {
			l4 = l3End
		}
	case TypeIPv6:
		if len(f) < n+40 || f[n]>>4 != 6 {
			return
		}
		l3, l3End, ipv6 = n, n+40, true
		l4, proto, frag = walkExtHeaders(f, l3End, f[n+6])
	}
	return
}

// walkExtHeaders follows the IPv6 extension headers from off, where a
// header of type next starts, and returns the offset and protocol of the
// first header that is not one (-1 and 0 when it cannot be reached), and
// whether a fragment header was passed.
func walkExtHeaders(f []byte, off int, next uint8) (l4 int, proto uint8, frag bool) {
	for range maxExtHeaders {
		var n int
		switch next {
		case ProtoHopByHop, ProtoRouting, ProtoDestOpts:
			if len(f) < off+2 {
				return -1, 0, frag
			}
			n = (int(f[off+1]) + 1) * 8
		case ProtoAH:
			if len(f) < off+2 {
				return -1, 0, frag
			}
			n = (int(f[off+1]) + 2) * 4
		case ProtoFragment:
			frag = true
			if len(f) < off+8 {
				return -1, 0, frag
			}
			// Only the first fragment (offset 0) holds the next header.
			if binary.BigEndian.Uint16(f[off+2:])&0xfff8 != 0 {
				return -1, 0, frag
			}
			n = 8
		default:
			return off, next, frag
		}
		if len(f) < off+n {
			return -1, 0, frag
		}
		next = f[off]
		off += n
	}
	return -1, 0, frag
}

// isTag reports whether typ is a VLAN tag's TPID.
func isTag(typ uint16) bool { return typ == TypeVLAN || typ == TypeQinQ || typ == TypeQinQOld }
