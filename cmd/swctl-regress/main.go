// Command swctl-regress runs swctl's regress suite (make regress): the
// promisc A/B tables for veth, trunk0 and bridge0, the forwarding-rate
// tables (frames/s, RFC 2544 zero-loss rate, loss; the frame-loss-rate
// steps in FULL mode; the window benchmark) through a swctl bridge and a
// swctl trunk, TCP stream throughput by message size across the bridge,
// and the bridge's RFC 2889 address caching capacity and learning rate,
// and, when asked for (-suites lb, make bench-lb), HTTP requests/s and
// the balancer's CPU per request from wrk to nginx directly and through
// swctl lb, nftables and HAProxy, comparing a "patch" and a "no patch"
// build of swctl
// on a self-built netns testbed, or on real test hosts named by a
// regress.conf (-hosts, docs/REGRESS.md). The work is done by package
// regress; this file only parses flags.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/swctl/swctl/regress"
)

func main() {
	std := regress.DefaultConfig(false, false)
	var (
		quick   = flag.Bool("quick", false, "the shortest form: 1 run of 3 s per cell and role (overrides -runs and -seconds unless they are given)")
		full    = flag.Bool("full", false, "the long form: forwarding rate at every RFC 2544 frame size with 10 s trials and latency at the zero-loss rate")
		runs    = flag.Int("runs", std.Runs, "runs per cell and role (QUICK 1)")
		seconds = flag.Int("seconds", std.Seconds, "length of one promisc iperf3 test in seconds (QUICK 3, FULL 10)")
		alpha   = flag.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
		patch   = flag.String("patch", "", "diff file: \"patch\" = the tree with it applied in a temporary worktree, \"no patch\" = the tree")
		base    = flag.String("base", "", "git revision: \"no patch\" = it, built in a temporary worktree, \"patch\" = the tree")
		setups  = flag.String("setups", "", "comma-separated promisc setups to run (veth,trunk0,bridge0; default all)")
		suites  = flag.String("suites", "promisc,rate,msgsize,bulk,rfc2889", "comma-separated suites to run: promisc (iperf3 A/B tables), rate (forwarding rate), msgsize (TCP stream by message size), bulk (one pair, two pairs at once, UDP at a fixed rate), rfc2889 (address caching capacity and learning rate), lb (HTTP load balancing: wrk and nginx through swctl lb, nftables, HAProxy; not in the default run)")
		rateSet = flag.String("rate-setups", "", "comma-separated forwarding-rate setups to run (direct,bridge0,trunk0; default bridge0, QUICK and FULL all; direct, the CPU baseline, runs whenever the CPU-cost run does)")
		trial   = flag.Duration("trial", 0, "length of a forwarding-rate run and search trial (default 500ms QUICK, 1s, 10s FULL)")
		out     = flag.String("out", "regress-out", "directory that receives the <timestamp>/ report directory")
		repo    = flag.String("repo", ".", "a directory in the swctl git repository")
		hosts   = flag.String("hosts", "", "regress.conf naming real test hosts (docs/REGRESS.md) instead of the netns testbed")
		msgSize = flag.String("msg-sizes", "", "comma-separated TCP message sizes in bytes for the msgsize suite (default and QUICK 1,16,256,4096,65536; FULL 1,4,16,...,65536)")
		msgSecs = flag.Int("msg-seconds", 0, "length of one msgsize iperf3 test in seconds (default 1 QUICK, 4, 10 FULL)")
		window  = flag.Duration("window-duration", 0, "length of the window benchmark (1514-byte frames, window 16) per forwarding-rate instance (default 1s QUICK, 10s, 300s FULL; 0 = none)")
		lossRt  = flag.Bool("loss-rate", false, "run RFC 2544's frame-loss-rate steps also outside FULL")
		cpuRate = flag.Float64("cpu-rate", regress.DefaultCPURate, "paced load of the forwarding rate's CPU-per-frame run, `frames/s` (make bench's -cpu-rate)")
		cpuTrl  = flag.Duration("cpu-trial", 0, "length of the CPU-per-frame run per frame size (default 1s QUICK, 2s, 10s FULL; 0 = none)")
		udpRate = flag.Int("udp-rate", 0, "the bulk suite's UDP offered rate in Mb/s (default 300)")
		maxAddr = flag.Int("maxaddr", 0, "address-table size set on the rfc2889 suite's bridge, the capacity search's upper bound (default 16384 QUICK, 65536, 262144 FULL; swctl's own default is 8192)")
		lbRows  = flag.String("lb-rows", "", "comma-separated rows of the lb suite (direct,swctl,nftables,haproxy; default all; direct runs whenever nftables does)")
		lbRuns  = flag.Int("lb-runs", 0, "runs per row and mode of the lb suite (default 3: the tables show the median)")
		lbSecs  = flag.Int("lb-seconds", 0, "length of one wrk run of the lb suite in seconds (default 10, QUICK 2)")
		lbConns = flag.Int("lb-connections", 0, "wrk connections of the lb suite (default 16)")
	)
	flag.Parse()
	def := regress.DefaultConfig(*quick, *full)
	run := map[string]bool{}
	for _, s := range strings.Split(*suites, ",") {
		if s != "promisc" && s != "rate" && s != "msgsize" && s != "bulk" && s != "rfc2889" && s != "lb" {
			fmt.Fprintf(os.Stderr, "swctl-regress: -suites: %q: no such suite (have promisc, rate, msgsize, bulk, rfc2889, lb)\n", s)
			os.Exit(2)
		}
		run[s] = true
	}
	// Each suite's settings, when it runs: the mode's, changed by the flags.
	rate := suite(run["rate"], *def.Rate, func(rc *regress.RateConfig) {
		rc.Setups = list(*rateSet, rc.Setups)
		rc.Trial = cmp.Or(*trial, rc.Trial)
		rc.WindowDuration = given("window-duration", window, rc.WindowDuration)
		rc.LossRate = rc.LossRate || *lossRt
		rc.CPURate = *cpuRate
		rc.CPUTrial = given("cpu-trial", cpuTrl, rc.CPUTrial)
	})
	msg := suite(run["msgsize"], *def.MsgSize, func(mc *regress.MsgSizeConfig) {
		if *msgSize != "" {
			var err error
			if mc.Sizes, err = regress.ParseMsgSizes(*msgSize); err != nil {
				fmt.Fprintf(os.Stderr, "swctl-regress: -msg-sizes: %v\n", err)
				os.Exit(2)
			}
		}
		mc.Seconds = cmp.Or(*msgSecs, mc.Seconds)
	})
	bulk := suite(run["bulk"], *def.Bulk, func(bc *regress.BulkConfig) { bc.UDPMbps = cmp.Or(*udpRate, bc.UDPMbps) })
	addr := suite(run["rfc2889"], *def.RFC2889, func(ac *regress.RFC2889Config) { ac.MaxAddr = cmp.Or(*maxAddr, ac.MaxAddr) })
	lb := suite(run["lb"], regress.DefaultLBConfig(*quick), func(lc *regress.LBConfig) {
		lc.Rows = list(*lbRows, lc.Rows)
		lc.Runs, lc.Seconds, lc.Connections = cmp.Or(*lbRuns, lc.Runs), cmp.Or(*lbSecs, lc.Seconds), cmp.Or(*lbConns, lc.Connections)
	})
	var hc *regress.HostsConfig
	if *hosts != "" {
		var err error
		if hc, err = regress.LoadHostsConfig(*hosts); err != nil {
			fmt.Fprintf(os.Stderr, "swctl-regress: -hosts: %v\n", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one kills at once.
	context.AfterFunc(ctx, stop)
	_, _, err := regress.Run(ctx, regress.Config{
		AB:   regress.ABSpec{Repo: *repo, Patch: *patch, Base: *base},
		Runs: given("runs", runs, def.Runs), Seconds: given("seconds", seconds, def.Seconds),
		Alpha: *alpha, Setups: list(*setups, nil), NoPromisc: !run["promisc"], Rate: rate, MsgSize: msg, Bulk: bulk, RFC2889: addr, LB: lb, Hosts: hc, Quick: *quick,
		OutRoot: *out, Stdout: os.Stdout, Stderr: os.Stderr, TTY: regress.IsTerminal(os.Stderr),
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "swctl-regress: interrupted; the testbed (or what it changed on the test hosts) and temporary worktrees were removed")
		}
		fmt.Fprintf(os.Stderr, "swctl-regress: %v\n", err)
		os.Exit(1)
	}
}

// suite returns def changed by edit when run is set (the suite runs), nil
// otherwise.
func suite[C any](run bool, def C, edit func(*C)) *C {
	if !run {
		return nil
	}
	edit(&def)
	return &def
}

// given returns *v when flag name is on the command line, def otherwise
// (where 0 means something, so a 0 given is not the default).
func given[T any](name string, v *T, def T) T {
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			def = *v
		}
	})
	return def
}

// list splits a comma-separated flag value; def when it is empty.
func list(s string, def []string) []string {
	if s == "" {
		return def
	}
	return strings.Split(s, ",")
}
