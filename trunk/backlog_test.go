package trunk

import (
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// ringPort is a memport end with a TX ring of its own that the test
// drains by hand: WriteBatch takes as many frames as the ring has free
// slots and drops the rest; TxRoom says how many it has. free is what
// the link "sent" since (Drain).
type ringPort struct {
	*memport.Port
	// free is the ring's free slots. Atomic.
	free atomic.Int64
	// refused counts frames WriteBatch dropped for a full ring. Atomic.
	refused atomic.Uint64
}

func (p *ringPort) TxRoom(max int) int { return int(min(int64(max), p.free.Load())) }

func (p *ringPort) WriteBatch(b platform.Batch) (int, error) {
	k := int(min(int64(b.Len()), max(p.free.Load(), 0)))
	n, err := p.Port.WriteBatch(b.Slice(0, k))
	p.free.Add(-int64(n))
	p.refused.Add(uint64(b.Len() - n))
	return n, err
}

// Drain gives the ring n free slots more, as the link sending n frames.
func (p *ringPort) Drain(n int) { p.free.Add(int64(n)) }

// backlogFixture is a loadbalance trunk with one member, a ringPort of
// slots free slots, and its backlog of limit bytes and delay.
type backlogFixture struct {
	t    *testing.T
	clk  *clock.Fake
	tr   *Trunk
	ring *ringPort
	far  *memport.Port
}

func newBacklogFixture(t *testing.T, slots, limit int, delay time.Duration) *backlogFixture {
	t.Helper()
	near, far := memport.Pair("eth0", nearMAC(0), "peer0", farMAC(0))
	ring := &ringPort{Port: near}
	ring.free.Store(int64(slots))
	return newBacklogFixtureOn(t, ring, ring, far, limit, delay)
}

// newBacklogFixtureOn is newBacklogFixture with member p, built on ring,
// whose peer is far.
func newBacklogFixtureOn(t *testing.T, p platform.Port, ring *ringPort, far *memport.Port, limit int, delay time.Duration) *backlogFixture {
	t.Helper()
	return newBacklogFixtureOpts(t, p, ring, far, Options{TxQueueBytes: limit, TxQueueDelay: delay})
}

// newBacklogFixtureOpts is newBacklogFixtureOn with the backlog's
// options in opts.
func newBacklogFixtureOpts(t *testing.T, p platform.Port, ring *ringPort, far *memport.Port, opts Options) *backlogFixture {
	t.Helper()
	fx := &backlogFixture{t: t, clk: clock.NewFake(), ring: ring, far: far}
	var err error
	opts.Protocol, opts.Seed, opts.Clock, opts.TickInterval, opts.Logger = builtin(t, ProtoLoadBalance), 7, fx.clk, -1, quiet
	opts.MAC = net.HardwareAddr{0x02, 0x77, 0, 0, 0, 1}
	fx.tr, err = New("trunk0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.tr.Close() })
	if err := fx.tr.AddPort(p, PortConfig{}); err != nil {
		t.Fatal(err)
	}
	return fx
}

// write sends frames with seq from..to-1 through the trunk, and returns
// WriteBatch's count.
func (fx *backlogFixture) write(from, to uint32) int {
	var frames [][]byte
	for s := from; s < to; s++ {
		frames = append(frames, udp4(1, s))
	}
	n, err := fx.tr.WriteBatch(platform.Batch{Frames: frames})
	if err != nil {
		fx.t.Fatalf("WriteBatch: %v", err)
	}
	return n
}

// arrived returns the seqs the far end has received so far, in order.
func (fx *backlogFixture) arrived() []uint32 {
	var out []uint32
	buf := make([][]byte, 64)
	for {
		n, _ := fx.far.TryReadBatch(buf)
		if n == 0 {
			return out
		}
		for _, f := range buf[:n] {
			out = append(out, seqOf(f))
		}
	}
}

// await waits until n frames have arrived at the far end, and returns
// their seqs in order.
func (fx *backlogFixture) await(n int) []uint32 {
	var got []uint32
	waitFor(fx.t, fmt.Sprintf("%d frames on the wire", n), func() bool {
		got = append(got, fx.arrived()...)
		return len(got) >= n
	})
	return got
}

// queue returns the member's backlog as trunk show sees it.
func (fx *backlogFixture) queue() TxQueueInfo { return fx.tr.Ports()[0].TxQueue }

func seqs(from, to uint32) []uint32 {
	var out []uint32
	for s := from; s < to; s++ {
		out = append(out, s)
	}
	return out
}

// frameLen is the length of udp4's frames.
var frameLen = uint64(len(udp4(1, 0)))

// TestBacklogKeepsWhatTheRingHasNoRoomFor checks that frames a full ring
// has no room for wait in the backlog instead of being dropped, leave in
// order once the ring has room again (the flusher drains them without
// new frames to push them), and that new frames queue behind them.
func TestBacklogKeepsWhatTheRingHasNoRoomFor(t *testing.T) {
	fx := newBacklogFixture(t, 4, 1<<20, time.Second)
	if n := fx.write(0, 10); n != 10 {
		t.Fatalf("10 frames into a ring of 4 free slots: WriteBatch = %d, want 10 (4 sent, 6 queued)", n)
	}
	if got := fx.arrived(); !slices.Equal(got, seqs(0, 4)) {
		t.Fatalf("ring of 4 slots: expected frames 0-3 on the wire, got %v", got)
	}
	if q := fx.queue(); q.Bytes != 6*frameLen || q.Overflow != 0 || q.Stale != 0 || q.Limit != 1<<20 {
		t.Fatalf("expected 6 frames (%d bytes) in a 1 MiB backlog, no drops; got %+v", 6*frameLen, q)
	}
	// New frames while the ring is still full queue behind the others.
	fx.write(10, 12)
	fx.ring.Drain(100)
	if got := fx.await(8); !slices.Equal(got, seqs(4, 12)) {
		t.Errorf("after the ring drained: expected frames 4-11 in order, got %v", got)
	}
	if q, st := fx.queue(), fx.tr.Stats(); q.Bytes != 0 || st.TxPackets != 12 || fx.ring.refused.Load() != 0 || st.TxMemberDropped != 0 {
		t.Errorf("expected an empty backlog, 12 frames sent, none refused by the ring; got %+v, stats %+v, %d refused", q, st, fx.ring.refused.Load())
	}
}

// bufPort is a ringPort that carries offloads and sends through a
// socket send buffer of buf bytes, as an AF_PACKET port sends its
// super-frames: the kernel takes a frame while the bytes in flight are
// below buf and refuses it otherwise; TxFit says how many of a batch it
// takes now, by the same rule.
type bufPort struct {
	*ringPort
	// buf is the send buffer's size; immutable.
	buf int64
	// inFlight is what the send buffer holds. Atomic.
	inFlight atomic.Int64
}

func (p *bufPort) Offloads() bool { return true }

func (p *bufPort) TxFit(frames [][]byte) int {
	n := p.inFlight.Load()
	for k, f := range frames {
		if n >= p.buf {
			return k
		}
		n += int64(len(f))
	}
	return len(frames)
}

func (p *bufPort) WriteBatch(b platform.Batch) (int, error) {
	k := p.TxFit(b.Frames)
	for _, f := range b.Frames[:k] {
		p.inFlight.Add(int64(len(f)))
	}
	n, err := p.Port.WriteBatch(platform.Batch{Frames: b.Frames[:k]})
	p.refused.Add(uint64(b.Len() - n))
	return n, err
}

// TestBacklogKeepsWhatTheSendBufferHasNoRoomFor checks that, with
// TxQueueSuperFrames, a member whose frames bypass its ring
// (super-frames, which go with sendmmsg) has the frames its send buffer
// has no room for kept in the backlog instead of refused, and sent in
// order once the buffer drains; and that without it (the default) the
// port refuses them, as before.
func TestBacklogKeepsWhatTheSendBufferHasNoRoomFor(t *testing.T) {
	newBufFixture := func(t *testing.T, super bool) (*backlogFixture, *bufPort) {
		near, far := memport.Pair("eth0", nearMAC(0), "peer0", farMAC(0))
		p := &bufPort{ringPort: &ringPort{Port: near}, buf: int64(2*frameLen + frameLen/2)}
		p.free.Store(1000) // the ring has room: only the send buffer bounds
		return newBacklogFixtureOpts(t, p, p.ringPort, far, Options{TxQueueBytes: 1 << 20, TxQueueDelay: time.Second, TxQueueSuperFrames: super}), p
	}
	t.Run("default: refused", func(t *testing.T) {
		fx, p := newBufFixture(t, false)
		if n := fx.write(0, 10); n != 3 || p.refused.Load() != 7 || fx.queue().Bytes != 0 {
			t.Fatalf("10 frames into a send buffer of 2.5 frames, without TxQueueSuperFrames: WriteBatch = %d, %d refused, backlog %+v; want 3 sent, 7 refused, none queued", n, p.refused.Load(), fx.queue())
		}
	})
	fx, p := newBufFixture(t, true)
	if n := fx.write(0, 10); n != 10 {
		t.Fatalf("10 frames into a send buffer of 2.5 frames: WriteBatch = %d, want 10 (3 sent, 7 queued)", n)
	}
	if got := fx.arrived(); !slices.Equal(got, seqs(0, 3)) {
		t.Fatalf("send buffer of 2.5 frames, empty: expected frames 0-2 on the wire, got %v", got)
	}
	if q := fx.queue(); q.Bytes != 7*frameLen || q.Overflow != 0 {
		t.Fatalf("expected 7 frames (%d bytes) in the backlog, no overflow; got %+v", 7*frameLen, q)
	}
	var got []uint32
	waitFor(t, "frames 3-9 on the wire", func() bool {
		p.inFlight.Store(0) // the link sent what the buffer held
		got = append(got, fx.arrived()...)
		return len(got) >= 7
	})
	if !slices.Equal(got, seqs(3, 10)) {
		t.Errorf("as the send buffer drained: expected frames 3-9 in order, got %v", got)
	}
	if st := fx.tr.Stats(); p.refused.Load() != 0 || st.TxMemberDropped != 0 || st.TxPackets != 10 {
		t.Errorf("expected 10 frames sent, none refused by the send buffer; got %d refused, stats %+v", p.refused.Load(), st)
	}
}

// TestBacklogBounds checks the backlog's two bounds and their accounting
// in Stats, Counters and trunk show's TxQueue: frames past the byte limit
// are dropped as overflow at once; frames that waited past the delay
// limit (on the fake clock) are dropped as stale, never sent.
func TestBacklogBounds(t *testing.T) {
	t.Run("bytes", func(t *testing.T) {
		fx := newBacklogFixture(t, 0, int(3*frameLen), time.Second)
		if n := fx.write(0, 5); n != 3 {
			t.Fatalf("5 frames into a full ring and a backlog of 3 frames' bytes: WriteBatch = %d, want 3", n)
		}
		q, st := fx.queue(), fx.tr.Stats()
		if q.Bytes != 3*frameLen || q.Overflow != 2 || st.TxQueueOverflow != 2 || fx.tr.Counters().TxDropped != 2 {
			t.Errorf("expected 3 frames queued and 2 overflows (trunk show, Stats, Counters); got %+v, %+v, TxDropped %d", q, st, fx.tr.Counters().TxDropped)
		}
		fx.ring.Drain(10)
		if got := fx.await(3); !slices.Equal(got, seqs(0, 3)) {
			t.Errorf("expected the first 3 frames, got %v", got)
		}
	})
	t.Run("delay", func(t *testing.T) {
		fx := newBacklogFixture(t, 0, 1<<20, 5*time.Millisecond)
		fx.write(0, 2)
		fx.clk.Advance(5*time.Millisecond + time.Nanosecond)
		waitFor(t, "2 stale drops", func() bool { return fx.queue().Stale == 2 })
		if q, st := fx.queue(), fx.tr.Stats(); q.Bytes != 0 || st.TxQueueStale != 2 || fx.tr.Counters().TxDropped != 2 {
			t.Errorf("expected an empty backlog and 2 stale drops (Stats, Counters); got %+v, %+v, TxDropped %d", q, st, fx.tr.Counters().TxDropped)
		}
		fx.ring.Drain(10)
		fx.write(2, 3)
		if got := fx.arrived(); !slices.Equal(got, seqs(2, 3)) {
			t.Errorf("after the stale drops, with room: expected only frame 2 on the wire, got %v", got)
		}
	})
}

// TestBacklogCoDel checks that a backlog whose head stays above
// TxQueueTarget's sojourn time for TxQueueInterval (on the fake clock, a
// ring that takes nothing) starts dropping at its head, counted as
// stale, well before the delay limit; and that with the law off
// (TxQueueTarget negative) the same backlog keeps its frames.
func TestBacklogCoDel(t *testing.T) {
	for _, c := range []struct {
		name   string
		target time.Duration
	}{{"default target", 0}, {"law off", -1}} {
		t.Run(c.name, func(t *testing.T) {
			near, far := memport.Pair("eth0", nearMAC(0), "peer0", farMAC(0))
			ring := &ringPort{Port: near}
			fx := newBacklogFixtureOpts(t, ring, ring, far, Options{TxQueueBytes: 1 << 20, TxQueueDelay: time.Hour, TxQueueTarget: c.target})
			fx.write(0, 10)
			fx.clk.Advance(DefaultTxQueueTarget + time.Millisecond)
			fx.write(10, 11) // offers the head: an interval above the target starts
			fx.clk.Advance(TxQueueInterval)
			if c.target < 0 {
				fx.write(11, 12)
				if q := fx.queue(); q.Stale != 0 || q.Bytes != 12*frameLen {
					t.Fatalf("law off, head %v old: expected 12 frames kept, got %+v", TxQueueInterval, q)
				}
				return
			}
			waitFor(t, "a CoDel drop at the head", func() bool { return fx.queue().Stale >= 1 })
			if st := fx.tr.Stats(); st.TxQueueStale < 1 || st.TxQueueOverflow != 0 {
				t.Errorf("expected the drop counted in TxQueueStale, none in overflow; got %+v", st)
			}
			fx.ring.Drain(100)
			if got := fx.await(int(11 - fx.queue().Stale)); got[0] == 0 {
				t.Errorf("expected frame 0 (the head) dropped, got %v on the wire", got)
			}
		})
	}
}

// TestNoBacklogWithoutRoom checks that a member whose port cannot say
// what its ring takes (memport), or a trunk with backlogs off, has none:
// TxQueue's Limit is 0.
func TestNoBacklogWithoutRoom(t *testing.T) {
	fx := newFixture(t, ProtoLoadBalance, PortConfig{})
	if q := fx.tr.Ports()[0].TxQueue; q != (TxQueueInfo{}) {
		t.Errorf("memport member: expected no backlog, got %+v", q)
	}
	tr, err := New("trunk1", Options{TickInterval: -1, Logger: quiet, TxQueueBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	near, _ := memport.Pair("eth0", nearMAC(0), "peer0", farMAC(0))
	if err := tr.AddPort(&ringPort{Port: near}, PortConfig{}); err != nil {
		t.Fatal(err)
	}
	if q := tr.Ports()[0].TxQueue; q.Limit != 0 {
		t.Errorf("TxQueueBytes -1: expected no backlog, got %+v", q)
	}
}

// TestBacklogZeroAllocs checks that sending through a backlog, queueing
// and draining it, allocates nothing per frame.
func TestBacklogZeroAllocs(t *testing.T) {
	fx := newBacklogFixture(t, 0, 1<<20, time.Hour)
	frames := make([][]byte, 64)
	for i := range frames {
		frames[i] = udp4(1, uint32(i))
	}
	buf := make([][]byte, 64)
	b := platform.Batch{Frames: frames}
	round := func() {
		fx.tr.WriteBatch(b) // all queued: the ring is full
		fx.ring.Drain(64)
		fx.tr.WriteBatch(b.Slice(0, 1)) // the backlog first, then this one queued
		fx.ring.Drain(1)
		for n, _ := fx.far.TryReadBatch(buf); n > 0; n, _ = fx.far.TryReadBatch(buf) {
		}
	}
	round()
	if a := testing.AllocsPerRun(50, round); a != 0 {
		t.Errorf("WriteBatch through a backlog: expected 0 allocations, got %v", a)
	}
}
