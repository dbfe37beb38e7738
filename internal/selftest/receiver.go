package selftest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/swctl/swctl/platform"
)

// receiverQueue is how many kept frames wait for a check before the
// receiver drops more.
const receiverQueue = 256

// readErrorPause is how long a receiver waits after a failed read before
// it reads again: a port whose link went down (the link-event check)
// fails its reads until the link is back.
const readErrorPause = 10 * time.Millisecond

// receiver reads a port in its own goroutine and queues copies of the
// frames keep accepts, so that a check can wait for one with a deadline
// without closing the port.
type receiver struct {
	// frames carries the kept frames, copied.
	frames chan []byte
	// done is closed when the reading goroutine has returned.
	done chan struct{}
	// mu guards err.
	mu sync.Mutex
	// err is the last read error other than ErrClosed.
	err error
}

// receive starts reading p until p is closed.
func receive(p platform.Port, keep func(f []byte) bool) *receiver {
	r := &receiver{frames: make(chan []byte, receiverQueue), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		b := platform.Batch{Frames: make([][]byte, p.BatchSize())}
		for {
			n, err := p.ReadBatch(b)
			if errors.Is(err, platform.ErrClosed) {
				return
			}
			if err != nil {
				r.mu.Lock()
				r.err = err
				r.mu.Unlock()
				time.Sleep(readErrorPause)
				continue
			}
			for _, f := range b.Frames[:n] {
				if !keep(f) {
					continue
				}
				select {
				case r.frames <- slices.Clone(f):
				default:
				}
			}
		}
	}()
	return r
}

// lastErr returns the last read error, for a check's message.
func (r *receiver) lastErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// await returns the first queued frame match accepts, dropping the
// others, or false once until has passed or ctx is done.
func (r *receiver) await(ctx context.Context, until time.Time, match func(f []byte) bool) ([]byte, bool) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	for {
		select {
		case f := <-r.frames:
			if match(f) {
				return f, true
			}
		case <-t.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}
