package regress

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/swctl/swctl/gen"
)

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
var WindowMetrics = []struct {
	// Key names the metric in results.json.
	Key string
	// Label is the table row's name.
	Label string
	// Format formats the table's values.
	Format string
	// Value extracts the metric from a sample (ok false: not measured).
	Value func(s WindowSample) (float64, bool)
}{
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
	for _, s := range setups {
		if !slices.ContainsFunc(samples, func(x WindowSample) bool { return x.Setup == s.Name }) {
			continue // a setup without samples has no cells
		}
		for _, m := range WindowMetrics {
			vals := roleValues(samples, func(x WindowSample) (string, float64, bool) {
				v, ok := m.Value(x)
				return x.Role, v, ok && x.Setup == s.Name
			})
			out = append(out, roleCells(RoleCell{Setup: s.Name, Metric: m.Key}, vals, alpha)...)
		}
	}
	return out
}

// WindowTable builds the window-benchmark table of setup s: a row per
// figure, patch beside no patch.
func WindowTable(s RateSpec, c RateConfig, cells []RoleCell) PairTable {
	t := PairTable{
		Title: fmt.Sprintf("Window benchmark (BalanceNG: %d-byte frames, %d with FCS, window %d, %v)",
			c.WindowSize, c.WindowSize+gen.FCSLen, c.Window, c.WindowDuration),
		Head:    []string{methodLine(MethodReceiving)},
		Formats: []string{"%.0f"},
	}
	for _, m := range WindowMetrics {
		pc := pairCells(cells, RoleCell{Setup: s.Name, Metric: m.Key})
		t.Rows = append(t.Rows, PairRow{Label: m.Label, Format: m.Format, Cells: []Cell{pc[0], pc[1]}})
	}
	return t
}

// printWindowTables writes the window-benchmark table of every setup that
// has samples.
func printWindowTables(b *strings.Builder, r *Results) {
	for _, s := range r.RateSetups {
		if len(ofSetup(r.WindowCells, s.Name, cellSetup)) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n== window benchmark: %s ==\n", s.Name)
		RenderPairTable(b, WindowTable(s, *r.Rate, r.WindowCells))
	}
}
