package gen

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// Pacing and window defaults.
const (
	// BurstInterval is the time a paced burst covers when Load.Burst is
	// 0: at 1 M frames/s, bursts of 20 frames every 20 µs.
	BurstInterval = 20 * time.Microsecond
	// MaxLag is how far a paced sender may fall behind its schedule (when
	// the machine takes its CPU away) and still send the frames it owes,
	// in bursts of up to a batch; frames owed beyond it are skipped and
	// counted in SendStats.Slipped.
	MaxLag = 2 * time.Millisecond
	// DefaultWindowTimeout is how long a full window waits for any frame
	// to arrive before it writes its frames off as lost and goes on.
	DefaultWindowTimeout = 50 * time.Millisecond
	// sleepAbove is the gap to the next paced frame above which the
	// sender sleeps (for the gap less sleepMargin) instead of spinning.
	sleepAbove = 2 * time.Millisecond
	// sleepMargin is how long before a paced frame is due a sleep ends.
	sleepMargin = time.Millisecond
	// maxSleep bounds one sleep, so that a slow run still sees its
	// context end soon.
	maxSleep = 10 * time.Millisecond
)

// Load is how a Sender offers frames in one run. The zero Load sends as
// fast as the port takes frames until the context ends.
type Load struct {
	// Rate is the offered load in frames per second, paced by
	// busy-waiting on the monotonic clock and sending bursts of Burst
	// frames; 0 means as fast as the port accepts them.
	Rate float64
	// Window is the most frames in flight (sent and not yet received,
	// as the Sender's Receiver tells); 0 means no window. With Rate, both
	// limits apply.
	Window int
	// Duration ends the run after this long; 0 means no time limit.
	Duration time.Duration
	// Count ends the run after this many frames were offered; 0 means no
	// count limit.
	Count uint64
	// Burst is the number of frames a paced sender sends back to back
	// once they are due; 0 means Rate*BurstInterval, at least 1. It never
	// exceeds the port's batch size. A sender behind its schedule sends
	// up to a batch at once to catch up (see MaxLag).
	Burst int
	// MaxLag is how far a paced sender may fall behind its schedule and
	// still send every frame it owes, catching up a batch at a time; 0
	// means the package's MaxLag. A longer lag rides out longer stalls
	// of a shared core (a softirq deferred to ksoftirqd runs for
	// milliseconds) without leaving frames out, at the price of longer
	// catch-up bursts.
	MaxLag time.Duration
	// WindowTimeout is how long a full window waits for a frame before
	// it counts its frames as lost and goes on; 0 means
	// DefaultWindowTimeout.
	WindowTimeout time.Duration
}

