// Package txq is a transmit queue bounded in bytes and in time: the
// software backlog a sender keeps in front of a port whose own queue (a
// TX ring) is momentarily full, as a qdisc sits in front of a NIC's ring.
// A burst the ring cannot take at once waits here instead of being
// dropped, so that a briefly starved sender does not drop before the
// link's own queue would; the queue never grows past its byte limit, and
// a frame that waited longer than the delay limit is dropped at the head,
// so that the latency it adds stays bounded. Below that hard bound,
// SetCoDel adds CoDel's control law (RFC 8289): once the head's sojourn
// time has stayed above a target for an interval, a frame is dropped at
// the head, then more at intervals shrinking with the square root of
// the drops, until the sojourn time falls below the target; so TCP
// senders back off while the queue is still short instead of filling it
// to a tail drop. Every drop is counted with its reason.
//
// A Queue copies the frames it keeps into one arena allocated by New;
// after that it allocates nothing. It is not safe for concurrent use: its
// owner serialises calls.
package txq

import (
	"math"
	"time"

	"github.com/swctl/swctl/platform"
)

// MaxFrameLen is the longest frame a Queue keeps: a 64 KiB super-frame
// with its Ethernet and VLAN headers.
const MaxFrameLen = 65535 + 22

// Stats counts what a Queue did since New.
type Stats struct {
	// Queued and QueuedBytes count the frames Push kept.
	Queued, QueuedBytes uint64
	// Overflow counts the frames Push dropped because the queue held its
	// byte limit (or the frame was longer than MaxFrameLen).
	Overflow uint64
	// Stale counts the frames dropped at the head because they waited
	// longer than the delay limit.
	Stale uint64
	// CoDel counts the frames dropped at the head by the control law
	// (SetCoDel).
	CoDel uint64
}

// entry is one queued frame: arena[off:off+n], its offload and when it
// was queued.
type entry struct {
	off, n int
	o      platform.Offload
	at     time.Time
}

// Queue is a FIFO of frames with their offloads, bounded in bytes and
// in waiting time.
type Queue struct {
	// limit is the most frame bytes queued at once.
	limit int
	// maxDelay is how long a frame may wait; 0 means without limit.
	maxDelay time.Duration
	// arena holds the frames, each contiguous, in queue order around the
	// ring: limit bytes plus room for the one frame that does not fit
	// before the arena's end.
	arena []byte
	// ents is a ring of entries; head is the oldest, n how many.
	ents    []entry
	head, n int
	// bytes is the sum of the queued frames' lengths.
	bytes int
	// view is the batch Head returns, views into arena.
	view platform.Batch
	// stats are the counters.
	stats Stats
	// codel is the control law's state.
	codel codel
}

// codel is CoDel's state (RFC 8289, section 5).
type codel struct {
	// target is the sojourn time the law aims below, interval how long
	// it may stay above before a drop; target 0 means off.
	target, interval time.Duration
	// firstAbove is when the sojourn time may have stayed above target
	// for an interval (zero: below target now).
	firstAbove time.Time
	// dropping is set while the law drops; dropNext is when it drops
	// next, count how many it has dropped since it began, lastCount
	// count when it last stopped.
	dropping         bool
	dropNext         time.Time
	count, lastCount uint32
}

// SetCoDel turns on CoDel's control law with the sojourn time target and
// interval (RFC 8289's defaults: 5 ms and 100 ms); target 0 turns it off.
func (q *Queue) SetCoDel(target, interval time.Duration) {
	q.codel = codel{target: target, interval: max(interval, time.Microsecond)}
	if target <= 0 {
		q.codel = codel{}
	}
}

// New returns a queue that holds at most limitBytes bytes of frames, at
// most maxFrames frames, and drops a frame that waited longer than
// maxDelay (0: no time limit). Head returns at most batch frames at once.
func New(limitBytes, maxFrames, batch int, maxDelay time.Duration) *Queue {
	limitBytes, maxFrames, batch = max(limitBytes, 1), max(maxFrames, 1), max(batch, 1)
	return &Queue{
		limit:    limitBytes,
		maxDelay: maxDelay,
		arena:    make([]byte, limitBytes+min(limitBytes, MaxFrameLen)),
		ents:     make([]entry, maxFrames),
		view:     platform.Batch{Frames: make([][]byte, 0, batch), Offs: make([]platform.Offload, 0, batch)},
	}
}

// Len returns the number of frames queued.
func (q *Queue) Len() int { return q.n }

// Bytes returns the number of frame bytes queued.
func (q *Queue) Bytes() int { return q.bytes }

// Limit returns the queue's byte limit.
func (q *Queue) Limit() int { return q.limit }

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats { return q.stats }

