package gen

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/platform"
)

// dupWindow is how many sequence numbers behind the highest one seen the
// Receiver still tells a duplicate from a late frame: 64 Ki frames, an
// 8 KiB bitmap.
const dupWindow = 1 << 16

// noRun is the run ID of a Receiver's tally until Begin when its stream
// names no run: wider than a frame's run ID, it matches no frame.
const noRun = 1 << 32

// RecvStats counts one run's frames at the receiving port.
type RecvStats struct {
	// Received is the number of distinct frames of the run that arrived.
	Received uint64 `json:"received"`
	// Bytes is the length of those frames, without FCS.
	Bytes uint64 `json:"bytes"`
	// Duplicates counts frames that arrived again after their first copy.
	Duplicates uint64 `json:"duplicates"`
	// Reordered counts frames that arrived after a frame of the same flow
	// with a higher sequence number (RFC 4737's reordered packets).
	Reordered uint64 `json:"reordered"`
	// Late counts frames more than 65536 sequence numbers behind the
	// highest one seen: counted as received, but a duplicate among them
	// goes unnoticed.
	Late uint64 `json:"late"`
	// Ignored counts frames on the port that were not the run's own.
	Ignored uint64 `json:"ignored"`
	// Latency is measured from the frames' send time stamps; nil when no
	// frame was stamped.
	Latency *Latency `json:"latency,omitempty"`
}

// Latency summarises one-way delays, sender's clock to receiver's clock.
type Latency struct {
	// Samples is the number of frames measured.
	Samples uint64 `json:"samples"`
	// Min is the shortest delay.
	Min time.Duration `json:"min_ns"`
	// Avg is the mean delay.
	Avg time.Duration `json:"avg_ns"`
	// Max is the longest delay.
	Max time.Duration `json:"max_ns"`
}

// tally is one run's state in a Receiver. received may be read by any
// goroutine, the counts under mu; the other fields belong to the
// goroutine in Receiver.Run.
type tally struct {
	// runID is the run whose frames this tally counts, or noRun.
	runID uint64
	// received counts distinct frames of the run; it is added to under mu.
	received atomic.Uint64

	// mu guards the counts, from bytes to latMax. Receiver.Run holds it
	// while it counts a batch.
	mu sync.Mutex
	// bytes counts the bytes of the distinct frames.
	bytes uint64
	// duplicates counts second and later copies.
	duplicates uint64
	// reordered counts frames behind their flow's highest sequence number.
	reordered uint64
	// late counts frames too far behind to check for duplicates.
	late uint64
	// ignored counts the frames on the port, while this tally was the
	// current one, that were not the run's.
	ignored uint64
	// latSamples and latSum are the number and the sum of the delays in ns.
	latSamples, latSum uint64
	// latMin is the shortest delay in ns, math.MaxInt64 before the first.
	latMin int64
	// latMax is the longest delay in ns.
	latMax int64

	// next is the highest sequence number seen plus one.
	next uint64
	// seen has a bit for each of the dupWindow sequence numbers below
	// next: set when that frame has arrived. Bit seq%dupWindow.
	seen []uint64
	// flowNext holds, per flow, the highest sequence number seen plus one;
	// frame seq is in flow seq % len(flowNext).
	flowNext []uint64
}

func newTally(runID uint64, flows int) *tally {
	return &tally{runID: runID, latMin: math.MaxInt64, seen: make([]uint64, dupWindow/64),
		flowNext: make([]uint64, flows)}
}

// Receiver counts the frames of the current run arriving on a port:
// distinct frames, bytes, duplicates, reordering and latency. Run reads
// the port; every other method is safe for concurrent use.
type Receiver struct {
	// port is where the frames arrive; Run is its only reader.
	port platform.Port
	// stream is the frames' description, with its defaults: their UDP
	// destination port and number of flows.
	stream Stream
	// frames is the batch ReadBatch fills, made once.
	frames [][]byte
	// run is the current run's tally: the stream's RunID, or noRun,
	// until Begin.
	run atomic.Pointer[tally]
	// wake holds a token when Run counted frames since WaitReceived last
	// took it.
	wake chan struct{}
	// timer bounds a WaitReceived sleep; used only by WaitReceived.
	timer *time.Timer
}

// NewReceiver returns a receiver of s's frames on port. It counts the
// frames of s.RunID, or nothing when that is 0, until Begin names a run;
// it reads nothing until Run.
func NewReceiver(port platform.Port, s Stream) (*Receiver, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("receiver on %s: %w", port.Name(), err)
	}
	r := &Receiver{port: port, stream: s, frames: make([][]byte, port.BatchSize()), wake: make(chan struct{}, 1),
		timer: time.NewTimer(math.MaxInt64)} // every WaitReceived resets it
	r.run.Store(newTally(cmp.Or(uint64(s.RunID), noRun), s.Flows))
	return r, nil
}

// Begin starts counting the run runID from zero; frames of any other run
// are ignored from the next batch on. It allocates the run's state.
func (r *Receiver) Begin(runID uint32) { r.run.Store(newTally(uint64(runID), r.stream.Flows)) }

// Run reads the port until it is closed, counting frames; then it returns
// nil. It returns any other error of ReadBatch. It allocates nothing.
func (r *Receiver) Run() error {
	for {
		n, err := r.port.ReadBatch(platform.Batch{Frames: r.frames})
		if errors.Is(err, platform.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("receiver on %s: %w", r.port.Name(), err)
		}
		r.count(r.frames[:n], Now())
	}
}

