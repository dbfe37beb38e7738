package regress

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/stats"
)

// suiteEnv is what every suite's runner shares: the binaries, the
// temporary directory, the command log and the progress line.
type suiteEnv struct {
	// runs is the number of runs per cell and role.
	runs int
	// trees gives the swctl binary of a role.
	trees *Trees
	// work is the temporary directory testbeds keep their files in.
	work string
	// cmds runs and records commands.
	cmds *Commands
	// prog is the progress line; step counts its steps.
	prog *Progress
	// step is the number of the instance running, shared by the suites.
	step *int
}

// suite is one suite of a run as Run drives it: its configuration
// checked, its method described, its instances planned and weighed for
// the estimate and the progress line, then run.
type suite interface {
	// check says what is wrong with the suite's configuration.
	check() error
	// describe is the suite's method text for report.md.
	describe() []string
	// estimate is the suite's share of a run of runs runs per cell and
	// role: a SuiteTime per part with instances.
	estimate(runs int) Estimate
	// run runs the suite's instances on env and records its
	// configuration and samples in res.
	run(ctx context.Context, env suiteEnv, res *Results) error
}

// suites checks cfg and returns its suites in the order they run. On
// real test hosts the promisc and forwarding-rate suites share their
// testbed (hostsSuite), the forwarding rate runs without its CPU-cost
// run, and the suites the hosts do not have are left out (said on
// cfg.Stderr); cfg is changed to what runs.
func (cfg *Config) suites() ([]suite, error) {
	if cfg.Runs < 1 || cfg.Seconds < 1 {
		return nil, fmt.Errorf("regress: runs %d, seconds %d: both must be at least 1", cfg.Runs, cfg.Seconds)
	}
	if cfg.Alpha <= 0 || cfg.Alpha >= 1 {
		return nil, fmt.Errorf("regress: alpha %v: must be between 0 and 1", cfg.Alpha)
	}
	setups, err := FindSetups(cfg.Setups)
	if err != nil && cfg.Hosts == nil { // real-host setups are checked below
		return nil, err
	}
	find := FindRateSetups
	if cfg.Hosts != nil {
		for _, n := range cfg.Setups {
			if !slices.Contains(HostTests, n) {
				return nil, fmt.Errorf("regress: setup %q: not a real-host test (have %s)", n, strings.Join(HostTests, ", "))
			}
		}
		setups = hostSetups(cfg.Hosts.Tests)
		if len(cfg.Setups) > 0 {
			setups = hostSetups(cfg.Setups)
		}
		if cfg.Rate != nil && slices.Contains(cfg.Hosts.Tests, hostRateTest) {
			rc := *cfg.Rate
			rc.CPUTrial = 0 // the peer's swctl bench makes no CPU-per-frame run
			cfg.Rate = &rc
		} else {
			cfg.Rate = nil // not asked for, or regress.conf's [tests] run leaves it out
		}
		// The suites the real-host testbed does not have.
		for _, s := range []struct {
			set  bool
			what string
		}{{cfg.MsgSize != nil, "TCP stream by message size"}, {cfg.Bulk != nil, "bulk transfer (two pairs, UDP)"},
			{cfg.RFC2889 != nil, "address caching (RFC 2889)"}, {cfg.LB != nil, "HTTP load balancing"}} {
			if s.set {
				fmt.Fprintf(cfg.Stderr, "regress: %s on real test hosts is not implemented yet; skipping it\n", s.what)
			}
		}
		cfg.MsgSize, cfg.Bulk, cfg.RFC2889, cfg.LB = nil, nil, nil, nil
		find = findHostRateSetups
	}
	if cfg.NoPromisc {
		setups = nil
	}
	var rateSetups []RateSpec
	if cfg.Rate != nil {
		if rateSetups, err = find(cfg.Rate.Setups); err != nil {
			return nil, err
		}
		if cfg.Hosts == nil && cfg.Rate.CPUTrial > 0 {
			rateSetups = withBaseline(rateSetups)
		}
	}
	var out []suite
	switch {
	case cfg.Hosts != nil && len(setups)+len(rateSetups) > 0:
		out = append(out, hostsSuite{*cfg, setups, rateSetups})
	case cfg.Hosts == nil && len(setups) > 0:
		out = append(out, promiscSuite{setups, cfg.Seconds})
	}
	if cfg.Hosts == nil && len(rateSetups) > 0 {
		out = append(out, rateSuite{cfg.Rate, rateSetups})
	}
	out = slices.Concat(out, asked(cfg.MsgSize), asked(cfg.Bulk), asked(cfg.RFC2889))
	if cfg.LB != nil {
		out = append(out, lbSuite{*cfg.LB, lbRoles(cfg.AB.Mode())})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("regress: nothing to run: no promisc setup, no forwarding-rate setup, no message sizes, no bulk transfer, no address caching, no load balancing")
	}
	for _, s := range out {
		if err := s.check(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// asked is the suite c as a list: none when c is nil (not asked for).
func asked[S suite](c *S) []suite {
	if c == nil {
		return nil
	}
	return []suite{*c}
}

// Run runs the suites cfg names, writes the report directory under
// cfg.OutRoot and prints the header and tables on cfg.Stdout. It
// returns the results and the report directory. Whatever it changed on
// the host (namespaces, daemons, worktrees) is put back before it
// returns, also when ctx is cancelled (Ctrl-C) or a step fails.
func Run(ctx context.Context, cfg Config) (*Results, string, error) {
	suites, err := cfg.suites()
	if err != nil {
		return nil, "", err
	}
	check := checkHost
	if cfg.Hosts != nil {
		check = func() error { return checkHarness(cfg.Hosts) }
	}
	if err := check(); err != nil {
		return nil, "", err
	}
	res := &Results{
		Version: ResultsVersion, Started: time.Now(), Mode: cfg.AB.Mode(), Quick: cfg.Quick, Runs: cfg.Runs, Seconds: cfg.Seconds,
		Alpha: cfg.Alpha, MinP: stats.MinP(cfg.Runs, cfg.Runs), Environment: environment(), Hosts: cfg.Hosts,
	}
	if cfg.Hosts == nil {
		res.Method = []string{
			fmt.Sprintf("iperf3 TCP, one stream, %d s per test. Receive: the device under test's iperf3 client with -R (the peer sends into its stack); Transmit: the same without -R; Forward: peer 1's client to peer 2's server across the bridge.", cfg.Seconds),
			fmt.Sprintf("Pinning, the same in every row: the peers' iperf3 servers on CPU %s, every iperf3 client on CPU %s (taskset); the swctl daemon is not pinned.", peerCPU, clientCPU),
			"Offloads off (ethtool -K IF tx off gso off) on every host interface (peers' eth0, br0 and its ports, the veth setup's p1) and on swctl's TAPs (trunk0, bridge0): swctl forwards without vnet headers here, so partial checksums and GSO super-frames would break TCP.",
			"Permanent neighbour entries on both sides, IPv6 off in every namespace; each setup is its own set of namespaces, each instance a fresh daemon with an empty configuration.",
			fmt.Sprintf("CPU: whole-machine /proc/stat deltas from just before each iperf3 client starts to just after it ends (%d CPUs: %.0f%% = one core busy); interrupts = irq + softirq (veth has no hardware interrupts: packet work shows as system and softirq); engine = the swctl daemon's utime+stime (/proc/PID/stat) over the same span, percent of the whole machine.", runtime.NumCPU(), 100/float64(runtime.NumCPU())),
			"Runs are interleaved per cell: patch, no patch, no patch, patch, ... (A B B A), so drift on a shared machine hits both alike.",
		}
	}
	var est Estimate
	for _, s := range suites {
		res.Method = append(res.Method, s.describe()...)
		est = append(est, s.estimate(cfg.Runs)...)
	}
	cmds := &Commands{}
	trees, err := PrepareTrees(ctx, cfg.AB, "", cmds)
	if err != nil {
		return nil, "", err
	}
	defer trees.Close()
	res.Trees = trees
	if cfg.Hosts != nil {
		if cfg.Hosts.DUT.OS != runtime.GOOS {
			trees.GOOS = cfg.Hosts.DUT.OS
		}
		trees.GOARCH = cfg.Hosts.DUT.Arch
	}
	fmt.Fprintf(cfg.Stderr, "regress: %s, after building swctl\n", est)
	fmt.Fprintf(cfg.Stderr, "regress: building swctl (%s)\n", trees.Mode)
	if err := trees.Build(ctx); err != nil {
		return nil, "", err
	}
	work, err := os.MkdirTemp("", "swctl-regress-bed-")
	if err != nil {
		return nil, "", fmt.Errorf("regress: temporary directory: %w", err)
	}
	defer os.RemoveAll(work)

	env := suiteEnv{runs: cfg.Runs, trees: trees, work: work, cmds: cmds, prog: NewProgress(cfg.Stderr, cfg.TTY, est.Instances(), est.Total().Seconds()), step: new(int)}
	for _, s := range suites {
		if err := s.run(ctx, env, res); err != nil {
			if cfg.TTY { // end the progress line before the error
				fmt.Fprintln(cfg.Stderr)
			}
			return nil, "", err
		}
	}
	env.prog.Finish()
	res.Finished = time.Now()
	res.Environment.LoadEnd = loadavg()
	analyzeExtra(res, cfg.Alpha)
	res.Commands = cmds.Log
	dir := filepath.Join(cfg.OutRoot, res.Started.Format("20060102-150405"))
	if err := WriteReport(dir, res); err != nil {
		return res, "", err
	}
	fmt.Fprintf(cfg.Stdout, "%s\n\n", strings.Join(Header(res), "\n"))
	printAllTables(cfg.Stdout, res)
	fmt.Fprintf(cfg.Stdout, "\nreport: %s (report.md, results.json, charts)\n", dir)
	return res, dir, nil
}

// hostsSuite is the promisc and forwarding-rate suites on the real test
// hosts of cfg.Hosts, which run them on one testbed.
type hostsSuite struct {
	cfg        Config
	setups     []SetupSpec
	rateSetups []RateSpec
}

// check says what is wrong with the forwarding rate's configuration.
func (s hostsSuite) check() error {
	if s.cfg.Rate == nil {
		return nil
	}
	return s.cfg.Rate.check()
}

// describe is the method text of both suites on the hosts.
func (s hostsSuite) describe() []string {
	return hostsMethod(s.cfg.Hosts, s.cfg.Seconds, len(s.setups) > 0, s.cfg.Rate)
}

// estimate is the shares of both suites, as on the netns testbed.
func (s hostsSuite) estimate(runs int) Estimate {
	return append(promiscSuite{s.setups, s.cfg.Seconds}.estimate(runs), rateSuite{s.cfg.Rate, s.rateSetups}.estimate(runs)...)
}

// run runs the promisc setups, then the forwarding rate, on the hosts.
func (s hostsSuite) run(ctx context.Context, env suiteEnv, res *Results) error {
	res.Setups, res.Rate, res.RateSetups = s.setups, s.cfg.Rate, s.rateSetups
	return runHosts(ctx, s.cfg, s.cfg.Hosts, s.setups, Plan(s.setups, env.runs), RatePlan(s.rateSetups, env.runs), env.trees, res, env.cmds, env.prog, env.step)
}

// promiscBed is a testbed the promisc suite runs on: the netns bed or
// the real test hosts.
type promiscBed interface {
	start(ctx context.Context, in Instance, bin string) error
	promiscuity(ctx context.Context) map[string]int
	measure(ctx context.Context, row string, seconds int, more ...string) (Sample, error)
}

// promiscSteps are the promisc suite's steps on b for runPlan: start
// brings up in's forwarder and records the promiscuity it left, measure
// runs every row of in for seconds; both append to res.
func promiscSteps(ctx context.Context, b promiscBed, trees *Trees, seconds int, res *Results) (start, measure func(Instance) error) {
	start = func(in Instance) error {
		if err := b.start(ctx, in, trees.binaryFor(in.Role)); err != nil {
			return err
		}
		res.Instances = append(res.Instances, InstanceRecord{Instance: in, Promiscuity: b.promiscuity(ctx)})
		return nil
	}
	measure = func(in Instance) error {
		for _, row := range in.Rows {
			smp, err := b.measure(ctx, row, seconds)
			if err != nil {
				return err
			}
			smp.Setup, smp.Promisc, smp.Role, smp.Run, smp.Seq = in.Setup, in.Promisc, in.Role, in.Run, len(res.Samples)+1
			res.Samples = append(res.Samples, smp)
		}
		return nil
	}
	return start, measure
}
