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

// BenchConfig is the comparison suite's checked command line, as
// results.json's bench part records it.
type BenchConfig struct {
	// Swctl is the swctl binary the swctl rows run.
	Swctl string `json:"swctl"`
	// Runs is the number of runs; every row is measured once per run.
	Runs int `json:"runs"`
	// Quick shortens every trial (for a check in a few minutes).
	Quick bool `json:"quick"`
	// Out is the directory under which a <time>/ directory gets
	// results.json and table.txt.
	Out string `json:"-"`
	// Rows are the row IDs to measure, in table order.
	Rows []string `json:"rows"`
	// Flows is the number of flows of the generated frames.
	Flows int `json:"flows"`
	// MaxTrial is the length of a max-load run.
	MaxTrial time.Duration `json:"max_trial_ns"`
	// SearchTrial is the length of one zero-loss search trial.
	SearchTrial time.Duration `json:"search_trial_ns"`
	// SearchTrials bounds the paced trials of one search.
	SearchTrials int `json:"search_max_trials"`
	// Resolution is the search's resolution as a fraction of the
	// max-load rate.
	Resolution float64 `json:"search_resolution"`
	// CPURate is the paced load of the CPU measurement, frames/s.
	CPURate float64 `json:"cpu_rate"`
	// CPUTrial is its length.
	CPUTrial time.Duration `json:"cpu_trial_ns"`
	// TCPSeconds is the length of one iperf3 test.
	TCPSeconds int `json:"tcp_seconds"`
	// Pings is the number of light-load pings.
	Pings int `json:"pings"`
	// TesterCPU runs the harness (generator and receiver), iperf3 and
	// ping; "" = no pinning.
	TesterCPU string `json:"tester_cpu"`
	// ForwarderCPU runs swctl daemon and ovs-vswitchd; "" = no pinning.
	ForwarderCPU string `json:"forwarder_cpu"`
	// Keep keeps the work directory (daemon and OVS logs).
	Keep bool `json:"-"`
}

// ParseBenchFlags reads swctl-bench's command line (without the program
// name).
func ParseBenchFlags(args []string) (BenchConfig, error) {
	fs := flag.NewFlagSet("swctl-bench", flag.ContinueOnError)
	var c BenchConfig
	var rows string
	fs.StringVar(&c.Swctl, "swctl", "bin/swctl", "swctl `binary` of the swctl rows")
	fs.IntVar(&c.Runs, "runs", 3, "`N` runs; each measures every row once, rows interleaved")
	fs.BoolVar(&c.Quick, "quick", false, "short trials (1 s max load, 0.5 s search trials, 2 s CPU and TCP, 10 pings): a check in about 3 minutes")
	fs.StringVar(&c.Out, "out", "bench-out", "write results.json and table.txt under `DIR`/<time>/")
	fs.StringVar(&rows, "rows", "", "comma-separated row IDs to measure (default all: direct,kernel,swctl-w1,swctl-w2,swctl-trunk,ovs,ovs-tso)")
	fs.IntVar(&c.Flows, "flows", 64, "`N` flows in the generated frames")
	fs.Float64Var(&c.CPURate, "cpu-rate", 200000, "paced load of the CPU-per-frame measurement, `frames/s`")
	fs.StringVar(&c.TesterCPU, "tester-cpu", "0", "`CPU` of the generator, iperf3 and ping (empty: no pinning)")
	fs.StringVar(&c.ForwarderCPU, "forwarder-cpu", "1", "`CPU` of swctl daemon and ovs-vswitchd (empty: no pinning)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the work directory with daemon and OVS logs")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Runs < 1 {
		return c, fmt.Errorf("-runs %d: want at least 1", c.Runs)
	}
	if c.Flows < 1 {
		return c, fmt.Errorf("-flows %d: want at least 1", c.Flows)
	}
	if c.CPURate <= 0 {
		return c, fmt.Errorf("-cpu-rate %v: want frames/s > 0", c.CPURate)
	}
	c.MaxTrial, c.SearchTrial, c.SearchTrials, c.Resolution = 2*time.Second, time.Second, 8, 0.01
	c.CPUTrial, c.TCPSeconds, c.Pings = 5*time.Second, 5, 20
	if c.Quick {
		c.MaxTrial, c.SearchTrial, c.SearchTrials, c.Resolution = time.Second, 500*time.Millisecond, 5, 0.05
		c.CPUTrial, c.TCPSeconds, c.Pings = 2*time.Second, 2, 10
	}
	var names []string
	if rows != "" {
		names = strings.Split(rows, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
	}
	specs, err := findNamed(BenchSetups, names, "-rows: row", func(s RateSpec) string { return s.Name })
	for _, s := range specs {
		c.Rows = append(c.Rows, s.Name)
	}
	return c, err
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

// benchRows returns the rows named in ids, in table order; the OVS rows
// are skipped with ovsSkip when it is not empty.
func benchRows(ids []string, ovsSkip string) []RateSpec {
	var out []RateSpec
	for _, s := range BenchSetups {
		if slices.Contains(ids, s.Name) {
			if s.Forwarder == FwdOVS {
				s.Skip = ovsSkip
			}
			out = append(out, s)
		}
	}
	return out
}
