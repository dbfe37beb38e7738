package trunk

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// txSide is the trunk's send side (this file and backlog.go): WriteBatch's
// scratch slots and round-robin position, the members' backlogs and their
// flusher, and the send counters. It reads the trunk's table and never
// changes it.
type txSide struct {
	// slots are WriteBatch's scratch slots; each has its own lock.
	slots []txSlot
	// rr is the round-robin position: frames sent so far. Atomic.
	rr atomic.Uint64
	// packets, bytes, noPort, invalid and memDropped are the Stats
	// counters TxPackets, TxBytes, TxNoPort, TxInvalid and
	// TxMemberDropped; qOverflow and qStale TxQueueOverflow and
	// TxQueueStale; softOffload and offloadDropped the send side's part of
	// SoftOffload and OffloadDropped. Atomic.
	packets, bytes, noPort, invalid, memDropped atomic.Uint64
	qOverflow, qStale                           atomic.Uint64
	softOffload, offloadDropped                 atomic.Uint64
	// qBytes and qDelay are Options.TxQueueBytes and TxQueueDelay,
	// defaults applied; qTarget is Options.TxQueueTarget (0: off); qSuper
	// is Options.TxQueueSuperFrames. Immutable.
	qBytes          int
	qDelay, qTarget time.Duration
	qSuper          bool
	// clock stamps the frames a backlog takes; immutable.
	clock clock.Clock
	// note logs a frame dropped for its offload
	// (Trunk.noteOffloadDropped); immutable.
	note func(port string, o platform.Offload, err error)
	// flushKick wakes the flusher (capacity 1) when a backlog was given
	// frames; flushDone is closed when the flusher has returned.
	flushKick, flushDone chan struct{}
}

// newTxSide returns the send side for opts, defaults applied.
func newTxSide(opts Options, note func(string, platform.Offload, error)) *txSide {
	return &txSide{
		slots:  make([]txSlot, max(4, runtime.GOMAXPROCS(0))),
		qBytes: opts.TxQueueBytes, qDelay: opts.TxQueueDelay, qTarget: opts.TxQueueTarget,
		qSuper: opts.TxQueueSuperFrames, clock: opts.Clock, note: note,
		flushKick: make(chan struct{}, 1), flushDone: make(chan struct{}),
	}
}

// txSlot is scratch for one WriteBatch call: the frames for each member.
type txSlot struct {
	// mu is held by the WriteBatch call using the slot; it guards out
	// and used.
	mu sync.Mutex
	// out holds the frames for each member ID.
	out [lb.MaxPorts][][]byte
	// offs holds the offloads of out's frames, parallel to them, for
	// WriteBatch (else empty).
	offs [lb.MaxPorts][]platform.Offload
	// used is the set of IDs whose out holds frames.
	used lb.Set
	// eg writes each member's frames.
	eg platform.Egress
}

// WriteBatch implements platform.Port: each frame leaves by the member
// (or members, for broadcast) the protocol's states and Distribution
// choose: frames are grouped per member and each member is written once
// per batch of its size, with the frames' offloads (b.Offs nil: plain). A
// member that carries offloads gets them with the frames; for any other
// member the trunk finishes the checksum and cuts a super-frame into
// segments in software first (platform.Egress), and a frame it cannot
// finish is dropped (Stats.OffloadDropped). A member with a transmit
// backlog keeps the frames its ring has no room for (backlog.go); what
// the backlog has no room for is dropped (Stats.TxQueueOverflow). Frames
// shorter than a header
// or over the trunk's MTU (a super-frame by its segments) are dropped
// (TxInvalid), and so is everything when no member is distributing
// (TxNoPort). It never blocks and copies nothing itself: the members copy
// what they keep. It returns the number of frames sent; for broadcast a
// frame counts as sent when it was handed to the members. Safe for
// concurrent use.
func (tr *Trunk) WriteBatch(b platform.Batch) (int, error) {
	if tr.closed.Load() {
		return 0, platform.ErrClosed
	}
	if b.Offs != nil {
		return tr.tx.send(tr.table.Load(), b.Frames[:min(len(b.Frames), len(b.Offs))], b.Offs), nil
	}
	return tr.tx.send(tr.table.Load(), b.Frames, nil), nil
}

