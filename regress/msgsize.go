package regress

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
)

// MsgSizes are the message (write) sizes of the TCP stream suite, the
// netperf form: 1 byte to 64 KiB in powers of four.
var MsgSizes = []int{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536}

// MsgSizeConfig configures the TCP-stream-by-message-size suite (suite
// item 4): iperf3 TCP with -l SIZE from peer to peer across a swctl
// bridge, the bridge0 Forward path.
type MsgSizeConfig struct {
	// Sizes are the message sizes in bytes, iperf3's -l.
	Sizes []int `json:"sizes"`
	// Seconds is the length of one iperf3 test.
	Seconds int `json:"seconds"`
}

// QuickMsgSizes are the message sizes of the quick form: every other
// one, 1 byte to 64 KiB in powers of sixteen, to stay within the quick
// suite's three minutes.
var QuickMsgSizes = []int{1, 16, 256, 4096, 65536}

// DefaultMsgSizeConfig returns the message-size settings of a mode:
// QuickMsgSizes at 1 s per test (quick) or 4 s (default, to keep the
// default run under 45 minutes), every size at 10 s (full).
func DefaultMsgSizeConfig(quick, full bool) MsgSizeConfig {
	switch {
	case full:
		return MsgSizeConfig{Sizes: slices.Clone(MsgSizes), Seconds: 10}
	case quick:
		return MsgSizeConfig{Sizes: slices.Clone(QuickMsgSizes), Seconds: 1}
	}
	return MsgSizeConfig{Sizes: slices.Clone(QuickMsgSizes), Seconds: 4}
}