// SendStats counts what a Sender or an AddressSender did in one run.
type SendStats struct {
	// Offered is the number of frames handed to WriteBatch, an
	// AddressSender's refused ones each time it offered them.
	Offered uint64 `json:"offered"`
	// Sent is the number of frames the port accepted: for an
	// AddressSender one per address of the run unless the context ended
	// first.
	Sent uint64 `json:"sent"`
	// TxDropped is Offered - Sent: frames the port refused (full queue).
	// An AddressSender offered each of them again.
	TxDropped uint64 `json:"tx_dropped"`
	// Slipped counts frames a paced Sender left out because it had
	// fallen more than MaxLag behind its schedule: the rate it offered
	// is Offered/Elapsed, below Rate.
	Slipped uint64 `json:"slipped"`
	// Stalls counts full windows that waited WindowTimeout without any
	// frame arriving; their frames were written off as lost.
	Stalls uint64 `json:"stalls"`
	// Bursts is the number of WriteBatch calls.
	Bursts uint64 `json:"bursts"`
	// Rebased counts the times an AddressSender's paced run fell more
	// than MaxLag behind its schedule and started the schedule again from
	// then, rather than catch up in a burst: the rate it offered is then
	// below the rate asked for (see PerSecond). A Sender skips instead.
	Rebased uint64 `json:"rebased,omitempty"`
	// FirstSend is the time from an AddressSender's run start to its
	// first send; 0 for a Sender.
	FirstSend time.Duration `json:"first_send_ns,omitempty"`
	// Elapsed is the time from the run's start to its last send.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Sender sends a Stream's frames on a port. One goroutine at a time may
// call Run and SetRunID; Sent is safe for concurrent use.
type Sender struct {
	// name is "sender on PORT" (or "address sender on PORT"), for errors.
	name string
	// port is where frames go.
	port platform.Port
	// stream is the frames' description, with its defaults.
	stream Stream
	// acks tells a window how many frames arrived; nil without a window.
	acks *Receiver
	// bufs holds one batch of frames, made once, written in place.
	bufs [][]byte
	// base is the IPv4 header's partial checksum (see Stream.template).
	base uint32
	// srcIP is flow 0's source address as a number.
	srcIP uint32
	// seq is the next sequence number of the run.
	seq uint64
	// sent counts the frames the port accepted in the current run.
	sent atomic.Uint64
	// walk is the AddressSender this sender works for, nil for a plain
	// one: frame seq then carries address seq of its block, and a run
	// sends every frame once (see Run).
	walk *AddressSender
	// now and sleep are the monotonic clock Run reads and waits on: Now
	// and time.Sleep, or in tests a simulated clock whose time moves only
	// as the run reads it and waits, so that the schedule can be checked
	// apart from how the machine schedules the sender.
	now   func() int64
	sleep func(time.Duration)
}

// NewSender returns a sender of s's frames on port. acks is needed only
// for Load.Window (pass the Receiver at the other end), else it may be
// nil. The frame size must fit the port's MTU.
func NewSender(port platform.Port, s Stream, acks *Receiver) (*Sender, error) {
	return newSender("sender", port, s, acks)
}

// newSender is NewSender for the sender kind named what.
func newSender(what string, port platform.Port, s Stream, acks *Receiver) (*Sender, error) {
	name := what + " on " + port.Name()
	s, err := s.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if mtu := port.MTU(); s.Size-offIP > mtu {
		return nil, fmt.Errorf("%s: frame size %d exceeds the MTU %d (at most %d bytes without FCS)", name, s.Size, mtu, mtu+offIP)
	}
	// A batch (at least one frame) in one block, each buffer clipped to a frame.
	bufs := slices.Collect(slices.Chunk(make([]byte, max(1, port.BatchSize())*s.Size), s.Size))
	snd := &Sender{name: name, port: port, stream: s, acks: acks, bufs: bufs, srcIP: s.srcIP(),
		now: Now, sleep: time.Sleep}
	snd.SetRunID(s.RunID)
	return snd, nil
}

// SetRunID makes the next Run send frames of run id, from sequence number 0.
func (s *Sender) SetRunID(id uint32) {
	s.stream.RunID = id
	for _, b := range s.bufs {
		s.base = s.stream.template(b) // the same for every buffer
	}
	s.seq = 0
}

// Sent returns the number of frames the port accepted in the current (or
// last) run.
func (s *Sender) Sent() uint64 { return s.sent.Load() }

// Run sends frames as l says until its Duration or Count is reached or ctx
// ends, and returns what it did. The end of ctx is no error. It returns
// early with the port's error (platform.ErrClosed after Close). It
// allocates nothing per frame.
//
// It is also the loop of AddressSender.Run. For an AddressSender (walk
// set) every frame goes out exactly once: a frame the port refuses is
// offered again, a paced run that fell more than its lag behind starts
// its schedule again (rather than skip frames), frames carry no send
// time, and a port that refuses every frame for RefuseTimeout is an
// error.
func (s *Sender) Run(ctx context.Context, l Load) (SendStats, error) {
	var st SendStats
	switch {
	case l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0):
		return st, fmt.Errorf("%s: rate %v frames/s: want a finite number >= 0", s.name, l.Rate)
	case l.Window < 0:
		return st, fmt.Errorf("%s: window %d: want >= 0", s.name, l.Window)
	case l.Window > 0 && s.acks == nil:
		return st, fmt.Errorf("%s: window %d needs a receiver's feedback", s.name, l.Window)
	case l.Burst < 0:
		return st, fmt.Errorf("%s: burst %d: want >= 0", s.name, l.Burst)
	}
	once := s.walk != nil
	timeout := int64(cmp.Or(max(l.WindowTimeout, 0), DefaultWindowTimeout)) // 0 or less: the default
	s.sent.Store(0)
	start := s.now()
	pace := newPacer(l.Rate, len(s.bufs), l.Burst, l.MaxLag, start, once)
	deadline := int64(math.MaxInt64) // none
	if l.Duration > 0 {
		deadline = start + int64(l.Duration)
	}
	// The run ends once it took limit frames: offered ones, an
	// AddressSender's sent ones (all of its Count, even 0).
	limit := l.Count
	if limit == 0 && !once {
		limit = math.MaxUint64
	}
	first := s.seq               // the run took frames first to s.seq-1
	var writtenOff, acked uint64 // window frames given up as lost; last Received seen by the window
	ackedAt := start             // when acked last changed
	refusedSince := int64(0)     // when the port began refusing everything, 0 = it is not
	var err error
loop:
	for ctx.Err() == nil {
		now := s.now()
		taken := s.seq - first
		if now >= deadline || taken >= limit {
			break
		}
		k := min(uint64(len(s.bufs)), limit-taken)
		if l.Rate > 0 {
			n, nap := pace.due(now, taken, k, deadline)
			if n == 0 {
				s.sleep(nap) // 0: spin
				continue
			}
			k = n
		}
		if l.Window > 0 {
			recv := s.acks.Received()
			if recv != acked {
				acked, ackedAt = recv, now
			}
			inflight := int64(st.Sent) - int64(recv) - int64(writtenOff)
			free := int64(l.Window) - max(inflight, 0)
			if free <= 0 {
				if now-ackedAt >= timeout {
					writtenOff += uint64(inflight)
					st.Stalls++
					ackedAt = now
				} else {
					s.acks.WaitReceived(recv, time.Duration(timeout-(now-ackedAt)))
				}
				continue
			}
			k = min(k, uint64(free))
		}
		n, e := s.send(int(k), now)
		m := uint64(n)
		st.Offered += k
		st.Sent += m
		st.Bursts++
		s.sent.Store(st.Sent)
		if e != nil {
			err = fmt.Errorf("%s: %w", s.name, e)
			break
		}
		if !once {
			continue
		}
		s.seq -= k - m // refused: offered again
		now = s.now()
		switch {
		case m > 0:
			refusedSince = 0
			st.FirstSend = cmp.Or(st.FirstSend, time.Duration(now-start)) // set once
		case refusedSince == 0:
			refusedSince = now
		case time.Duration(now-refusedSince) > RefuseTimeout:
			err = fmt.Errorf("%s: the port refused every frame for %v (link down?)", s.name, RefuseTimeout)
			break loop
		}
		if m < k {
			runtime.Gosched() // let the queue drain
		}
	}
	st.TxDropped = st.Offered - st.Sent
	st.Slipped, st.Rebased = pace.slipped, pace.rebased
	st.Elapsed = time.Duration(s.now() - start)
	return st, err
}

