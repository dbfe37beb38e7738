package regress

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/iperf3"
	"github.com/swctl/swctl/internal/netbed"
)

// testbed is what every testbed is built on, network namespaces here or
// real test hosts: the commands it runs, each recorded, on this machine
// (cmds) or on a test host (a Host: a namespace through ip netns exec, a
// real host through its transport); the namespaces it made; every change
// it made, the suite's first, the running instance's after them; the
// instance's swctl daemon; and the CPU readings around a measurement.
// Teardown puts everything back, also after a failed build.
type testbed struct {
	// name names the bed in stop's errors: its setup, or its suite.
	name string
	// cmds runs the harness's own commands and records every command.
	cmds *Commands
	// dir holds daemon sockets, configurations, state and logs: on this
	// machine, or on the real device under test.
	dir string
	// changes put back what the bed changed, one step a change
	// (namespaces, processes, daemons, addresses, promiscuous mode,
	// commands), in the order the changes were made: the suite's up to
	// mark, the running instance's after.
	changes []func() error
	// mark is where the running instance's changes begin (keep).
	mark int
	// daemon is the running instance's swctl daemon, nil when none.
	daemon *daemon
	// cpuHost is the host whose CPU a span reads through its transport;
	// nil: this machine's, read in process (the netns beds).
	cpuHost *Host
	// ncpu is cpuHost's CPU count.
	ncpu int
	// dutHost is the device under test (the promisc beds): a namespace
	// or a real host.
	dutHost *Host
	// links are dutHost's links whose promiscuity counts.
	links []string
	// starts counts instances, for file names.
	starts int
}

// newTestbed returns an empty testbed called name whose files go to
// dir.
func newTestbed(cmds *Commands, dir, name string) testbed {
	return testbed{name: name, cmds: cmds, dir: dir}
}

// on returns the network namespace ns as a test host.
func (t *testbed) on(ns string) *Host {
	return &Host{Conf: HostConfig{Transport: "netns", Host: ns, OS: "linux"}, cmds: t.cmds}
}

// build makes the namespaces nss (quiet, see netbed.Namespace), each
// deleted by close (before anything else can fail), and runs steps, the
// commands that cable and address them, in order.
func (t *testbed) build(ctx context.Context, nss []string, steps ...[]string) error {
	for _, ns := range nss {
		add := netbed.Namespace(ns)
		if err := t.change(ctx, t.cmds.run, add[0], []string{"ip", "netns", "del", ns}); err != nil {
			return err
		}
		if err := runAll(ctx, t.cmds.run, add[1:]...); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return runAll(ctx, t.cmds.run, steps...)
}

// keep makes what the bed changed so far the suite's: stop leaves it,
// close puts it back.
func (t *testbed) keep() { t.mark = len(t.changes) }

// onUndo records fn, which puts a change back; it runs with a context
// of its own (the run's may be cancelled by Ctrl-C).
func (t *testbed) onUndo(fn func(ctx context.Context) error) {
	t.changes = append(t.changes, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return fn(ctx)
	})
}

// change runs do with run (this machine's Commands.run, or a Host's
// run) and records undo (nil: nothing to put back), the command that
// puts it back; also when ctx ended while do ran, for do may have taken
// effect before it was killed.
func (t *testbed) change(ctx context.Context, run func(ctx context.Context, args ...string) error, do, undo []string) error {
	err := run(ctx, do...)
	if undo != nil && (err == nil || ctx.Err() != nil) {
		t.onUndo(func(ctx context.Context) error { return run(ctx, undo...) })
	}
	return err
}

