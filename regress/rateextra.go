package regress

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/swctl/swctl/gen"
)

// The forwarding-rate suite's tests beyond its rates, on the same
// testbed and instances: RFC 2544's frame loss rate (section 26.3) and
// BalanceNG's window benchmark.

// LossRateStep is the frame-loss-rate test's step, in percent of the
// maximum rate: RFC 2544 section 26.3's coarsest granularity.
const LossRateStep = 10

// LossRateSteps runs the frame loss rate test of RFC 2544 section 26.3:
// a trial at 100% of maxRate, then at 90%, 80% ... (step percentage
// points less each time) until two successive trials lose no frame, or
// the load would reach 0%. trial offers frames at rate frames/s and says
// how many were sent and how many arrived. It returns the trials in the
// order run, each with its load, frames sent and received and loss
// percentage (100 when nothing was sent); a trial's error (or ctx's)
// ends the test with the trials so far.
func LossRateSteps(ctx context.Context, maxRate float64, step int, trial func(rate float64) (sent, received uint64, err error)) ([]LossStep, error) {
	if math.IsNaN(maxRate) || math.IsInf(maxRate, 0) || maxRate <= 0 {
		return nil, fmt.Errorf("frame loss rate: maximum rate %v: want > 0 frames/s", maxRate)
	}
	if step < 1 || step > 100 {
		return nil, fmt.Errorf("frame loss rate: step %d%%: want 1-100", step)
	}
	var out []LossStep
	for pct, clean := 100, 0; pct > 0 && clean < 2; pct -= step {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		rate := maxRate * float64(pct) / 100
		sent, received, err := trial(rate)
		t := LossStep{Percent: pct}
		t.Rate, t.Sent, t.Received, t.LossPercent = rate, sent, received, 100
		if sent > 0 {
			t.LossPercent = 100 * float64(sent-min(received, sent)) / float64(sent)
		}
		out = append(out, t)
		if err != nil {
			return out, fmt.Errorf("frame loss rate: trial at %d%% (%.0f frames/s): %w", pct, rate, err)
		}
		clean++
		if received < sent || sent == 0 {
			clean = 0
		}
	}
	return out, nil
}

// LossStep is one trial of the frame-loss-rate test as it ran: the load
// in percent of the max-rate run's sent rate and the run itself
// (LossRateSteps fills the run's rate, counts and loss; the testbed
// puts the whole run in).
type LossStep struct {
	// Percent is the offered load, percent of the max-rate run's sent
	// rate (RateRun.Rate is the load in frames/s).
	Percent int `json:"percent"`
	RateRun
}

// AnalyzeLossRate summarises the frame-loss-rate trials of samples per
// setup, frame size, load (highest first) and role: metric "loss"
// (percent of frames lost) and "offered" (frames/s offered). A load a
// run did not reach (it had two successive lossless trials above it) has
// no value there; RFC 2544 counts such loads as lossless.
func AnalyzeLossRate(setups []RateSpec, sizes []int, samples []RateSample, alpha float64) []RoleCell {
	var out []RoleCell
	for _, s := range setups {
		for _, size := range sizes {
			// per load the samples' loss and offered rate, by role
			loss, offered := map[int]map[string][]float64{}, map[int]map[string][]float64{}
			for _, x := range samples {
				if x.Setup != s.Name || x.Size != size {
					continue
				}
				for _, st := range x.LossRate {
					if loss[st.Percent] == nil {
						loss[st.Percent], offered[st.Percent] = map[string][]float64{}, map[string][]float64{}
					}
					loss[st.Percent][x.Role] = append(loss[st.Percent][x.Role], st.LossPercent)
					offered[st.Percent][x.Role] = append(offered[st.Percent][x.Role], st.Rate)
				}
			}
			for _, pct := range slices.Backward(slices.Sorted(maps.Keys(loss))) {
				key := RoleCell{Setup: s.Name, Metric: "loss", Size: size, Percent: pct}
				out = append(out, roleCells(key, loss[pct], alpha)...)
				key.Metric = "offered"
				out = append(out, roleCells(key, offered[pct], alpha)...)
			}
		}
	}
	return out
}

