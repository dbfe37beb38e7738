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
	span [][]byte
	// tx is scratch for a batch with its oversize frames left out.
	tx [][]byte
	// ctrs counts in plain integers during one Forward call.
	ctrs [numCounters]uint64
}

// egress is the batch one Worker collects for one member.
type egress struct {
	// m is the member the frames are for.
	m *Member
	// frames are views of ingress frames, valid during the Forward call.
	frames [][]byte
}

// NewWorker returns an empty Worker.
func NewWorker() *Worker { return &Worker{} }

// add queues f for m.
func (w *Worker) add(b *Bridge, m *Member, f []byte) {
	if m.slot >= len(w.out) {
		w.out = append(w.out, make([]egress, m.slot+1-len(w.out))...)
	}
	e := &w.out[m.slot]
	if e.m != m && len(e.frames) > 0 {
		// The slot's former member was removed and its slot reused
		// during this call: send what was queued for it first.
		b.send(w, e.m, e.frames, cSent)
		clear(e.frames)
		e.frames = e.frames[:0]
	}
	e.m = m
	if len(e.frames) == 0 {
		w.pending = append(w.pending, m.slot)
	}
	e.frames = append(e.frames, f)
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

// Forward forwards frames received on the member in, as the package
// documentation describes, with now as the time they were received (read
// once per batch). It is what the member's reader goroutine calls; tests
// and benchmarks call it directly. Any number of goroutines may call
// Forward at once, each with its own Worker.
//
// The frames are views owned by the caller: Forward hands them to the
// egress ports' WriteBatch (which copies what it keeps) and to the
// link-local handler before it returns, and keeps no reference to them.
// Frames from a member that has left the bridge are ignored.
func (b *Bridge) Forward(w *Worker, in *Member, frames [][]byte, now time.Time) {
	if in == nil || in.span || in.gone.Load() {
		return
	}
	t := b.table.Load()
	ts := b.since(now)
	inFlags := in.flags.Load()
	for _, f := range frames {
		b.forwardOne(w, t, in, inFlags, f, ts)
	}
	b.flush(w, t)
}

// forwardOne decides the fate of one frame and queues its copies in w.
func (b *Bridge) forwardOne(w *Worker, t *portTable, in *Member, inFlags uint32, f []byte, now int64) {
	w.ctrs[cReceived]++
	e := frame.Ethernet(f)
	if !e.Valid() {
		w.ctrs[cRunt]++
		return
	}
	dst, src := e.DestinationKey(), e.SourceKey()
	if dst&^0x0f == linkLocalBase {
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
	if inFlags&flagLearning != 0 {
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
	unicast := dst&groupBit == 0
	if unicast {
		if out := b.fdb.lookup(fdbKey(vlan, dst), now); out != nil && !out.gone.Load() {
			if out == in {
				w.ctrs[cSamePort]++
				return
			}
			w.ctrs[cForwarded]++
			if len(t.spans) > 0 {
				w.span = append(w.span, f)
			}
			b.enqueue(w, out, f, ip)
			return
		}
	}
	w.ctrs[cFlooded]++
	if len(t.spans) > 0 {
		w.span = append(w.span, f)
	}
	for _, m := range t.members {
		if m == in || (unicast && m.flags.Load()&flagDiscover == 0) {
			continue
		}
		b.enqueue(w, m, f, ip)
	}
}

// enqueue queues f for m unless m blocks non-IP frames and f is one.
func (b *Bridge) enqueue(w *Worker, m *Member, f []byte, ip bool) {
	if !ip && m.flags.Load()&flagBlockNonIP != 0 {
		w.ctrs[cBlockNonIPOut]++
		return
	}
	w.add(b, m, f)
}

// flush sends what w queued, empties it, and adds its counters to the
// bridge's.
func (b *Bridge) flush(w *Worker, t *portTable) {
	for _, slot := range w.pending {
		e := &w.out[slot]
		b.send(w, e.m, e.frames, cSent)
		clear(e.frames)
		e.frames = e.frames[:0]
	}
	w.pending = w.pending[:0]
	if len(w.span) > 0 {
		for _, s := range t.spans {
			b.send(w, s, w.span, cSpanSent)
		}
		clear(w.span)
		w.span = w.span[:0]
	}
	for i := range w.ctrs {
		if w.ctrs[i] != 0 {
			b.ctrs[i].Add(w.ctrs[i])
			w.ctrs[i] = 0
		}
	}
}

// send writes frames to m, in batches of at most m's batch size, leaving
// out (and counting) what m must not get: everything when its link is not
// up, frames whose payload exceeds its MTU. sent counts what m accepted.
func (b *Bridge) send(w *Worker, m *Member, frames [][]byte, sent counter) {
	if len(frames) == 0 {
		return
	}
	if m.port.Link() != platform.LinkUp {
		w.ctrs[cLinkDown] += uint64(len(frames))
		return
	}
	mtu := m.port.MTU()
	for i, f := range frames {
		if frame.Ethernet(f).PayloadLen() > mtu {
			// Copy the frames that fit into scratch, so that the batch
			// itself (maybe shared by several span ports) is unchanged.
			w.tx = append(w.tx[:0], frames[:i]...)
			for _, f := range frames[i:] {
				if frame.Ethernet(f).PayloadLen() > mtu {
					w.ctrs[cOversize]++
				} else {
					w.tx = append(w.tx, f)
				}
			}
			frames = w.tx
			break
		}
	}
	bs := m.port.BatchSize()
	if bs <= 0 {
		bs = len(frames)
	}
	for len(frames) > 0 {
		chunk := frames[:min(bs, len(frames))]
		frames = frames[len(chunk):]
		n, _ := m.port.WriteBatch(chunk)
		w.ctrs[sent] += uint64(n)
	}
	clear(w.tx)
	w.tx = w.tx[:0]
}

// read is the goroutine of a member or span port: it reads batches until
// the port is closed, and forwards them (a member) or discards them (a
// span port).
func (b *Bridge) read(m *Member) {
	defer close(m.done)
	bs := m.port.BatchSize()
	if bs <= 0 {
		bs = platform.DefaultBatchSize
	}
	buf := make([][]byte, bs)
	w := NewWorker()
	failing := false
	for {
		n, err := m.port.ReadBatch(buf)
		if n > 0 && !m.span {
			b.Forward(w, m, buf[:n], b.clock.Now())
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
