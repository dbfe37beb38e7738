package trunk

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/txq"
)

// A member's transmit backlog: the qdisc in front of its ring. A member
// port whose TX ring says how much it takes now (TxRoom, an AF_PACKET
// port with a TX ring) gets a txq.Queue at AddPort; its frames then take
// these steps (memberTx.send):
//
//  1. The member's tx lock is taken: one sender at a time.
//  2. The backlog's head goes first, as far as the ring has room: frames
//     that waited past the delay limit, or that CoDel's control law
//     drops because the head's sojourn time stayed above its target for
//     an interval, are dropped at the head (stale).
//  3. The new frames go straight to the ring while the backlog is empty
//     and the ring has room; the rest join the backlog's tail, or are
//     dropped when it holds its byte limit (overflow).
//  4. While a backlog is not empty the trunk's flusher goroutine repeats
//     step 2 every flushInterval, so the backlog drains without new
//     frames to push it.
//
// A port that cannot say (sendmmsg, a TAP, memport) gets no backlog: its
// frames go straight to it, and what it refuses it drops and counts.
//
// Super-frames (a member that carries offloads) bypass an AF_PACKET
// port's ring: they go with sendmmsg, and the kernel refuses them once
// the socket's send buffer (about 200 KiB by default, three 64 KiB
// super-frames) is full. With Options.TxQueueSuperFrames, a port that
// also says how many of a batch fit its send buffer (TxFit) has them
// held in the backlog too, instead of dropped: the send buffer then acts
// as a byte queue limit on what sits in the link's own queue, and the
// backlog holds the rest, bounded in bytes and sojourn time.

// Defaults of Options.TxQueueBytes, TxQueueDelay and TxQueueTarget.
const (
	// DefaultTxQueueBytes bounds a member's backlog: 1 MiB is 16 ms at
	// 500 Mbit/s, about what a ring of 512 slots holds again.
	DefaultTxQueueBytes = 1 << 20
	// DefaultTxQueueDelay bounds how long a frame waits in a backlog.
	DefaultTxQueueDelay = 20 * time.Millisecond
	// DefaultTxQueueTarget is the sojourn time CoDel's law keeps a
	// backlog's head below, and TxQueueInterval how long it may stay
	// above before the law drops: TCP senders behind a TAP, which TCP
	// small queues cannot see through, back off while the backlog is
	// short instead of filling it to its delay limit. A trunk's flows
	// are LAN or host flows, so the interval is a LAN's RTT, not RFC
	// 8289's internet-wide 100 ms (with 5 ms, a 64 KiB super-frame
	// being 1 ms at 500 Mbit/s). Measured with bench-trunk and
	// TxQueueSuperFrames on (loadbalance and lacp, 2 passes each, load
	// 10-12): 1 ms / 10 ms gave 615-786 Mb/s at 20-24 ms RTT; 2 ms /
	// 20 ms 468-733 at 20-38 ms; 5 ms / 100 ms 535-765 at 21-34 ms;
	// 0.5 ms / 5 ms (another run) 558-659 at 25-28 ms; no backlog for
	// super-frames 474-686 at 16-35 ms.
	DefaultTxQueueTarget = time.Millisecond
	TxQueueInterval      = 10 * time.Millisecond
	// txqFrameBytes sizes a backlog's frame limit: one entry per 256
	// bytes of its byte limit, and at least a batch.
	txqFrameBytes = 256
	// flushInterval is how often the flusher offers a member's backlog
	// to its ring: a 512-slot ring of 1500-byte frames drains in 12 ms
	// at 500 Mbit/s, so it never runs dry in between.
	flushInterval = 500 * time.Microsecond
)

// roomer is a port that may say how many frames, up to max, its ring
// takes now, or -1 if it cannot tell (afpacket.Port.TxRoom).
type roomer interface {
	TxRoom(max int) int
}

