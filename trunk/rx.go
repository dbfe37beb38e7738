package trunk

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// readRetry is how long a reader waits after a failed ReadBatch (other
// than ErrClosed) before it tries again.
const readRetry = 10 * time.Millisecond

// The receive side. A frame takes these steps:
//
//  1. Its member's reader goroutine (read) waits for it in the member
//     port's ReadBatch and sorts the batch (sort): slow-protocol frames to
//     the protocol, data frames dropped while the member is not
//     collecting.
//  2. The reader offers the accepted frames, as views into the member
//     port, to whichever consumer takes them first: ReadBatch, or the
//     reader of the member's receive queue (ID mod RxQueues) in
//     ReadQueue. It then leaves the port to that consumer until the
//     consumer gives it back.
//  3. The consumer (readBatch) returns them, with their offloads, or
//     finished in software for a caller that takes plain frames only.
//  4. At its next call the consumer reads the member itself without
//     waiting (readOn: ReadReady, then sort), so under load frames go
//     from the member port to the consumer with no channel and no
//     goroutine switch. When the member has nothing ready, another
//     member's batch waits for the consumer, or the member is leaving,
//     the consumer gives the port back (rxConsumer.release) and the
//     reader waits for frames again: back to 1. Either way the views a
//     consumer returned stay valid until its next call, as the Port
//     contract says.

// rxSide is what the consumers of a trunk's frames hold: ReadBatch's
// state and each receive queue's, and the receive counters.
type rxSide struct {
	// all is ReadBatch's consumer; its channel takes every member's
	// batches.
	all rxConsumer
	// queues are the receive queues' consumers: queue q takes the
	// batches of the members whose ID mod len(queues) is q. Fixed at New.
	queues []rxConsumer
	// packets, bytes, refused and control are the Stats counters
	// RxPackets, RxBytes, RxRefused and RxControl; softOffload and
	// offloadDropped the receive side's part of SoftOffload and
	// OffloadDropped. Atomic.
	packets, bytes, refused, control atomic.Uint64
	softOffload, offloadDropped      atomic.Uint64
}

// init makes n receive queues (0: GOMAXPROCS).
func (r *rxSide) init(n int) {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	r.all.in = make(chan *rxBatch)
	r.queues = make([]rxConsumer, min(n, lb.MaxPorts))
	for i := range r.queues {
		r.queues[i].in = make(chan *rxBatch)
	}
}

// rxConsumer is one consumer of the trunk's frames: where it takes
// batches from, and the batch it returns frames from. Owned by the one
// goroutine that reads through it (ReadBatch, or one queue's ReadQueue),
// by the Port contract; no lock.
type rxConsumer struct {
	// in carries batches from the members' readers; immutable.
	in chan *rxBatch
	// cur is the batch being returned; frames and offs are what is
	// returned of it: its frames and offloads (offs nil when they are
	// all zero), or the plain frames soft made of them (offs nil); off
	// is the index of the next one.
	cur    *rxBatch
	frames [][]byte
	offs   []platform.Offload
	off    int
	// soft finishes received offloads in software for a caller that
	// takes plain frames only.
	soft platform.SoftwareFinisher
	// packets counts the frames this consumer returned. Atomic.
	packets atomic.Uint64
}

// ReadBatch implements platform.Port. It blocks until a member has
// received frames the protocol accepts, then fills b.Frames[:n] with views
// of them, all from one member: views into that member port's own
// buffers, not copies, and b.Offs[:n] with their offloads as the member
// received them (zero from a member without offloads). They stay valid
// until the next ReadBatch or Close: the member's reader does not read the
// member again until then. A member batch larger than b is returned over
// several calls. Slow-protocol frames never come out of ReadBatch: they
// go to the protocol. It returns ErrClosed after Close.
//
// With b.Offs nil the caller takes plain frames only: a frame a member
// received with an offload that is not plain (a partial checksum, a
// super-frame) is finished in software first, into an arena the trunk
// owns and reuses (platform.SoftwareFinisher): a super-frame comes out as
// its segments. A frame whose offload the software cannot do is dropped
// and counted (Stats.OffloadDropped).
//
// A trunk is read either with ReadBatch or with ReadQueue, one goroutine
// per queue, never both.
func (tr *Trunk) ReadBatch(b platform.Batch) (int, error) {
	return tr.readBatch(&tr.rx.all, b, nil)
}

// RxQueues implements platform.MultiQueuePort: Options.RxQueues, fixed
// at New. Queue q carries the frames of the members whose ID (Member.ID)
// mod RxQueues is q: with no more members than queues, one member each.
// A queue without members blocks its reader until a member joins it or
// the trunk closes; members added later join their queue at once.
func (tr *Trunk) RxQueues() int { return len(tr.rx.queues) }

