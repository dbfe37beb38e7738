package bridge

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/frame"
)

// fdbShardBits is log2 of the number of independently locked parts of the
// address table.
const fdbShardBits = 6

// fdbShards is the number of independently locked parts of the table.
const fdbShards = 1 << fdbShardBits

// macMask keeps the 48 address bits of a table key.
const macMask = 1<<48 - 1

// fdbKey packs a VLAN ID and a packed MAC (frame.MAC.Key) into a table key.
func fdbKey(vlan uint16, mac uint64) uint64 { return uint64(vlan)<<48 | mac }

// learnResult says what learn did to the table.
type learnResult uint8

const (
	// learnRefreshed: the address was already known on that member.
	learnRefreshed learnResult = iota
	// learnNew: the address was not known (or its entry had expired).
	learnNew
	// learnMoved: the address was known on another member and moved.
	learnMoved
	// learnStatic: a static entry holds the address; it was left alone.
	learnStatic
	// learnFull: the address was not known and the table is full.
	learnFull
)

// fdbEntry is one address in the table.
type fdbEntry struct {
	// port is the member the address is on. Guarded by the shard's mu:
	// written with mu held for writing, read with it held for reading.
	port *Member
	// seen is when the address was last seen, in nanoseconds since the
	// bridge's epoch. Atomic: refreshed with the shard's mu held for
	// reading only; written plainly only with mu held for writing.
	seen atomic.Int64
	// static marks an entry set by AddStatic: it never ages nor moves.
	// Guarded by the shard's mu.
	static bool
	// key is the entry's fdbKey, fixed when it is made.
	key uint64
	// child (the smaller keys, then the greater) and prio place the
	// entry in its shard's index (fdbindex.go). Guarded by the shard's mu.
	child [2]*fdbEntry
	prio  uint32
}

// fdbShard is one part of the table: the addresses whose MAC hashes to it,
// in every VLAN (so that deleting a MAC in all VLANs visits one shard).
type fdbShard struct {
	// mu guards m and the port and static fields of its entries.
	mu sync.RWMutex
	// m maps fdbKey(vlan, mac) to its entry.
	m map[uint64]*fdbEntry
	// idx orders the entries of m by key.
	idx fdbIndex
	// _ keeps neighbouring shards' locks off one cache line.
	_ [64]byte
}

// put adds e to the shard, under its key. Call with mu held for writing.
func (s *fdbShard) put(e *fdbEntry) {
	s.m[e.key] = e
	s.idx.insert(e)
}

// remove deletes key's entry from the shard. Call with mu held for
// writing.
func (s *fdbShard) remove(key uint64) {
	delete(s.m, key)
	s.idx.delete(key)
}

// fdb is the forwarding database: (VLAN ID, MAC) to member. See the
// package documentation for its rules.
type fdb struct {
	// shards hold the entries; each has its own lock.
	shards [fdbShards]fdbShard
	// count is the number of entries in all shards, static ones included.
	// Atomic: raised by compare-and-swap against max before an insert,
	// lowered after a delete, each with that shard's mu held for writing.
	count atomic.Int64
	// max is the most entries the table holds. Atomic.
	max atomic.Int64
	// timeout is the ageing time in nanoseconds; 0 means never. Atomic.
	timeout atomic.Int64
}

// newFDB returns an empty table of at most limit entries.
func newFDB(limit int, timeout time.Duration) *fdb {
	f := &fdb{}
	for i := range f.shards {
		f.shards[i].m = make(map[uint64]*fdbEntry)
	}
	f.max.Store(int64(limit))
	f.timeout.Store(int64(timeout))
	return f
}

// shard returns the shard that holds key: a hash of the MAC alone.
func (f *fdb) shard(key uint64) *fdbShard {
	return &f.shards[((key&macMask)*0x9e3779b97f4a7c15)>>(64-fdbShardBits)]
}

// expired reports whether e has aged out at now. Call with the shard's mu
// held (for reading at least).
func (f *fdb) expired(e *fdbEntry, now int64) bool {
	if e.static {
		return false
	}
	t := f.timeout.Load()
	return t > 0 && now-e.seen.Load() >= t
}

