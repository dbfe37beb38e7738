package lb

import (
	"encoding/binary"
	"math/bits"

	"github.com/swctl/swctl/frame"
)

// xxHash64 primes.
const (
	prime1 = 0x9e3779b185ebca87
	prime2 = 0xc2b2ae3d27d4eb4f
	prime3 = 0x165667b19e3779f9
	prime5 = 0x27d4eb2f165667c5
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

// finish mixes k1 into acc and avalanches it (the xxHash64 finaliser),
// keeping the low 32 bits.
func finish(acc, k1 uint64) uint32 { return uint32(finish64(acc, k1)) }

// finish64 mixes k1 into acc and avalanches it (the xxHash64 finaliser).
func finish64(acc, k1 uint64) uint64 {
	acc ^= k1
	acc ^= acc >> 33
	acc *= prime2
	acc ^= acc >> 29
	acc *= prime3
	acc ^= acc >> 32
	return acc
}

// Hash returns the flow hash of f, an Ethernet frame starting at the
// destination address. It reads f only during the call, never panics and
// never allocates, whatever f holds.
func (h *Hasher) Hash(f []byte) uint32 {
	acc := h.k0
	if len(f) < frame.HeaderLen {
		return finish(round(acc, tagRunt|uint64(len(f))), h.k1)
	}
	e := frame.Ethernet(f)
	if h.fields&L2 != 0 {
		acc = round(round(acc, e.DestinationKey()), e.SourceKey())
	}
	// An untagged frame that is not IP has nothing more to hash: known
	// here without FlowOf's call.
	if !e.MayCarryIP() {
		return finish(acc, h.k1)
	}
	// f's capacity cut to its length: one word less kept over the call.
	f = f[:len(f):len(f)]
	w := frame.FlowOf(f)
	if h.fields&L2 != 0 && w.VLAN >= 0 {
		acc = round(acc, tagVLAN|uint64(w.VLAN))
	}
	if h.fields&L3 != 0 && w.L3 >= 0 {
		if l3 := w.L3; f[l3]>>4 == 4 {
			p := f[l3 : l3+20 : l3+20]
			acc = round(acc, uint64(binary.BigEndian.Uint32(p[12:16]))<<32|uint64(binary.BigEndian.Uint32(p[16:20])))
		} else {
			// The flow label, the low 20 bits of the first word.
			p := f[l3 : l3+40 : l3+40]
			acc = round(acc, tagFlow|uint64(p[1]&0x0f)<<16|uint64(binary.BigEndian.Uint16(p[2:4])))
			acc = round(acc, binary.BigEndian.Uint64(p[8:16]))
			acc = round(acc, binary.BigEndian.Uint64(p[16:24]))
			acc = round(acc, binary.BigEndian.Uint64(p[24:32]))
			acc = round(acc, binary.BigEndian.Uint64(p[32:40]))
		}
	}
	if h.fields&L4 != 0 && w.Ports >= 0 {
		acc = round(acc, tagPorts|uint64(w.Proto)<<32|uint64(binary.BigEndian.Uint32(f[w.Ports:w.Ports+4])))
	}
	return finish(acc, h.k1)
}
