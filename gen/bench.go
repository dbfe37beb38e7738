package gen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// DefaultDrain is how long Bench.Run waits, after the sender stops, for
// frames still on their way.
const DefaultDrain = 500 * time.Millisecond

// Result is one measured run: what was sent on one port and what arrived
// at the other.
type Result struct {
	// Size is the frame length without FCS.
	Size int `json:"size"`
	// Flows is the number of flows.
	Flows int `json:"flows"`
	// Rate is the paced rate asked for in frames/s; 0 = unpaced.
	Rate float64 `json:"rate,omitempty"`
	// Window is the most frames in flight asked for; 0 = no window.
	Window int `json:"window,omitempty"`
	// Seconds is the time the sender ran.
	Seconds float64 `json:"seconds"`
	// Sent is the number of frames the sending port accepted.
	Sent uint64 `json:"sent"`
	// Received is the number of distinct frames that arrived.
	Received uint64 `json:"received"`
	// Lost is Sent - Received.
	Lost uint64 `json:"lost"`
	// LossPercent is Lost as a percentage of Sent.
	LossPercent float64 `json:"loss_percent"`
	// Duplicates counts extra copies that arrived.
	Duplicates uint64 `json:"duplicates"`
	// Reordered counts frames that arrived behind a later frame of their
	// flow.
	Reordered uint64 `json:"reordered"`
	// TxDropped counts frames the sending port refused (its queue was
	// full): offered but not sent, so not lost either.
	TxDropped uint64 `json:"tx_dropped"`
	// RxRingDropped counts frames the receiving port's kernel ring
	// dropped during the run: lost at this receiver, not on the path.
	RxRingDropped uint64 `json:"rx_ring_dropped"`
	// Slipped counts frames the pacer left out when it fell behind.
	Slipped uint64 `json:"slipped,omitempty"`
	// Bursts is the number of WriteBatch calls the sender made.
	Bursts uint64 `json:"bursts"`
	// Stalls counts windows that timed out waiting for a frame.
	Stalls uint64 `json:"stalls,omitempty"`
	// SentPerSecond is Sent / Seconds: the offered load.
	SentPerSecond float64 `json:"sent_per_second"`
	// PacketsPerSecond is Received / Seconds.
	PacketsPerSecond float64 `json:"packets_per_second"`
	// BytesPerSecond is the received bytes (without FCS) / Seconds.
	BytesPerSecond float64 `json:"bytes_per_second"`
	// Mbps is BytesPerSecond in megabits per second.
	Mbps float64 `json:"mbps"`
	// Latency summarises one-way delays; nil when nothing arrived.
	Latency *Latency `json:"latency,omitempty"`
}

// BenchOutput is what swctl bench prints with -o json (and what make
// regress reads from a real peer's): the run's result, or the search's.
type BenchOutput struct {
	// TX is the interface the frames left by.
	TX string `json:"tx"`
	// RX is the interface they were counted at.
	RX string `json:"rx"`
	// Mode is "window", "rate", "max" or "search".
	Mode string `json:"mode"`
	// RFC2544Size is the frame size with the FCS, as RFC 2544 counts it.
	RFC2544Size int `json:"rfc2544_size"`
	// Interrupted is set when a signal stopped the run early.
	Interrupted bool `json:"interrupted,omitempty"`
	// Result is the run's result (not in search mode).
	*Result
	// Search is the search's result (only in search mode).
	Search *BenchSearch `json:"search,omitempty"`
}

// BenchSearch is the outcome of swctl bench --search.
type BenchSearch struct {
	// Max is the first run, at maximum rate: its sent rate is the upper
	// bound of the search.
	Max Result `json:"max"`
	// Rate is the highest zero-loss rate found, in frames/s: the rate of
	// the best passing trial, or what the sender really reached in it
	// when the pacer fell behind (then a lower bound).
	Rate float64 `json:"zero_loss_rate"`
	// Mbps is Rate in megabits per second, frames without FCS.
	Mbps float64 `json:"zero_loss_mbps"`
	// TrialRate is the paced rate of the best passing trial.
	TrialRate float64 `json:"zero_loss_trial_rate"`
	// SenderBound is set when the sender reached less than 99% of
	// TrialRate in that trial: Rate is a lower bound.
	SenderBound bool `json:"sender_bound,omitempty"`
	// Resolution is the search's resolution in frames/s.
	Resolution float64 `json:"resolution"`
	// Converged reports whether the search came within the resolution.
	Converged bool `json:"converged"`
	// Trials are the paced trials in the order run.
	Trials []Result `json:"trials"`
}

// Progress is a snapshot of a run in progress.
type Progress struct {
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Sent is the number of frames sent so far.
	Sent uint64
	// Received is the number of distinct frames that arrived so far.
	Received uint64
}

