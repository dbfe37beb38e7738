package gen_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// wirePort is the sending end of a memport cable with a fault model: by
// sequence number it drops, duplicates or delays frames (the link "sent"
// them all), and it records the largest batch and the most frames in
// flight the sender ever caused.
type wirePort struct {
	*memport.Port
	// drop reports whether the frame seq is lost on the wire.
	drop func(seq uint64) bool
	// dup reports whether the frame seq arrives twice.
	dup func(seq uint64) bool
	// hold reports whether the frame seq is held back and delivered after
	// the next frame (a swap).
	hold func(seq uint64) bool
	// acks, when set, is read to record the frames in flight.
	acks interface{ Received() uint64 }
	// stallAt, when not 0, is the WriteBatch call that takes 30 ms, as
	// if the machine took the sender's core away.
	stallAt int64

	// mu serialises WriteBatch (the fault state is not concurrent).
	mu sync.Mutex
	// held is a frame waiting to go out after the next one.
	held []byte
	// dropped counts frames drop lost.
	dropped int
	// written counts frames the sender handed over.
	written uint64
	// maxBatch is the largest WriteBatch.
	maxBatch atomic.Int64
	// calls counts WriteBatch calls.
	calls atomic.Int64
	// maxInFlight is the most frames written and not received, seen at
	// the end of a WriteBatch: an upper bound of the real figure.
	maxInFlight atomic.Int64
}

func (w *wirePort) WriteBatch(b platform.Batch) (int, error) {
	frames := b.Frames
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.calls.Add(1) == w.stallAt {
		time.Sleep(30 * time.Millisecond)
	}
	if int64(len(frames)) > w.maxBatch.Load() {
		w.maxBatch.Store(int64(len(frames)))
	}
	if w.acks == nil && w.drop == nil && w.dup == nil && w.hold == nil {
		return w.Port.WriteBatch(platform.Batch{Frames: frames}) // faithful: report what the peer took
	}
	var out [][]byte
	for _, f := range frames {
		m, _ := gen.Decode(f)
		switch {
		case w.drop != nil && w.drop(m.Seq):
			w.dropped++
		case w.hold != nil && w.hold(m.Seq) && w.held == nil:
			w.held = append([]byte(nil), f...)
		default:
			out = append(out, f)
			if w.held != nil {
				out = append(out, w.held)
				w.held = nil
			}
			if w.dup != nil && w.dup(m.Seq) {
				out = append(out, f)
			}
		}
	}
	if _, err := w.Port.WriteBatch(platform.Batch{Frames: out}); err != nil {
		return 0, err
	}
	w.written += uint64(len(frames))
	if w.acks != nil {
		if d := int64(w.written) - int64(w.acks.Received()); d > w.maxInFlight.Load() {
			w.maxInFlight.Store(d)
		}
	}
	return len(frames), nil
}

// newBench returns a bench over a memport cable whose sending end is w.
func newBench(t *testing.T, s gen.Stream, w *wirePort) *gen.Bench {
	t.Helper()
	a, b := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 0xb})
	w.Port = a
	bench, err := gen.NewBench(w, b, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	bench.SetDrain(200 * time.Millisecond)
	t.Cleanup(func() { _ = bench.Close() })
	return bench
}

func TestBenchCountsExactly(t *testing.T) {
	tests := []struct {
		name string
		s    gen.Stream
		load gen.Load
	}{
		{"max rate, 60 B, 1 flow", gen.Stream{Size: 60}, gen.Load{Count: 20000}},
		{"max rate, 1514 B, 7 flows", gen.Stream{Size: 1514, Flows: 7}, gen.Load{Count: 20000}},
		{"window 16", gen.Stream{Flows: 100}, gen.Load{Window: 16, Count: 20000, WindowTimeout: time.Minute}},
		{"window 1", gen.Stream{}, gen.Load{Window: 1, Count: 2000, WindowTimeout: time.Minute}},
		{"paced 100k frames/s", gen.Stream{Flows: 3}, gen.Load{Rate: 100_000, Count: 10000}},
		{"paced and windowed", gen.Stream{}, gen.Load{Rate: 100_000, Window: 8, Count: 10000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t, tt.s, &wirePort{})
			res, err := b.Run(context.Background(), tt.load)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.Sent+res.TxDropped != tt.load.Count:
				t.Errorf("sent %d + refused %d, want %d offered", res.Sent, res.TxDropped, tt.load.Count)
			case res.Received != res.Sent || res.Lost != 0:
				t.Errorf("received %d of %d sent, lost %d; want all, 0 lost", res.Received, res.Sent, res.Lost)
			case res.Duplicates != 0 || res.Reordered != 0:
				t.Errorf("%d duplicates, %d reordered; want none", res.Duplicates, res.Reordered)
			case res.Latency == nil || res.Latency.Samples != res.Received:
				t.Errorf("latency %+v, want one sample per frame", res.Latency)
			case res.Sent == 0:
				t.Errorf("nothing sent")
			}
		})
	}
}

