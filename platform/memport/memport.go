// Package memport is an in-memory Port pair for tests: what one end writes
// the other end reads, like the two ends of a veth cable. It follows the
// platform.Port contract exactly (ownership, concurrency, Close), so the
// bridge and trunk can be tested without root or a kernel.
package memport

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// DefaultQueueLen is how many frames an end buffers before it drops.
const DefaultQueueLen = 1024

// bufSize is the size of each queued frame buffer: a jumbo frame and a tag.
const bufSize = 9216 + 18

// Port is one end of an in-memory cable.
type Port struct {
	// name is the interface name reported by Name.
	name string
	// mac is the hardware address reported by HardwareAddr.
	mac net.HardwareAddr
	// mtu is the L2 payload limit reported by MTU; WriteBatch enforces it.
	mtu atomic.Int64
	// link is the current platform.LinkState; a peer does not receive
	// while either end is down.
	link atomic.Uint32
	// peer is the other end of the cable.
	peer *Port

	// mu guards queue, free, lent, closed.
	mu sync.Mutex
	// ready is signalled when a frame is queued or the port closes.
	ready *sync.Cond
	// queue holds received frames in arrival order, each in its own buffer.
	queue [][]byte
	// free holds buffers ready to be filled by the peer's WriteBatch.
	free [][]byte
	// lent holds buffers handed out by the last ReadBatch; they return to
	// free at the next ReadBatch.
	lent [][]byte
	// closed is set by Close.
	closed bool
	// queueLen bounds len(queue).
	queueLen int

	// counters are the port's counters. RingDropped counts frames the
	// peer sent while this end's queue was full.
	counters platform.PortCounters
}

// Pair returns two connected ends, both up, with MTU 1500.
func Pair(nameA string, macA net.HardwareAddr, nameB string, macB net.HardwareAddr) (*Port, *Port) {
	a, b := newPort(nameA, macA), newPort(nameB, macB)
	a.peer, b.peer = b, a
	return a, b
}

func newPort(name string, mac net.HardwareAddr) *Port {
	p := &Port{name: name, mac: mac, queueLen: DefaultQueueLen}
	p.ready = sync.NewCond(&p.mu)
	p.mtu.Store(1500)
	p.link.Store(uint32(platform.LinkUp))
	p.free = make([][]byte, 0, DefaultQueueLen)
	for i := 0; i < DefaultQueueLen; i++ {
		p.free = append(p.free, make([]byte, bufSize))
	}
	p.queue = make([][]byte, 0, DefaultQueueLen)
	p.lent = make([][]byte, 0, DefaultQueueLen)
	return p
}

// Name implements platform.Port.
func (p *Port) Name() string { return p.name }

// HardwareAddr implements platform.Port.
func (p *Port) HardwareAddr() net.HardwareAddr { return p.mac }

// MTU implements platform.Port.
func (p *Port) MTU() int { return int(p.mtu.Load()) }

// SetMTU changes the MTU that WriteBatch enforces.
func (p *Port) SetMTU(mtu int) { p.mtu.Store(int64(mtu)) }

// Headroom implements platform.Port; in-memory frames have none.
func (p *Port) Headroom() int { return 0 }

// BatchSize implements platform.Port.
func (p *Port) BatchSize() int { return platform.DefaultBatchSize }

// Link implements platform.Port.
func (p *Port) Link() platform.LinkState { return platform.LinkState(p.link.Load()) }

// SetLink implements platform.LinkSetter. Setting one end down also stops
// delivery from the peer, as pulling a cable does.
func (p *Port) SetLink(s platform.LinkState) { p.link.Store(uint32(s)) }

// Counters implements platform.Port.
func (p *Port) Counters() platform.Counters { return p.counters.Snapshot() }

// Offloads implements platform.Port: an in-memory port carries plain
// frames only.
func (p *Port) Offloads() bool { return false }

// ReadBatch implements platform.Port: it blocks until a frame arrives or
// the port closes. Returned frames are valid until the next ReadBatch or
// Close; their offloads are zero.
func (p *Port) ReadBatch(b platform.Batch) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recycleLocked()
	for len(p.queue) == 0 && !p.closed {
		p.ready.Wait()
	}
	if p.closed {
		return 0, platform.ErrClosed
	}
	n := p.takeLocked(b.Frames)
	if b.Offs != nil {
		clear(b.Offs[:n])
	}
	return n, nil
}

// TryReadBatch is ReadBatch without blocking: it returns 0 when nothing is
// queued. Tests use it to see what a bridge sent.
func (p *Port) TryReadBatch(frames [][]byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recycleLocked()
	if p.closed {
		return 0, platform.ErrClosed
	}
	return p.takeLocked(frames), nil
}

var _ platform.ReadyReader = (*Port)(nil)

// ReadReady implements platform.ReadyReader: ReadBatch that returns 0
// at once when nothing is queued.
func (p *Port) ReadReady(b platform.Batch) (int, error) {
	return platform.ReadPlain(b, p.TryReadBatch)
}

// Pending returns the number of frames queued for reading.
func (p *Port) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

func (p *Port) recycleLocked() {
	p.free = append(p.free, p.lent...)
	p.lent = p.lent[:0]
}

func (p *Port) takeLocked(frames [][]byte) int {
	n := copy(frames, p.queue)
	for i := 0; i < n; i++ {
		p.lent = append(p.lent, frames[i])
		p.counters.AddRx(1, len(frames[i]))
	}
	rest := copy(p.queue, p.queue[n:])
	for i := rest; i < len(p.queue); i++ {
		p.queue[i] = nil
	}
	p.queue = p.queue[:rest]
	return n
}

// WriteBatch implements platform.Port: each frame is copied into the
// peer's receive queue, or dropped and counted when the queue is full, the
// frame exceeds the MTU (one tag allowed), its offload is not plain, or
// either end is down.
func (p *Port) WriteBatch(b platform.Batch) (int, error) {
	if p.isClosed() {
		return 0, platform.ErrClosed
	}
	frames := b.Frames
	if p.Link() != platform.LinkUp || p.peer.Link() != platform.LinkUp {
		p.counters.AddTxDropped(len(frames))
		return 0, nil
	}
	mtu := p.MTU()
	q := p.peer
	sent := 0
	q.mu.Lock()
	for i, f := range frames {
		if len(f) < frame.HeaderLen || frame.Ethernet(f).PayloadLen() > mtu || len(f) > bufSize || !b.Offload(i).IsPlain() {
			p.counters.AddTxDropped(1)
			continue
		}
		if q.closed || len(q.queue) >= q.queueLen || len(q.free) == 0 {
			q.counters.AddRingDropped(1)
			p.counters.AddTxDropped(1)
			continue
		}
		buf := q.free[len(q.free)-1]
		q.free = q.free[:len(q.free)-1]
		buf = buf[:cap(buf)][:len(f)]
		copy(buf, f)
		q.queue = append(q.queue, buf)
		p.counters.AddTx(1, len(f))
		sent++
	}
	if sent > 0 {
		q.ready.Broadcast()
	}
	q.mu.Unlock()
	return sent, nil
}

func (p *Port) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close implements platform.Port: it wakes a blocked ReadBatch.
func (p *Port) Close() error {
	p.mu.Lock()
	p.closed = true
	p.ready.Broadcast()
	p.mu.Unlock()
	return nil
}
