package gen

import (
	"fmt"
	"sync/atomic"
)

// Counter counts the frames that arrived at the far end without reading
// them, as a hardware tester's port does: an interface's rx_packets
// counter, say. It counts every frame that arrives there, the run's own
// and any other.
type Counter interface {
	// Count returns the number of frames that arrived so far.
	Count() (uint64, error)
}

// CounterFunc adapts a function to Counter.
type CounterFunc func() (uint64, error)

// Count implements Counter.
func (f CounterFunc) Count() (uint64, error) { return f() }

// arrivals is what a Bench learns of the frames at the far end: a
// Receiver reading them, or a counter (counted).
type arrivals interface {
	// Begin starts counting run runID from zero.
	Begin(runID uint32)
	// Received is the number of the run's frames that arrived so far.
	Received() uint64
	// Stats is the run's counts so far.
	Stats() RecvStats
}

// counted is arrivals from a Counter: it knows how many frames arrived,
// not which, so a run's duplicates, reordering and latency are unknown
// and anything else arriving at the counted interface counts as the
// run's.
type counted struct {
	// c is the counter.
	c Counter
	// size is each frame's length, for Bytes.
	size int
	// base is the count at Begin.
	base atomic.Uint64
	// err is the first error of c since Begin, nil when none.
	err atomic.Pointer[error]
}

func (a *counted) Begin(uint32) {
	a.err.Store(nil)
	a.base.Store(a.count())
}

func (a *counted) Received() uint64 {
	n, base := a.count(), a.base.Load()
	return max(n, base) - base // 0 when the counter went back
}

func (a *counted) Stats() RecvStats {
	n := a.Received()
	return RecvStats{Received: n, Bytes: n * uint64(a.size)}
}

// count reads the counter, keeping its first error for failed.
func (a *counted) count() uint64 {
	n, err := a.c.Count()
	if err != nil {
		a.err.CompareAndSwap(nil, &err)
	}
	return n
}

// failed returns the counter's first error since Begin.
func (a *counted) failed() error {
	if err := a.err.Load(); err != nil {
		return fmt.Errorf("counting arrivals: %w", *err)
	}
	return nil
}
