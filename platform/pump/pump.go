// Package pump joins two ports back to back: what one reads the other
// writes, one goroutine each way. The daemon uses it between a trunk and
// the TAP that gives the trunk to the host.
//
// Frames cross with their offloads: each direction reads with the offload
// metadata its source carries and writes through a platform.Egress, so a
// port that carries no offloads (a TAP without IFF_VNET_HDR) gets partial
// checksums finished and super-frames cut into segments in software, and
// one that carries them gets them as they are. A source with several
// receive queues (platform.MultiQueuePort: a multi-queue TAP) is read by
// one goroutine per queue, each with its own batch and Egress. Nothing
// allocates per batch.
package pump

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform"
)

// Pump moves frames between two ports until Stop.
type Pump struct {
	// a and b are the ports; the pump closes both on Stop.
	a, b platform.Port
	// log receives a line when reads start failing and when they
	// recover, and the first frame whose offload could not be done.
	log *slog.Logger
	// done is closed by Stop; it ends a wait between failed reads.
	done chan struct{}
	// wg counts the copying goroutines: one per receive queue each way.
	wg sync.WaitGroup
}

// Bounds of the wait between two reads that failed with an error other
// than ErrClosed.
const (
	retryMin = time.Millisecond
	retryMax = time.Second
)

// backoff is a bounded exponential delay: retryMin, doubling with each
// call up to retryMax. The zero value starts at retryMin.
type backoff struct {
	// d is the delay next returns; 0 means retryMin.
	d time.Duration
}

// next returns the delay to wait now and doubles the following one.
func (b *backoff) next() time.Duration {
	d := max(b.d, retryMin)
	b.d = min(2*d, retryMax)
	return d
}

// reset makes the next delay retryMin again.
func (b *backoff) reset() { b.d = 0 }

// New starts moving frames from a to b and from b to a. The log names
// each end by its label (a trunk and its TAP share a name).
func New(a, b platform.Port, labels [2]string, log *slog.Logger) *Pump {
	p := &Pump{a: a, b: b, log: log, done: make(chan struct{})}
	p.start(a, b, labels[0], labels[1])
	p.start(b, a, labels[1], labels[0])
	return p
}

// start starts copying from src to dst: one goroutine per receive queue
// of src, each reading its queue alone, or one reading src.
func (p *Pump) start(src, dst platform.Port, from, to string) {
	mq, ok := src.(platform.MultiQueuePort)
	if !ok || mq.RxQueues() <= 1 {
		p.wg.Add(1)
		supervise.Go("pump "+from+" to "+to, func() { p.copy(src, dst, src.ReadBatch, from, to) })
		return
	}
	for q := range mq.RxQueues() {
		p.wg.Add(1)
		supervise.Go(fmt.Sprintf("pump %s queue %d to %s", from, q, to), func() {
			p.copy(src, dst, func(b platform.Batch) (int, error) { return mq.ReadQueue(q, b) }, from, to)
		})
	}
}

// copy reads batches with read (src's, or one of its queues') and writes
// them to dst until either closes or the pump stops. A read that fails
// otherwise is retried after a backoff, reset by the next good read: a
// TAP whose host side hung up fails every read at once, and retrying at
// once would spin on a core. The first failure of a run is logged, not
// every retry.
func (p *Pump) copy(src, dst platform.Port, read func(platform.Batch) (int, error), from, to string) {
	defer p.wg.Done()
	buf := platform.NewBatch(max(src.BatchSize(), 1))
	if !src.Offloads() {
		buf.Offs = nil
	}
	var eg platform.Egress
	var wait backoff
	failed := 0 // reads failed in a row
	offloadLogged := false
	for {
		n, err := read(buf)
		if n > 0 {
			st := eg.Send(dst, buf.Slice(0, n))
			if st.OffloadDropped > 0 && !offloadLogged {
				offloadLogged = true
				p.log.Warn("pump: frame dropped: its offload cannot be done in software (logged once)",
					"from", from, "to", to, "offload", st.ErrOffload, "err", st.Err)
			}
		}
		switch {
		case err == nil:
			if failed > 0 {
				p.log.Info("pump: reads work again", "from", from, "failed", failed)
				failed = 0
				wait.reset()
			}
		case errors.Is(err, platform.ErrClosed):
			return
		default:
			if failed == 0 {
				p.log.Warn("pump: read failed, retrying with backoff", "from", from, "err", err)
			}
			failed++
			if !p.sleep(wait.next()) {
				return
			}
		}
	}
}

// sleep waits d, or less if the pump stops; it reports whether the pump
// still runs. The wait is on a real timer: clock.Clock only tells the
// time.
func (p *Pump) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.done:
		return false
	}
}

// Stop ends both goroutines and closes both ports.
func (p *Pump) Stop() {
	close(p.done)
	p.a.Close()
	p.b.Close()
	p.wg.Wait()
}
