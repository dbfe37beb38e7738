package lb

import "math/bits"

// MaxPorts is the number of member IDs a Set holds: IDs are 0 to 63.
const MaxPorts = 64

// Set is a set of member IDs (0 to MaxPorts-1), one bit each.
type Set uint64

// Has reports whether id is in s.
func (s Set) Has(id int) bool { return uint(id) < MaxPorts && s&(1<<uint(id)) != 0 }

// With returns s with id added; an ID out of range is ignored.
func (s Set) With(id int) Set {
	if uint(id) >= MaxPorts {
		return s
	}
	return s | 1<<uint(id)
}

// Without returns s with id removed.
func (s Set) Without(id int) Set {
	if uint(id) >= MaxPorts {
		return s
	}
	return s &^ (1 << uint(id))
}

// Len returns the number of IDs in s.
func (s Set) Len() int { return bits.OnesCount64(uint64(s)) }

// First returns the lowest ID in s, or -1 when s is empty.
func (s Set) First() int {
	if s == 0 {
		return -1
	}
	return bits.TrailingZeros64(uint64(s))
}

// Nth returns the n-th lowest ID in s counting from 0, with n taken
// modulo s.Len(), or -1 when s is empty. Round-robin uses it.
func (s Set) Nth(n uint64) int {
	k := s.Len()
	if k == 0 {
		return -1
	}
	for i := n % uint64(k); i > 0; i-- {
		s &= s - 1
	}
	return bits.TrailingZeros64(uint64(s))
}

// Selector picks a member for a flow by rendezvous (highest random
// weight) hashing. It is a small immutable value, safe for concurrent use.
type Selector struct {
	// key salts every weight, so two selectors with different seeds
	// spread the same flows differently; immutable.
	key uint64
}

// NewSelector returns a Selector keyed by seed.
func NewSelector(seed uint64) Selector { return Selector{key: splitmix64(seed ^ prime3)} }

// Pick returns the member of up that the flow with hash hash goes to, or
// -1 when up is empty. The answer depends only on hash, the key and the
// members of up: removing a member from up moves only the flows it had,
// and adding it back returns exactly those flows.
func (s Selector) Pick(hash uint32, up Set) int {
	if up&(up-1) == 0 { // zero or one member: no weights needed
		return up.First()
	}
	best, bestW := -1, uint64(0)
	h := uint64(hash) << 8
	for up != 0 {
		id := bits.TrailingZeros64(uint64(up))
		up &= up - 1
		if w := weight(s.key ^ (h | uint64(id))); best < 0 || w > bestW {
			best, bestW = id, w
		}
	}
	return best
}

// weight is the murmur3 64-bit finaliser: a bijection, so distinct
// (hash, id) inputs never share a weight.
func weight(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
