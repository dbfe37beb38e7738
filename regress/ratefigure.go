package regress

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/cpustat"
)

// Tester methods of a forwarding-rate measurement (RateSample.Method):
// how the frames that crossed the device under test were counted.
const (
	// MethodCounting is a send-only generator, with the frames delivered
	// counted by the receiving interface's rx_packets, as make bench and
	// a hardware tester count them: nothing at the far end reads frames,
	// so the tester's receiving side takes no CPU from the path. The
	// netns testbed's rates, search and frame-loss-rate steps.
	MethodCounting = "counting"
	// MethodReceiving is the generator's own receiver reading every frame
	// at the far end (it takes CPU on the same machine): what latency
	// and the window benchmark need, and what swctl bench on a real
	// test host's peer does.
	MethodReceiving = "receiving"
)

// RateFigure is one rate measurement as the generator was asked to offer
// it, as it really sent it, and as it arrived, and whether the tester
// rather than the device under test set it.
type RateFigure struct {
	// Offered is the rate asked of the generator in frames/s; 0 for a
	// max-rate run, which offers as fast as its port takes frames.
	Offered float64 `json:"offered"`
	// Achieved is the rate the generator's port accepted, frames/s.
	Achieved float64 `json:"achieved"`
	// Delivered is the rate that arrived at the receiving side, frames/s
	// (RateSample.Method says how it was counted).
	Delivered float64 `json:"delivered"`
	// TesterBound says the generator fell short of its offer, so the
	// figure is the tester's limit and a lower bound of the device's:
	// a paced run that reached less than its rate (gen.PaceTolerance);
	// a max-rate run whose frames all arrived (the device took all the
	// generator had); a zero-loss rate found at the search's upper
	// bound, the max-rate run's sent rate.
	TesterBound bool `json:"tester_bound"`
	// Why says why TesterBound is set.
	Why string `json:"why,omitempty"`
}

// Why a figure is tester-bound (RateFigure.Why).
const (
	// WhyMaxNoLoss: a max-rate run lost nothing.
	WhyMaxNoLoss = "max-rate run without loss: the device took all the generator sent"
	// WhyAtBound: the search passed at its upper bound.
	WhyAtBound = "no loss at the search's upper bound, the max-rate run's sent rate"
)

// WhyShort: a paced run's generator fell short of its rate.
var WhyShort = fmt.Sprintf("the generator reached less than %.0f%% of the paced rate", 100*(1-gen.PaceTolerance))

// MaxFigure classifies a max-rate run: an unpaced one (Rate 0).
func MaxFigure(r gen.Result) RateFigure {
	f := PacedFigure(r)
	if r.Sent > 0 && r.Received >= r.Sent {
		f.TesterBound, f.Why = true, WhyMaxNoLoss
	}
	return f
}

// PacedFigure classifies a paced run.
func PacedFigure(r gen.Result) RateFigure {
	f := RateFigure{Offered: r.Rate, Achieved: r.SentPerSecond}
	if r.Seconds > 0 {
		f.Delivered = float64(r.Received) / r.Seconds
	}
	if r.ShortOfRate() {
		f.TesterBound, f.Why = true, WhyShort
	}
	return f
}

// ZeroLossFigure classifies the zero-loss rate of a search: trialRate is
// the paced rate of its best passing trial (0: none passed), trials its
// runs, and bound its upper bound (the max-rate run's sent rate). The
// figure is that trial's.
func ZeroLossFigure(trials []gen.Result, trialRate, bound float64) RateFigure {
	i := slices.IndexFunc(trials, func(t gen.Result) bool {
		return trialRate > 0 && t.Rate == trialRate && t.Sent > 0 && t.Received >= t.Sent
	})
	if i < 0 {
		return RateFigure{}
	}
	f := PacedFigure(trials[i])
	if !f.TesterBound && bound > 0 && trialRate >= bound {
		f.TesterBound, f.Why = true, WhyAtBound
	}
	return f
}

// classify fills s's figures (MaxRate, ZeroLossRate, ZeroLossAboveMax,
// the CPU run's) from its runs; on a version-2 sample also
// ZeroLossTrialRate.
func (s *RateSample) classify() {
	s.MaxRate = MaxFigure(s.Max.Result)
	bound := cmp.Or(s.SearchBound, s.Max.SentPerSecond)
	if s.ZeroLossTrialRate == 0 && s.ZeroLoss > 0 {
		// Version 2 did not record the passing trial's rate: a binary
		// search's best passing trial is its fastest lossless one.
		for _, t := range s.Trials {
			if t.Sent > 0 && t.Received >= t.Sent {
				s.ZeroLossTrialRate = max(s.ZeroLossTrialRate, t.Rate)
			}
		}
	}
	s.ZeroLossRate = ZeroLossFigure(s.trialResults(), s.ZeroLossTrialRate, bound)
	s.ZeroLossAboveMax = s.ZeroLoss > 0 && s.ZeroLoss > s.MaxRate.Delivered
	if s.CPU != nil {
		s.CPU.Figure = PacedFigure(s.CPU.Result)
	}
}

// trialResults are the generator's results of s's search trials.
func (s *RateSample) trialResults() []gen.Result {
	out := make([]gen.Result, len(s.Trials))
	for i, t := range s.Trials {
		out[i] = t.Result
	}
	return out
}