// count tallies one batch that arrived at now.
func (r *Receiver) count(frames [][]byte, now int64) {
	t := r.run.Load()
	t.mu.Lock()
	defer t.mu.Unlock()
	var got uint64
	for _, f := range frames {
		m, ok := Decode(f)
		if !ok || uint64(m.RunID) != t.runID || m.DstPort != r.stream.DstPort {
			t.ignored++
			continue
		}
		seq := m.Seq
		switch {
		case seq >= t.next:
			t.advance(seq)
		case t.next-seq > dupWindow:
			t.late++
		default:
			w, bit := seq/64%(dupWindow/64), uint64(1)<<(seq%64)
			if t.seen[w]&bit != 0 {
				t.duplicates++
				continue
			}
			t.seen[w] |= bit
		}
		got++
		t.bytes += uint64(len(f))
		flow := seq % uint64(len(t.flowNext))
		if seq < t.flowNext[flow] {
			t.reordered++
		}
		t.flowNext[flow] = max(t.flowNext[flow], seq+1)
		if m.Time != 0 {
			d := now - m.Time
			t.latSamples++
			t.latSum += uint64(max(d, 0))
			t.latMin, t.latMax = min(t.latMin, d), max(t.latMax, d)
		}
	}
	if got > 0 {
		t.received.Add(got)
		select {
		case r.wake <- struct{}{}:
		default: // a token is there already
		}
	}
}

// advance records the arrival of seq >= t.next: the bits of the numbers
// skipped in between are cleared (those frames have not arrived), seq's
// is set.
func (t *tally) advance(seq uint64) {
	if seq-t.next >= dupWindow {
		clear(t.seen)
	} else {
		for s := t.next; s < seq; {
			// Clear the n bits from s that are in its word (1<<64 is 0).
			bit := s % 64
			n := min(64-bit, seq-s)
			t.seen[s/64%(dupWindow/64)] &^= (1<<n - 1) << bit
			s += n
		}
	}
	t.seen[seq/64%(dupWindow/64)] |= 1 << (seq % 64)
	t.next = seq + 1
}

// Received returns the number of distinct frames of the current run that
// have arrived so far: the feedback of a window-mode Sender.
func (r *Receiver) Received() uint64 { return r.run.Load().received.Load() }

// spinChecks is how many times WaitReceived looks at the counter, yielding
// in between, before it sleeps until Run wakes it.
const spinChecks = 32

// WaitReceived returns once Received exceeds n, or after about timeout,
// or earlier without progress; it returns Received. It yields a few
// times, then sleeps until Run counts frames or timeout passes (a token
// of frames counted before the call ends the sleep at once). It
// allocates nothing. One goroutine at a time may call it.
func (r *Receiver) WaitReceived(n uint64, timeout time.Duration) uint64 {
	for range spinChecks {
		if v := r.Received(); v > n {
			return v
		}
		runtime.Gosched()
	}
	// Reset drops a tick of the last wait, running or fired (Go 1.23
	// timers): no Stop after the select.
	r.timer.Reset(timeout)
	select {
	case <-r.wake:
	case <-r.timer.C:
	}
	return r.Received()
}

// stats implements arrivals: Stats, and no error (a Receiver's counting
// does not fail: an error of the port ends Run, and Bench.Close returns
// it).
func (r *Receiver) stats() (RecvStats, error) { return r.Stats(), nil }

// Stats returns the current run's counts so far.
func (r *Receiver) Stats() RecvStats {
	t := r.run.Load()
	t.mu.Lock()
	defer t.mu.Unlock()
	st := RecvStats{Received: t.received.Load(), Bytes: t.bytes, Duplicates: t.duplicates,
		Reordered: t.reordered, Late: t.late, Ignored: t.ignored}
	if n := t.latSamples; n > 0 {
		st.Latency = &Latency{Samples: n, Min: time.Duration(t.latMin),
			Avg: time.Duration(t.latSum / n), Max: time.Duration(t.latMax)}
	}
	return st
}

// Counter counts the frames that arrived at the far end without reading
// them, as a hardware tester's port does: an interface's rx_packets
// counter, say. It counts every frame that arrives there, the run's own
// and any other.
type Counter interface {
	// Count returns the number of frames that arrived so far.
	Count() (uint64, error)
}

// arrivals is what a Bench learns of the frames at the far end: a
// Receiver reading them, or a counter (counted).
type arrivals interface {
	// Begin starts counting run runID from zero.
	Begin(runID uint32)
	// Received is the number of the run's frames that arrived so far.
	Received() uint64
	// stats is the run's counts so far, and the first error of the
	// counting since Begin.
	stats() (RecvStats, error)
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

func (a *counted) stats() (RecvStats, error) {
	n := a.Received()
	var err error
	if e := a.err.Load(); e != nil {
		err = fmt.Errorf("counting arrivals: %w", *e)
	}
	return RecvStats{Received: n, Bytes: n * uint64(a.size)}, err
}

// count reads the counter, keeping its first error for stats.
func (a *counted) count() uint64 {
	n, err := a.c.Count()
	if err != nil {
		a.err.CompareAndSwap(nil, &err)
	}
	return n
}
