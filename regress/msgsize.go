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
func (c MsgSizeConfig) describe() []string {
	return []string{fmt.Sprintf("TCP stream by message size (the netperf form): iperf3 TCP, one stream, -l SIZE for SIZE in %v bytes, %d s per test, peer 1's client (CPU %s) to peer 2's server (CPU %s) across a swctl bridge (the bridge0 testbed's Forward path, members promiscuous); each instance (a daemon start) runs every size in order; CPU as in the promisc tables.",
		c.Sizes, c.Seconds, clientCPU, peerCPU)}
}

// estimate is the suite's share of a run of runs runs.
func (c MsgSizeConfig) estimate(runs int) Estimate {
	return planTime("msgsize", MsgSizePlan(runs), func(RoleRun) float64 { return c.weight() })
}

// MsgSizeSetup is the promisc setup whose Forward path the message-size
// suite runs over.
const MsgSizeSetup = "bridge0"

// MsgSizePlan orders the message-size instances (a bridge start each,
// measuring every size): runs alternate A B, B A, ... like Plan.
func MsgSizePlan(runs int) []RoleRun { return roleRunPlan("message sizes "+MsgSizeSetup, runs) }

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
var msgSizeMetrics = []Metric[MsgSizeSample]{
	{Key: "throughput", Value: func(s MsgSizeSample) (float64, bool) { return s.Mbps, true }},
	{Key: "system", Value: func(s MsgSizeSample) (float64, bool) { return s.CPU.System, true }},
	{Key: "interrupts", Value: func(s MsgSizeSample) (float64, bool) { return s.CPU.Interrupts, true }},
	{Key: "engine", Value: func(s MsgSizeSample) (float64, bool) { return optional(s.EngineCPU) }},
	{Key: "retransmits", Value: func(s MsgSizeSample) (float64, bool) { return float64(s.Retransmits), true }},
}

// AnalyzeMsgSize summarises message-size samples per metric, size and
// role and compares patch with no patch.
func AnalyzeMsgSize(sizes []int, samples []MsgSizeSample, alpha float64) []RoleCell {
	return summarize(nil, msgSizeMetrics, sizePlaces(MsgSizeSetup, sizes), samples,
		func(x MsgSizeSample, at RoleCell) (string, bool) { return x.Role, x.Size == at.Size }, alpha)
}

// MsgSizeTable builds the message-size table: a row per size, Mb/s and
// CPU system %, patch beside no patch.
func MsgSizeTable(sizes []int, cells []RoleCell) Table {
	t := pairTable([]string{"TCP stream by message size (Mb/s, CPU system %)"}, "bytes", "Mb/s", "system %")
	for _, size := range sizes {
		t.Rows = append(t.Rows, pairRow(strconv.Itoa(size), []string{"%.2f", "%.2f"}, pairCells(cells, RoleCell{Setup: MsgSizeSetup, Size: size}, "throughput", "system")...))
	}
	return t
}

// runForward runs plan, the instances of a suite over the Forward path
// of setup with pairs host pairs (0 = the setup's), on a testbed of its
// own: a directory work/name keeps the daemons' sockets and
// configurations apart from the promisc setups' (same names), and an
// index idx after theirs the namespaces, subnet and MACs. measure
// measures one instance on the running bridge.
func runForward(ctx context.Context, setup, name string, idx, pairs int, plan []RoleRun, weight float64, env suiteEnv, measure func(b *bed, in RoleRun) error) error {
	spec, err := FindSetups([]string{setup})
	if err != nil {
		return err
	}
	spec[0].Pairs = cmp.Or(pairs, spec[0].Pairs)
	dir := filepath.Join(env.work, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b, err := newBed(ctx, spec[0], len(Setups)+idx, dir, env.cmds)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer b.close()
	return runPlan(env.prog, env.step, plan,
		func(in RoleRun) error {
			return b.start(ctx, Instance{Setup: setup, Promisc: true, Role: in.Role, Run: in.Run, Rows: []string{RowForward}}, env.trees.binaryFor(in.Role))
		},
		func(in RoleRun) error { return measure(b, in) },
		b.stop, func(RoleRun) float64 { return weight })
}

// run runs the message-size suite on a bridge0 testbed of its own and
// appends its samples to res.
func (c MsgSizeConfig) run(ctx context.Context, env suiteEnv, res *Results) error {
	res.MsgSize = &c
	return runForward(ctx, MsgSizeSetup, "msgsize", 1, 0, MsgSizePlan(env.runs), c.weight(), env, func(b *bed, in RoleRun) error {
		for _, size := range c.Sizes {
			smp, err := b.measure(ctx, RowForward, c.Seconds, "-l", strconv.Itoa(size))
			if err != nil {
				return fmt.Errorf("message size %d: %w", size, err)
			}
			smp.Setup, smp.Promisc, smp.Role, smp.Run, smp.Seq = MsgSizeSetup, true, in.Role, in.Run, len(res.MsgSizeSamples)+1
			res.MsgSizeSamples = append(res.MsgSizeSamples, MsgSizeSample{Size: size, Sample: smp})
		}
		return nil
	})
}

// writeMsgSizeChart writes msgsize-bridge0.svg: Mb/s by message size (log
// scale), patch and no patch; it returns the file name, or none when the
// suite did not run.
func writeMsgSizeChart(dir string, r *Results) ([]string, error) {
	if r.MsgSize == nil || len(r.MsgSizeCells) == 0 {
		return nil, nil
	}
	series := roleSeries(r.MsgSizeCells, sizePlaces(MsgSizeSetup, r.MsgSize.Sizes), "throughput")
	p, err := lineChart("TCP stream by message size through "+MsgSizeSetup+", patch vs no patch", "message size, bytes (iperf3 -l)", "throughput, Mb/s", true, series)
	return writeChart(dir, "msgsize-"+MsgSizeSetup+".svg", p, 6*vg.Inch, r.Alpha, err)
}
