package rfc2544

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// device simulates a forwarder that loses nothing up to limit frames/s
// and, above it, drops what exceeds it: a trial of one second.
type device struct {
	// limit is the zero-loss rate in frames/s.
	limit float64
	// jitter moves the limit of each trial by up to ±jitter (a fraction).
	jitter float64
	// rng draws the jitter; seeded, so runs repeat.
	rng *rand.Rand
	// calls counts trials.
	calls int
}

func (d *device) trial(rate float64) (uint64, uint64, error) {
	d.calls++
	limit := d.limit
	if d.jitter > 0 {
		limit *= 1 + d.jitter*(2*d.rng.Float64()-1)
	}
	sent := uint64(math.Round(rate))
	if rate <= limit {
		return sent, sent, nil
	}
	return sent, uint64(math.Round(limit)), nil
}

func newDevice(limit, jitter float64) *device {
	return &device{limit: limit, jitter: jitter, rng: rand.New(rand.NewPCG(1, 2))}
}

func TestSearchConverges(t *testing.T) {
	tests := []struct {
		name       string
		dev        *device
		lo, hi     float64
		resolution float64
		tolerance  float64
		wantLo     float64 // result at least this
		wantHi     float64 // and at most this
	}{
		{name: "exact device, 1 k resolution", dev: newDevice(734_000, 0), hi: 1_100_000, resolution: 1000,
			wantLo: 733_000, wantHi: 734_000},
		{name: "exact device, 10 frames/s resolution", dev: newDevice(734_000, 0), hi: 2_000_000, resolution: 10,
			wantLo: 733_990, wantHi: 734_000},
		{name: "nonzero lower bound", dev: newDevice(734_000, 0), lo: 500_000, hi: 1_000_000, resolution: 1000,
			wantLo: 733_000, wantHi: 734_000},
		{name: "noisy device (limit ±0.5% per trial)", dev: newDevice(734_000, 0.005), hi: 1_100_000, resolution: 1000,
			wantLo: 734_000*0.995 - 1000, wantHi: 734_000 * 1.005},
		{name: "1% loss tolerated", dev: newDevice(734_000, 0), hi: 1_100_000, resolution: 100, tolerance: 0.01,
			wantLo: 734_000/0.99 - 100, wantHi: 734_000 / 0.99},
		{name: "upper bound passes: one trial", dev: newDevice(734_000, 0), hi: 600_000, resolution: 1000,
			wantLo: 600_000, wantHi: 600_000},
		{name: "nothing passes: rate 0", dev: newDevice(734_000, 0), lo: 800_000, hi: 900_000, resolution: 1000,
			wantLo: 0, wantHi: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Search(context.Background(), tt.dev.trial, tt.lo, tt.hi, tt.resolution, 0, tt.tolerance)
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			if res.Rate < tt.wantLo || res.Rate > tt.wantHi {
				t.Errorf("rate %.0f, want %.0f..%.0f", res.Rate, tt.wantLo, tt.wantHi)
			}
			if !res.Converged {
				t.Errorf("not converged: interval %.0f..%.0f", res.Lo, res.Hi)
			}
			if len(res.Trials) != tt.dev.calls {
				t.Errorf("%d trials recorded, %d run", len(res.Trials), tt.dev.calls)
			}
		})
	}
}

func TestSearchTrialCount(t *testing.T) {
	// A binary search over 1.1 M at 1 k resolution halves 11 times
	// (1.1 M / 2^11 < 1 k), after the first trial at the upper bound.
	dev := newDevice(734_000, 0)
	res, err := Search(context.Background(), dev.trial, 0, 1_100_000, 1000, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 12 {
		t.Errorf("%d trials, want 12", len(res.Trials))
	}
	if res.Trials[0].Rate != 1_100_000 || res.Trials[0].Pass {
		t.Errorf("first trial %+v, want a failing one at the upper bound", res.Trials[0])
	}
	for _, tr := range res.Trials {
		if tr.Pass != (tr.Rate <= 734_000) {
			t.Errorf("trial at %.0f: pass = %v, want %v", tr.Rate, tr.Pass, tr.Rate <= 734_000)
		}
		if tr.Sent == 0 {
			t.Errorf("trial at %.0f: sent not recorded", tr.Rate)
		}
	}
}

func TestSearchStopsAtMaxTrials(t *testing.T) {
	dev := newDevice(734_000, 0)
	res, err := Search(context.Background(), dev.trial, 0, 1_100_000, 1, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 3 || dev.calls != 3 {
		t.Errorf("%d trials recorded, %d run; want 3", len(res.Trials), dev.calls)
	}
	if res.Converged {
		t.Errorf("converged after 3 trials at resolution 1: interval %.0f..%.0f", res.Lo, res.Hi)
	}
}

func TestSearchTrialError(t *testing.T) {
	calls := 0
	trial := func(rate float64) (uint64, uint64, error) {
		calls++
		if calls == 2 {
			return 10, 0, errors.New("eth0: link down")
		}
		return 10, 0, nil
	}
	res, err := Search(context.Background(), trial, 0, 1000, 1, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "trial at 500 frames/s: eth0: link down") {
		t.Fatalf("error %v, want the trial's, naming its rate", err)
	}
	if len(res.Trials) != 2 {
		t.Errorf("%d trials recorded, want 2 (the failing one included)", len(res.Trials))
	}
}

func TestSearchCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	trial := func(rate float64) (uint64, uint64, error) {
		calls++
		cancel()
		return 10, 0, nil
	}
	_, err := Search(ctx, trial, 0, 1000, 1, 0, 0)
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("error %v after %d trials, want context.Canceled after 1", err, calls)
	}
}

func TestSearchRefusesBadArguments(t *testing.T) {
	never := func(float64) (uint64, uint64, error) { t.Fatal("trial run"); return 0, 0, nil }
	tests := []struct {
		name               string
		lo, hi, resolution float64
		maxTrials          int
		tolerance          float64
		want               string
	}{
		{"hi below lo", 10, 5, 1, 0, 0, "search bounds 10..5"},
		{"negative lo", -1, 5, 1, 0, 0, "search bounds -1..5"},
		{"infinite hi", 0, math.Inf(1), 1, 0, 0, "search bounds 0..+Inf"},
		{"zero resolution", 0, 5, 0, 0, 0, "resolution 0"},
		{"negative max trials", 0, 5, 1, -1, 0, "max trials -1"},
		{"tolerance 1", 0, 5, 1, 0, 1, "loss tolerance 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Search(context.Background(), never, tt.lo, tt.hi, tt.resolution, tt.maxTrials, tt.tolerance)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
