// Command swctl-bench is `make bench`: it builds a testbed h1 — dut — h2
// of veth pairs in network namespaces and measures every path through the
// dut side by side in one run (direct veth, the Linux kernel bridge, a
// swctl bridge with 1 and 2 workers, a roundrobin swctl trunk, Open
// vSwitch's userspace datapath without and with userspace TSO), rows
// interleaved run by run, and prints one table of medians, spreads and
// ratios (package regress: the rows are setups of its forwarding-rate
// testbed). Raw samples go to bench-out/<time>/results.json, the regress
// format. docs/BENCH.md says how to read the table.
//
// It needs root on Linux.
package main

import (
	"fmt"
	"os"

	"github.com/swctl/swctl/regress"
)

func main() {
	cfg, err := regress.ParseBenchFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "swctl-bench: %v\n", err)
		os.Exit(2)
	}
	if err := regress.RunBench(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "swctl-bench: %v\n", err)
		os.Exit(1)
	}
}