// touch raises e's last-seen time to now; it never moves it backwards when
// readers with slightly different clocks race.
func touch(e *fdbEntry, now int64) {
	for {
		old := e.seen.Load()
		if old >= now || e.seen.CompareAndSwap(old, now) {
			return
		}
	}
}

// lookup returns the member the key's address is on, or nil when it is not
// in the table or has expired at now.
func (f *fdb) lookup(key uint64, now int64) *Member {
	s := f.shard(key)
	s.mu.RLock()
	var m *Member
	if e := s.m[key]; e != nil && !f.expired(e, now) {
		m = e.port
	}
	s.mu.RUnlock()
	return m
}

// learn records that key's address was seen on m at now. A known address
// on the same member is refreshed under the read lock; the write lock is
// taken only to add or move an entry.
func (f *fdb) learn(key uint64, m *Member, now int64) learnResult {
	s := f.shard(key)
	s.mu.RLock()
	if e := s.m[key]; e != nil {
		if e.static {
			s.mu.RUnlock()
			if e.port == m {
				return learnRefreshed
			}
			return learnStatic
		}
		if e.port == m && !f.expired(e, now) {
			touch(e, now)
			s.mu.RUnlock()
			return learnRefreshed
		}
	}
	s.mu.RUnlock()
	return f.learnSlow(s, key, m, now)
}

// learnSlow is learn with the shard's write lock: the entry is new, moved
// or expired (or changed since learn looked).
func (f *fdb) learnSlow(s *fdbShard, key uint64, m *Member, now int64) learnResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[key]
	switch {
	case e == nil:
		if !f.reserve() {
			return learnFull
		}
		e = &fdbEntry{port: m, key: key}
		e.seen.Store(now)
		s.put(e)
		return learnNew
	case e.static:
		if e.port == m {
			return learnRefreshed
		}
		return learnStatic
	case f.expired(e, now):
		// An expired entry the sweep has not deleted yet is reused as a
		// new one, wherever it was.
		e.port = m
		e.seen.Store(now)
		return learnNew
	case e.port != m:
		e.port = m
		e.seen.Store(now)
		return learnMoved
	default:
		touch(e, now)
		return learnRefreshed
	}
}

// reserve counts one more entry if the table has room.
func (f *fdb) reserve() bool {
	for {
		c := f.count.Load()
		if c >= f.max.Load() {
			return false
		}
		if f.count.CompareAndSwap(c, c+1) {
			return true
		}
	}
}

// addStatic sets key's address statically on m. It replaces a dynamic or
// static entry for the same key; it reports false when the address is new
// and the table is full.
func (f *fdb) addStatic(key uint64, m *Member, now int64) bool {
	s := f.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[key]
	if e == nil {
		if !f.reserve() {
			return false
		}
		e = &fdbEntry{key: key}
		s.put(e)
	}
	e.port = m
	e.static = true
	e.seen.Store(now)
	return true
}

// deleteMAC removes the address mac (packed) in every VLAN, static or
// dynamic, expired or not, and returns how many entries it removed.
func (f *fdb) deleteMAC(mac uint64) int {
	s := f.shard(mac)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.m {
		if k&macMask == mac {
			s.remove(k)
			n++
		}
	}
	f.count.Add(int64(-n))
	return n
}

// deleteKey removes key's entry, static or dynamic, expired or not, and
// reports whether there was one.
func (f *fdb) deleteKey(key uint64) bool {
	s := f.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok {
		return false
	}
	s.remove(key)
	f.count.Add(-1)
	return true
}

// flush removes the dynamic entries (and the static ones too when all is
// set) of member only, or of every member when only is nil. It returns how
// many entries it removed.
func (f *fdb) flush(all bool, only *Member) int {
	return f.deleteWhere(func(e *fdbEntry) bool {
		return (all || !e.static) && (only == nil || e.port == only)
	})
}

// expire removes the dynamic entries that have aged out at now and returns
// how many it removed.
func (f *fdb) expire(now int64) int {
	if f.timeout.Load() <= 0 {
		return 0
	}
	return f.deleteWhere(func(e *fdbEntry) bool { return f.expired(e, now) })
}

