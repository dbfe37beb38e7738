package gen

import "time"

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
	// rebased counts the schedule's new starts (AddressStats.Rebased).
	rebased uint64
}

// newPacer returns the schedule of frames at rate from start, on a port
// that writes batch frames at once: bursts of burst frames (0:
// rate*BurstInterval, at least 1; never above batch), catching up while
// at most maxLag (0: MaxLag) behind, then skipping ahead, or starting
// again for rebase.
func newPacer(rate float64, batch, burst int, maxLag time.Duration, start int64, rebase bool) pacer {
	if burst <= 0 {
		burst = max(1, int(rate*BurstInterval.Seconds()))
	}
	burst = min(burst, batch)
	if maxLag <= 0 {
		maxLag = MaxLag
	}
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

// monotonic is the clock a paced run reads and waits on: Now and
// time.Sleep (systemClock), or in tests a simulated clock whose time
// moves only as the run reads it and waits, so that the schedule can be
// checked apart from how the machine schedules the sender.
type monotonic interface {
	// now is the time in nanoseconds, as Now.
	now() int64
	// sleep waits d.
	sleep(d time.Duration)
}

// systemClock is the process's monotonic clock.
type systemClock struct{}

func (systemClock) now() int64            { return Now() }
func (systemClock) sleep(d time.Duration) { time.Sleep(d) }