// runAll runs each of steps in turn with run (this machine's
// Commands.run, or a Host's run), up to the first error.
func runAll(ctx context.Context, run func(ctx context.Context, args ...string) error, steps ...[]string) error {
	for _, s := range steps {
		if err := run(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}

// do runs the setup commands on this machine, recording for each the
// command that puts it back (nil: nothing to put back).
func (t *testbed) do(ctx context.Context, steps ...[2][]string) error {
	for _, s := range steps {
		if err := t.change(ctx, t.cmds.run, s[0], s[1]); err != nil {
			return err
		}
	}
	return nil
}

// background starts args on h pinned to cpu ("" = not pinned), its
// output in the file log there, and records its stop.
func (t *testbed) background(ctx context.Context, h *Host, log, cpu string, args ...string) (*Proc, error) {
	p, err := h.Start(ctx, log, pinned(cpu, args...)...)
	if err == nil {
		t.onUndo(p.Stop)
	}
	return p, err
}

// pinned prefixes args with taskset -c cpu, unless cpu is empty.
func pinned(cpu string, args ...string) []string {
	if cpu == "" {
		return args
	}
	return append([]string{"taskset", "-c", cpu}, args...)
}

// base counts a new instance and returns the path its files start with,
// dir/name-N.
func (t *testbed) base(name string) string {
	t.starts++
	return filepath.Join(t.dir, fmt.Sprintf("%s-%d", name, t.starts))
}

// daemon is a swctl daemon the harness started on a test host.
type daemon struct {
	*Proc
	// cli is the command line of its CLI, up to the arguments: BIN
	// --socket SOCK.
	cli []string
}

// startDaemon starts the instance's swctl daemon, bin (a path on h), on
// h pinned to cpu ("" = not pinned) with flags, its socket,
// configuration, state and log next to base, and waits up to 10 s until
// it answers. Once started its stop is one of the instance's changes,
// also when it does not answer.
func (t *testbed) startDaemon(ctx context.Context, h *Host, cpu, bin, base string, flags ...string) error {
	d := &daemon{cli: []string{bin, "--socket", base + ".sock"}}
	p, err := t.background(ctx, h, base+".log", cpu, slices.Concat(d.cli, []string{"daemon", "--config", base + ".conf", "--state-dir", base + ".state"}, flags)...)
	if err != nil {
		return err
	}
	d.Proc, t.daemon = p, d
	if err := waitDaemon(ctx, func() error { return d.swctl(ctx, "bridge", "show") }, p.Exited, func() string { return p.Tail() }); err != nil {
		return fmt.Errorf("%s: %w", h, err)
	}
	return nil
}

// daemonUp starts the instance's swctl daemon, bin (a path on h), on h
// not pinned, its files named after name (base), waits up to 10 s until
// it answers, and runs its CLI with each of cmds in turn.
func (t *testbed) daemonUp(ctx context.Context, h *Host, bin, name string, cmds ...[]string) error {
	if err := t.startDaemon(ctx, h, "", bin, t.base(name)); err != nil {
		return err
	}
	return t.daemon.swctlAll(ctx, cmds...)
}

// swctl runs the daemon's CLI with args.
func (d *daemon) swctl(ctx context.Context, args ...string) error {
	_, err := d.output(ctx, args...)
	return err
}

// swctlAll runs the daemon's CLI with each of steps in turn, up to the
// first error.
func (d *daemon) swctlAll(ctx context.Context, steps ...[]string) error {
	return runAll(ctx, d.swctl, steps...)
}

// output runs the daemon's CLI with args and returns what it printed.
func (d *daemon) output(ctx context.Context, args ...string) ([]byte, error) {
	return d.host.Run(ctx, nil, slices.Concat(d.cli, args)...)
}

// failedStart, deferred by a testbed's start of instance in, stops what
// started when *err is set and says the start failed; the caller (runPlan)
// names the instance.
func failedStart(stop func() error, err *error) {
	if *err != nil {
		stop()
		*err = fmt.Errorf("start: %w", *err)
	}
}

// failedBuild, deferred by a testbed's builder, removes what the build
// made and names the testbed (what) in its error, when it failed.
func (t *testbed) failedBuild(what string, err *error) {
	if *err != nil {
		t.close()
		*err = fmt.Errorf("%s: %w", what, *err)
	}
}

// stop ends the running instance: every change it made, newest first
// (its daemon, processes, promiscuous memberships, commands). It is
// safe to call when none runs.
func (t *testbed) stop() error {
	t.daemon = nil
	if err := t.undoTo(t.mark); err != nil {
		return fmt.Errorf("%s: stop: %w", t.name, err)
	}
	return nil
}

// close puts back everything the bed changed, newest first: the
// namespaces last (and with them every veth end and bridge in them).
func (t *testbed) close() error {
	t.daemon, t.mark = nil, 0
	return t.undoTo(0)
}

// undoTo puts back the changes after the first n, newest first, and
// returns every error; it goes on after errors.
func (t *testbed) undoTo(n int) error {
	var errs []error
	for i := len(t.changes) - 1; i >= n; i-- {
		errs = append(errs, t.changes[i]())
	}
	t.changes = t.changes[:n]
	return errors.Join(errs...)
}

// span runs fn and reads the machine's CPU and the running daemon's
// just before and after it: this machine's in process, or cpuHost's
// through its transport. It returns the machine's use over the span, the
// daemon's share in percent (nil without a daemon or its readings) and
// the machine's two readings, for the cost per frame.
func (t *testbed) span(ctx context.Context, fn func() error) (CPUPercent, *float64, [2]cpustat.Reading, error) {
	var m [2]cpustat.Reading
	var e [2]uint64
	eerr := errors.New("no daemon")
	// read takes reading i: the machine's, then the daemon's unless its
	// first failed.
	read := func(i int) (err error) {
		if t.cpuHost == nil {
			m[i], err = cpustat.Read()
		} else {
			m[i] = cpustat.Reading{At: time.Now(), CPUs: t.ncpu}
			m[i].Times, err = t.cpuHost.CPU(ctx)
		}
		switch {
		case err != nil || t.daemon == nil || i == 1 && eerr != nil:
			// No daemon reading.
		case t.cpuHost == nil:
			e[i], eerr = cpustat.ReadPid(t.daemon.PID)
		default:
			e[i], eerr = t.cpuHost.ProcCPU(ctx, t.daemon.PID)
		}
		return err
	}
	err := read(0)
	if err == nil {
		err = fn()
	}
	if err == nil {
		err = read(1)
	}
	if err != nil {
		return CPUPercent{}, nil, m, err
	}
	cpu := CPUDelta(m[0].Times, m[1].Times)
	if eerr != nil || cpu.Ticks == 0 {
		return cpu, nil, m, nil
	}
	v := 100 * float64(e[1]-e[0]) / float64(cpu.Ticks)
	if t.cpuHost != nil && t.cpuHost.Conf.OS != "linux" {
		// ps cputime is in hundredths of a second, kern.cp_time counts
		// at stathz: the share is taken against wall time.
		v = float64(e[1]-e[0]) / 100 / (m[1].At.Sub(m[0].At).Seconds() * float64(m[1].CPUs)) * 100
	}
	return cpu, &v, m, nil
}

// iperfClient is an iperf3 client's command line on a test host.
type iperfClient struct {
	// host runs it.
	host *Host
	// args are its arguments (iperfArgs, maybe pinned).
	args []string
}

// iperf runs the iperf3 clients at once (one sample of row each, all
// with the CPU of the span from just before the first starts to just
// after the last ends), twice at most when one fails; what names the
// measurement in errors. It also returns their iperf3 results, for
// figures a Sample does not hold (when there is no error).
func (t *testbed) iperf(ctx context.Context, what, row string, seconds int, clients ...iperfClient) ([]Sample, []iperf3.Result, error) {
	out := make([]Sample, len(clients))
	for i, c := range clients {
		out[i] = Sample{Row: row, Command: c.host.line(c.args), Start: time.Now()}
	}
	var res []iperf3.Result
	err := iperfTwice(ctx, what, seconds, func(ctx context.Context) error {
		outs, errs := make([][]byte, len(clients)), make([]error, len(clients))
		cpu, engine, _, err := t.span(ctx, func() error {
			var wg sync.WaitGroup
			for i, c := range clients {
				wg.Go(func() { outs[i], errs[i] = c.host.Run(ctx, nil, c.args...) })
			}
			wg.Wait()
			return nil
		})
		if err != nil {
			return err
		}
		res = make([]iperf3.Result, len(clients))
		for i := range clients {
			if errs[i] == nil {
				res[i], errs[i] = iperf3.Parse(outs[i])
			}
			if errs[i] != nil {
				err = errs[i]
			}
			out[i].Mbps, out[i].Retransmits = res[i].ReceivedBps/1e6, res[i].Retransmits
			out[i].CPU, out[i].EngineCPU = cpu, engine
		}
		return err
	})
	return out, res, err
}

// iperfRow runs one iperf3 test of row with iperf (what names it in
// errors): a client on h pinned to cpu ("" = not pinned) against the
// server at ip, with -R for Receive (the server sends) and the extra
// client options more.
func (t *testbed) iperfRow(ctx context.Context, what, row string, seconds int, h *Host, cpu, ip string, more ...string) (Sample, error) {
	if row == RowReceive {
		more = append([]string{"-R"}, more...)
	}
	out, _, err := t.iperf(ctx, what, row, seconds, iperfClient{h, pinned(cpu, iperfArgs(ip, seconds, more...)...)})
	return out[0], err
}

// waitPing waits up to 15 s until ip answers a ping from h.
func waitPing(ctx context.Context, h *Host, ip string) error {
	return poll(ctx, 15*time.Second, 100*time.Millisecond, func() error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := h.Run(pctx, nil, "ping", "-c", "1", ip); err != nil {
			return fmt.Errorf("%s does not answer ping from %s: %v", ip, h, err)
		}
		return nil
	})
}

// promiscRE finds the promiscuity count in `ip -d link show`.
var promiscRE = regexp.MustCompile(`promiscuity (\d+)`)

// promiscuity reads the kernel's promiscuity count of each of the
// links on dutHost (a testbed's namespace or a real DUT) from `ip -d
// link show LINK`: Linux only, nil elsewhere. A link whose count cannot
// be read is left out.
func (t *testbed) promiscuity(ctx context.Context) map[string]int {
	if t.dutHost.Conf.OS != "linux" {
		return nil
	}
	m := map[string]int{}
	for _, l := range t.links {
		out, err := t.dutHost.Run(ctx, nil, "ip", "-d", "link", "show", l)
		if sm := promiscRE.FindSubmatch(out); err == nil && sm != nil {
			m[l], _ = strconv.Atoi(string(sm[1]))
		}
	}
	return m
}
