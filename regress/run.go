package regress

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

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
	if err := checkHost(); err != nil {
		return nil, "", err
	}
	res := &Results{
		Version: 1, Started: time.Now(), Mode: cfg.AB.Mode(), Quick: cfg.Quick, Runs: cfg.Runs, Seconds: cfg.Seconds,
		Alpha: cfg.Alpha, MinP: MinP(cfg.Runs, cfg.Runs), Environment: environment(), Setups: setups,
	}
	res.Method = []string{
		fmt.Sprintf("iperf3 TCP, one stream, %d s per test. Receive: the device under test's iperf3 client with -R (the peer sends into its stack); Transmit: the same without -R; Forward: peer 1's client to peer 2's server across the bridge.", cfg.Seconds),
		fmt.Sprintf("Pinning, the same in every row: the peers' iperf3 servers on CPU %s, every iperf3 client on CPU %s (taskset); the swctl daemon is not pinned.", peerCPU, clientCPU),
		"Offloads off (ethtool -K IF tx off gso off) on every host interface (peers' eth0, br0 and its ports, the veth setup's p1) and on swctl's TAPs (trunk0, bridge0): swctl forwards without vnet headers here, so partial checksums and GSO super-frames would break TCP.",
		"Permanent neighbour entries on both sides, IPv6 off in every namespace; each setup is its own set of namespaces, each instance a fresh daemon with an empty configuration.",
		fmt.Sprintf("CPU: whole-machine /proc/stat deltas from just before each iperf3 client starts to just after it ends (%d CPUs: %.0f%% = one core busy); interrupts = irq + softirq (veth has no hardware interrupts: packet work shows as system and softirq); engine = the swctl daemon's utime+stime (/proc/PID/stat) over the same span, percent of the whole machine.", runtime.NumCPU(), 100/float64(runtime.NumCPU())),
		"Runs are interleaved per cell: patch, no patch, no patch, patch, ... (A B B A), so drift on a shared machine hits both alike.",
	}
	cmds := &Commands{}
	defer func() { res.Commands = cmds.Log }()
	trees, err := PrepareTrees(ctx, cfg.AB, "", cmds)
	if err != nil {
		return nil, "", err
	}
	defer trees.Close()
	res.Trees = trees
	fmt.Fprintf(cfg.Stderr, "regress: building swctl (%s)\n", trees.Mode)
	if err := trees.Build(ctx); err != nil {
		return nil, "", err
	}
	work, err := os.MkdirTemp("", "swctl-regress-bed-")
	if err != nil {
		return nil, "", fmt.Errorf("regress: temporary directory: %w", err)
	}
	defer os.RemoveAll(work)

	plan := Plan(setups, cfg.Runs)
	weight := func(in Instance) float64 { return float64(len(in.Rows))*(float64(cfg.Seconds)+1) + 1.5 }
	total := 0.0
	for _, in := range plan {
		total += weight(in)
	}
	prog := NewProgress(cfg.Stderr, cfg.TTY, len(plan), total)
	seq, step := 0, 0
	for si, s := range setups {
		b, err := newBed(ctx, s, si+1, work, cmds)
		if err != nil {
			return nil, "", err
		}
		err = func() error {
			defer b.close()
			for _, in := range plan {
				if in.Setup != s.Name {
					continue
				}
				step++
				prog.Step(step, in.String())
				bin := trees.NoPatch.Binary
				if in.Role == RolePatch {
					bin = trees.Patch.Binary
				}
				if err := b.start(ctx, in, bin); err != nil {
					return err
				}
				res.Instances = append(res.Instances, InstanceRecord{Instance: in, Promiscuity: b.promiscuity(ctx)})
				for _, row := range in.Rows {
					smp, err := b.measure(ctx, row, cfg.Seconds)
					if err != nil {
						b.stop()
						return fmt.Errorf("%s: %w", in, err)
					}
					seq++
					smp.Setup, smp.Promisc, smp.Role, smp.Run, smp.Seq = in.Setup, in.Promisc, in.Role, in.Run, seq
					res.Samples = append(res.Samples, smp)
				}
				if err := b.stop(); err != nil {
					return err
				}
				prog.Done(weight(in))
			}
			return nil
		}()
		if err != nil {
			if cfg.TTY {
				fmt.Fprintln(cfg.Stderr)
			}
			return nil, "", err
		}
	}
	prog.Finish()
	res.Finished = time.Now()
	res.Environment.LoadEnd = loadavg()
	res.Cells = Analyze(setups, res.Samples, cfg.Alpha)
	res.Commands = cmds.Log
	dir := filepath.Join(cfg.OutRoot, res.Started.Format("20060102-150405"))
	if err := WriteReport(dir, res); err != nil {
		return res, "", err
	}
	for _, l := range Header(res) {
		fmt.Fprintln(cfg.Stdout, l)
	}
	fmt.Fprintln(cfg.Stdout)
	PrintTables(cfg.Stdout, setups, res.Cells)
	fmt.Fprintf(cfg.Stdout, "\nreport: %s (report.md, results.json, charts)\n", dir)
	return res, dir, nil
}
