// Package soak judges the samples a soak run records: whether the daemon's
// memory keeps growing once warmed up, and whether its descriptors and
// goroutines come back to their baseline after each churn cycle. The
// driver (make soak, integration/soak_linux_test.go) takes the readings;
// this package only decides, so that the rules are tested on recorded
// samples.
package soak

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Sample is one reading of the daemon.
type Sample struct {
	// At is the time since the soak started.
	At time.Duration
	// RSS is the resident set size in bytes (/proc/PID/status VmRSS).
	RSS uint64
	// FDs is the number of open descriptors (/proc/PID/fd).
	FDs int
	// Goroutines is the daemon's own count (swctl_goroutines).
	Goroutines int
	// RingDrops is the sum of every port's ring-full drops so far.
	RingDrops uint64
	// RunQueueWait is the time the daemon's threads have spent runnable
	// but waiting for a CPU so far (/proc/PID/task/*/schedstat): when it
	// jumps in the minute the ring drops do, the readers were
	// descheduled by a loaded machine, not stalled by the daemon.
	RunQueueWait time.Duration
	// Load is the machine's one-minute load average (/proc/loadavg).
	Load float64
}

// Limits are the pass marks.
type Limits struct {
	// Warmup is left out of the RSS trend: caches, rings and the
	// address table fill in it.
	Warmup time.Duration
	// MaxRSSSlope is the steepest RSS trend allowed after Warmup, in
	// bytes per minute, fitted over every sample after it.
	MaxRSSSlope float64
	// MinTrendSamples is how many samples after Warmup a trend needs;
	// with fewer, the RSS check fails as inconclusive.
	MinTrendSamples int
}

// DefaultLimits are make soak's: a 5-minute warm-up, and at most 256 KiB
// per minute of growth, 7.5 MiB over a 30-minute soak: less than one
// more ring, table or batch buffer set.
var DefaultLimits = Limits{Warmup: 5 * time.Minute, MaxRSSSlope: 256 << 10, MinTrendSamples: 3}

// WarmupFor is the warm-up of a soak of duration d: DefaultLimits.Warmup,
// but at most a third of d, so that a short soak (SOAK=5m) still has a
// trend to fit.
func WarmupFor(d time.Duration) time.Duration { return min(DefaultLimits.Warmup, d/3) }

// Trend is the least-squares line through the RSS of the samples after a
// warm-up.
type Trend struct {
	// Slope is in bytes per minute.
	Slope float64
	// StdErr is the slope's standard error, in bytes per minute: how far
	// the noise of the readings (garbage collection, pages touched and
	// given back) lets it be off.
	StdErr float64
	// N is the number of samples fitted.
	N int
}

// RSSTrend fits a least-squares line to the RSS of the samples taken at
// or after warmup.
func RSSTrend(samples []Sample, warmup time.Duration) Trend {
	var xs, ys []float64
	for _, s := range samples {
		if s.At >= warmup {
			xs, ys = append(xs, s.At.Minutes()), append(ys, float64(s.RSS))
		}
	}
	tr := Trend{N: len(xs)}
	if tr.N < 2 {
		return tr
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(tr.N), my/float64(tr.N)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return tr
	}
	tr.Slope = sxy / sxx
	if tr.N > 2 {
		var rss float64
		for i := range xs {
			r := ys[i] - my - tr.Slope*(xs[i]-mx)
			rss += r * r
		}
		tr.StdErr = math.Sqrt(rss / float64(tr.N-2) / sxx)
	}
	return tr
}

// CheckRSS returns an error when the RSS keeps growing after the warm-up:
// when the fitted slope is above the limit by more than twice its
// standard error, so that a few noisy readings of a short soak do not
// pass for growth, while a long soak tells a slow leak from the noise.
// Too few samples after the warm-up to fit a trend is an error too.
func CheckRSS(samples []Sample, l Limits) error {
	tr := RSSTrend(samples, l.Warmup)
	switch {
	case tr.N < l.MinTrendSamples:
		return fmt.Errorf("RSS: %d samples after the %v warm-up, want at least %d to fit a trend", tr.N, l.Warmup, l.MinTrendSamples)
	case tr.Slope-2*tr.StdErr > l.MaxRSSSlope:
		return fmt.Errorf("RSS keeps growing after the %v warm-up: %.0f KiB/min (standard error %.0f) over %d samples, limit %.0f KiB/min",
			l.Warmup, tr.Slope/1024, tr.StdErr/1024, tr.N, l.MaxRSSSlope/1024)
	}
	return nil
}

// Cycle is the state after one churn cycle, once the daemon has settled.
type Cycle struct {
	// N numbers the cycle from 1.
	N int
	// FDs and Goroutines are the readings after it.
	FDs, Goroutines int
}

// CheckBaseline returns an error naming every cycle after which the
// descriptors or goroutines did not come back to the baseline taken
// before the churn started (base.FDs, base.Goroutines).
func CheckBaseline(base Sample, cycles []Cycle) error {
	var bad []string
	for _, c := range cycles {
		if c.FDs != base.FDs || c.Goroutines != base.Goroutines {
			bad = append(bad, fmt.Sprintf("cycle %d: %d descriptors, %d goroutines", c.N, c.FDs, c.Goroutines))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("not back to the baseline of %d descriptors and %d goroutines after %d of %d churn cycles: %s",
		base.FDs, base.Goroutines, len(bad), len(cycles), strings.Join(bad, "; "))
}

// Table writes the samples as the soak's minute-by-minute report.
func Table(samples []Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8s  %10s  %5s  %10s  %10s  %12s  %5s\n", "TIME", "RSS-KIB", "FDS", "GOROUTINES", "RING-DROPS", "RUNQ-WAIT-MS", "LOAD")
	for _, s := range samples {
		fmt.Fprintf(&b, "%8s  %10d  %5d  %10d  %10d  %12d  %5.1f\n", s.At.Round(time.Second), s.RSS>>10, s.FDs, s.Goroutines, s.RingDrops,
			s.RunQueueWait.Milliseconds(), s.Load)
	}
	return b.String()
}