// send stamps k frames with sequence numbers and the time now (an
// AddressSender's with their addresses and no time) and writes them; it
// returns the number the port accepted.
func (s *Sender) send(k int, now int64) (int, error) {
	bufs := s.bufs[:k]
	for j, b := range bufs {
		if s.walk != nil {
			s.walk.Put(b, int(s.seq)+j)
		} else {
			s.stream.stamp(b, s.base, s.srcIP, s.seq+uint64(j), now)
		}
	}
	s.seq += uint64(k)
	return s.port.WriteBatch(platform.Batch{Frames: bufs})
}

// RefuseTimeout is how long an AddressSender goes on offering a frame its
// port keeps refusing (a full queue drains in microseconds; a port whose
// link is down refuses for ever) before Run gives up with an error.
const RefuseTimeout = time.Second

// AddressBlock is Count consecutive unicast MAC addresses from First,
// counted as 48-bit numbers (MAC i is First+i): the stations of an
// address-table test, RFC 2889 sections 5.7 (address caching capacity)
// and 5.8 (address learning rate).
type AddressBlock struct {
	// First is the block's first address: unicast, not zero.
	First frame.MAC
	// Count is the number of addresses, 1 to MaxFlows.
	Count int
}

// MAC returns address i of the block, 0 <= i < Count.
func (a AddressBlock) MAC(i int) frame.MAC { return frame.MACFromKey(a.First.Key() + uint64(i)) }