// ParseMsgSizes reads a comma-separated list of message sizes.
func ParseMsgSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("message size %q: not a number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// msgSizeMax is iperf3's largest TCP block (-l) in bytes.
const msgSizeMax = 128 << 20

// check says what is wrong with c.
func (c MsgSizeConfig) check() error {
	if len(c.Sizes) == 0 {
		return fmt.Errorf("regress: message sizes: none given")
	}
	for i, s := range c.Sizes {
		if s < 1 || s > msgSizeMax {
			return fmt.Errorf("regress: message size %d: out of range 1-%d bytes", s, msgSizeMax)
		}
		if slices.Contains(c.Sizes[:i], s) {
			return fmt.Errorf("regress: message size %d: given twice", s)
		}
	}
	if c.Seconds < 1 {
		return fmt.Errorf("regress: message sizes: seconds %d: want at least 1", c.Seconds)
	}
	return nil
}

// weight is the planned seconds of one instance, for the progress line.
func (c MsgSizeConfig) weight() float64 {
	return float64(len(c.Sizes))*(float64(c.Seconds)+0.5) + 1.5
}

// describe is the suite's method text for report.md.
func (c MsgSizeConfig) describe() string {
	return fmt.Sprintf("TCP stream by message size (the netperf form): iperf3 TCP, one stream, -l SIZE for SIZE in %v bytes, %d s per test, peer 1's client (CPU %s) to peer 2's server (CPU %s) across a swctl bridge (the bridge0 testbed's Forward path, members promiscuous); each instance (a daemon start) runs every size in order; CPU as in the promisc tables.",
		c.Sizes, c.Seconds, clientCPU, peerCPU)
}

// MsgSizeSetup is the promisc setup whose Forward path the message-size
// suite runs over.
const MsgSizeSetup = "bridge0"

// MsgSizeInstance is one start of the bridge with one binary: every
// message size, one run.
type MsgSizeInstance struct {
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1.
	Run int `json:"run"`
	// Sizes are the message sizes measured, in order.
	Sizes []int `json:"sizes"`
}

// String describes the instance for the progress line.
func (in MsgSizeInstance) String() string {
	return fmt.Sprintf("message sizes %s %s run %d", MsgSizeSetup, in.Role, in.Run)
}

// MsgSizePlan orders the message-size instances: runs alternate A B, B A,
// ... like Plan, every instance measuring all of c.Sizes.
func MsgSizePlan(c MsgSizeConfig, runs int) []MsgSizeInstance {
	return abPlan(runs, func(role string, run int) MsgSizeInstance {
		return MsgSizeInstance{Role: role, Run: run, Sizes: slices.Clone(c.Sizes)}
	})
}

// MsgSizeSample is one iperf3 test of one message size.
type MsgSizeSample struct {
	// Size is the message size, iperf3's -l.
	Size int `json:"size"`
	// Sample is the test (Setup bridge0, Row Forward, Seq counting the
	// message-size samples).
	Sample
}

// msgSizeMetrics are the figures summarised per message size; the first
// two are the printed table's column pairs.
var msgSizeMetrics = []struct {
	// Key names the metric in results.json.
	Key string
	// Value extracts the metric from a sample (ok false: not measured).
	Value func(s MsgSizeSample) (float64, bool)
}{
	{"throughput", func(s MsgSizeSample) (float64, bool) { return s.Mbps, true }},
	{"system", func(s MsgSizeSample) (float64, bool) { return s.CPU.System, true }},
	{"interrupts", func(s MsgSizeSample) (float64, bool) { return s.CPU.Interrupts, true }},
	{"engine", func(s MsgSizeSample) (float64, bool) {
		if s.EngineCPU == nil {
			return 0, false
		}
		return *s.EngineCPU, true
	}},
	{"retransmits", func(s MsgSizeSample) (float64, bool) { return float64(s.Retransmits), true }},
}

// AnalyzeMsgSize summarises message-size samples per metric, size and
// role and compares patch with no patch.
func AnalyzeMsgSize(sizes []int, samples []MsgSizeSample, alpha float64) []RoleCell {
	var out []RoleCell
	for _, m := range msgSizeMetrics {
		for _, size := range sizes {
			vals := map[string][]float64{}
			for _, x := range samples {
				if x.Size == size {
					if v, ok := m.Value(x); ok {
						vals[x.Role] = append(vals[x.Role], v)
					}
				}
			}
			out = append(out, roleCells(RoleCell{Setup: MsgSizeSetup, Metric: m.Key, Size: size}, vals, alpha)...)
		}
	}
	return out
}

// MsgSizeTable builds the message-size table: a row per size, Mb/s and
// CPU system %, patch beside no patch.
func MsgSizeTable(sizes []int, cells []RoleCell) PairTable {
	t := PairTable{Title: "TCP stream by message size (Mb/s, CPU system %)", Label: "bytes",
		Cols: []string{"Mb/s", "system %"}, Formats: []string{"%.2f", "%.2f"}}
	for _, size := range sizes {
		mb := pairCells(cells, RoleCell{Setup: MsgSizeSetup, Metric: "throughput", Size: size})
		sys := pairCells(cells, RoleCell{Setup: MsgSizeSetup, Metric: "system", Size: size})
		t.Rows = append(t.Rows, PairRow{Label: strconv.Itoa(size), Cells: []Cell{mb[0], mb[1], sys[0], sys[1]}})
	}
	return t
}

// newForwardBed builds the testbed of setup for a suite that measures
// its Forward path, with pairs host pairs (0 = the setup's). A directory
// of its own (work/name) keeps the daemons' sockets and configurations
// apart from the promisc setups' (same names), and an index idx after
// theirs the namespaces, subnet and MACs.
func newForwardBed(ctx context.Context, setup, name string, idx, pairs int, work string, cmds *Commands) (*bed, error) {
	spec, err := FindSetups([]string{setup})
	if err != nil {
		return nil, err
	}
	spec[0].Pairs = cmp.Or(pairs, spec[0].Pairs)
	dir := filepath.Join(work, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b, err := newBed(ctx, spec[0], len(Setups)+idx, dir, cmds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// startForward starts role's daemon on b for run of setup's Forward path.
func (b *bed) startForward(ctx context.Context, setup, role string, run int, trees *Trees) error {
	return b.start(ctx, Instance{Setup: setup, Promisc: true, Role: role, Run: run, Rows: []string{RowForward}}, trees.binaryFor(role))
}

// runMsgSize runs the message-size suite on a bridge0 testbed of its own
// and appends its samples to res.
func runMsgSize(ctx context.Context, cfg Config, plan []MsgSizeInstance, trees *Trees, work string, cmds *Commands, prog *Progress, step *int, res *Results) error {
	b, err := newForwardBed(ctx, MsgSizeSetup, "msgsize", 1, 0, work, cmds)
	if err != nil {
		return err
	}
	defer b.close()
	return runPlan(prog, step, plan,
		func(in MsgSizeInstance) error { return b.startForward(ctx, MsgSizeSetup, in.Role, in.Run, trees) },
		func(in MsgSizeInstance) error {
			for _, size := range in.Sizes {
				smp, err := measureMsgSize(ctx, b, size, cfg.MsgSize.Seconds)
				if err != nil {
					return fmt.Errorf("message size %d: %w", size, err)
				}
				smp.Setup, smp.Promisc, smp.Role, smp.Run, smp.Seq = MsgSizeSetup, true, in.Role, in.Run, len(res.MsgSizeSamples)+1
				res.MsgSizeSamples = append(res.MsgSizeSamples, MsgSizeSample{Size: size, Sample: smp})
			}
			return nil
		},
		b.stop, func(MsgSizeInstance) float64 { return cfg.MsgSize.weight() })
}

// writeMsgSizeChart writes msgsize-bridge0.svg: Mb/s by message size (log
// scale), patch and no patch; it returns the file name, or none when the
// suite did not run.
func writeMsgSizeChart(dir string, r *Results) ([]string, error) {
	if r.MsgSize == nil || len(r.MsgSizeCells) == 0 {
		return nil, nil
	}
	var series []chartSeries
	for _, se := range []struct{ label, role string }{{"patch", RolePatch}, {"no patch", RoleNoPatch}} {
		cs := chartSeries{Label: se.label}
		for _, size := range r.MsgSize.Sizes {
			cell := chartCell{}
			for _, c := range r.MsgSizeCells {
				if c.Metric == "throughput" && c.Role == se.role && c.Size == size {
					cell = roleChartCell(c)
				}
			}
			cs.X, cs.Cells = append(cs.X, float64(size)), append(cs.Cells, cell)
		}
		series = append(series, cs)
	}
	file := "msgsize-" + MsgSizeSetup + ".svg"
	p, err := lineChart("TCP stream by message size through "+MsgSizeSetup+", patch vs no patch", "message size, bytes (iperf3 -l)", "throughput, Mb/s", true, series)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", file, err)
	}
	if err := saveChart(p, 6*vg.Inch, 4*vg.Inch, r.Alpha, filepath.Join(dir, file)); err != nil {
		return nil, err
	}
	return []string{file}, nil
}