func TestBenchFaults(t *testing.T) {
	every := func(n uint64) func(uint64) bool { return func(seq uint64) bool { return seq%n == n-1 } }
	tests := []struct {
		name                             string
		w                                *wirePort
		load                             gen.Load
		wantLost, wantDups, wantReorderd uint64
	}{
		{"every 10th lost", &wirePort{drop: every(10)}, gen.Load{Rate: 200_000, Count: 5000}, 500, 0, 0},
		{"every 10th duplicated", &wirePort{dup: every(10)}, gen.Load{Window: 64, Count: 5000}, 0, 500, 0},
		{"every 10th swapped with the next", &wirePort{hold: every(10)}, gen.Load{Window: 64, Count: 5001}, 0, 0, 500},
		{"window survives loss", &wirePort{drop: every(100)}, gen.Load{Window: 8, Count: 2000, WindowTimeout: 2 * time.Millisecond}, 20, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t, gen.Stream{}, tt.w)
			res, err := b.Run(context.Background(), tt.load)
			if err != nil {
				t.Fatal(err)
			}
			overflow := tt.w.Port.Counters().TxDropped // the memport queue's own drops
			if res.Lost != tt.wantLost+overflow || res.Duplicates != tt.wantDups || res.Reordered != tt.wantReorderd {
				t.Errorf("lost %d, duplicates %d, reordered %d; want %d (+%d queue overflow), %d, %d",
					res.Lost, res.Duplicates, res.Reordered, tt.wantLost, overflow, tt.wantDups, tt.wantReorderd)
			}
			if tt.wantLost > 0 && tt.load.Window > 0 && res.Stalls == 0 {
				t.Errorf("no window stalls counted despite loss")
			}
		})
	}
}

// A paced run on the real clock, whatever the machine's load: it never
// offers more than its schedule allows by the time it ends, every burst
// holds at least Rate*BurstInterval frames, and none more than it may
// catch up at once (a batch, at most MaxLag of frames). That the rate is
// reached is the schedule's (TestPacerSchedule, on a simulated clock) and
// the machine's (BenchmarkPacedRate).
func TestPacedRate(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		burst    int64 // frames per WriteBatch, at least
		maxBurst int64 // at most, catching up included
	}{
		{"20k frames/s: one frame at a time", 20_000, 1, 40},
		{"100k frames/s: bursts of 2", 100_000, 2, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &wirePort{}
			b := newBench(t, gen.Stream{}, w)
			start := time.Now()
			res, err := b.Run(context.Background(), gen.Load{Rate: tt.rate, Duration: 500 * time.Millisecond})
			elapsed := time.Since(start) // includes the drain: an upper bound
			if err != nil {
				t.Fatal(err)
			}
			// Frames sent plus frames the pacer skipped (when the
			// machine took its CPU away) were all due by the end.
			offered := res.Sent + res.TxDropped
			scheduled := offered + res.Slipped
			if hi := tt.rate*elapsed.Seconds() + 1; float64(scheduled) > hi {
				t.Errorf("%d frames scheduled (%d offered, %d skipped) in %v at %.0f frames/s, want at most %.0f",
					scheduled, offered, res.Slipped, elapsed, tt.rate, hi)
			}
			if offered == 0 {
				t.Fatalf("no frame offered in %v", elapsed)
			}
			t.Logf("%d frames offered, %d skipped in %v (%.0f%% of the rate; a busy machine skips)", offered, res.Slipped, elapsed, 100*float64(offered)/(tt.rate*0.5))
			if calls := w.calls.Load(); int64(offered) < tt.burst*calls {
				t.Errorf("%d frames in %d bursts, want bursts of at least %d", offered, calls, tt.burst)
			}
			if got := w.maxBatch.Load(); got > tt.maxBurst {
				t.Errorf("a burst of %d frames, want at most %d (%v of frames)", got, tt.maxBurst, gen.MaxLag)
			}
		})
	}
}