// ReadQueue implements platform.MultiQueuePort: ReadBatch for the frames
// of queue q's members only, with the same ownership rules. Each queue
// may have its own reader goroutine.
func (tr *Trunk) ReadQueue(q int, b platform.Batch) (int, error) {
	return tr.readQueue(q, b, nil)
}

// readQueue is ReadQueue for a consumer that may also be stopped by stop.
func (tr *Trunk) readQueue(q int, b platform.Batch, stop <-chan struct{}) (int, error) {
	if q < 0 || q >= len(tr.rx.queues) {
		return 0, fmt.Errorf("%s: ReadQueue: queue %d of %d", tr.name, q, len(tr.rx.queues))
	}
	return tr.readBatch(&tr.rx.queues[q], b, stop)
}

// RxQueuePackets returns, for each receive queue, the frames ReadQueue
// returned from it since New.
func (tr *Trunk) RxQueuePackets() []uint64 {
	out := make([]uint64, len(tr.rx.queues))
	for i := range tr.rx.queues {
		out[i] = tr.rx.queues[i].packets.Load()
	}
	return out
}

// readBatch is c's read, for a consumer that may also be stopped by stop
// (a Handle's Close). When stop is closed, the batch c holds is given
// back to its member and ErrClosed returned.
func (tr *Trunk) readBatch(c *rxConsumer, b platform.Batch, stop <-chan struct{}) (int, error) {
	frames, offs := b.Frames, b.Offs
	if offs != nil {
		frames = frames[:min(len(frames), len(offs))]
	}
	for {
		if tr.closed.Load() {
			return 0, platform.ErrClosed
		}
		if stopped(stop) {
			c.release()
			return 0, platform.ErrClosed
		}
		if len(frames) == 0 {
			return 0, nil
		}
		if c.cur != nil && c.off >= len(c.frames) && !tr.readOn(c) {
			c.release()
		}
		if c.cur == nil {
			select {
			case b := <-c.in:
				c.take(b)
			case <-tr.closing:
				return 0, platform.ErrClosed
			case <-stop:
				return 0, platform.ErrClosed
			}
			if tr.closed.Load() {
				return 0, platform.ErrClosed
			}
		}
		if offs == nil && c.offs != nil && c.cur.soft {
			tr.finish(c)
		}
		if c.off < len(c.frames) {
			break
		}
	}
	n := copy(frames, c.frames[c.off:])
	if offs != nil {
		if c.offs != nil {
			copy(offs[:n], c.offs[c.off:])
		} else {
			clear(offs[:n])
		}
	}
	c.off += n
	var bytes uint64
	for _, f := range frames[:n] {
		bytes += uint64(len(f))
	}
	c.packets.Add(uint64(n))
	tr.rx.packets.Add(uint64(n))
	tr.rx.bytes.Add(bytes)
	return n, nil
}

// readOn is what a consumer does when it has returned every frame of the
// batch it holds, from member m: it keeps m's port, which m's reader lent
// it, and reads m again itself, without waiting (ReadReady), so that a
// member under load hands its frames over with no channel and no
// goroutine switch. It does not when another member's batch waits for c
// (it takes that one and gives m back: members share a queue fairly),
// when m is leaving or cannot read without waiting, or when nothing new
// was accepted; it then returns false and the caller gives m back to its
// reader, which waits for frames. c.cur is not nil.
func (tr *Trunk) readOn(c *rxConsumer) bool {
	select {
	case b := <-c.in:
		c.release()
		c.take(b)
		return true
	default:
	}
	m := c.cur.m
	if m.ready == nil || tr.closed.Load() || m.isLeaving() {
		return false
	}
	m.lane.Lock()
	defer m.lane.Unlock()
	clear(m.rx.frames)
	n, err := m.ready.ReadReady(m.buf)
	if err != nil || n == 0 || !tr.sort(m, n) {
		return false
	}
	c.take(&m.rx)
	return true
}

// take makes b the batch c returns frames from.
func (c *rxConsumer) take(b *rxBatch) {
	c.cur, c.off = b, 0
	c.frames, c.offs = b.frames, nil
	if len(b.offs) > 0 {
		c.offs = b.offs
	}
}

// finish replaces what is left of c's batch by plain frames: offloads
// finished in software into c.soft, super-frames segmented. Called by
// c's goroutine.
func (tr *Trunk) finish(c *rxConsumer) {
	c.soft.Reset()
	var finished, dropped uint64
	for i, f := range c.frames[c.off:] {
		o := c.offs[c.off+i]
		if _, err := c.soft.Add(f, o); err != nil {
			if dropped == 0 {
				tr.noteOffloadDropped(c.cur.m.name, o, err)
			}
			dropped++
			continue
		}
		if !o.IsPlain() {
			finished++
		}
	}
	c.frames, c.offs, c.off = c.soft.Frames(), nil, 0
	if finished > 0 {
		tr.rx.softOffload.Add(finished)
	}
	if dropped > 0 {
		tr.rx.offloadDropped.Add(dropped)
	}
}

