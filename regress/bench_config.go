package regress

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// The comparison suite (make bench, cmd/swctl-bench): a testbed h1 —
// dut — h2 of veth pairs in network namespaces, every path through the
// dut measured side by side in one run (direct veth, the Linux kernel
// bridge, a swctl bridge with 1 and 2 workers, a roundrobin swctl trunk,
// Open vSwitch's userspace datapath without and with userspace TSO), rows
// interleaved run by run, one table of medians, spreads and ratios
// (package internal/benchtable). Raw samples go to
// bench-out/<time>/results.json (its "bench" part, the regress format). docs/BENCH.md says how to read the table.

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
