package gen

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// simClock is a monotonic clock whose time moves only as a run reads it
// (by step: one turn of the send loop) and sleeps, so that a paced run's
// schedule is the same on an idle and on a loaded machine.
type simClock struct {
	// t is the time now returns next, less step.
	t int64
	// step is how far each read moves the time.
	step int64
}

func (c *simClock) now() int64            { c.t += c.step; return c.t }
func (c *simClock) sleep(d time.Duration) { c.t += int64(d) }

// simPort takes every frame at once and records each WriteBatch's size;
// write stallAt (from 1; 0: none) takes stall of the simulated clock, as
// if the machine took the sender's core away.
type simPort struct {
	*memport.Port
	clock   *simClock
	stallAt int
	stall   time.Duration
	// writes are the sizes of the WriteBatch calls, in order.
	writes []int
}

func (p *simPort) WriteBatch(b platform.Batch) (int, error) {
	p.writes = append(p.writes, len(b.Frames))
	if len(p.writes) == p.stallAt {
		p.clock.t += int64(p.stall)
	}
	return len(b.Frames), nil
}

func newSimPort(t *testing.T, stallAt int, stall time.Duration) *simPort {
	t.Helper()
	a, _ := memport.Pair("a", net.HardwareAddr{2, 0, 0, 0, 0, 0xa}, "b", net.HardwareAddr{2, 0, 0, 0, 0, 0xb})
	t.Cleanup(func() { _ = a.Close() })
	return &simPort{Port: a, clock: &simClock{t: int64(time.Second), step: int64(time.Microsecond)}, stallAt: stallAt, stall: stall}
}

// The pacer's schedule, on a clock that moves only as the sender reads
// it: frame j of a run is due at j/rate; frames go out in bursts of
// Rate*BurstInterval (at least 1) once a whole burst is due; after a
// stall the sender catches up a batch at a time while it owes at most
// MaxLag of frames, and skips what it owes beyond that.
func TestPacerSchedule(t *testing.T) {
	const d = 500 * time.Millisecond
	batch := platform.DefaultBatchSize
	tests := []struct {
		name    string
		rate    float64
		lag     time.Duration
		stallAt int
		stall   time.Duration
		// burst is what every write holds but those catching up.
		burst int
		// maxWrite is the largest write: burst, or a catch-up's batch.
		maxWrite int
		// slipped is the frames skipped, to within a burst.
		slipped float64
	}{
		{"20k frames/s: one frame at a time", 20_000, 0, 0, 0, 1, 1, 0},
		{"100k frames/s: bursts of 2", 100_000, 0, 0, 0, 2, 2, 0},
		{"a 1 ms stall within MaxLag is caught up a batch at a time", 100_000, 0, 100, time.Millisecond, 2, batch, 0},
		{"a 30 ms stall beyond MaxLag is skipped", 100_000, 0, 100, 30 * time.Millisecond, 2, 2, 3000},
		{"a 30 ms stall within a 1 s lag is caught up", 100_000, time.Second, 100, 30 * time.Millisecond, 2, batch, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSimPort(t, tt.stallAt, tt.stall)
			s, err := NewSender(p, Stream{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.now, s.sleep = p.clock.now, p.clock.sleep
			st, err := s.Run(context.Background(), Load{Rate: tt.rate, Duration: d, MaxLag: tt.lag})
			if err != nil {
				t.Fatal(err)
			}
			// Frames due in d: rate*d (frame 0 at once), the last
			// burst perhaps not yet whole.
			scheduled := float64(st.Offered + st.Slipped)
			if lo, hi := tt.rate*d.Seconds()-float64(tt.burst), tt.rate*d.Seconds()+1; scheduled < lo || scheduled > hi {
				t.Errorf("%.0f frames scheduled (%d offered, %d skipped) in %v at %.0f frames/s, want %.0f..%.0f",
					scheduled, st.Offered, st.Slipped, d, tt.rate, lo, hi)
			}
			if s := float64(st.Slipped); s < tt.slipped-float64(tt.burst) || s > tt.slipped {
				t.Errorf("%d frames skipped, want %.0f less at most a burst of %d", st.Slipped, tt.slipped, tt.burst)
			}
			if lo, hi := slices.Min(p.writes), slices.Max(p.writes); lo != tt.burst || hi != tt.maxWrite {
				t.Errorf("writes of %d to %d frames, want %d to %d", lo, hi, tt.burst, tt.maxWrite)
			}
			if st.Bursts != uint64(len(p.writes)) {
				t.Errorf("%d bursts counted, %d writes made", st.Bursts, len(p.writes))
			}
		})
	}
}

// An AddressSender's schedule on the same clock: 1000 frames at 10000/s
// in 99.9 ms, one frame a burst; a stall within MaxLag (20 frames at
// 10000/s) is caught up in one burst, a longer one starts the schedule
// again from its end.
func TestAddressSenderSchedule(t *testing.T) {
	const n, rate = 1000, 10_000.0
	tests := []struct {
		name     string
		stall    time.Duration
		rebased  uint64
		maxWrite int
		// elapsed is the time from the first frame to the last.
		elapsed time.Duration
	}{
		{"on schedule", 0, 0, 1, 99_900 * time.Microsecond},
		{"a 1 ms stall is caught up: the 10 frames due in it at once", time.Millisecond, 0, 10, 99_900 * time.Microsecond},
		{"a 30 ms stall starts the schedule again", 30 * time.Millisecond, 1, 1, 129_900 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSimPort(t, 500, tt.stall)
			a, err := NewAddressSender(p, Stream{}, AddressBlock{First: frame.MAC{2, 0x89, 0, 0, 0, 0}, Count: n}, VarySource)
			if err != nil {
				t.Fatal(err)
			}
			a.snd.now, a.snd.sleep = p.clock.now, p.clock.sleep
			st, err := a.Run(context.Background(), 0, n, rate)
			if err != nil {
				t.Fatal(err)
			}
			if st.Sent != n || st.Rebased != tt.rebased {
				t.Errorf("sent %d, rebased %d times; want %d, %d", st.Sent, st.Rebased, n, tt.rebased)
			}
			if got := slices.Max(p.writes); got != tt.maxWrite || slices.Min(p.writes) != 1 {
				t.Errorf("writes of %d to %d frames, want 1 to %d", slices.Min(p.writes), got, tt.maxWrite)
			}
			// Within 0.1%: the clock's steps (1 µs a read) and the
			// first frame's send time.
			want := float64(n-1) / tt.elapsed.Seconds()
			if r := st.PerSecond(); r < want*0.999 || r > want*1.001 {
				t.Errorf("offered %.1f frames/s (first send %v, last %v), want %.1f", r, st.FirstSend, st.Elapsed, want)
			}
		})
	}
}
