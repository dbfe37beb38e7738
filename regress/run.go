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

// checkSet says what is wrong with a suite's configuration c, when the
// suite runs (c set).
func checkSet[C interface{ check() error }](c *C) error {
	if c == nil {
		return nil
	}
	return (*c).check()
}

// Run runs the promisc suite as cfg says, writes the report directory
// under cfg.OutRoot and prints the header and tables on cfg.Stdout. It
// returns the results and the report directory. Whatever it changed on
// the host (namespaces, daemons, worktrees) is put back before it
// returns, also when ctx is cancelled (Ctrl-C) or a step fails.
func Run(ctx context.Context, cfg Config) (*Results, string, error) {
	if cfg.Runs < 1 || cfg.Seconds < 1 {
		return nil, "", fmt.Errorf("regress: runs %d, seconds %d: both must be at least 1", cfg.Runs, cfg.Seconds)
	}
	if cfg.Alpha <= 0 || cfg.Alpha >= 1 {
		return nil, "", fmt.Errorf("regress: alpha %v: must be between 0 and 1", cfg.Alpha)
	}
	setups, err := FindSetups(cfg.Setups)
	if err != nil {
		return nil, "", err
	}
	if cfg.Hosts != nil {
		for _, n := range cfg.Setups {
			if !slices.Contains(HostTests, n) {
				return nil, "", fmt.Errorf("regress: setup %q: not a real-host test (have %s)", n, strings.Join(HostTests, ", "))
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
	}
	if cfg.NoPromisc {
		setups = nil
	}
	for _, err := range []error{checkSet(cfg.Rate), checkSet(cfg.MsgSize), checkSet(cfg.Bulk), checkSet(cfg.RFC2889), checkSet(cfg.LB)} {
		if err != nil {
			return nil, "", err
		}
	}
	var rateSetups []RateSpec
	if cfg.Rate != nil {
		find := FindRateSetups
		if cfg.Hosts != nil {
			find = findHostRateSetups
		}
		if rateSetups, err = find(cfg.Rate.Setups); err != nil {
			return nil, "", err
		}
		if cfg.Hosts == nil && cfg.Rate.CPUTrial > 0 {
			rateSetups = withBaseline(rateSetups)
		}
	}
	if len(setups) == 0 && len(rateSetups) == 0 && cfg.MsgSize == nil && cfg.Bulk == nil && cfg.RFC2889 == nil && cfg.LB == nil {
		return nil, "", fmt.Errorf("regress: nothing to run: no promisc setup, no forwarding-rate setup, no message sizes, no bulk transfer, no address caching, no load balancing")
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
		Alpha: cfg.Alpha, MinP: stats.MinP(cfg.Runs, cfg.Runs), Environment: environment(), Setups: setups,
		Rate: cfg.Rate, RateSetups: rateSetups, MsgSize: cfg.MsgSize, Bulk: cfg.Bulk, RFC2889: cfg.RFC2889,
	}
	res.Method = []string{
		fmt.Sprintf("iperf3 TCP, one stream, %d s per test. Receive: the device under test's iperf3 client with -R (the peer sends into its stack); Transmit: the same without -R; Forward: peer 1's client to peer 2's server across the bridge.", cfg.Seconds),
		fmt.Sprintf("Pinning, the same in every row: the peers' iperf3 servers on CPU %s, every iperf3 client on CPU %s (taskset); the swctl daemon is not pinned.", peerCPU, clientCPU),
		"Offloads off (ethtool -K IF tx off gso off) on every host interface (peers' eth0, br0 and its ports, the veth setup's p1) and on swctl's TAPs (trunk0, bridge0): swctl forwards without vnet headers here, so partial checksums and GSO super-frames would break TCP.",
		"Permanent neighbour entries on both sides, IPv6 off in every namespace; each setup is its own set of namespaces, each instance a fresh daemon with an empty configuration.",
		fmt.Sprintf("CPU: whole-machine /proc/stat deltas from just before each iperf3 client starts to just after it ends (%d CPUs: %.0f%% = one core busy); interrupts = irq + softirq (veth has no hardware interrupts: packet work shows as system and softirq); engine = the swctl daemon's utime+stime (/proc/PID/stat) over the same span, percent of the whole machine.", runtime.NumCPU(), 100/float64(runtime.NumCPU())),
		"Runs are interleaved per cell: patch, no patch, no patch, patch, ... (A B B A), so drift on a shared machine hits both alike.",
	}
	if cfg.Rate != nil {
		res.Method = append(res.Method, cfg.Rate.describe()...)
	}
	if cfg.MsgSize != nil {
		res.Method = append(res.Method, cfg.MsgSize.describe())
	}
	if cfg.Bulk != nil {
		res.Method = append(res.Method, cfg.Bulk.describe())
	}
	if cfg.RFC2889 != nil {
		res.Method = append(res.Method, cfg.RFC2889.describe()...)
	}
	if cfg.LB != nil {
		roles := []string{RolePatch}
		if res.Mode != "A/A" {
			roles = append(roles, RoleNoPatch)
		}
		rows, _ := cfg.LB.rows() // checked above
		res.LB = &LBResults{Config: *cfg.LB, Rows: rows, Plan: LBPlan(rows, roles, cfg.LB.Runs), Samples: []LBSample{}}
		res.Method = append(res.Method, cfg.LB.describe(pinningFor(runtime.NumCPU()))...)
	}
	cmds := &Commands{}
	trees, err := PrepareTrees(ctx, cfg.AB, "", cmds)
	if err != nil {
		return nil, "", err
	}
	defer trees.Close()
	res.Trees = trees
	if cfg.Hosts != nil {
		res.Hosts = cfg.Hosts
		if cfg.Hosts.DUT.OS != runtime.GOOS {
			trees.GOOS = cfg.Hosts.DUT.OS
		}
		trees.GOARCH = cfg.Hosts.DUT.Arch
		res.Method = hostsMethod(cfg.Hosts, cfg.Seconds, len(setups) > 0, cfg.Rate)
	}
	p := planRun(cfg, setups, rateSetups)
	if res.LB != nil {
		p.lb = res.LB.Plan
	}
	est := p.estimate(cfg, rateSetups)
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

	prog := NewProgress(cfg.Stderr, cfg.TTY, len(p.promisc)+len(p.rate)+len(p.msgSize)+len(p.bulk)+len(p.rfc2889)+len(p.lb), est.Total().Seconds())
	step := 0
	// fail ends the progress line before the error.
	fail := func(err error) (*Results, string, error) {
		if cfg.TTY {
			fmt.Fprintln(cfg.Stderr)
		}
		return nil, "", err
	}
	bedSetups, bedRate := setups, rateSetups
	if cfg.Hosts != nil {
		if err := runHosts(ctx, cfg, cfg.Hosts, setups, p.promisc, p.rate, trees, res, cmds, prog, &step); err != nil {
			return fail(err)
		}
		bedSetups, bedRate = nil, nil // ran on the hosts
	}
	for si, s := range bedSetups {
		b, err := newBed(ctx, s, si+1, work, cmds)
		if err != nil {
			return fail(err)
		}
		start, measure := promiscSteps(ctx, b, trees, cfg.Seconds, res)
		err = runPlan(prog, &step, ofSetup(p.promisc, s.Name, func(in Instance) string { return in.Setup }),
			start, measure, b.stop, func(in Instance) float64 { return promiscWeight(in, cfg.Seconds) })
		b.close()
		if err != nil {
			return fail(err)
		}
	}
	for si, s := range bedRate {
		b, err := newRateBed(ctx, s, *cfg.Rate, si+1, work, cmds, "swf", "")
		if err != nil {
			return fail(err)
		}
		err = runPlan(prog, &step, ofSetup(p.rate, s.Name, func(in RateInstance) string { return in.Setup }),
			func(in RateInstance) error { return b.start(ctx, in, trees.binaryFor(in.Role)) },
			func(in RateInstance) error {
				var window func() (WindowSample, error)
				if cfg.Rate.of(s).WindowDuration > 0 {
					window = func() (WindowSample, error) { return b.window(ctx) }
				}
				return measureSizes(res, in, cfg.Rate.Sizes, func(size int) (RateSample, error) { return b.measure(ctx, size) }, window)
			},
			b.stop, func(in RateInstance) float64 { return cfg.Rate.weightOf(rateSetups, in.Setup) })
		b.close()
		if err != nil {
			return fail(err)
		}
	}
	// The suites with a testbed of their own, each when configured, up
	// to the first error.
	env := suiteEnv{trees: trees, work: work, cmds: cmds, prog: prog, step: &step}
	if cfg.MsgSize != nil {
		err = runMsgSize(ctx, *cfg.MsgSize, p.msgSize, env, res)
	}
	if err == nil && cfg.Bulk != nil {
		err = runBulk(ctx, *cfg.Bulk, p.bulk, env, res)
	}
	if err == nil && cfg.RFC2889 != nil {
		err = runRFC2889(ctx, *cfg.RFC2889, p.rfc2889, env, res)
	}
	if err == nil && res.LB != nil {
		err = runLB(ctx, *cfg.LB, p.lb, env, res.LB)
	}
	if err != nil {
		return fail(err)
	}
	prog.Finish()
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
