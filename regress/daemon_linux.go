package regress

import (
	"context"
	"fmt"
	"strings"

	"github.com/swctl/swctl/internal/bgproc"
)

// daemonProc is a swctl daemon started by the harness in a namespace.
type daemonProc struct {
	// p is the running process (ip netns exec execs the daemon, so its
	// PID is the daemon's).
	p *bgproc.Proc
	// bin is the swctl binary.
	bin string
	// sock is the daemon's control socket.
	sock string
	// ns is the namespace it runs in.
	ns string
	// cmds runs and records the CLI commands.
	cmds *Commands
}

// startDaemon starts bin's daemon in namespace ns with its socket,
// configuration, state and log next to base, and waits up to 10 s until
// it answers.
func startDaemon(ctx context.Context, cmds *Commands, ns, bin, base string) (*daemonProc, error) {
	return startDaemonOn(ctx, cmds, ns, "", bin, base)
}

// startDaemonOn is startDaemon pinned to CPU cpu (taskset; "" = not
// pinned), with more daemon flags.
func startDaemonOn(ctx context.Context, cmds *Commands, ns, cpu, bin, base string, flags ...string) (_ *daemonProc, err error) {
	d := &daemonProc{bin: bin, sock: base + ".sock", ns: ns, cmds: cmds}
	if d.p, err = startProc(cmds, "daemon "+bin+" in "+ns, base+".log", ns, cpu, append([]string{bin, "daemon", "--socket", d.sock, "--config", base + ".conf", "--state-dir", base + ".state"}, flags...)...); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.stop()
		}
	}()
	err = waitDaemon(ctx, func() error { return d.swctl(ctx, "bridge", "show") }, d.p.Exited, func() string { return bgproc.Tail(d.p.Log) })
	if err != nil {
		return nil, err
	}
	return d, nil
}

// failedStart, deferred by a testbed's start of instance in, stops what
// started and names the instance when *err is set.
func failedStart(in fmt.Stringer, stop func() error, err *error) {
	if *err != nil {
		stop()
		*err = fmt.Errorf("%s: start: %w", in, *err)
	}
}

// startProc starts args in namespace ns pinned to cpu ("" = not
// pinned), its output in the file log, and records its command line.
func startProc(cmds *Commands, name, log, ns, cpu string, args ...string) (*bgproc.Proc, error) {
	full := inNS(ns, pinned(cpu, args...)...)
	cmds.record(strings.Join(full, " ") + " &")
	return bgproc.Start(name, log, full...)
}

// swctl runs the daemon's CLI with args.
func (d *daemonProc) swctl(ctx context.Context, args ...string) error {
	_, err := d.output(ctx, args...)
	return err
}

// swctlAll runs the daemon's CLI with each of steps in turn, up to the
// first error.
func (d *daemonProc) swctlAll(ctx context.Context, steps ...[]string) error {
	for _, s := range steps {
		if err := d.swctl(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}

// output runs the daemon's CLI with args and returns what it printed.
func (d *daemonProc) output(ctx context.Context, args ...string) ([]byte, error) {
	return d.cmds.Output(ctx, "", nil, inNS(d.ns, append([]string{d.bin, "--socket", d.sock}, args...)...)...)
}

// pid is the daemon's process ID.
func (d *daemonProc) pid() int { return d.p.Pid() }

// stop sends SIGTERM and, after bgproc.StopWait, SIGKILL.
func (d *daemonProc) stop() error { return d.p.Stop() }

// inNS prefixes args with ip netns exec ns.
func inNS(ns string, args ...string) []string {
	return append([]string{"ip", "netns", "exec", ns}, args...)
}

// pinned prefixes args with taskset -c cpu, unless cpu is empty.
func pinned(cpu string, args ...string) []string {
	if cpu == "" {
		return args
	}
	return append([]string{"taskset", "-c", cpu}, args...)
}