// deleteWhere removes the entries for which drop, called with the shard's
// write lock held, returns true. A shard with nothing to drop is only read
// locked, so that sweeps do not stall forwarding.
func (f *fdb) deleteWhere(drop func(*fdbEntry) bool) int {
	total := 0
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.RLock()
		found := false
		for _, e := range s.m {
			if drop(e) {
				found = true
				break
			}
		}
		s.mu.RUnlock()
		if !found {
			continue
		}
		s.mu.Lock()
		n := 0
		s.idx.removeWhere(drop, func(e *fdbEntry) {
			delete(s.m, e.key)
			n++
		})
		f.count.Add(int64(-n))
		s.mu.Unlock()
		total += n
	}
	return total
}

// trim removes entries until the table holds at most limit of them, or
// only static ones: expired entries first, then the dynamic entries seen least
// recently. It returns how many it removed.
func (f *fdb) trim(limit int, now int64) int {
	removed := f.expire(now)
	excess := int(f.count.Load()) - limit
	if excess <= 0 {
		return removed
	}
	type aged struct {
		key  uint64
		e    *fdbEntry
		seen int64
	}
	var dyn []aged
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.RLock()
		for k, e := range s.m {
			if !e.static {
				dyn = append(dyn, aged{k, e, e.seen.Load()})
			}
		}
		s.mu.RUnlock()
	}
	slices.SortFunc(dyn, func(a, b aged) int { return cmp.Compare(a.seen, b.seen) })
	for _, a := range dyn {
		if excess <= 0 {
			break
		}
		s := f.shard(a.key)
		s.mu.Lock()
		// Delete only the very entry seen above: it may have been
		// replaced (made static, deleted and relearned) since.
		if e := s.m[a.key]; e == a.e && !e.static {
			s.remove(a.key)
			f.count.Add(-1)
			excess--
			removed++
		}
		s.mu.Unlock()
	}
	return removed
}

// addrs returns the entries not expired at now, sorted by VLAN then MAC.
func (f *fdb) addrs(now int64) []Addr {
	out := make([]Addr, 0, f.count.Load())
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.RLock()
		for _, e := range s.m {
			if !f.expired(e, now) {
				out = append(out, addrOf(e, now))
			}
		}
		s.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b Addr) int { return cmp.Compare(a.key(), b.key()) })
	return out
}

// page returns at most limit entries not expired at now, in (VLAN, MAC)
// order, the first ones with a key greater than after, or from the first
// entry when first is set. Each shard walks its index from after and
// stops at limit entries, or sooner once the page is full and its keys are
// past the page's last; shards are merged one at a time, so the work and
// memory depend on limit and not on the table's size. Each shard is read
// under its own lock: an entry present during the whole listing is in
// exactly one page of a walk that passes each page's last key to the next.
func (f *fdb) page(after uint64, first bool, limit int, now int64) []Addr {
	if limit <= 0 {
		return nil
	}
	var out, shard, merged []Addr
	var c fdbCursor
	for i := range f.shards {
		s := &f.shards[i]
		shard = shard[:0]
		s.mu.RLock()
		c.seek(&s.idx, after, first)
		for e := c.next(); e != nil && len(shard) < limit; e = c.next() {
			if len(out) == limit && e.key > out[limit-1].key() {
				break
			}
			if !f.expired(e, now) {
				shard = append(shard, addrOf(e, now))
			}
		}
		s.mu.RUnlock()
		if len(shard) == 0 {
			continue
		}
		merged = mergeAddrs(merged[:0], out, shard, limit)
		out, merged = merged, out
	}
	return out
}

// mergeAddrs appends to dst the first limit entries of a and b, two lists
// in key order with no key in both, in key order.
func mergeAddrs(dst, a, b []Addr, limit int) []Addr {
	for len(dst) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0].key() < b[0].key()) {
			dst, a = append(dst, a[0]), a[1:]
		} else {
			dst, b = append(dst, b[0]), b[1:]
		}
	}
	return dst
}

// addrOf describes e at now. Call with its shard's mu held.
func addrOf(e *fdbEntry, now int64) Addr {
	a := Addr{
		MAC:    frame.MACFromKey(e.key & macMask),
		VLAN:   uint16(e.key >> 48),
		Port:   e.port.name,
		Static: e.static,
	}
	if !e.static {
		a.Age = time.Duration(max(now-e.seen.Load(), 0))
	}
	return a
}

// len returns the number of entries, expired ones not yet swept included.
func (f *fdb) len() int { return int(f.count.Load()) }
