package trunk

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// TestBridgeReadsEveryQueue puts a trunk with two receive queues and two
// members inside a bridge and sends traffic into both members: the bridge
// must read every queue on its own worker (each queue's counter advances
// by exactly the frames its member received), not one ReadBatch for all.
func TestBridgeReadsEveryQueue(t *testing.T) {
	fx := newFixtureOpts(t, Options{Protocol: builtin(t, ProtoLoadBalance), RxQueues: 2}, PortConfig{}, PortConfig{})
	if got := fx.tr.RxQueues(); got != 2 {
		t.Fatalf("RxQueues() = %d, want 2", got)
	}
	br := bridge.New("br0", bridge.DefaultOptions())
	t.Cleanup(func() { br.Close() })
	h := fx.tr.Handle()
	if err := br.AddPort(h, bridge.DefaultPortFlags()); err != nil {
		t.Fatal(err)
	}
	host, hostFar := memport.Pair("host0", net.HardwareAddr{0x02, 0xcc, 0, 0, 0, 1}, "hostfar", net.HardwareAddr{0x02, 0xcc, 0, 0, 0, 2})
	t.Cleanup(func() { hostFar.Close() })
	if err := br.AddPort(host, bridge.DefaultPortFlags()); err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	perMember := []int{0, 0}
	for r := range rounds {
		for i := range 2 {
			fx.sendFar(i, udp4(uint16(100*i+r), uint32(r)), udp4(uint16(100*i+r), uint32(r+1000)))
			perMember[i] += 2
		}
	}
	want := perMember[0] + perMember[1]
	got := 0
	buf := make([][]byte, 64)
	waitFor(t, fmt.Sprintf("%d frames flooded to host0", want), func() bool {
		n, _ := hostFar.TryReadBatch(buf)
		got += n
		return got >= want
	})
	q := fx.tr.RxQueuePackets()
	if !slices.Equal(q, []uint64{uint64(perMember[0]), uint64(perMember[1])}) {
		t.Fatalf("frames read per queue = %v, want %v (member eth0 on queue 0, eth1 on queue 1)", q, perMember)
	}
	if err := br.RemovePort(h.Name()); err != nil {
		t.Fatal(err)
	}
	// The trunk outlives the bridge: a plain consumer reads both members.
	fx.consume()
	fx.sendFar(0, udp4(1, 1))
	fx.sendFar(1, udp4(2, 2))
	waitFor(t, "both frames read by ReadBatch after the bridge let go", func() bool { return len(fx.rx) == 2 })
}

