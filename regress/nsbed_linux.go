package regress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"

	"github.com/swctl/swctl/internal/bgproc"
	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/netbed"
	"github.com/swctl/swctl/platform/nsenter"
	"golang.org/x/sys/unix"
)

// nsbed is what every suite's testbed is built on: the namespaces it
// made and the commands that cable them, the processes that run in them
// for the whole suite, the instance running now (a swctl daemon, other
// parts to end, changes to put back) and the teardown that removes all
// of it, also after a failed build. A testbed embeds it and adds its
// own wiring and measurements.
type nsbed struct {
	// cmds runs and records commands.
	cmds *Commands
	// dir holds daemon sockets, configurations, state and logs.
	dir string
	// nets are the namespaces made so far, deleted by close.
	nets *netbed.Namespaces
	// procs run for the whole suite (iperf3 servers, nginx); close kills
	// them.
	procs []*bgproc.Proc
	// daemon is the running instance's swctl daemon, nil when none.
	daemon *daemonProc
	// ends end the running instance's parts (its daemon, a process, a
	// promiscuous membership, a forwarder); stop runs them newest first.
	ends changes
	// undo run the commands that put back what the running instance
	// changed; stop runs them newest first, after the ends.
	undo changes
	// starts counts instances, for file names.
	starts int
}

// newNSBed returns an empty testbed whose files go to dir.
func newNSBed(cmds *Commands, dir string) nsbed {
	return nsbed{cmds: cmds, dir: dir, nets: netbed.New(cmds.run)}
}

// build makes the namespaces nss (quiet, see netbed.Namespaces.Add) and
// runs steps, the commands that cable and address them, in order.
func (n *nsbed) build(ctx context.Context, nss []string, steps ...[]string) error {
	for _, ns := range nss {
		if err := n.nets.Add(ctx, ns); err != nil {
			return err
		}
	}
	return n.cmds.runAll(ctx, steps...)
}

// serve starts args in namespace ns, pinned to cpu ("" = not pinned),
// for the whole suite, its output in the file log.
func (n *nsbed) serve(name, log, ns, cpu string, args ...string) error {
	p, err := startProc(n.cmds, name, log, ns, cpu, args...)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	return nil
}

// base counts a new instance and returns the path its files start with,
// dir/name-N.
func (n *nsbed) base(name string) string {
	n.starts++
	return filepath.Join(n.dir, fmt.Sprintf("%s-%d", name, n.starts))
}

// startDaemon starts the instance's swctl daemon, binary bin, in
// namespace ns pinned to cpu ("" = not pinned) with flags, its socket,
// configuration, state and log next to base, and waits up to 10 s until
// it answers. Once started it is one of the instance's ends (SIGTERM,
// then SIGKILL after bgproc.StopWait), also when it does not answer.
func (n *nsbed) startDaemon(ctx context.Context, ns, cpu, bin, base string, flags ...string) (err error) {
	d := &daemonProc{cli: inNS(ns, bin, "--socket", base+".sock"), cmds: n.cmds}
	if d.p, err = startProc(n.cmds, "daemon "+bin+" in "+ns, base+".log", ns, cpu, append([]string{bin, "daemon", "--socket", base + ".sock", "--config", base + ".conf", "--state-dir", base + ".state"}, flags...)...); err != nil {
		return err
	}
	n.daemon, n.ends = d, append(n.ends, d.p.Stop)
	return waitDaemon(ctx, func() error { return d.swctl(ctx, "bridge", "show") }, d.p.Exited, func() string { return bgproc.Tail(d.p.Log) })
}

// do runs the instance's setup commands, recording for each the command
// that puts it back (nil: nothing to put back).
func (n *nsbed) do(ctx context.Context, steps ...[2][]string) error {
	for _, s := range steps {
		if err := n.cmds.run(ctx, s[0]...); err != nil {
			return err
		}
		if s[1] != nil {
			n.undo = append(n.undo, func() error { return n.cmds.run(context.Background(), s[1]...) })
		}
	}
	return nil
}