// Push copies f, with its offload o, to the tail of the queue, queued at
// now. It reports false, and counts the frame in Overflow, when the queue
// has no room for it: when its bytes would pass the limit, or it holds
// its most frames. Below those the arena always has room (it is larger
// than the limit by the longest frame, which is all a wrap can waste).
func (q *Queue) Push(f []byte, o platform.Offload, now time.Time) bool {
	off, ok := q.place(len(f))
	if !ok {
		q.stats.Overflow++
		return false
	}
	copy(q.arena[off:], f)
	q.ents[(q.head+q.n)%len(q.ents)] = entry{off: off, n: len(f), o: o, at: now}
	q.n++
	q.bytes += len(f)
	q.stats.Queued++
	q.stats.QueuedBytes += uint64(len(f))
	return true
}

// place returns where in the arena a frame of n bytes goes, if the queue
// has room for it: within the byte and frame limits, and contiguous in
// the arena after the newest frame (or at its start, if the frames queued
// leave room there).
func (q *Queue) place(n int) (int, bool) {
	if n > MaxFrameLen || q.bytes+n > q.limit || q.n == len(q.ents) {
		return 0, false
	}
	if q.n == 0 {
		return 0, true
	}
	first, last := q.ents[q.head], q.ents[(q.head+q.n-1)%len(q.ents)]
	end := last.off + last.n
	if last.off >= first.off {
		// Not wrapped: after the newest, else from the start up to
		// the oldest.
		if end+n <= len(q.arena) {
			return end, true
		}
		return 0, n <= first.off
	}
	// Wrapped: between the newest and the oldest.
	return end, end+n <= first.off
}

// Head drops, from the head, the frames that waited longer than the
// delay limit at now (counted in Stale), and those CoDel's law drops
// (counted in CoDel), and returns the oldest of the rest, at most the batch size given to New and at most max: views into
// the queue, with their offloads, valid until the next Push or Pop.
func (q *Queue) Head(max int, now time.Time) platform.Batch {
	for q.n > 0 && q.maxDelay > 0 && now.Sub(q.ents[q.head].at) > q.maxDelay {
		q.Pop(1)
		q.stats.Stale++
	}
	if q.codel.target > 0 {
		q.control(now)
	}
	clear(q.view.Frames)
	q.view.Frames, q.view.Offs = q.view.Frames[:0], q.view.Offs[:0]
	for i := range min(q.n, max, cap(q.view.Frames)) {
		e := q.ents[(q.head+i)%len(q.ents)]
		q.view.Frames = append(q.view.Frames, q.arena[e.off:e.off+e.n:e.off+e.n])
		q.view.Offs = append(q.view.Offs, e.o)
	}
	return q.view
}

// Pop removes the n oldest frames (those Head returned, once sent).
func (q *Queue) Pop(n int) {
	for ; n > 0 && q.n > 0; n-- {
		q.bytes -= q.ents[q.head].n
		q.ents[q.head] = entry{}
		q.head = (q.head + 1) % len(q.ents)
		q.n--
	}
}

// okToDrop reports whether the head's sojourn time at now has stayed
// above the target for an interval (RFC 8289's dodequeue): never with one
// frame queued, which the link takes next.
func (q *Queue) okToDrop(now time.Time) bool {
	c := &q.codel
	if q.n <= 1 || now.Sub(q.ents[q.head].at) < c.target {
		c.firstAbove = time.Time{}
		return false
	}
	if c.firstAbove.IsZero() {
		c.firstAbove = now.Add(c.interval)
		return false
	}
	return !now.Before(c.firstAbove)
}

// control applies CoDel's law at now: it drops frames at the head as
// RFC 8289's dequeue does, counting them in CoDel.
func (q *Queue) control(now time.Time) {
	c := &q.codel
	ok := q.okToDrop(now)
	if c.dropping {
		for ok && !now.Before(c.dropNext) {
			q.Pop(1)
			q.stats.CoDel++
			c.count++
			ok = q.okToDrop(now)
			c.dropNext = c.next(c.dropNext)
		}
		if !ok {
			c.dropping = false
		}
		return
	}
	if !ok {
		return
	}
	q.Pop(1)
	q.stats.CoDel++
	c.dropping = true
	delta := c.count - c.lastCount
	c.count = 1
	if delta > 1 && now.Sub(c.dropNext) < 16*c.interval {
		c.count = delta
	}
	c.lastCount = c.count
	c.dropNext = c.next(now)
	q.okToDrop(now) // the new head's sojourn time starts its own interval
}

// next is the control law: the time of the next drop after t, an
// interval shortened by the square root of the drops so far.
func (c *codel) next(t time.Time) time.Time {
	return t.Add(time.Duration(float64(c.interval) / math.Sqrt(float64(max(c.count, 1)))))
}