// fitter is a port that may say how many of a batch's first frames it
// sends now, counting the bytes its send buffer still takes for frames
// too large for a ring slot, or -1 if it cannot tell
// (afpacket.Port.TxFit).
type fitter interface {
	TxFit(frames [][]byte) int
}

// memberTx is a member's transmit side when its port has a ring that
// says what it takes: the backlog and its counters.
type memberTx struct {
	// room is the port's TxRoom; immutable.
	room roomer
	// fit is the port's TxFit, or nil (also without
	// Options.TxQueueSuperFrames); immutable.
	fit fitter
	// mu serialises the member's senders (WriteBatch's slots and the
	// flusher) and guards q and eg.
	mu sync.Mutex
	// q is the backlog.
	q *txq.Queue
	// eg writes the member's frames.
	eg platform.Egress
	// bytes is q.Bytes(), and overflow and stale q's drop counters,
	// copied after each use. Atomic: stored under mu.
	bytes, overflow, stale atomic.Uint64
}

// TxQueueInfo describes a member's backlog.
type TxQueueInfo struct {
	// Limit is the backlog's byte limit; 0 when the member has none (its
	// port cannot say what its ring takes).
	Limit int
	// Bytes is what it holds now.
	Bytes uint64
	// Overflow counts frames dropped because it held its limit; Stale
	// frames dropped for their waiting time: longer than the delay
	// limit, or by CoDel's law.
	Overflow, Stale uint64
}

// newMemberTx returns the backlog for port p, with CoDel's law at target
// (0: off), holding super-frames too when super is set and p says what
// its send buffer takes; or nil when p cannot say what its ring takes or
// opts turns backlogs off.
func newMemberTx(p platform.Port, limit int, delay, target time.Duration, super bool) *memberTx {
	r, ok := p.(roomer)
	if !ok || limit <= 0 || r.TxRoom(0) < 0 {
		return nil
	}
	bs := p.BatchSize()
	if bs <= 0 {
		bs = platform.DefaultBatchSize
	}
	var f fitter
	if super {
		f, _ = p.(fitter)
	}
	q := txq.New(limit, max(limit/txqFrameBytes, bs), bs, delay)
	q.SetCoDel(target, TxQueueInterval)
	return &memberTx{room: r, fit: f, q: q}
}

// info returns the backlog's description; nil x has none.
func (x *memberTx) info() TxQueueInfo {
	if x == nil {
		return TxQueueInfo{}
	}
	return TxQueueInfo{Limit: x.q.Limit(), Bytes: x.bytes.Load(), Overflow: x.overflow.Load(), Stale: x.stale.Load()}
}

// sendBacklogged is steps 1 to 3 for b, bound for member m with
// backlog x, at now; b's frames fit mtu. It returns how many of b's frames were dropped (the
// ring refused them, or the backlog had no room), with an estimate of
// their bytes, and how many of those for want of room in the backlog
// (overflow, which it counts); the rest went to the ring or joined the
// backlog, and count as sent (a queued frame dropped later is counted
// then, in TxMemberDropped or the backlog's Stale). It kicks the flusher
// when it queued frames.
func (tx *txSide) sendBacklogged(x *memberTx, m *Member, b platform.Batch, mtu int, now time.Time) (lost, lostBytes, overflow uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	before := x.q.Stats()
	tx.flushLocked(x, m, now)
	if x.q.Len() == 0 {
		k := x.fitting(b, m.port.Offloads())
		lost, lostBytes = tx.egress(&x.eg, m, b.Slice(0, k), mtu)
		b = b.Slice(k, b.Len())
	}
	queued := false
	for i, f := range b.Frames {
		if x.q.Push(f, b.Offload(i), now) {
			queued = true
		} else {
			lost++
			lostBytes += uint64(len(f))
			overflow++
		}
	}
	tx.account(x, before)
	if queued {
		select {
		case tx.flushKick <- struct{}{}:
		default:
		}
	}
	return lost, lostBytes, overflow
}

