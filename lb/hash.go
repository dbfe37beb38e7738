package lb

import (
	"encoding/binary"
	"math/bits"
)

// xxHash64 primes.
const (
	prime1 = 0x9e3779b185ebca87
	prime2 = 0xc2b2ae3d27d4eb4f
	prime3 = 0x165667b19e3779f9
	prime5 = 0x27d4eb2f165667c5
)

// Ethertypes and IP protocol numbers the parser looks at.
const (
	typeIPv4    = 0x0800
	typeIPv6    = 0x86dd
	typeVLAN    = 0x8100 // IEEE 802.1Q
	typeQinQ    = 0x88a8 // IEEE 802.1ad
	typeQinQOld = 0x9100

	protoHopByHop = 0
	protoTCP      = 6
	protoUDP      = 17
	protoDCCP     = 33
	protoRouting  = 43
	protoFragment = 44
	protoAH       = 51
	protoDstOpts  = 60
	protoSCTP     = 132
	protoUDPLite  = 136

	// maxExtHeaders bounds the IPv6 extension-header walk.
	maxExtHeaders = 8
	// maxTags is how many VLAN tags are skipped.
	maxTags = 2
)

// Domain tags keep words from different headers apart in the mix.
const (
	tagVLAN  = 1 << 56
	tagFlow  = 2 << 56
	tagPorts = 3 << 56
	tagRunt  = 4 << 56
)

// Hasher computes keyed flow hashes of frames. It is a small value,
// immutable once built and safe for concurrent use.
type Hasher struct {
	// k0 is the initial state of the mix, derived from the seed; immutable.
	k0 uint64
	// k1 is mixed in before the finaliser, derived from the seed; immutable.
	k1 uint64
	// fields selects the headers hashed; immutable.
	fields HashFields
}

// NewHasher returns a Hasher keyed by seed that hashes fields.
func NewHasher(seed uint64, fields HashFields) Hasher {
	return Hasher{k0: splitmix64(seed), k1: splitmix64(seed ^ prime5), fields: fields}
}

// Fields returns the headers h hashes.
func (h *Hasher) Fields() HashFields { return h.fields }

// splitmix64 derives a well-spread 64-bit key from x.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// round absorbs one 64-bit word into acc (the xxHash64 round).
func round(acc, v uint64) uint64 {
	acc += v * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

// finish mixes k1 into acc and avalanches it (the xxHash64 finaliser).
func finish(acc, k1 uint64) uint32 {
	acc ^= k1
	acc ^= acc >> 33
	acc *= prime2
	acc ^= acc >> 29
	acc *= prime3
	acc ^= acc >> 32
	return uint32(acc)
}

// Hash returns the flow hash of frame, an Ethernet frame starting at the
// destination address. It reads frame only during the call, never panics
// and never allocates, whatever frame holds.
func (h *Hasher) Hash(frame []byte) uint32 {
	acc := h.k0
	if len(frame) < 14 {
		return finish(round(acc, tagRunt|uint64(len(frame))), h.k1)
	}
	if h.fields&L2 != 0 {
		dst := uint64(binary.BigEndian.Uint16(frame[0:2]))<<32 | uint64(binary.BigEndian.Uint32(frame[2:6]))
		src := uint64(binary.BigEndian.Uint16(frame[6:8]))<<32 | uint64(binary.BigEndian.Uint32(frame[8:12]))
		acc = round(round(acc, dst), src)
	}
	// off is the offset of the ethertype being looked at.
	off := 12
	etype := binary.BigEndian.Uint16(frame[off:])
	for i := 0; i < maxTags && isTag(etype) && len(frame) >= off+6; i++ {
		if i == 0 && h.fields&L2 != 0 {
			vid := binary.BigEndian.Uint16(frame[off+2:]) & 0x0fff
			acc = round(acc, tagVLAN|uint64(vid))
		}
		off += 4
		etype = binary.BigEndian.Uint16(frame[off:])
	}
	if h.fields&(L3|L4) != 0 {
		payload := frame[off+2:]
		switch etype {
		case typeIPv4:
			acc = h.ipv4(acc, payload)
		case typeIPv6:
			acc = h.ipv6(acc, payload)
		}
	}
	return finish(acc, h.k1)
}

// isTag reports whether etype is a VLAN tag's TPID.
func isTag(etype uint16) bool {
	return etype == typeVLAN || etype == typeQinQ || etype == typeQinQOld
}

// ipv4 absorbs the addresses and, unless p is a fragment, the ports of
// the IPv4 packet p.
func (h *Hasher) ipv4(acc uint64, p []byte) uint64 {
	if len(p) < 20 || p[0]>>4 != 4 {
		return acc
	}
	if h.fields&L3 != 0 {
		acc = round(acc, uint64(binary.BigEndian.Uint32(p[12:16]))<<32|uint64(binary.BigEndian.Uint32(p[16:20])))
	}
	// MF set or a non-zero fragment offset: a fragment.
	if binary.BigEndian.Uint16(p[6:8])&0x3fff != 0 || h.fields&L4 == 0 {
		return acc
	}
	ihl := int(p[0]&0x0f) * 4
	if ihl < 20 || len(p) < ihl {
		return acc
	}
	return ports(acc, p[9], p[ihl:])
}

// ipv6 absorbs the flow label and addresses and, unless p carries a
// fragment header, the ports of the IPv6 packet p.
func (h *Hasher) ipv6(acc uint64, p []byte) uint64 {
	if len(p) < 40 || p[0]>>4 != 6 {
		return acc
	}
	if h.fields&L3 != 0 {
		flow := uint64(binary.BigEndian.Uint32(p[0:4]) & 0x000fffff)
		acc = round(acc, tagFlow|flow)
		acc = round(acc, binary.BigEndian.Uint64(p[8:16]))
		acc = round(acc, binary.BigEndian.Uint64(p[16:24]))
		acc = round(acc, binary.BigEndian.Uint64(p[24:32]))
		acc = round(acc, binary.BigEndian.Uint64(p[32:40]))
	}
	next, q := p[6], p[40:]
	for i := 0; i < maxExtHeaders; i++ {
		var n int
		switch next {
		case protoHopByHop, protoRouting, protoDstOpts:
			if len(q) < 2 {
				return acc
			}
			n = (int(q[1]) + 1) * 8
		case protoAH:
			if len(q) < 2 {
				return acc
			}
			n = (int(q[1]) + 2) * 4
		case protoFragment:
			return acc
		default:
			if h.fields&L4 == 0 {
				return acc
			}
			return ports(acc, next, q)
		}
		if len(q) < n {
			return acc
		}
		next, q = q[0], q[n:]
	}
	return acc
}

// ports absorbs the transport protocol and the source and destination
// ports from the transport header t, for the protocols that have them.
func ports(acc uint64, proto byte, t []byte) uint64 {
	switch proto {
	case protoTCP, protoUDP, protoDCCP, protoSCTP, protoUDPLite:
	default:
		return acc
	}
	if len(t) < 4 {
		return acc
	}
	return round(acc, tagPorts|uint64(proto)<<32|uint64(binary.BigEndian.Uint32(t[0:4])))
}