// Bench runs measured runs from one port to another: a Sender on tx, a
// Receiver on rx reading in its own goroutine from NewBench to Close. Run
// and Close are for one goroutine; Progress is safe for concurrent use.
type Bench struct {
	// rx is the port the frames arrive at.
	rx platform.Port
	// sender sends the frames on its port, the one they leave by (tx);
	// its stream describes them.
	sender *Sender
	// receiver counts the frames at the far end: a *Receiver reading
	// rx, or a *counted.
	receiver arrivals
	// drain is how long Run waits for late frames.
	drain time.Duration
	// learnOnce sends the learning frames before the first run.
	learnOnce sync.Once
	// start is when the current run began (Now), 0 between runs.
	start atomic.Int64
	// close closes both ports and waits for the receiver, once; later
	// calls return the first call's result.
	close func() error
}

// NewBench prepares runs of s's frames from tx to rx; zero MAC addresses
// in s default to tx's (source) and rx's (destination). With c nil it
// starts reading rx. The Bench owns both ports from now on: Close closes
// them.
//
// A counter c is for a tester that counts arrivals instead of reading rx,
// so that nothing at the far end (no receive ring, no reader) takes CPU
// from the path being measured: open rx with nothing to receive
// (afpacket.Options.SendOnly) and count with its interface's rx_packets.
// rx still sends the learning frames, and gives the default destination
// address. A run's Result then has Received (everything c counted during
// the run and its drain) but no duplicates, reordering or latency, and
// loads with a Window are refused: c is too slow to pace one.
func NewBench(tx, rx platform.Port, s Stream, c Counter) (*Bench, error) {
	if tx == rx {
		return nil, fmt.Errorf("bench %s: sending and receiving port must differ", tx.Name())
	}
	s.Src = cmp.Or(s.Src, frame.MACOf(tx.HardwareAddr()))
	s.Dst = cmp.Or(s.Dst, frame.MACOf(rx.HardwareAddr()))
	snd, err := NewSender(tx, s, nil)
	if err != nil {
		return nil, err
	}
	b := &Bench{rx: rx, sender: snd, receiver: &counted{c: c, size: snd.stream.Size}, drain: DefaultDrain}
	// recvErr receives the receiver goroutine's result when it ends; a
	// counting Bench's holds nil from the start.
	recvErr := make(chan error, 1)
	b.close = sync.OnceValue(func() error { return errors.Join(rx.Close(), tx.Close(), <-recvErr) })
	if c != nil {
		recvErr <- nil // no receiver goroutine to wait for
		return b, nil
	}
	// The sender's stream is valid: no error. The Receiver is the
	// window's feedback (a counting bench has none).
	r, _ := NewReceiver(rx, snd.stream)
	b.receiver, b.sender.acks = r, r
	go func() { recvErr <- r.Run() }()
	return b, nil
}

// SetDrain changes how long Run waits, once the sender stopped, for frames
// still on their way (it returns as soon as every sent frame arrived).
func (b *Bench) SetDrain(d time.Duration) { b.drain = d }

// Run sends one run with load l under a fresh run ID, waits for the
// frames still in flight, and returns the result. A run stopped by ctx
// still returns its result, with ctx's error.
func (b *Bench) Run(ctx context.Context, l Load) (Result, error) {
	b.learnOnce.Do(b.learn)
	if l.Window > 0 && b.sender.acks == nil {
		return Result{}, fmt.Errorf("bench %s -> %s: a window needs a receiver; this bench only counts arrivals", b.sender.port.Name(), b.rx.Name())
	}
	id := rand.Uint32() | 1 // never 0
	b.sender.SetRunID(id)
	b.receiver.Begin(id)
	ring0 := b.rx.Counters().RingDropped
	b.start.Store(Now())
	st, err := b.sender.Run(ctx, l)
	// Wait until the sent frames arrived, or the drain time passed
	// without the count moving, or ctx ends.
	last, since := b.receiver.Received(), time.Now()
	for last < st.Sent && time.Since(since) < b.drain && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
		if n := b.receiver.Received(); n != last {
			last, since = n, time.Now()
		}
	}
	b.start.Store(0)
	rs, countErr := b.receiver.stats()
	res := Result{
		Size: b.sender.stream.Size, Flows: b.sender.stream.Flows, Rate: l.Rate, Window: l.Window,
		Seconds: st.Elapsed.Seconds(), Sent: st.Sent, Received: rs.Received,
		Duplicates: rs.Duplicates, Reordered: rs.Reordered,
		TxDropped: st.TxDropped, RxRingDropped: b.rx.Counters().RingDropped - ring0,
		Slipped: st.Slipped, Bursts: st.Bursts, Stalls: st.Stalls, Latency: rs.Latency,
	}
	if res.Sent > res.Received {
		res.Lost = res.Sent - res.Received
		res.LossPercent = 100 * float64(res.Lost) / float64(res.Sent)
	}
	if s := res.Seconds; s > 0 {
		res.SentPerSecond = float64(res.Sent) / s
		res.PacketsPerSecond = float64(res.Received) / s
		res.BytesPerSecond = float64(rs.Bytes) / s
		res.Mbps = res.BytesPerSecond * 8 / 1e6
	}
	return res, cmp.Or(err, ctx.Err(), countErr)
}