// LossRateTable builds the frame-loss-rate table of setup s: a row per
// frame size and load, offered frames/s and loss %, patch beside no
// patch, the loads in the cells' order (AnalyzeLossRate's: highest
// first). Frame sizes show both lengths (64/60): veth carries no FCS.
func LossRateTable(s RateSpec, sizes []int, cells []RoleCell) Table {
	t := pairTable([]string{"Frame loss rate (RFC 2544 26.3: offered frames/s, loss %)", methodLine(s.Method)}, "bytes     load", "offered fps", "loss %")
	for _, size := range sizes {
		for _, c := range cells { // a patch and a no-patch cell per load, highest first
			if c.Setup == s.Name && c.Size == size && c.Metric == "loss" && c.Role == RolePatch {
				label := fmt.Sprintf("%-9s %d%%", rateLabel(size), c.Percent)
				t.Rows = append(t.Rows, pairRow(label, []string{"%.0f", "%.2f"}, pairCells(cells, c, "offered", "loss")...))
			}
		}
	}
	return t
}

// Defaults of the window benchmark: BalanceNG's benchmark, as swctl bench
// runs it by default.
const (
	// DefaultWindowSize is the frame length without FCS (1518 with it).
	DefaultWindowSize = 1514
	// DefaultWindow is the most frames in flight.
	DefaultWindow = 16
)

// WindowSample is one window-benchmark run (BalanceNG's benchmark, swctl
// bench's window mode) through one forwarding-rate setup, one instance.
type WindowSample struct {
	// Setup is the setup's name.
	Setup string `json:"setup"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1 within the setup.
	Run int `json:"run"`
	// Seq is the sample's place among the window samples, from 1.
	Seq int `json:"seq"`
	// Start is when the run began.
	Start time.Time `json:"start"`
	// RateRun is the generator's result and the CPU spent during it.
	RateRun
}

// WindowMetrics are the figures of the window-benchmark table, in row
// order: BalanceNG's packets sent, received, lost, packets/s and bytes/s,
// then the CPU.
var WindowMetrics = []Metric[WindowSample]{
	{"sent", "sent", "%.0f", func(s WindowSample) (float64, bool) { return float64(s.Sent), true }},
	{"received", "received", "%.0f", func(s WindowSample) (float64, bool) { return float64(s.Received), true }},
	{"lost", "lost", "%.0f", func(s WindowSample) (float64, bool) { return float64(s.Lost), true }},
	{"packets_per_second", "packets/s", "%.0f", func(s WindowSample) (float64, bool) { return s.PacketsPerSecond, true }},
	{"bytes_per_second", "bytes/s", "%.0f", func(s WindowSample) (float64, bool) { return s.BytesPerSecond, true }},
	{"system", "system %", "%.2f", func(s WindowSample) (float64, bool) { return s.CPU.System, true }},
	{"engine", "engine %", "%.2f", func(s WindowSample) (float64, bool) { return optional(s.EngineCPU) }},
}

// AnalyzeWindow summarises window-benchmark samples per setup, metric and
// role and compares patch with no patch.
func AnalyzeWindow(setups []RateSpec, samples []WindowSample, alpha float64) []RoleCell {
	var out []RoleCell
	for _, s := range setups { // a setup without samples has no cells
		if slices.ContainsFunc(samples, func(x WindowSample) bool { return x.Setup == s.Name }) {
			out = summarize(out, WindowMetrics, []RoleCell{{Setup: s.Name}}, samples, func(x WindowSample, at RoleCell) (string, bool) { return x.Role, x.Setup == at.Setup }, alpha)
		}
	}
	return out
}

// WindowTable builds the window-benchmark table of setup s: a row per
// figure, patch beside no patch.
func WindowTable(s RateSpec, c RateConfig, cells []RoleCell) Table {
	t := pairTable([]string{fmt.Sprintf("Window benchmark (BalanceNG: %d-byte frames, %d with FCS, window %d, %v)",
		c.WindowSize, c.WindowSize+gen.FCSLen, c.Window, c.WindowDuration), methodLine(MethodReceiving)}, "")
	for _, m := range WindowMetrics {
		t.Rows = append(t.Rows, pairRow(m.Title, []string{m.Format}, pairCells(cells, RoleCell{Setup: s.Name}, m.Key)...))
	}
	return t
}
