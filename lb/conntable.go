package lb

import (
	"fmt"
	"sync"
	"time"

	"github.com/swctl/swctl/clock"
)

// Connection table sizes and timeouts.
const (
	// DefaultConnTableSize is the number of flows a ConnTable holds when
	// no size is given.
	DefaultConnTableSize = 1 << 16
	// MaxConnTableSize bounds the size.
	MaxConnTableSize = 1 << 26
	// DefaultConnIdle is how long a flow stays in the table without a
	// frame when no idle time is given: TCP's usual established timeout
	// in stateful balancers (IPVS uses the same).
	DefaultConnIdle = 15 * time.Minute
	// shardMinEntries is the smallest shard worth splitting off: below
	// it, one lock is cheaper than the LRU order sharding gives up.
	shardMinEntries = 1024
	// maxConnShards bounds the number of shards.
	maxConnShards = 64
)

// ConnTable remembers which backend each flow went to: a bounded map
// from FlowKey to backend ID that forgets the least recently used flow
// when full and any flow idle for longer than its idle time. All memory
// is allocated at construction; Lookup, Put and Delete allocate nothing.
// It is safe for concurrent use: flows are spread over up to 64 shards,
// each with its own lock, and the LRU order is kept per shard.
//
// Times are given by the caller (read once per batch from the clock the
// table was built with), never read per frame.
type ConnTable struct {
	// shards hold the flows; a flow's shard is the top bits of its hash.
	// The slice is immutable; each shard guards its own contents.
	shards []connShard
	// shardShift is 64 minus log2(len(shards)); immutable.
	shardShift uint
	// idle is the idle time in nanoseconds; immutable.
	idle int64
	// base is the instant times are counted from; immutable.
	base time.Time
	// size is the total capacity; immutable.
	size int
}

// connShard is one lock's worth of flows: entries in a fixed array,
// chained from hash buckets and linked in LRU order by index.
type connShard struct {
	// mu guards every field below.
	mu sync.Mutex
	// entries are the flow slots; free ones are chained through next.
	entries []connEntry
	// buckets head the hash chains (entry index, -1 for none).
	buckets []int32
	// mask is len(buckets)-1.
	mask uint64
	// head and tail are the most and least recently used entries (-1
	// when empty).
	head, tail int32
	// free heads the list of free entries (-1 when full).
	free int32
	// n is the number of flows held.
	n int
	// pad keeps neighbouring shards' locks off one cache line.
	_ [64]byte
}

// connEntry is one flow, laid out in 64 bytes: one cache line.
type connEntry struct {
	// seen is when the flow last had a frame, in nanoseconds since base.
	seen int64
	// key is the flow.
	key FlowKey
	// backend is the backend ID the flow goes to.
	backend uint16
	// hash is the low 32 bits of the key's hash, to skip most key
	// comparisons along a chain.
	hash uint32
	// chain is the next entry in the same bucket (-1 at the end).
	chain int32
	// prev and next link the LRU order (-1 at the ends); next also
	// chains free entries.
	prev, next int32
}

