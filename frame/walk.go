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
	*h = Headers{L3: -1, L3End: -1, L4: -1}
	if len(f) < HeaderLen {
		return
	}
	off := 12
	typ := binary.BigEndian.Uint16(f[off:])
	for h.Tags < MaxTags && isTag(typ) && len(f) >= off+6 {
		if h.Tags == 0 {
			h.VLAN = binary.BigEndian.Uint16(f[off+2:]) & vlanIDMask
		}
		h.Tags++
		off += 4
		typ = binary.BigEndian.Uint16(f[off:])
	}
	h.EtherType = typ
	l3 := off + 2
	switch typ {
	case TypeIPv4:
		if len(f) < l3+20 || f[l3]>>4 != 4 {
			return
		}
		ihl := int(f[l3]&0x0f) * 4
		if ihl < 20 || len(f) < l3+ihl {
			return
		}
		h.L3, h.L3End, h.Proto = l3, l3+ihl, f[l3+9]
		// MF set or a non-zero fragment offset: a fragment.
		frag := binary.BigEndian.Uint16(f[l3+6:])
		h.Fragment = frag&0x3fff != 0
		if frag&0x1fff == 0 {
			h.L4 = h.L3End
		}
	case TypeIPv6:
		if len(f) < l3+40 || f[l3]>>4 != 6 {
			return
		}
		h.L3, h.L3End, h.IPv6 = l3, l3+40, true
		h.walkExtHeaders(f, f[l3+6])
	}
}

// walkExtHeaders follows the IPv6 extension headers from L3End, where a
// header of type next starts, and sets L4 and Proto at the first header
// that is not one.
func (h *Headers) walkExtHeaders(f []byte, next uint8) {
	off := h.L3End
	for range maxExtHeaders {
		var n int
		switch next {
		case ProtoHopByHop, ProtoRouting, ProtoDestOpts:
			if len(f) < off+2 {
				return
			}
			n = (int(f[off+1]) + 1) * 8
		case ProtoAH:
			if len(f) < off+2 {
				return
			}
			n = (int(f[off+1]) + 2) * 4
		case ProtoFragment:
			h.Fragment = true
			if len(f) < off+8 {
				return
			}
			// Only the first fragment (offset 0) holds the next header.
			if binary.BigEndian.Uint16(f[off+2:])&0xfff8 != 0 {
				return
			}
			n = 8
		default:
			h.L4, h.Proto = off, next
			return
		}
		if len(f) < off+n {
			return
		}
		next = f[off]
		off += n
	}
}

// isTag reports whether typ is a VLAN tag's TPID.
func isTag(typ uint16) bool { return typ == TypeVLAN || typ == TypeQinQ || typ == TypeQinQOld }