// CPURun is the CPU cost of forwarding one frame size: a paced run at
// RateConfig.CPURate with the machine's CPU read around it.
type CPURun struct {
	// RateRun is the paced run, with the whole machine's and the
	// daemon's CPU percentages.
	RateRun
	// Cost is the whole machine's CPU less the tester's own user time
	// (its pacer spins), per frame delivered.
	Cost cpustat.Cost `json:"cost"`
	// Err says why Cost has no per-frame figure (nothing delivered).
	Err string `json:"error,omitempty"`
	// Figure is the run's offered, achieved and delivered rate.
	Figure RateFigure `json:"figure"`
	// Baseline is the CPU ns per frame of the baseline setup (direct
	// veth: the tester alone) at this size in the same suite run, the
	// mean over its instances; nil when it was not measured, and on the
	// baseline itself.
	Baseline *float64 `json:"baseline_ns_per_frame,omitempty"`
	// Net is Cost.NsPerFrame less Baseline: the CPU the device under
	// test adds per forwarded frame; nil without a baseline.
	Net *float64 `json:"net_ns_per_frame,omitempty"`
}

// lossy says the CPU run lost frames: the device could not carry the
// load, and the cost per frame is at overload.
func (c *CPURun) lossy() bool { return c.Sent > 0 && c.Received < c.Sent }

// SaturatedIdle is the share of idle time below which a CPU run's
// machine counts as saturated.
const SaturatedIdle = 0.05

// saturated says the machine was almost never idle during the CPU run:
// other work (another process, the tester falling behind) shared it, so
// the whole machine's busy time, and the cost per frame with it, is not
// the path's alone.
func (c *CPURun) saturated() bool {
	t := c.Cost.TotalTicks
	return t > 0 && float64(t-min(c.Cost.BusyTicks, t)) < SaturatedIdle*float64(t)
}

// NetCPU sets every sample's net CPU per frame (CPURun.Baseline, Net):
// its own less the mean of the baseline setups' samples at the same
// frame size. A size without a baseline sample keeps nil.
func NetCPU(setups []RateSpec, samples []RateSample) {
	sum, n := map[int]float64{}, map[int]float64{}
	for _, s := range samples {
		if isBaseline(setups, s.Setup) && s.CPU != nil && s.CPU.Err == "" {
			sum[s.Size] += s.CPU.Cost.NsPerFrame
			n[s.Size]++
		}
	}
	for _, s := range samples {
		if c := s.CPU; c != nil && !isBaseline(setups, s.Setup) {
			c.Baseline, c.Net = nil, nil
			if n[s.Size] > 0 && c.Err == "" {
				b := sum[s.Size] / n[s.Size]
				net := c.Cost.NsPerFrame - b
				c.Baseline, c.Net = &b, &net
			}
		}
	}
}

// cellRun is one run's part in a rate cell: its figure and, for the CPU
// cell, whether it lost frames and whether the machine was saturated.
type cellRun struct {
	RateFigure
	// lossy and saturated are CPURun.lossy and saturated.
	lossy, saturated bool
}

// FigureSummary is what the runs of one rate cell offered, achieved and
// delivered (means, frames/s), and how many were tester-bound.
type FigureSummary struct {
	// Runs is the number of runs with a figure.
	Runs int `json:"runs"`
	// Offered is the mean rate asked for; 0 for max-rate runs.
	Offered float64 `json:"offered"`
	// Achieved is the mean rate the generator sent.
	Achieved float64 `json:"achieved"`
	// Delivered is the mean rate that arrived.
	Delivered float64 `json:"delivered"`
	// TesterBound is the number of tester-bound runs.
	TesterBound int `json:"tester_bound_runs"`
	// Lossy is the number of runs that lost frames (the CPU cell's
	// paced load: the device could not carry it).
	Lossy int `json:"lossy_runs,omitempty"`
	// Saturated is the number of runs whose machine had less than
	// SaturatedIdle of idle time (the CPU cell).
	Saturated int `json:"saturated_runs,omitempty"`
	// Why are the distinct reasons of the tester-bound runs.
	Why []string `json:"why,omitempty"`
}

// summarizeFigures returns the summary of runs; nil for none.
func summarizeFigures(runs []cellRun) *FigureSummary {
	if len(runs) == 0 {
		return nil
	}
	n := float64(len(runs))
	f := &FigureSummary{Runs: len(runs)}
	for _, x := range runs {
		f.Offered += x.Offered / n
		f.Achieved += x.Achieved / n
		f.Delivered += x.Delivered / n
		if x.lossy {
			f.Lossy++
		}
		if x.saturated {
			f.Saturated++
		}
		if x.TesterBound {
			f.TesterBound++
			if !slices.Contains(f.Why, x.Why) {
				f.Why = append(f.Why, x.Why)
			}
		}
	}
	return f
}

// CPUTimes is one reading of a machine's CPU time in clock ticks: from
// /proc/stat (cpustat.ParseStat), or kern.cp_time on the BSDs
// (ParseCPTime).
type CPUTimes = cpustat.Times

// CPUPercent is the share of the whole machine's time spent in each
// state between two readings (cpustat.Delta); its Interrupts are the
// "CPU (interrupts %)" table.
type CPUPercent = cpustat.Percent

// CPUDelta returns the percentages between readings a and b (b later).
func CPUDelta(a, b CPUTimes) CPUPercent { return cpustat.Delta(a, b) }