// A paced sender stalled for 30 ms skips what it owes beyond MaxLag
// (2 ms by default) and, with a Load.MaxLag longer than the stall, sends
// every frame of its schedule.
func TestPacedMaxLag(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lag     time.Duration
		slipped bool
	}{
		{"default lag: the stall's frames are skipped", 0, true},
		{"1 s lag: the stall's frames are caught up", time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &wirePort{stallAt: 100}
			b := newBench(t, gen.Stream{}, w)
			res, err := b.Run(context.Background(), gen.Load{Rate: 100_000, Count: 20_000, MaxLag: tt.lag})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Slipped > 0; got != tt.slipped {
				t.Errorf("%d frames skipped after a 30 ms stall with lag %v; want skipping %v", res.Slipped, tt.lag, tt.slipped)
			}
			if !tt.slipped && res.Sent+res.TxDropped != 20_000 {
				t.Errorf("offered %d, want all 20000", res.Sent+res.TxDropped)
			}
		})
	}
}

func TestWindowNeverExceeded(t *testing.T) {
	for _, window := range []int{1, 16, 64} {
		t.Run("window "+itoa(window), func(t *testing.T) {
			w := &wirePort{}
			b := newBench(t, gen.Stream{Flows: 5}, w)
			w.acks = receiverOf(t, b)
			res, err := b.Run(context.Background(), gen.Load{Window: window, Count: 20000, WindowTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if got := w.maxInFlight.Load(); got > int64(window) {
				t.Errorf("%d frames in flight, want at most %d", got, window)
			}
			if res.Received != 20000 || res.Stalls != 0 {
				t.Errorf("received %d, stalls %d; want 20000, 0", res.Received, res.Stalls)
			}
		})
	}
}

// receiverOf gives the window test the bench's feedback: Progress reads
// the receiver's count during a run.
func receiverOf(t *testing.T, b *gen.Bench) progressAcks { return progressAcks{b} }

// progressAcks reads a Bench's received count, for observing only.
type progressAcks struct {
	// b is the bench observed.
	b *gen.Bench
}

func (p progressAcks) Received() uint64 { return p.b.Progress().Received }

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestZeroAllocsPerFrame(t *testing.T) {
	tests := []struct {
		name string
		load gen.Load
	}{
		{"max rate", gen.Load{}},
		{"paced", gen.Load{Rate: 2_000_000}},
		{"window", gen.Load{Window: 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t, gen.Stream{Flows: 16}, &wirePort{})
			allocs := func(count uint64) float64 {
				l := tt.load
				l.Count = count
				return testing.AllocsPerRun(5, func() {
					if _, err := b.Run(context.Background(), l); err != nil {
						t.Fatal(err)
					}
				})
			}
			small, large := allocs(100), allocs(10100)
			if large > small {
				t.Errorf("%v allocations for 10100 frames, %v for 100: %.4f per frame, want 0",
					large, small, (large-small)/10000)
			}
		})
	}
}

func TestBenchStopsWithContext(t *testing.T) {
	b := newBench(t, gen.Stream{}, &wirePort{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := b.Run(ctx, gen.Load{Rate: 10_000, Duration: time.Hour})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's", err)
	}
	if res.Sent == 0 || res.Seconds > 1 {
		t.Errorf("sent %d in %.2f s, want some frames in about 0.1 s", res.Sent, res.Seconds)
	}
}

func TestSenderErrors(t *testing.T) {
	a, b := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 0xb})
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"frame larger than the MTU", func() error {
			_, err := gen.NewSender(a, gen.Stream{Size: 1515}, nil)
			return err
		}, "sender on a: frame size 1515 exceeds the MTU 1500 (at most 1514 bytes without FCS)"},
		{"window without feedback", func() error {
			s, _ := gen.NewSender(a, gen.Stream{}, nil)
			_, err := s.Run(context.Background(), gen.Load{Window: 4})
			return err
		}, "sender on a: window 4 needs a receiver's feedback"},
		{"negative rate", func() error {
			s, _ := gen.NewSender(a, gen.Stream{}, nil)
			_, err := s.Run(context.Background(), gen.Load{Rate: -1})
			return err
		}, "sender on a: rate -1 frames/s"},
		{"closed port", func() error {
			s, _ := gen.NewSender(b, gen.Stream{}, nil)
			_ = b.Close()
			_, err := s.Run(context.Background(), gen.Load{Count: 1})
			if !errors.Is(err, platform.ErrClosed) {
				return errors.New("not ErrClosed: " + err.Error())
			}
			return err
		}, "sender on b: port closed"},
		{"same port twice", func() error {
			_, err := gen.NewBench(a, a, gen.Stream{}, nil)
			return err
		}, "bench a: sending and receiving port must differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func BenchmarkBenchMemport(b *testing.B) {
	for _, tt := range []struct {
		name string
		load gen.Load
	}{
		{"max", gen.Load{}},
		{"window16", gen.Load{Window: 16}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			x, y := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 0xb})
			bench, err := gen.NewBench(x, y, gen.Stream{Flows: 16}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bench.Close()
			l := tt.load
			l.Count = uint64(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			res, err := bench.Run(context.Background(), l)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(res.PacketsPerSecond, "frames/s")
		})
	}
}