// learn sends a few frames from rx to tx, so that a learning bridge
// between them knows where rx's address is before the first run and
// forwards instead of flooding. They carry run ID 0, which no run uses.
func (b *Bench) learn() {
	back := b.sender.stream
	back.Src, back.Dst = back.Dst, back.Src
	back.SrcIP, back.DstIP = back.DstIP, back.SrcIP
	back.Size, back.RunID = MinSize, 0
	f, _ := back.Frame(0, 0) // b's valid stream, reversed: no error
	_, _ = b.rx.WriteBatch(platform.Batch{Frames: [][]byte{f, f, f}})
	time.Sleep(50 * time.Millisecond)
}

// Progress returns a snapshot of the run in progress (zero between runs).
func (b *Bench) Progress() Progress {
	start := b.start.Load()
	if start == 0 {
		return Progress{}
	}
	// Received is read first (calls go left to right): a frame is sent
	// before it arrives, so Sent >= Received.
	return Progress{Received: b.receiver.Received(), Sent: b.sender.Sent(), Elapsed: time.Duration(Now() - start)}
}

// Close closes both ports, waits for the receiver to stop and returns
// the errors of the ports' Close and of the receiver; a second Close
// returns them again.
func (b *Bench) Close() error { return b.close() }

// Paced trials as the benchmarks run them (swctl bench --search, make
// bench, make regress): the RFC 2544 zero-loss search and the
// frame-loss-rate steps.
const (
	// TrialBurst is the burst of a paced trial: a whole batch, as
	// trafgen -b sends its quota in bursts, so that the generator's
	// per-burst cost (a TX ring kick) does not bound the rates it can
	// offer on a shared core. RFC 2544 allows bursty offered load.
	TrialBurst = 64
	// TrialMaxLag is how far a paced trial's sender may fall behind and
	// still send every frame it owes. On a shared core the device under
	// test's receive softirq runs in the sender's context, and deferred
	// to ksoftirqd it takes the core for milliseconds; with MaxLag's
	// default a trial then skips part of its schedule and offers less
	// than it was asked to.
	TrialMaxLag = 20 * time.Millisecond
	// PaceTolerance is how far below its paced rate, as a fraction of
	// it, a run's sender may stay and still count as having offered that
	// rate.
	PaceTolerance = 0.01
)

// TrialLoad is a paced trial of rate frames/s for d, in bursts of
// TrialBurst frames with TrialMaxLag of catch-up.
func TrialLoad(rate float64, d time.Duration) Load {
	return Load{Rate: rate, Duration: d, Burst: TrialBurst, MaxLag: TrialMaxLag}
}

// ShortOfRate says r is a paced run whose sender reached less than its
// Rate by more than PaceTolerance: the machine took the sender's CPU
// away, so the load offered was SentPerSecond, not Rate. An unpaced run
// is never short.
func (r Result) ShortOfRate() bool { return r.Rate > 0 && r.SentPerSecond < (1-PaceTolerance)*r.Rate }

// SearchRate is the zero-loss rate of an RFC 2544 search as the sender
// really offered it: rate is the paced rate of the search's best passing
// trial and trials the runs of the search. When that trial lost nothing
// but fell short of its rate (ShortOfRate), it returns what the sender
// reached, a lower bound of the device's zero-loss rate, and true.
func SearchRate(trials []Result, rate float64) (float64, bool) {
	for _, t := range trials {
		if t.Rate == rate && t.Sent > 0 && t.Received >= t.Sent && t.ShortOfRate() {
			return t.SentPerSecond, true
		}
	}
	return rate, false
}

// LinkPort is a port whose link state the caller keeps (no daemon's link
// watcher does it for a generator).
type LinkPort interface {
	Name() string
	platform.LinkSetter
}

// WaitLinkUp waits up to within until p's interface is up with a carrier
// (a veth whose peer just came up reports its carrier a moment later), then
// tells the port so. A port opened while its link was down would otherwise
// drop every frame it is given. It must run in the port's network
// namespace.
func WaitLinkUp(p LinkPort, within time.Duration) error {
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		ifi, err := net.InterfaceByName(p.Name())
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
		if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0 {
			p.SetLink(platform.LinkUp)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: link down (no carrier after %v)", p.Name(), within)
		}
	}
}

// WaitForward waits up to within until a short paced run of MinSize
// frames (100 at 10 k/s) opened by open crosses the device under test,
// trying every 100 ms. The ports are opened again for every try: a port
// takes its link state from the interface at open, and a link just set
// up may not be forwarding yet. It returns the last try's result, and an
// error when no frame crossed in time, when open or a run fails, or when
// ctx ends.
func WaitForward(ctx context.Context, open func(Stream) (*Bench, error), within time.Duration) (Result, error) {
	var r Result
	for deadline := time.Now().Add(within); ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
		bench, err := open(Stream{Size: MinSize})
		if err != nil {
			return Result{}, err
		}
		bench.SetDrain(100 * time.Millisecond)
		r, err = bench.Run(ctx, Load{Rate: 10000, Count: 100})
		bench.Close()
		if err != nil || r.Received > 0 {
			return r, err
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("no frame crossed within %v (last try: %d offered, %d sent, %d refused by the sending port)",
				within, r.Sent+r.TxDropped, r.Sent, r.TxDropped)
		}
	}
	return r, ctx.Err()
}
