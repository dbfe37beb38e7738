package lb

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
)

// Maglev table sizes.
const (
	// DefaultTableSize is the Maglev table size when none is given: a
	// prime large enough for the evenness and disruption bounds of
	// package lb's doc with up to a few hundred backends.
	DefaultTableSize = 65537
	// MinTableSize and MaxTableSize bound the table size.
	MinTableSize = 101
	MaxTableSize = 1 << 24
)

// Fixed seeds of the two hashes that place a backend in a Maglev table.
// Constants, so that every host builds the same table from the same set.
const (
	offsetSeed0 = 0x6d61_676c_6576_2d6f // "maglev-o"
	offsetSeed1 = 0x6666_7365_742d_7365 // "ffset-se"
	skipSeed0   = 0x6d61_676c_6576_2d73 // "maglev-s"
	skipSeed1   = 0x6b69_702d_7365_6564 // "kip-seed"
)

// Maglev is a Maglev lookup table (Eisenbud et al., NSDI 2016) over the
// serving backends of a set: an array of a prime number of entries, each
// naming a backend, that a flow hash indexes. It is immutable once built
// and safe for concurrent use.
type Maglev struct {
	// size is the number of entries, also when no backend serves.
	// Immutable.
	size int
	// entries are backend IDs, one per table entry; nil when no backend
	// serves. Immutable.
	entries []uint16
	// held counts the entries of each backend, indexed by ID. Immutable.
	held []int32
}

// NewMaglev builds the table of size entries (0 means DefaultTableSize;
// otherwise a prime from MinTableSize to MaxTableSize) over the backends
// of bs whose State is Serving, each taking a share of the entries
// proportional to its weight. The table depends only on the addresses
// and weights of those backends, never on their order in bs or their
// IDs. An invalid size or backend is an error naming it, and bs is not
// kept.
func NewMaglev(bs []Backend, size int) (*Maglev, error) {
	m, err := checkTableSize(size)
	if err != nil {
		return nil, err
	}
	if err := checkBackends(bs); err != nil {
		return nil, err
	}
	serving := servingByAddr(bs)
	if len(serving) > m {
		return nil, fmt.Errorf("maglev table size %d: smaller than its %d serving backends", m, len(serving))
	}
	offset := make([]int, len(serving))
	skip := make([]int, len(serving))
	weight := make([]int, len(serving))
	for i, b := range serving {
		h1, h2 := addrHashes(b.Addr)
		offset[i] = int(h1 % uint64(m))
		skip[i] = int(h2%uint64(m-1)) + 1
		weight[i] = b.Weight
	}
	t := &Maglev{size: m, held: make([]int32, maxID(bs)+1)}
	if len(serving) == 0 {
		return t, nil
	}
	t.entries = make([]uint16, m)
	for e, i := range populate(m, offset, skip, weight) {
		id := serving[i].ID
		t.entries[e] = uint16(id)
		t.held[id]++
	}
	return t, nil
}

// checkTableSize returns the table size that size asks for, or an error.
func checkTableSize(size int) (int, error) {
	if size == 0 {
		return DefaultTableSize, nil
	}
	if size < MinTableSize || size > MaxTableSize {
		return 0, fmt.Errorf("maglev table size %d: want a prime from %d to %d (default %d)", size, MinTableSize, MaxTableSize, DefaultTableSize)
	}
	if !isPrime(size) {
		p := size + 1
		for !isPrime(p) {
			p++
		}
		return 0, fmt.Errorf("maglev table size %d: not a prime (the next prime is %d)", size, p)
	}
	return size, nil
}

// isPrime reports whether n is prime, by trial division (n is at most
// MaxTableSize plus a prime gap, so at most ~2048 divisions).
func isPrime(n int) bool {
	if n < 2 {
		return false
	}
	if n%2 == 0 {
		return n == 2
	}
	for d := 3; d*d <= n; d += 2 {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// addrHashes returns the two independent hashes of a that give its
// offset and skip in a table.
func addrHashes(a netip.Addr) (h1, h2 uint64) {
	b := a.As16()
	hi, lo := binary.BigEndian.Uint64(b[0:8]), binary.BigEndian.Uint64(b[8:16])
	// The bit length keeps 192.0.2.1 and ::ffff:192.0.2.1 apart, as
	// Addr.Compare does.
	n := uint64(a.BitLen())
	h1 = finish64(round(round(round(offsetSeed0, hi), lo), n), offsetSeed1)
	h2 = finish64(round(round(round(skipSeed0, hi), lo), n), skipSeed1)
	return h1, h2
}

// populate fills a table of m entries (m prime) and returns, for each
// entry, the index of the backend that holds it. Backend i prefers the
// entries offset[i], offset[i]+skip[i], offset[i]+2*skip[i], ... (mod
// m): a permutation of all entries, since m is prime and 0 < skip[i] < m.
// Backends take turns in index order, each taking its most preferred
// free entry, until the table is full. Weights decide the turns: in pass
// p a backend takes an entry only while it holds fewer than
// p*weight/maxWeight, so the heaviest backends take one per pass and the
// others proportionally fewer; with equal weights this is the paper's
// round robin. It allocates the result and a count per backend, and
// reuses offset as each backend's next preference.
func populate(m int, offset, skip, weight []int) []int32 {
	n := len(offset)
	if n == 0 {
		return nil
	}
	table := make([]int32, m)
	for e := range table {
		table[e] = -1
	}
	held := make([]int, n)
	maxW := slices.Max(weight)
	next := offset
	filled := 0
	for pass := 1; filled < m; pass++ {
		for i := 0; i < n && filled < m; i++ {
			if held[i]*maxW >= pass*weight[i] {
				continue
			}
			e := next[i]
			for table[e] >= 0 {
				if e += skip[i]; e >= m {
					e -= m
				}
			}
			table[e] = int32(i)
			held[i]++
			filled++
			if e += skip[i]; e >= m {
				e -= m
			}
			next[i] = e
		}
	}
	return table
}

// Lookup returns the ID of the backend that the flow with hash hash goes
// to, or -1 when no backend serves. It never allocates.
func (t *Maglev) Lookup(hash uint64) int {
	if len(t.entries) == 0 {
		return -1
	}
	// Multiply-shift maps the hash onto the table without a division.
	e, _ := bits.Mul64(hash, uint64(len(t.entries)))
	return int(t.entries[e])
}

// Size returns the number of entries of the table.
func (t *Maglev) Size() int { return t.size }

// Serving reports whether any backend holds entries.
func (t *Maglev) Serving() bool { return len(t.entries) > 0 }

// Held returns the number of entries that backend id holds.
func (t *Maglev) Held(id int) int {
	if id < 0 || id >= len(t.held) {
		return 0
	}
	return int(t.held[id])
}
