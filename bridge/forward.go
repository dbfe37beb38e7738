package bridge

import (
	"errors"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// groupBit is the I/G bit of a packed MAC (frame.MAC.Key): multicast.
const groupBit = 1 << 40

// linkLocalBase is 01:80:c2:00:00:00 packed; the reserved group addresses
// are linkLocalBase to linkLocalBase+0x0f.
const linkLocalBase = 0x0180c2000000

// Worker is the scratch space of one forwarding goroutine: the frames
// collected for each egress port during one Forward call, and counters
// summed into the bridge's once per call. A Worker is used by one
// goroutine at a time; after its first calls it makes Forward allocate
// nothing.
type Worker struct {
	// out holds the pending frames for each member, indexed by its slot.
	out []egress
	// pending lists the slots of out that hold frames, in first-use order.
	pending []int
	// span holds the frames every span port is to receive.
	span egress
	// eg writes the batches to the egress ports.
	eg platform.Egress
	// ctrs counts in plain integers during one Forward call.
	ctrs [numCounters]uint64
	// tap is the bridge's tap during one Forward call, nil without one;
	// tapNow is that call's time.
	tap    *tapRef
	tapNow time.Time
	// storm is the ingress member's storm limit during one Forward call,
	// nil for none; guard is its BPDU guard, and disabled is set once
	// the guard has disabled it.
	storm           *stormBucket
	guard, disabled bool
}

// egress is the batch one Worker collects for one member.
type egress struct {
	// m is the member the frames are for.
	m *Member
	// frames are views of ingress frames, valid during the Forward call.
	frames [][]byte
	// offs are the offloads of frames, parallel to it, when the ingress
	// port carries offloads (else empty).
	offs []platform.Offload
}

// queue appends f and its offload o (ignored when withOffs is false).
func (e *egress) queue(f []byte, o platform.Offload, withOffs bool) {
	e.frames = append(e.frames, f)
	if withOffs {
		e.offs = append(e.offs, o)
	}
}

// reset empties e, keeping its capacity.
func (e *egress) reset() {
	clear(e.frames)
	e.frames = e.frames[:0]
	e.offs = e.offs[:0]
}

// offsOf returns e's offloads, or nil when its frames carry none.
func (e *egress) offsOf() []platform.Offload {
	if len(e.offs) == 0 {
		return nil
	}
	return e.offs
}

// NewWorker returns an empty Worker.
func NewWorker() *Worker { return &Worker{} }

// add queues f, with its offload when withOffs is set, for m.
func (w *Worker) add(b *Bridge, m *Member, f []byte, o platform.Offload, withOffs bool) {
	if m.slot >= len(w.out) {
		w.out = append(w.out, make([]egress, m.slot+1-len(w.out))...)
	}
	e := &w.out[m.slot]
	if e.m != m && len(e.frames) > 0 {
		// The slot's former member was removed and its slot reused
		// during this call: send what was queued for it first.
		b.send(w, e.m, e.frames, e.offsOf(), cSent)
		e.reset()
	}
	e.m = m
	if len(e.frames) == 0 {
		w.pending = append(w.pending, m.slot)
	}
	e.queue(f, o, withOffs)
}

// isIP reports whether the outer ethertype is IPv4, IPv6, ARP or RARP: what
// BlockNonIP lets through. A tagged frame is not IP.
func isIP(e frame.Ethernet) bool {
	switch e.Type() {
	case frame.TypeIPv4, frame.TypeIPv6, frame.TypeARP, frame.TypeRARP:
		return true
	}
	return false
}

// Forward forwards the frames of b, received on the member in, as the
// package documentation describes, with now as the time they were
// received (read once per batch). It is what the member's reader goroutine
// calls; tests and benchmarks call it directly. Any number of goroutines
// may call Forward at once, each with its own Worker.
//
// Every copy keeps its frame's offload (b.Offs nil: plain frames): an
// egress port that carries offloads gets it with the frame; for any other
// port the copies go through the Worker's platform.Egress, which finishes
// partial checksums and cuts super-frames into segments in software. A
// super-frame is checked against an egress MTU by the size of its
// segments.
//
// The frames and offloads are the caller's: Forward hands them to the
// egress ports' WriteBatch (which copies what it keeps) and to the
// link-local handler before it returns, and keeps no reference to them.
// Frames from a member that has left the bridge are ignored.
func (b *Bridge) Forward(w *Worker, in *Member, batch platform.Batch, now time.Time) {
	if in == nil || in.span || in.gone.Load() {
		return
	}
	t := b.table.Load()
	if w.tap = b.tap.Load(); w.tap != nil {
		w.tapNow = now
		w.tap.t.Capture(in.name, In, batch.Frames, now)
	}
	ts := b.since(now)
	inFlags := in.flags.Load()
	gate := in.gate.Load()
	withOffs := batch.Offs != nil
	w.storm, w.guard, w.disabled = in.storm.Load(), in.guard.Load(), in.disabled.Load()
	for i, f := range batch.Frames {
		if w.disabled {
			w.ctrs[cReceived]++
			w.ctrs[cDiscarding]++
			continue
		}
		var o platform.Offload
		if withOffs {
			o = batch.Offs[i]
		}
		b.forwardOne(w, t, in, inFlags, gate, f, o, withOffs, ts)
	}
	b.flush(w, t)
}

// forwardOne decides the fate of one frame and queues its copies in w.
// gate is the ingress member's gate, read once per batch; nil forwards.
func (b *Bridge) forwardOne(w *Worker, t *portTable, in *Member, inFlags uint32, gate *gateRef, f []byte, o platform.Offload, withOffs bool, now int64) {
	w.ctrs[cReceived]++
	e := frame.Ethernet(f)
	if !e.Valid() {
		w.ctrs[cRunt]++
		return
	}
	dst, src := e.DestinationKey(), e.SourceKey()
	if w.guard && dst == linkLocalBase {
		b.tripGuard(in)
		w.disabled = true
		w.ctrs[cDiscarding]++
		return
	}
	if dst&^0x0f == linkLocalBase && b.linkLocalFwd.Load()&(1<<(dst&0x0f)) == 0 {
		w.ctrs[cLinkLocal]++
		if h := in.linkLocal.Load(); h != nil {
			(*h)(f)
		}
		return
	}
	if src&groupBit != 0 || src == 0 {
		w.ctrs[cBadSource]++
		return
	}
	ip := isIP(e)
	if inFlags&flagBlockNonIP != 0 && !ip {
		w.ctrs[cBlockNonIP]++
		return
	}
	vlan := e.VLAN()
	learn, fwd := inFlags&flagLearning != 0, true
	if gate != nil && !gate.g.Forwarding() {
		fwd = false
		learn = learn && gate.g.Learning()
	}
	if learn {
		switch b.fdb.learn(fdbKey(vlan, src), in, now) {
		case learnNew:
			w.ctrs[cLearned]++
		case learnMoved:
			w.ctrs[cMoved]++
		case learnFull:
			w.ctrs[cExceeded]++
			b.noteFull()
		}
	}
	if !fwd {
		w.ctrs[cDiscarding]++
		return
	}
	unicast := dst&groupBit == 0
	if unicast {
		if out := b.fdb.lookup(fdbKey(vlan, dst), now); out != nil && !out.gone.Load() {
			if out == in {
				w.ctrs[cSamePort]++
				return
			}
			w.ctrs[cForwarded]++
			if len(t.spans) > 0 {
				w.span.queue(f, o, withOffs)
			}
			b.enqueue(w, out, f, o, withOffs, ip)
			return
		}
	}
	if w.storm != nil && !w.storm.allow(now) {
		w.ctrs[cStorm]++
		return
	}
	w.ctrs[cFlooded]++
	if len(t.spans) > 0 {
		w.span.queue(f, o, withOffs)
	}
	for _, m := range t.members {
		if m == in || (unicast && m.flags.Load()&flagDiscover == 0) {
			continue
		}
		b.enqueue(w, m, f, o, withOffs, ip)
	}
}

// enqueue queues f for m unless m blocks non-IP frames and f is one.
func (b *Bridge) enqueue(w *Worker, m *Member, f []byte, o platform.Offload, withOffs, ip bool) {
	if !ip && m.flags.Load()&flagBlockNonIP != 0 {
		w.ctrs[cBlockNonIPOut]++
		return
	}
	w.add(b, m, f, o, withOffs)
}

// flush sends what w queued, empties it, and adds its counters to the
// bridge's.
func (b *Bridge) flush(w *Worker, t *portTable) {
	for _, slot := range w.pending {
		e := &w.out[slot]
		b.send(w, e.m, e.frames, e.offsOf(), cSent)
		e.reset()
	}
	w.pending = w.pending[:0]
	if len(w.span.frames) > 0 {
		for _, s := range t.spans {
			b.send(w, s, w.span.frames, w.span.offsOf(), cSpanSent)
		}
		w.span.reset()
	}
	for i := range w.ctrs {
		if w.ctrs[i] != 0 {
			b.ctrs[i].Add(w.ctrs[i])
			w.ctrs[i] = 0
		}
	}
}

// send writes frames (with their offloads offs, or nil) to m through
// w's Egress, leaving out (and counting) what m must not get: everything
// when its link is not up or its gate does not forward, frames whose payload (a super-frame's
// segments) exceeds its MTU. A port without offloads gets them done in
// software; a frame the software cannot finish is dropped, counted in
// DroppedOffload and logged once. sent counts what m accepted, each
// segment as one frame.
func (b *Bridge) send(w *Worker, m *Member, frames [][]byte, offs []platform.Offload, sent counter) {
	if len(frames) == 0 {
		return
	}
	if m.port.Link() != platform.LinkUp {
		w.ctrs[cLinkDown] += uint64(len(frames))
		return
	}
	if !m.forwarding() {
		w.ctrs[cDiscardingOut] += uint64(len(frames))
		return
	}
	if w.tap != nil {
		w.tap.t.Capture(m.name, Out, frames, w.tapNow)
	}
	st := w.eg.Send(m.port, platform.Batch{Frames: frames, Offs: offs})
	w.ctrs[sent] += uint64(st.Sent)
	w.ctrs[cOversize] += uint64(st.Oversize)
	w.ctrs[cSoftOffload] += uint64(st.Finished)
	w.ctrs[cSegments] += uint64(st.Segments)
	if st.OffloadDropped > 0 {
		w.ctrs[cOffloadDropped] += uint64(st.OffloadDropped)
		b.noteOffloadDropped(m, st.ErrOffload, st.Err)
	}
}

// read is a goroutine of a member or span port, reading queue q of a
// MultiQueuePort (mq) or the port itself (mq nil): it reads batches until
// the port is closed, and forwards them (a member) or discards them (a
// span port). A port that carries no offloads is read without them: its
// frames are plain.
func (b *Bridge) read(m *Member, mq platform.MultiQueuePort, q int) {
	bs := m.port.BatchSize()
	if bs <= 0 {
		bs = platform.DefaultBatchSize
	}
	buf := platform.NewBatch(bs)
	if !m.port.Offloads() {
		buf.Offs = nil
	}
	w := NewWorker()
	failing := false
	for {
		var n int
		var err error
		if mq != nil {
			n, err = mq.ReadQueue(q, buf)
		} else {
			n, err = m.port.ReadBatch(buf)
		}
		if n > 0 && !m.span {
			if panicTest {
				panicOnTestFrame(buf.Slice(0, n))
			}
			b.Forward(w, m, buf.Slice(0, n), b.clock.Now())
		}
		switch {
		case err == nil:
			if failing {
				failing = false
				b.log.Info("port reads again", "port", m.name)
			}
		case errors.Is(err, platform.ErrClosed):
			return
		default:
			if !failing {
				failing = true
				b.log.Warn("port read failed", "port", m.name, "err", err)
			}
			time.Sleep(readRetry)
		}
	}
}
