package trunk

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/platform"
)

// Handle is a platform.Port view of a trunk for one consumer at a time: a
// bridge the trunk is a member of, or the daemon's pump between the trunk
// and its TAP. Closing a Handle ends that consumer's use of the trunk (a
// blocked ReadBatch or ReadQueue returns ErrClosed; frames it held are
// given back to their member at its next call) but leaves the trunk
// running, so the next consumer can take a new Handle. Only one Handle
// may read at a time, as only one goroutine may call a Port's ReadBatch
// (or one per queue ReadQueue).
type Handle struct {
	// tr is the trunk.
	tr *Trunk
	// closing is closed by Close; it wakes a blocked ReadBatch or
	// ReadQueue.
	closing chan struct{}
	// closed is set by Close.
	closed atomic.Bool
	// once makes Close idempotent.
	once sync.Once
}

// Handle returns a new consumer view of the trunk.
func (tr *Trunk) Handle() *Handle { return &Handle{tr: tr, closing: make(chan struct{})} }

// Trunk returns the trunk behind the handle.
func (h *Handle) Trunk() *Trunk { return h.tr }

func (h *Handle) Name() string                   { return h.tr.Name() }
func (h *Handle) HardwareAddr() net.HardwareAddr { return h.tr.HardwareAddr() }
func (h *Handle) MTU() int                       { return h.tr.MTU() }
func (h *Handle) Headroom() int                  { return h.tr.Headroom() }
func (h *Handle) BatchSize() int                 { return h.tr.BatchSize() }
func (h *Handle) Link() platform.LinkState       { return h.tr.Link() }
func (h *Handle) Counters() platform.Counters    { return h.tr.Counters() }

// Offloads implements platform.Port, as Trunk.Offloads.
func (h *Handle) Offloads() bool { return h.tr.Offloads() }

// ReadBatch implements platform.Port, as Trunk.ReadBatch, until Close.
func (h *Handle) ReadBatch(b platform.Batch) (int, error) {
	return h.tr.readBatch(&h.tr.rx.all, b, h.closing)
}

// RxQueues implements platform.MultiQueuePort, as Trunk.RxQueues.
func (h *Handle) RxQueues() int { return h.tr.RxQueues() }

// ReadQueue implements platform.MultiQueuePort, as Trunk.ReadQueue,
// until Close. A Handle is read either with ReadBatch or with ReadQueue,
// one goroutine per queue, never both.
func (h *Handle) ReadQueue(q int, b platform.Batch) (int, error) {
	return h.tr.readQueue(q, b, h.closing)
}

// WriteBatch implements platform.Port, as Trunk.WriteBatch, until Close.
func (h *Handle) WriteBatch(b platform.Batch) (int, error) {
	if h.closed.Load() {
		return 0, platform.ErrClosed
	}
	return h.tr.WriteBatch(b)
}

// Close ends this consumer's use of the trunk; the trunk keeps running.
func (h *Handle) Close() error {
	h.once.Do(func() {
		h.closed.Store(true)
		close(h.closing)
	})
	return nil
}

var (
	_ platform.MultiQueuePort = (*Handle)(nil)
	_ platform.MultiQueuePort = (*Trunk)(nil)
)