// Check says what makes the block unusable: a count out of range, a
// first address that is zero or multicast, or a block that runs into the
// next first octet (where the group bit of the later addresses could be
// set).
func (a AddressBlock) Check() error {
	switch {
	case a.Count < 1 || a.Count > MaxFlows:
		return fmt.Errorf("address block of %d: want 1-%d addresses", a.Count, MaxFlows)
	case a.First.IsZero() || a.First.IsMulticast():
		return fmt.Errorf("address block from %v: want a unicast, non-zero first address", a.First)
	case a.First.Key()+uint64(a.Count-1) > a.First.Key()|(1<<40-1):
		return fmt.Errorf("address block from %v: %d addresses run past the first octet", a.First, a.Count)
	}
	return nil
}

// AddressField says which MAC of an AddressSender's frames walks the
// block: its value is that MAC's offset in the frame.
type AddressField uint8

const (
	// VarySource makes learning frames: frame i comes from address i of
	// the block and goes to the Stream's Dst.
	VarySource AddressField = 6
	// VaryDestination makes test frames: frame i comes from the Stream's
	// Src and goes to address i of the block.
	VaryDestination AddressField = 0
)

// PerSecond is the rate an AddressSender's run offered: the frames after
// the first over the time from the first send to the last (a paced run of
// n frames at rate r takes (n-1)/r), or 0 for fewer than two frames.
func (st SendStats) PerSecond() float64 {
	d := st.Elapsed - st.FirstSend
	if st.Sent < 2 || d <= 0 {
		return 0
	}
	return float64(st.Sent-1) / d.Seconds()
}

// AddressSender sends one frame per address of an AddressBlock on a port:
// frame i is the Stream's frame with sequence number i (the Receiver
// counts it as such) whose source (VarySource) or destination
// (VaryDestination) MAC is address i of the block; it carries no send
// time. Frames the port refuses are offered again, so every address of a
// run is sent exactly once, in order. Buffers are one batch, made at
// NewAddressSender; Run allocates nothing. One goroutine at a time may use
// an AddressSender.
type AddressSender struct {
	// snd sends the frames; its walk is this AddressSender.
	snd *Sender
	// block is the addresses walked.
	block AddressBlock
	// field is the MAC that walks the block, and its offset in a frame.
	field AddressField
}

// NewAddressSender returns a sender of s's frames on port, one per
// address of block, the address in field. s.Flows must be 1 (the default):
// the addresses are the flows. The frame size must fit the port's MTU.
func NewAddressSender(port platform.Port, s Stream, block AddressBlock, field AddressField) (*AddressSender, error) {
	snd, err := newSender("address sender", port, s, nil)
	switch {
	case err != nil:
		return nil, err
	case snd.stream.Flows != 1:
		return nil, fmt.Errorf("%s: flows %d: the block's addresses are the flows, want 1", snd.name, snd.stream.Flows)
	case field != VarySource && field != VaryDestination:
		return nil, fmt.Errorf("%s: address field %d: want VarySource or VaryDestination", snd.name, field)
	}
	if err := block.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", snd.name, err)
	}
	a := &AddressSender{snd: snd, block: block, field: field}
	snd.walk = a
	return a, nil
}

// SetRunID makes the next Run send frames of run id.
func (a *AddressSender) SetRunID(id uint32) { a.snd.SetRunID(id) }

// Put writes frame i of the block into b, which must be as long as the
// Stream's frames and hold its template. It does not allocate.
func (a *AddressSender) Put(b []byte, i int) {
	a.snd.stream.stamp(b, a.snd.base, a.snd.srcIP, uint64(i), 0)
	m := a.block.MAC(i)
	copy(b[a.field:a.field+6], m[:])
}

// Frame returns a new copy of frame i, for tests and tools; Run does not
// use it.
func (a *AddressSender) Frame(i int) []byte {
	b, _ := a.snd.stream.Frame(0, 0) // a template to Put frame i into: the stream is valid
	a.Put(b, i)
	return b
}

