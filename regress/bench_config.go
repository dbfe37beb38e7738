package regress

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The comparison suite (make bench, cmd/swctl-bench): the forwarding-rate
// testbed h1 — dut — h2 once per row (BenchSetups: direct veth, the Linux
// kernel bridge, swctl bridges, a roundrobin swctl trunk, Open vSwitch's
// userspace datapath without and with userspace TSO), every row measured
// side by side, rows interleaved run by run, one table of medians,
// spreads and ratios (bench_table.go). Raw samples go to
// bench-out/<time>/results.json: the rates as rate_samples, ping and
// iperf3 in its "bench" part. docs/BENCH.md says how to read the table.

// BenchConfig is the comparison suite's checked command line.
type BenchConfig struct {
	// bin is the swctl binary the swctl rows run.
	bin string
	// runs is the number of runs; every row is measured once per run.
	runs int
	// quick shortens every trial (for a check in a few minutes).
	quick bool
	// out is the directory under which a <time>/ directory gets
	// results.json and table.txt.
	out string
	// rows are the row IDs to measure, in table order.
	rows []string
	// flows is the number of flows of the generated frames.
	flows int
	// maxTrial is the length of a max-load run.
	maxTrial time.Duration
	// searchTrial is the length of one zero-loss search trial.
	searchTrial time.Duration
	// searchTrials bounds the paced trials of one search.
	searchTrials int
	// resolution is the search's resolution as a fraction of the
	// max-load rate.
	resolution float64
	// cpuRate is the paced load of the CPU measurement, frames/s.
	cpuRate float64
	// cpuTrial is its length.
	cpuTrial time.Duration
	// tcpSeconds is the length of one iperf3 test.
	tcpSeconds int
	// pings is the number of light-load pings.
	pings int
	// testerCPU runs the harness (generator and receiver), iperf3 and
	// ping; "" = no pinning.
	testerCPU string
	// forwarderCPU runs swctl daemon and ovs-vswitchd; "" = no pinning.
	forwarderCPU string
	// keep keeps the work directory (daemon and OVS logs).
	keep bool
}

// ParseBenchFlags reads swctl-bench's command line (without the program
// name).
func ParseBenchFlags(args []string) (BenchConfig, error) {
	fs := flag.NewFlagSet("swctl-bench", flag.ContinueOnError)
	var c BenchConfig
	var rows string
	fs.StringVar(&c.bin, "swctl", "bin/swctl", "swctl `binary` of the swctl rows")
	fs.IntVar(&c.runs, "runs", 3, "`N` runs; each measures every row once, rows interleaved")
	fs.BoolVar(&c.quick, "quick", false, "short trials (1 s max load, 0.5 s search trials, 2 s CPU and TCP, 10 pings): a check in about 3 minutes")
	fs.StringVar(&c.out, "out", "bench-out", "write results.json and table.txt under `DIR`/<time>/")
	fs.StringVar(&rows, "rows", "", "comma-separated row IDs to measure (default all: direct,kernel,swctl-w1,swctl-w2,swctl-trunk,ovs,ovs-tso)")
	fs.IntVar(&c.flows, "flows", 64, "`N` flows in the generated frames")
	fs.Float64Var(&c.cpuRate, "cpu-rate", 200000, "paced load of the CPU-per-frame measurement, `frames/s`")
	fs.StringVar(&c.testerCPU, "tester-cpu", "0", "`CPU` of the generator, iperf3 and ping (empty: no pinning)")
	fs.StringVar(&c.forwarderCPU, "forwarder-cpu", "1", "`CPU` of swctl daemon and ovs-vswitchd (empty: no pinning)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory with daemon and OVS logs")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.runs < 1 {
		return c, fmt.Errorf("-runs %d: want at least 1", c.runs)
	}
	if c.flows < 1 {
		return c, fmt.Errorf("-flows %d: want at least 1", c.flows)
	}
	if c.cpuRate <= 0 {
		return c, fmt.Errorf("-cpu-rate %v: want frames/s > 0", c.cpuRate)
	}
	c.maxTrial, c.searchTrial, c.searchTrials, c.resolution = 2*time.Second, time.Second, 8, 0.01
	c.cpuTrial, c.tcpSeconds, c.pings = 5*time.Second, 5, 20
	if c.quick {
		c.maxTrial, c.searchTrial, c.searchTrials, c.resolution = time.Second, 500*time.Millisecond, 5, 0.05
		c.cpuTrial, c.tcpSeconds, c.pings = 2*time.Second, 2, 10
	}
	known := map[string]bool{}
	for _, r := range allRows() {
		known[r] = true
	}
	if rows == "" {
		c.rows = allRows()
	} else {
		want := map[string]bool{}
		for _, r := range strings.Split(rows, ",") {
			r = strings.TrimSpace(r)
			if !known[r] {
				return c, fmt.Errorf("-rows: no row %q (rows: %s)", r, strings.Join(allRows(), ","))
			}
			want[r] = true
		}
		for _, r := range allRows() {
			if want[r] {
				c.rows = append(c.rows, r)
			}
		}
	}
	return c, nil
}