// WaitForward returns as soon as a try gets frames across, opening the
// ports again for every try, and fails, naming what it offered, when no
// frame ever crosses.
func TestWaitForward(t *testing.T) {
	t.Run("link starts forwarding on the third try", func(t *testing.T) {
		opens := 0
		open := func(s gen.Stream) (*gen.Bench, error) {
			opens++
			ok := opens >= 3
			return newBench(t, s, &wirePort{drop: func(uint64) bool { return !ok }}), nil
		}
		r, err := gen.WaitForward(context.Background(), open, 10*time.Second)
		if err != nil || r.Received == 0 || opens != 3 {
			t.Fatalf("WaitForward = %d received, %v after %d opens; want frames across after 3 opens", r.Received, err, opens)
		}
	})
	t.Run("nothing ever crosses", func(t *testing.T) {
		open := func(s gen.Stream) (*gen.Bench, error) {
			return newBench(t, s, &wirePort{drop: func(uint64) bool { return true }}), nil
		}
		r, err := gen.WaitForward(context.Background(), open, 300*time.Millisecond)
		if err == nil || r.Received != 0 || !strings.Contains(err.Error(), "no frame crossed within 300ms") {
			t.Fatalf("WaitForward = %d received, %v; want an error saying no frame crossed within 300ms", r.Received, err)
		}
	})
	t.Run("open fails", func(t *testing.T) {
		want := errors.New("tester port t1: no such interface")
		_, err := gen.WaitForward(context.Background(), func(gen.Stream) (*gen.Bench, error) { return nil, want }, time.Second)
		if !errors.Is(err, want) {
			t.Fatalf("WaitForward = %v, want %v", err, want)
		}
	})
}

// newCountingBench returns a counting bench over a memport cable whose
// sending end is w; a reader drains the far end, counting frames as an
// interface's rx_packets would, and fail makes the counter fail.
func newCountingBench(t *testing.T, s gen.Stream, w *wirePort, fail *atomic.Bool) *gen.Bench {
	t.Helper()
	a, b := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 0xb})
	w.Port = a
	var arrived atomic.Uint64
	sink, _ := memport.Pair("sink", net.HardwareAddr{2, 0, 0, 0, 0, 0xc}, "unused", net.HardwareAddr{2, 0, 0, 0, 0, 0xd})
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([][]byte, 64)
		for {
			n, err := b.ReadBatch(platform.Batch{Frames: buf})
			if err != nil {
				return
			}
			arrived.Add(uint64(n))
		}
	}()
	count := counterFunc(func() (uint64, error) {
		if fail.Load() {
			return 0, errors.New("rx_packets: no such file")
		}
		return arrived.Load(), nil
	})
	// The bench's rx port only sends learning frames; the cable's far
	// end b is read by the counting goroutine above.
	bench, err := gen.NewBench(w, sink, gen.Stream{Dst: frame.MACOf(b.HardwareAddr())}, count)
	if err != nil {
		t.Fatal(err)
	}
	bench.SetDrain(200 * time.Millisecond)
	t.Cleanup(func() {
		_ = bench.Close()
		_ = b.Close()
		<-done
	})
	return bench
}