// release gives the batch c holds back to its member's reader, which may
// then read its member again.
func (c *rxConsumer) release() {
	b := c.cur
	if b == nil {
		return
	}
	c.cur, c.frames, c.offs = nil, nil, nil
	select {
	case b.ack <- struct{}{}:
	default:
	}
}

func stopped(stop <-chan struct{}) bool {
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// read is m's reader goroutine: it reads batches from m until m leaves or
// the trunk closes, hands slow-protocol frames to the protocol, drops the
// rest while m is not collecting, and offers what it accepted to
// ReadBatch or to its queue's ReadQueue, waiting until the consumer is
// done with it before reading m again. It closes m's port when it returns.
func (tr *Trunk) read(m *Member) {
	defer tr.readers.Done()
	defer close(m.done)
	defer m.closePort()
	bs := m.port.BatchSize()
	if bs <= 0 {
		bs = platform.DefaultBatchSize
	}
	m.buf = platform.NewBatch(bs)
	m.rx.frames = make([][]byte, 0, bs)
	m.rx.offs = make([]platform.Offload, 0, bs)
	failing := false
	for {
		if !m.enter(stateRead) {
			return
		}
		var n int
		var err error
		n, err = m.port.ReadBatch(m.buf)
		// Leaving while in ReadBatch: the port may be closed already and
		// the frames gone. Do not look at them.
		if !m.enter(stateBusy) {
			return
		}
		if n > 0 && !tr.receive(m, n) {
			return
		}
		clear(m.buf.Frames)
		switch {
		case err == nil:
			if failing {
				failing = false
				tr.log.Info("port reads again", "port", m.name)
			}
		case errors.Is(err, platform.ErrClosed):
			return
		default:
			if !failing {
				failing = true
				tr.log.Warn("port read failed", "port", m.name, "err", err)
			}
			select {
			case <-time.After(readRetry):
			case <-m.stop:
				return
			}
		}
	}
}

// receive sorts the n frames m read into m.buf and offers the accepted
// ones to a consumer. It returns false when the reader must stop.
func (tr *Trunk) receive(m *Member, n int) bool {
	if !tr.sort(m, n) {
		return true
	}
	if !m.enter(stateLent) {
		return false
	}
	select {
	case tr.rx.all.in <- &m.rx:
	case tr.rx.queues[m.id%len(tr.rx.queues)].in <- &m.rx:
	case <-m.stop:
		return false
	case <-tr.closing:
		return false
	}
	// The consumer holds the frames, and may read m again itself
	// (readOn): wait for it to give m back even if m is leaving
	// meanwhile; only the trunk's Close ends the wait.
	select {
	case <-m.rx.ack:
	case <-tr.closing:
		return false
	}
	clear(m.rx.frames)
	return m.enter(stateBusy)
}

// sort sorts the n frames m read into m.buf: slow-protocol frames go to
// the protocol, data frames are dropped while m is not collecting, and
// the rest become m.rx's frames. It reports whether any was accepted.
// Called by whoever holds m's port: its reader, or the consumer it lent
// its batch to (readOn).
func (tr *Trunk) sort(m *Member, n int) bool {
	frames, offs := m.buf.Frames[:n], m.buf.Offs[:n]
	collecting := tr.table.Load().collecting.Has(m.id) && !m.gone.Load()
	acc := m.rx.frames[:0]
	accOffs := m.rx.offs[:0]
	soft := false
	var refused uint64
	for i, f := range frames {
		switch {
		case frame.Ethernet(f).IsSlowProtocol():
			tr.control(m, f)
			// The protocol may have changed m's state: the frames
			// after this one obey the new state.
			collecting = tr.table.Load().collecting.Has(m.id) && !m.gone.Load()
		case collecting:
			acc = append(acc, f)
			if offs != nil {
				accOffs = append(accOffs, offs[i])
				soft = soft || !offs[i].IsPlain()
			}
		default:
			refused++
		}
	}
	if refused > 0 {
		m.rxRefused.Add(refused)
		tr.rx.refused.Add(refused)
	}
	m.rx.frames, m.rx.offs, m.rx.soft = acc, accOffs, soft
	return len(acc) > 0
}

// control hands a slow-protocol frame m received to the protocol.
func (tr *Trunk) control(m *Member, f []byte) {
	m.rxControl.Add(1)
	tr.rx.control.Add(1)
	tr.mu.Lock()
	if tr.isClosed || m.gone.Load() {
		tr.mu.Unlock()
		return
	}
	tr.proto.Input(m, f)
	tr.publishChangesLocked()
	tr.mu.Unlock()
	tr.notify()
}