// Run sends the frames of addresses first to first+n-1 (of the block) in
// order, paced at rate frames/s (bursts of rate*BurstInterval frames, as
// Sender does), or as fast as the port takes them for rate 0, and returns
// what it did. A paced run more than MaxLag behind its schedule does not
// catch up: it starts its schedule again (SendStats.Rebased). The end
// of ctx stops it early, without error; a port that refuses every frame
// for RefuseTimeout (its link is down, say) is an error.
func (a *AddressSender) Run(ctx context.Context, first, n int, rate float64) (SendStats, error) {
	if first < 0 || n < 0 || first+n > a.block.Count {
		return SendStats{}, fmt.Errorf("%s: addresses %d-%d: the block has %d", a.snd.name, first, first+n-1, a.block.Count)
	}
	a.snd.seq = uint64(first)
	return a.snd.Run(ctx, Load{Rate: rate, Count: uint64(n)})
}

// pacer is the schedule of a paced run, Sender's and AddressSender's:
// frame based+j is due at start + j/rate, and frames go out in bursts of
// burst once a whole burst is due. A run that fell behind (the machine
// took its CPU away) catches up a batch at a time up to lag frames owed;
// beyond that a Sender skips ahead (slipped) and an AddressSender, which
// sends every frame, starts the schedule again (rebase).
type pacer struct {
	// rate is the offered load in frames per second; 0 = not paced.
	rate float64
	// burst is the number of frames sent back to back once due.
	burst uint64
	// lag is the most frames a run may owe and still catch up.
	lag uint64
	// start is when frame based was due (monotonic ns, Now).
	start int64
	// based is the first frame of the current schedule.
	based uint64
	// rebase is set for an AddressSender: beyond its lag the run starts
	// the schedule again rather than skip frames.
	rebase bool
	// slipped counts the frames skipped (SendStats.Slipped).
	slipped uint64
	// rebased counts the schedule's new starts (SendStats.Rebased).
	rebased uint64
}

// newPacer returns the schedule of frames at rate from start, on a port
// that writes batch frames at once: bursts of burst frames (0:
// rate*BurstInterval, at least 1; never above batch), catching up while
// at most maxLag (0: MaxLag) behind, then skipping ahead, or starting
// again for rebase.
func newPacer(rate float64, batch, burst int, maxLag time.Duration, start int64, rebase bool) pacer {
	// Run refuses a burst below 0; a maxLag of 0 or less is the default.
	burst = min(cmp.Or(burst, max(1, int(rate*BurstInterval.Seconds()))), batch)
	maxLag = cmp.Or(max(maxLag, 0), MaxLag)
	return pacer{rate: rate, burst: uint64(burst), lag: uint64(max(rate*maxLag.Seconds(), float64(2*burst))), start: start, rebase: rebase}
}

// due returns how many of the next k frames to send now, the run having
// taken the frames before them (sent or offered; the skipped ones are the
// pacer's): a whole burst once due (or the last frames of a Count), up to
// k when behind schedule. When they are not due it returns 0 and how
// long the caller may sleep towards the time they will be, if that is
// far (never past deadline nor more than maxSleep); a short gap (0) it
// leaves to the caller's spinning.
func (p *pacer) due(now int64, taken, k uint64, deadline int64) (uint64, time.Duration) {
	had := taken + p.slipped
	due := p.based + uint64(float64(now-p.start)*p.rate/1e9) + 1
	owed := max(due, had) - had // due by now and not among the first had
	switch {
	case owed <= p.lag || !p.rebase && owed <= 4: // a Sender skips ahead only beyond 4
	case p.rebase:
		p.start, p.based = now, had // frame had is due now
		owed = 1
		p.rebased++
	default:
		p.slipped += owed - p.burst
		owed = p.burst
	}
	want := min(p.burst, k)
	if owed >= want {
		return min(k, owed), 0
	}
	next := p.start + int64(float64(had+want-1-p.based)*1e9/p.rate)
	if gap := time.Duration(next - now); gap > sleepAbove {
		return 0, min(gap-sleepMargin, time.Duration(deadline-now), maxSleep)
	}
	return 0, 0
}