// send is WriteBatch on table t, with offs nil for plain frames: it
// returns the number of frames sent.
func (tx *txSide) send(t *table, frames [][]byte, offs []platform.Offload) int {
	if len(frames) == 0 {
		return 0
	}
	set := t.distributing
	if set == 0 {
		tx.noPort.Add(uint64(len(frames)))
		return 0
	}
	mtu := t.mtu()
	s := tx.slot()
	// Round-robin gives frame i the member at the trunk's position plus
	// i, an invalid frame using its turn too.
	var turn turns
	if t.dist == DistributeRoundRobin && set.Len() > 1 {
		turn.deal(set, tx.rr.Add(uint64(len(frames)))-uint64(len(frames)))
	}
	single := -1
	if set.Len() == 1 {
		single = set.First()
	}
	withOffs := offs != nil
	dist := t.dist
	var invalid, handedBytes uint64
	for i, f := range frames {
		var o platform.Offload
		if withOffs {
			o = offs[i]
		}
		if !frame.FitsMTU(f, o, mtu) {
			invalid++
			turn.skip()
			continue
		}
		handedBytes += uint64(len(f))
		id := single
		switch {
		case single >= 0:
		case dist == DistributeHash:
			id = t.sel.Pick(t.hasher.Hash(f), set)
		case dist == DistributeRoundRobin:
			id = turn.take()
		default:
			for u := set; u != 0; u &= u - 1 {
				s.add(u.First(), f, offs, i)
			}
			continue
		}
		s.add(id, f, offs, i)
	}
	handed := uint64(len(frames)) - invalid
	var lost, lostBytes, overflow uint64
	var now time.Time
	for u := s.used; u != 0; u &= u - 1 {
		id := u.First()
		out := s.out[id]
		m := t.byID[id]
		var offs []platform.Offload
		if withOffs {
			offs = s.offs[id]
		}
		b := platform.Batch{Frames: out, Offs: offs}
		var l, lbytes, of uint64
		if m.tx == nil {
			l, lbytes = tx.egress(&s.eg, m, b, mtu)
		} else {
			if now.IsZero() {
				now = tx.clock.Now()
			}
			l, lbytes, of = tx.sendBacklogged(m.tx, m, b, mtu, now)
		}
		lost, lostBytes, overflow = lost+l, lostBytes+lbytes, overflow+of
		clear(out)
		s.out[id] = out[:0]
		s.offs[id] = s.offs[id][:0]
	}
	s.used = 0
	s.mu.Unlock()
	if invalid > 0 {
		tx.invalid.Add(invalid)
	}
	if t.dist == DistributeBroadcast && single < 0 {
		lost, lostBytes, overflow = 0, 0, 0
	}
	if lost > overflow {
		// A backlog's overflow is counted by its reason (account).
		tx.memDropped.Add(lost - overflow)
	}
	sent := handed - lost
	tx.packets.Add(sent)
	tx.bytes.Add(handedBytes - lostBytes)
	return int(sent)
}

// turns deals a set's members out in ID order, round and round: the
// member of each frame under round-robin, as Set.Nth would give it but
// without its division per frame.
type turns struct {
	// ids are the set's members in ID order, n of them.
	ids [lb.MaxPorts]uint8
	n   int
	// next indexes in ids the member of the next frame.
	next int
}

// deal starts t on the members of set, which is not empty, at position
// pos (modulo their number).
func (t *turns) deal(set lb.Set, pos uint64) {
	for u := set; u != 0; u &= u - 1 {
		t.ids[t.n] = uint8(u.First())
		t.n++
	}
	t.next = int(pos % uint64(t.n))
}

// take returns the member of the next frame.
func (t *turns) take() int {
	id := t.ids[t.next]
	t.skip()
	return int(id)
}

// skip passes the next frame's turn; on a t never dealt it does nothing.
func (t *turns) skip() {
	if t.next++; t.next >= t.n {
		t.next = 0
	}
}

// add queues f, frame i of the batch, for member id, with its offload
// offs[i] unless offs is nil. Call with s.mu held.
func (s *txSlot) add(id int, f []byte, offs []platform.Offload, i int) {
	s.out[id] = append(s.out[id], f)
	s.used |= 1 << uint(id)
	if offs != nil {
		s.offs[id] = append(s.offs[id], offs[i])
	}
}

// slot returns a free scratch slot, locked.
func (tx *txSide) slot() *txSlot {
	for i := range tx.slots {
		if tx.slots[i].mu.TryLock() {
			return &tx.slots[i]
		}
	}
	s := &tx.slots[tx.rr.Load()%uint64(len(tx.slots))]
	s.mu.Lock()
	return s
}

// egress writes b to member m through eg (offloads finished in software
// for a member that carries none), and returns how many of b's frames m
// did not take and an estimate of their bytes. checked is the MTU
// writeBatch checked b's frames against, so that eg does not walk them
// again (negative: unchecked, a backlog's head).
func (tx *txSide) egress(eg *platform.Egress, m *Member, b platform.Batch, checked int) (lost, lostBytes uint64) {
	st := eg.SendChecked(m.port, b, checked)
	if st.Finished > 0 {
		tx.softOffload.Add(uint64(st.Finished))
	}
	if st.OffloadDropped > 0 {
		tx.offloadDropped.Add(uint64(st.OffloadDropped))
		tx.note(m.name, st.ErrOffload, st.Err)
	}
	l := st.Lost(b.Len())
	if l == 0 {
		return 0, 0
	}
	var bytes uint64
	for _, f := range b.Frames {
		bytes += uint64(len(f))
	}
	return uint64(l), bytes * uint64(l) / uint64(b.Len())
}

var _ platform.Port = (*Trunk)(nil)