// TestReadQueueRange checks that RxQueues defaults to one queue at least
// and that ReadQueue refuses a queue out of range, naming it.
func TestReadQueueRange(t *testing.T) {
	fx := newFixtureOpts(t, Options{RxQueues: 3})
	for _, q := range []int{-1, 3} {
		if _, err := fx.tr.ReadQueue(q, platform.NewBatch(4)); err == nil {
			t.Errorf("ReadQueue(%d) of 3 queues: no error", q)
		}
	}
	dflt, err := New("trunk1", Options{TickInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer dflt.Close()
	if dflt.RxQueues() < 1 {
		t.Errorf("default RxQueues() = %d, want at least 1", dflt.RxQueues())
	}
}

// TestQueueOfLateMember adds a member while its queue's reader is
// blocked: the reader gets the member's frames, and a member whose ID
// maps to another queue does not reach it.
func TestQueueOfLateMember(t *testing.T) {
	fx := newFixtureOpts(t, Options{Protocol: builtin(t, ProtoBroadcast), RxQueues: 2}, PortConfig{})
	type read struct {
		seq uint32
		err error
	}
	got := make(chan read, 1)
	go func() {
		buf := make([][]byte, 8)
		n, err := fx.tr.ReadQueue(1, platform.Batch{Frames: buf})
		if n != 1 {
			got <- read{err: fmt.Errorf("ReadQueue(1) = %d frames, %v", n, err)}
			return
		}
		got <- read{seq: seqOf(buf[0]), err: err}
	}()
	fx.sendFar(0, udp4(1, 1)) // eth0 is ID 0: queue 0, not 1
	fx.add(PortConfig{})
	fx.sendFar(1, udp4(1, 2))
	r := <-got
	if r.err != nil || r.seq != 2 {
		t.Fatalf("queue 1 read seq %d, %v; want the late member's frame, seq 2", r.seq, r.err)
	}
	buf := make([][]byte, 8)
	if n, err := fx.tr.ReadQueue(0, platform.Batch{Frames: buf}); err != nil || n != 1 || seqOf(buf[0]) != 1 {
		t.Fatalf("queue 0: ReadQueue = %d, %v; want eth0's frame, seq 1", n, err)
	}
}

// TestCloseWakesEveryQueue blocks a reader on every queue, closes their
// Handle (each returns ErrClosed, the trunk keeps running and a new
// Handle's queue reads what its member receives), then blocks them again
// and closes the trunk.
func TestCloseWakesEveryQueue(t *testing.T) {
	fx := newFixtureOpts(t, Options{Protocol: builtin(t, ProtoBroadcast), RxQueues: 3}, PortConfig{}, PortConfig{})
	blockAll := func(p platform.MultiQueuePort) chan error {
		errs := make(chan error, p.RxQueues())
		for q := range p.RxQueues() {
			go func() {
				_, err := p.ReadQueue(q, platform.NewBatch(8))
				errs <- err
			}()
		}
		return errs
	}
	wakes := func(what string, errs chan error, n int) {
		t.Helper()
		for range n {
			select {
			case err := <-errs:
				if !errors.Is(err, platform.ErrClosed) {
					t.Fatalf("%s: ReadQueue returned %v, want ErrClosed", what, err)
				}
			case <-time.After(waitTimeout):
				t.Fatalf("%s: a blocked ReadQueue still blocked after %v", what, waitTimeout)
			}
		}
	}
	h := fx.tr.Handle()
	errs := blockAll(h)
	time.Sleep(10 * time.Millisecond) // lets the readers block; a reader not yet blocked returns ErrClosed all the same
	h.Close()
	wakes("Handle.Close", errs, 3)

	h2 := fx.tr.Handle()
	fx.sendFar(1, udp4(1, 7))
	buf := make([][]byte, 8)
	if n, err := h2.ReadQueue(1, platform.Batch{Frames: buf}); err != nil || n != 1 || seqOf(buf[0]) != 7 {
		t.Fatalf("new Handle: ReadQueue(1) = %d, %v; want eth1's frame, seq 7", n, err)
	}
	errs = blockAll(h2)
	time.Sleep(10 * time.Millisecond)
	if err := fx.tr.Close(); err != nil {
		t.Fatal(err)
	}
	wakes("Trunk.Close", errs, 3)
}

// countingPort is a memport end that counts how it is read.
type countingPort struct {
	*memport.Port
	// waits counts ReadBatch calls, ready ReadReady calls. Atomic.
	waits, ready atomic.Int64
}

func (p *countingPort) ReadBatch(b platform.Batch) (int, error) {
	p.waits.Add(1)
	return p.Port.ReadBatch(b)
}

func (p *countingPort) ReadReady(b platform.Batch) (int, error) {
	p.ready.Add(1)
	return p.Port.ReadReady(b)
}

// TestConsumerReadsItsMemberDirectly checks the hand-over of a member
// under load: once a consumer has a member's batch, its next call reads
// that member itself (ReadReady, on the consumer's goroutine: no channel,
// no wait for the member's reader), and only when the member has nothing
// ready is the member given back to its reader, which waits for frames.
func TestConsumerReadsItsMemberDirectly(t *testing.T) {
	fx := newFixtureOpts(t, Options{Protocol: builtin(t, ProtoBroadcast), RxQueues: 1})
	near, far := memport.Pair("eth0", nearMAC(0), "peer0", farMAC(0))
	p := &countingPort{Port: near}
	fx.near, fx.far = append(fx.near, near), append(fx.far, far)
	if err := fx.tr.AddPort(p, PortConfig{}); err != nil {
		t.Fatal(err)
	}
	buf := make([][]byte, 16)
	read := func(want ...uint32) {
		t.Helper()
		n, err := fx.tr.ReadQueue(0, platform.Batch{Frames: buf})
		var got []uint32
		for _, f := range buf[:n] {
			got = append(got, seqOf(f))
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("ReadQueue = %v, %v; want %v", got, err, want)
		}
	}
	fx.sendFar(0, udp4(1, 1))
	read(1) // by the member's reader, through its queue
	fx.sendFar(0, udp4(1, 2), udp4(1, 3), slowFrame(farMAC(0)), udp4(1, 4))
	read(2, 3, 4) // by the consumer itself; the LACPDU went to the protocol
	if w, r := p.waits.Load(), p.ready.Load(); w != 1 || r != 1 {
		t.Errorf("after the second read: %d ReadBatch, %d ReadReady calls; want 1, 1 (the consumer read the member)", w, r)
	}
	if s := fx.tr.Stats(); s.RxControl != 1 || s.RxPackets != 4 {
		t.Errorf("RxControl, RxPackets = %d, %d; want 1, 4", s.RxControl, s.RxPackets)
	}
	// Nothing ready: the member goes back to its reader, which waits.
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := fx.tr.ReadQueue(0, platform.Batch{Frames: buf})
		done <- result{n, err}
	}()
	waitFor(t, "the member's reader to wait for frames again", func() bool { return p.waits.Load() == 2 })
	fx.sendFar(0, udp4(1, 5))
	if r := <-done; r.err != nil || r.n != 1 || seqOf(buf[0]) != 5 {
		t.Fatalf("ReadQueue with nothing ready = %d, %v; want frame 5 once it came", r.n, r.err)
	}
	if r := p.ready.Load(); r != 2 {
		t.Errorf("%d ReadReady calls, want 2 (the one that found nothing)", r)
	}
}

// TestReadQueueAllocs checks that a queue's reader allocates nothing per
// batch once warm: the member read on the consumer's goroutine, a
// slow-protocol frame sorted out inline.
func TestReadQueueAllocs(t *testing.T) {
	fx := newFixtureOpts(t, Options{Protocol: builtin(t, ProtoLoadBalance), RxQueues: 2}, PortConfig{}, PortConfig{})
	in := [][]byte{udp4(1, 1), udp4(2, 2), slowFrame(farMAC(1)), udp4(3, 3)}
	frames := platform.NewBatch(fx.tr.BatchSize())
	got := testing.AllocsPerRun(200, func() {
		_, _ = fx.far[1].WriteBatch(platform.Batch{Frames: in})
		if n, err := fx.tr.ReadQueue(1, frames); err != nil || n != 3 {
			t.Fatalf("ReadQueue(1) = %d, %v; want 3, nil", n, err)
		}
	})
	if got != 0 {
		t.Errorf("%v allocations per write+ReadQueue round, want 0", got)
	}
}

// TestSharedQueueIsFair gives one queue two members (more members than
// queues) and keeps one of them always busy: the other's frames must
// still come out of the queue, as a consumer reading on the busy member
// first takes a batch another member offers.
func TestSharedQueueIsFair(t *testing.T) {
	fx := newFixtureOpts(t, Options{Protocol: builtin(t, ProtoBroadcast), RxQueues: 2}, PortConfig{}, PortConfig{}, PortConfig{})
	// eth0 and eth2 (IDs 0 and 2) share queue 0.
	var stop atomic.Bool
	busy := make(chan struct{})
	go func() {
		defer close(busy)
		for seq := uint32(0); !stop.Load(); seq++ {
			if fx.far[0].Pending() < 32 {
				_, _ = fx.far[0].WriteBatch(platform.Batch{Frames: [][]byte{udp4(1, seq%1000)}})
			} else {
				time.Sleep(10 * time.Microsecond)
			}
		}
	}()
	defer func() {
		stop.Store(true)
		<-busy
	}()
	buf := make([][]byte, 4)
	if n, err := fx.tr.ReadQueue(0, platform.Batch{Frames: buf}); err != nil || n == 0 {
		t.Fatalf("ReadQueue(0) = %d, %v; want eth0's frames", n, err)
	}
	fx.sendFar(2, udp4(2, 4242))
	waitFor(t, "eth2's frame out of the queue eth0 keeps busy", func() bool {
		n, err := fx.tr.ReadQueue(0, platform.Batch{Frames: buf})
		if err != nil {
			t.Fatalf("ReadQueue(0): %v", err)
		}
		for _, f := range buf[:n] {
			if seqOf(f) == 4242 {
				return true
			}
		}
		return false
	})
}