// flushLocked is step 2: it offers the backlog's head to the ring, as
// far as it has room, and counts what the ring refused in
// TxMemberDropped (those frames counted as sent when they were queued).
// x.mu is held.
func (tx *txSide) flushLocked(x *memberTx, m *Member, now time.Time) {
	for x.q.Len() > 0 {
		h := x.q.Head(x.q.Len(), now)
		if h.Len() == 0 {
			return
		}
		k := x.fitting(h, m.port.Offloads())
		if k == 0 {
			return
		}
		if lost, _ := tx.egress(&x.eg, m, h.Slice(0, k), -1); lost > 0 {
			tx.memDropped.Add(lost)
		}
		x.q.Pop(k)
		if k < h.Len() {
			return
		}
	}
}

// flush is step 4 for one member: it reports whether its backlog still
// holds frames. A member that left has its backlog dropped (counted in
// TxMemberDropped).
func (tx *txSide) flush(m *Member, now time.Time) bool {
	x := m.tx
	x.mu.Lock()
	defer x.mu.Unlock()
	before := x.q.Stats()
	if m.gone.Load() {
		n := x.q.Len()
		x.q.Pop(n)
		tx.memDropped.Add(uint64(n))
	} else {
		tx.flushLocked(x, m, now)
	}
	tx.account(x, before)
	return x.q.Len() > 0
}

// account copies x's backlog state to its atomics, and its drops since
// before to the trunk's counters. x.mu is held.
func (tx *txSide) account(x *memberTx, before txq.Stats) {
	st := x.q.Stats()
	x.bytes.Store(uint64(x.q.Bytes()))
	x.overflow.Store(st.Overflow)
	x.stale.Store(st.Stale + st.CoDel)
	if d := st.Overflow - before.Overflow; d > 0 {
		tx.qOverflow.Add(d)
	}
	if d := st.Stale + st.CoDel - before.Stale - before.CoDel; d > 0 {
		tx.qStale.Add(d)
	}
}

// fitting returns how many of b's first frames the port takes now: by
// its TxFit when the frames go whole (offloads) and the port can tell,
// which counts the send buffer its super-frames need beside the ring's
// slots; else by its TxRoom in slots.
func (x *memberTx) fitting(b platform.Batch, offloads bool) int {
	if offloads && x.fit != nil {
		if k := x.fit.TxFit(b.Frames); k >= 0 {
			return min(k, b.Len())
		}
	}
	need := 0
	for i, f := range b.Frames {
		need += slotsFor(f, b.Offload(i), offloads)
	}
	room := x.room.TxRoom(need)
	if room >= need {
		return b.Len()
	}
	for i, f := range b.Frames {
		if room -= slotsFor(f, b.Offload(i), offloads); room < 0 {
			return i
		}
	}
	return b.Len()
}

// slotsFor returns the ring slots frame f with offload o takes: one, or
// one per segment when the port carries no offloads and the trunk cuts a
// super-frame in software (Egress).
func slotsFor(f []byte, o platform.Offload, offloads bool) int {
	if offloads || o.GSOType == frame.GSONone || o.GSOSize == 0 {
		return 1
	}
	return max((len(f)-int(o.HdrLen)+int(o.GSOSize)-1)/int(o.GSOSize), 1)
}

// flusher is step 4: it drains the members' backlogs every
// flushInterval while any holds frames, and sleeps on tx.flushKick
// otherwise, until the trunk closes.
func (tx *txSide) flusher(closing <-chan struct{}, tab *atomic.Pointer[table]) {
	defer close(tx.flushDone)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-tx.flushKick:
		case <-closing:
			return
		}
		for waiting := true; waiting; {
			t.Reset(flushInterval)
			select {
			case <-t.C:
			case <-closing:
				t.Stop()
				return
			}
			waiting = false
			now := tx.clock.Now()
			for _, m := range tab.Load().members {
				if m.tx != nil && tx.flush(m, now) {
					waiting = true
				}
			}
		}
	}
}