func TestCountingBench(t *testing.T) {
	every := func(n uint64) func(uint64) bool { return func(seq uint64) bool { return seq%n == n-1 } }
	t.Run("counts what arrived, loss included", func(t *testing.T) {
		w := &wirePort{drop: every(10)}
		b := newCountingBench(t, gen.Stream{}, w, new(atomic.Bool))
		res, err := b.Run(context.Background(), gen.Load{Rate: 200_000, Count: 5000})
		if err != nil {
			t.Fatal(err)
		}
		overflow := w.Port.Counters().TxDropped
		if res.Sent != 5000 || res.Lost != 500+overflow || res.Received != res.Sent-res.Lost {
			t.Errorf("sent %d, received %d, lost %d; want 5000 sent, %d lost", res.Sent, res.Received, res.Lost, 500+overflow)
		}
		if res.Latency != nil || res.Duplicates != 0 {
			t.Errorf("latency %v, duplicates %d: a counter cannot know them", res.Latency, res.Duplicates)
		}
	})
	t.Run("each run counts from zero", func(t *testing.T) {
		b := newCountingBench(t, gen.Stream{}, &wirePort{}, new(atomic.Bool))
		for range 2 {
			res, err := b.Run(context.Background(), gen.Load{Rate: 100_000, Count: 2000})
			if err != nil {
				t.Fatal(err)
			}
			if res.Received != res.Sent {
				t.Errorf("received %d of %d sent", res.Received, res.Sent)
			}
		}
	})
	t.Run("a window is refused", func(t *testing.T) {
		b := newCountingBench(t, gen.Stream{}, &wirePort{}, new(atomic.Bool))
		_, err := b.Run(context.Background(), gen.Load{Window: 16, Count: 100})
		if err == nil || !strings.Contains(err.Error(), "window needs a receiver") {
			t.Errorf("window run: error %v, want a window needs a receiver", err)
		}
	})
	t.Run("a failing counter fails the run", func(t *testing.T) {
		fail := new(atomic.Bool)
		b := newCountingBench(t, gen.Stream{}, &wirePort{}, fail)
		fail.Store(true)
		_, err := b.Run(context.Background(), gen.Load{Count: 100})
		if err == nil || !strings.Contains(err.Error(), "counting arrivals: rx_packets: no such file") {
			t.Errorf("error %v, want the counter's", err)
		}
	})
}

// BenchmarkPacedRate reports how much of a paced rate the sender reaches
// on this machine (offered/rate, 1 when it kept to its schedule) and the
// frames it skipped per run of 100 ms, having fallen more than MaxLag
// behind.
func BenchmarkPacedRate(b *testing.B) {
	for _, rate := range []float64{20_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%.0fk", rate/1000), func(b *testing.B) {
			a, peer := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 0xb})
			bench, err := gen.NewBench(a, peer, gen.Stream{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bench.Close()
			bench.SetDrain(10 * time.Millisecond)
			const d = 100 * time.Millisecond
			var offered, slipped uint64
			for b.Loop() {
				res, err := bench.Run(context.Background(), gen.Load{Rate: rate, Duration: d})
				if err != nil {
					b.Fatal(err)
				}
				offered += res.Sent + res.TxDropped
				slipped += res.Slipped
			}
			b.ReportMetric(float64(offered)/(rate*d.Seconds()*float64(b.N)), "offered/rate")
			b.ReportMetric(float64(slipped)/float64(b.N), "slipped/run")
		})
	}
}

// counterFunc adapts a function to gen.Counter.
type counterFunc func() (uint64, error)

func (f counterFunc) Count() (uint64, error) { return f() }
