package bridge

import (
	"sync/atomic"
	"testing"

	"github.com/swctl/swctl/platform"
)

// queuedPort is a testPort with several receive queues (MultiQueuePort):
// ReadQueue(q) returns the batches fed to queue q.
type queuedPort struct {
	*testPort
	// queues carry the batches of each queue.
	queues []chan [][]byte
	// reads counts the batches each queue's reader got. Atomic.
	reads []atomic.Int64
}

func newQueuedPort(name string, n int) *queuedPort {
	p := &queuedPort{testPort: newTestPort(name, true), queues: make([]chan [][]byte, n), reads: make([]atomic.Int64, n)}
	for i := range p.queues {
		p.queues[i] = make(chan [][]byte, 16)
	}
	return p
}

func (p *queuedPort) RxQueues() int { return len(p.queues) }

var _ platform.MultiQueuePort = (*queuedPort)(nil)

func (p *queuedPort) ReadQueue(q int, b platform.Batch) (int, error) {
	return platform.ReadPlain(b, func(frames [][]byte) (int, error) {
		select {
		case <-p.closed:
			return 0, platform.ErrClosed
		case in := <-p.queues[q]:
			p.reads[q].Add(1)
			return copy(frames, in), nil
		}
	})
}

// TestMultiQueueReaders checks that a MultiQueuePort gets one reader per
// queue, that frames from every queue are forwarded, and that RemovePort
// waits for all its readers.
func TestMultiQueueReaders(t *testing.T) {
	fx := newFixture(t, "b")
	mq := newQueuedPort("a", 2)
	if err := fx.b.AddPort(mq, DefaultPortFlags()); err != nil {
		t.Fatal(err)
	}
	const perQueue = 50
	for i := range perQueue {
		mq.queues[0] <- [][]byte{ip4(mac(100), mac(1+i%4))}
		mq.queues[1] <- [][]byte{ip4(mac(100), mac(11+i%4))}
	}
	var got int
	eventually(t, "every frame fed to both queues forwarded to b", func() bool {
		got += len(fx.ports["b"].take())
		return got == 2*perQueue
	})
	if mq.reads[0].Load() != perQueue || mq.reads[1].Load() != perQueue {
		t.Fatalf("reads per queue %d, %d; want %d each", mq.reads[0].Load(), mq.reads[1].Load(), perQueue)
	}
	if err := fx.b.RemovePort("a"); err != nil {
		t.Fatal(err)
	}
	if !mq.isClosed() {
		t.Fatal("RemovePort returned with the port open")
	}
}