// NewConnTable returns an empty table that holds size flows (0 means
// DefaultConnTableSize) and forgets a flow idle for longer than idle (0
// means DefaultConnIdle). Times given to its methods must come from clk.
func NewConnTable(size int, idle time.Duration, clk clock.Clock) (*ConnTable, error) {
	if size == 0 {
		size = DefaultConnTableSize
	}
	if size < 1 || size > MaxConnTableSize {
		return nil, fmt.Errorf("connection table size %d: want 1 to %d (default %d)", size, MaxConnTableSize, DefaultConnTableSize)
	}
	if idle == 0 {
		idle = DefaultConnIdle
	}
	if idle < 0 {
		return nil, fmt.Errorf("connection table idle time %v: want a positive duration (default %v)", idle, DefaultConnIdle)
	}
	n, shift := 1, uint(64)
	for n < maxConnShards && size/(2*n) >= shardMinEntries {
		n, shift = 2*n, shift-1
	}
	c := &ConnTable{shards: make([]connShard, n), shardShift: shift, idle: int64(idle), base: clk.Now(), size: size}
	for i := range c.shards {
		c.shards[i].init(size/n + btoi(i < size%n))
	}
	return c, nil
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// init sizes an empty shard for capacity flows.
func (s *connShard) init(capacity int) {
	s.entries = make([]connEntry, capacity)
	nb := 1
	for nb < capacity {
		nb *= 2
	}
	s.buckets = make([]int32, nb)
	s.mask = uint64(nb - 1)
	for i := range s.buckets {
		s.buckets[i] = -1
	}
	for i := range s.entries {
		s.entries[i].next = int32(i + 1)
	}
	s.entries[capacity-1].next = -1
	s.head, s.tail, s.free = -1, -1, 0
}

// Size returns the number of flows the table holds when full.
func (c *ConnTable) Size() int { return c.size }

// Idle returns the idle time after which a flow is forgotten.
func (c *ConnTable) Idle() time.Duration { return time.Duration(c.idle) }

// stamp converts now to the table's time base.
func (c *ConnTable) stamp(now time.Time) int64 { return int64(now.Sub(c.base)) }

// shard returns the shard of the flow with hash h.
func (c *ConnTable) shard(h uint64) *connShard {
	return &c.shards[h>>c.shardShift&uint64(len(c.shards)-1)]
}

// Lookup returns the backend of flow k and true, marking the flow used
// at now, or false when the table does not hold k or k has been idle for
// longer than the idle time (it is then forgotten).
func (c *ConnTable) Lookup(k FlowKey, now time.Time) (backend int, ok bool) {
	return c.lookup(&k, k.Hash(), c.stamp(now))
}

// Put records that flow k goes to backend (0 to MaxBackends-1; other IDs
// are not recorded), marking it used at now. A full table forgets its
// least recently used flow to make room.
func (c *ConnTable) Put(k FlowKey, backend int, now time.Time) {
	c.put(&k, k.Hash(), backend, c.stamp(now))
}

// Delete forgets flow k, reporting whether the table held it.
func (c *ConnTable) Delete(k FlowKey) bool {
	h := k.Hash()
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(&k, h)
	if i >= 0 {
		s.remove(i)
	}
	return i >= 0
}

// Expire forgets every flow idle for longer than the idle time at now
// and returns how many it forgot. Lookup forgets idle flows it meets
// anyway; Expire frees their room and keeps Len honest.
func (c *ConnTable) Expire(now time.Time) int {
	t, n := c.stamp(now), 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		// The LRU order is the order of last use, so the idle flows
		// are at the tail.
		for s.tail >= 0 && t-s.entries[s.tail].seen > c.idle {
			s.remove(s.tail)
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// Len returns the number of flows held, idle ones not yet forgotten
// included.
func (c *ConnTable) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.n
		s.mu.Unlock()
	}
	return n
}

// lookup is Lookup with k's hash h and the time t already computed.
func (c *ConnTable) lookup(k *FlowKey, h uint64, t int64) (int, bool) {
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(k, h)
	if i < 0 {
		return 0, false
	}
	e := &s.entries[i]
	if t-e.seen > c.idle {
		s.remove(i)
		return 0, false
	}
	e.seen = max(e.seen, t)
	s.touch(i)
	return int(e.backend), true
}

// put is Put with k's hash h and the time t already computed.
func (c *ConnTable) put(k *FlowKey, h uint64, backend int, t int64) {
	if backend < 0 || backend >= MaxBackends {
		return
	}
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(k, h)
	if i < 0 {
		if s.free < 0 {
			s.remove(s.tail)
		}
		i = s.free
		e := &s.entries[i]
		s.free = e.next
		b := h & s.mask
		*e = connEntry{seen: t, key: *k, hash: uint32(h), chain: s.buckets[b], prev: -1, next: -1}
		s.buckets[b] = i
		s.n++
		s.pushFront(i)
	} else {
		s.touch(i)
	}
	e := &s.entries[i]
	e.backend = uint16(backend)
	e.seen = max(e.seen, t)
}

// find returns the index of flow k (hash h), or -1.
func (s *connShard) find(k *FlowKey, h uint64) int32 {
	for i := s.buckets[h&s.mask]; i >= 0; i = s.entries[i].chain {
		if e := &s.entries[i]; e.hash == uint32(h) && e.key == *k {
			return i
		}
	}
	return -1
}

// remove unlinks entry i from its chain and the LRU order and frees it.
func (s *connShard) remove(i int32) {
	e := &s.entries[i]
	// Only the low bits of the hash pick the bucket, and hash keeps them.
	p := &s.buckets[uint64(e.hash)&s.mask]
	for *p != i {
		p = &s.entries[*p].chain
	}
	*p = e.chain
	s.unlink(i)
	e.next = s.free
	s.free = i
	s.n--
}

// touch makes entry i the most recently used.
func (s *connShard) touch(i int32) {
	if s.head != i {
		s.unlink(i)
		s.pushFront(i)
	}
}

// unlink takes entry i out of the LRU order.
func (s *connShard) unlink(i int32) {
	e := &s.entries[i]
	if e.prev >= 0 {
		s.entries[e.prev].next = e.next
	} else {
		s.head = e.next
	}
	if e.next >= 0 {
		s.entries[e.next].prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

// pushFront makes entry i, not in the LRU order, its most recent.
func (s *connShard) pushFront(i int32) {
	e := &s.entries[i]
	e.prev, e.next = -1, s.head
	if s.head >= 0 {
		s.entries[s.head].prev = i
	} else {
		s.tail = i
	}
	s.head = i
}