// BenchSetups are make bench's rows, in table order: setups of the
// forwarding-rate testbed (rateBed), the baseline first.
var BenchSetups = []RateSpec{
	{Name: "direct", Label: "direct veth (no dut)", Baseline: true, Method: MethodCounting,
		Desc: "no device under test: h1's eth0 cabled straight to h2's eth0"},
	{Name: "kernel", Label: "Linux kernel bridge", Forwarder: FwdKernel, Method: MethodCounting,
		Desc: "a Linux bridge br0 over p1 and p2"},
	{Name: "swctl-w1", Label: "swctl bridge, 1 worker", Forwarder: FwdSwctl, Workers: 1, Method: MethodCounting,
		Desc: "swctl daemon --workers 1, bridge0 over p1 and p2"},
	{Name: "swctl-w2", Label: "swctl bridge, 2 workers", Forwarder: FwdSwctl, Workers: 2, Method: MethodCounting,
		Desc: "swctl daemon --workers 2, bridge0 over p1 and p2"},
	{Name: "swctl-poll", Label: "swctl bridge, busy poll", Forwarder: FwdSwctl, Workers: 1, BusyPoll: true, Method: MethodCounting,
		Desc: "swctl daemon --workers 1 --busy-poll, bridge0 over p1 and p2"},
	{Name: "swctl-trunk", Label: "swctl trunk roundrobin x2", Forwarder: FwdSwctl, Workers: 1, Trunk: true, Method: MethodCounting,
		Desc: "swctl daemon --workers 1, bridge0 over p1 and a roundrobin trunk0 of a1, a2, whose peers are h2's Linux bridge br0"},
	{Name: "ovs", Label: "OVS userspace", Forwarder: FwdOVS, Method: MethodCounting,
		Desc: "Open vSwitch, datapath_type=netdev, p1 and p2 as ports"},
	{Name: "ovs-tso", Label: "OVS userspace + TSO", Forwarder: FwdOVS, TSO: true, Method: MethodCounting,
		Desc: "the same with other_config:userspace-tso-enable=true"},
}

// allRows returns every row ID in table order.
func allRows() []string {
	ids := make([]string, len(BenchSetups))
	for i, s := range BenchSetups {
		ids[i] = s.Name
	}
	return ids
}

// benchRows returns the rows named in ids, in table order; the OVS rows
// are skipped with ovsSkip when it is not empty.
func benchRows(ids []string, ovsSkip string) []RateSpec {
	var out []RateSpec
	for _, s := range BenchSetups {
		if !slices.Contains(ids, s.Name) {
			continue
		}
		if s.Forwarder == FwdOVS {
			s.Skip = ovsSkip
		}
		out = append(out, s)
	}
	return out
}