// stop ends the running instance: its parts newest first, then every
// change it made, newest first. It is safe to call when none runs.
func (n *nsbed) stop() error {
	n.daemon = nil
	return errors.Join(n.ends.undoTo(0), n.undo.undoTo(0))
}

// close stops the instance, kills the suite's processes and deletes the
// namespaces (and with them every veth end and bridge in them).
func (n *nsbed) close() {
	n.stop()
	for _, p := range n.procs {
		p.Kill()
	}
	n.procs = nil
	n.nets.Delete()
}

// cpuSpan is the CPU readings around one measurement: the machine's and
// the running daemon's.
type cpuSpan struct {
	// machine are the machine's readings before and after.
	machine [2]cpustat.Reading
	// pid is the daemon's process; 0 when none runs.
	pid int
	// engine are its CPU ticks before and after.
	engine [2]uint64
	// engineErr is why they could not be read.
	engineErr error
}

// cpuBefore takes the readings before a measurement.
func (n *nsbed) cpuBefore() (*cpuSpan, error) {
	c := &cpuSpan{}
	if n.daemon != nil {
		c.pid = n.daemon.p.Pid()
	}
	var err error
	if c.machine[0], err = cpustat.Read(); err != nil {
		return nil, err
	}
	c.engine[0], c.engineErr = cpustat.ReadPid(c.pid)
	return c, nil
}

// after takes the readings after the measurement and returns the
// machine's CPU use over the span and the daemon's share of it in
// percent (nil without a daemon or its readings).
func (c *cpuSpan) after() (CPUPercent, *float64, error) {
	var err error
	if c.machine[1], err = cpustat.Read(); err != nil {
		return CPUPercent{}, nil, err
	}
	if c.engineErr == nil {
		c.engine[1], c.engineErr = cpustat.ReadPid(c.pid)
	}
	cpu := CPUDelta(c.machine[0].Times, c.machine[1].Times)
	if c.pid == 0 || c.engineErr != nil || cpu.Ticks == 0 {
		return cpu, nil, nil
	}
	v := 100 * float64(c.engine[1]-c.engine[0]) / float64(cpu.Ticks)
	return cpu, &v, nil
}

// daemonProc is a swctl daemon started by the harness in a namespace.
type daemonProc struct {
	// p is the running process (ip netns exec execs the daemon, so its
	// PID is the daemon's).
	p *bgproc.Proc
	// cli is the command line of its CLI, up to the arguments: ip netns
	// exec NS BIN --socket SOCK.
	cli []string
	// cmds runs and records the CLI commands.
	cmds *Commands
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
	full := make([][]string, len(steps))
	for i, s := range steps {
		full[i] = slices.Concat(d.cli, s)
	}
	return d.cmds.runAll(ctx, full...)
}

// output runs the daemon's CLI with args and returns what it printed.
func (d *daemonProc) output(ctx context.Context, args ...string) ([]byte, error) {
	return d.cmds.Output(ctx, "", nil, slices.Concat(d.cli, args)...)
}

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

// promiscHold is a promiscuous membership (PACKET_MR_PROMISC) on one
// interface, held by an AF_PACKET socket bound to no protocol: the socket
// receives no frames, so what is measured is the interface being
// promiscuous, not a packet tap. The kernel drops the membership when the
// socket closes, also if the harness dies.
type promiscHold struct {
	// fd is the AF_PACKET socket holding the membership.
	fd int
	// name is "interface in namespace", for errors.
	name string
}

// holdPromisc makes ifname in namespace ns promiscuous until Close.
func holdPromisc(ns, ifname string) (*promiscHold, error) {
	h := &promiscHold{fd: -1, name: ifname + " in " + ns}
	err := nsenter.Run(ns, func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		if h.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(h.fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			unix.Close(h.fd)
			return fmt.Errorf("PACKET_ADD_MEMBERSHIP: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("promisc %s: %w", h.name, err)
	}
	return h, nil
}

// Close drops the membership.
func (h *promiscHold) Close() error {
	if h == nil || h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	if err != nil {
		return fmt.Errorf("promisc %s: close: %w", h.name, err)
	}
	return nil
}
