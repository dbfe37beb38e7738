package regress

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/bgproc"
)

// startKernelBridge makes a Linux bridge br0 over p1 and p2 in the dut
// namespace; stop deletes it. It forwards in the sending host's softirq:
// no process to pin.
func startKernelBridge(ctx context.Context, b *rateBed, _, _ string) error {
	return b.do(ctx,
		[2][]string{{"ip", "-n", b.dut, "link", "add", "br0", "type", "bridge"}, {"ip", "-n", b.dut, "link", "del", "br0"}},
		[2][]string{{"ip", "-n", b.dut, "link", "set", "p1", "master", "br0"}},
		[2][]string{{"ip", "-n", b.dut, "link", "set", "p2", "master", "br0"}},
		[2][]string{{"ip", "-n", b.dut, "link", "set", "br0", "up"}})
}

// startSwctl starts swctl's daemon in the dut namespace, pinned to the
// forwarder CPU, with the setup's flags: bridge0 over p1 and p2, or over
// p1 and a roundrobin trunk0 of a1 and a2; static entries for both
// tester MACs and the sink address, so every test frame is a known
// unicast.
func startSwctl(ctx context.Context, b *rateBed, bin, base string) error {
	var flags []string
	if b.spec.Workers > 0 {
		flags = append(flags, "--workers", strconv.Itoa(b.spec.Workers))
	}
	if b.spec.BusyPoll {
		flags = append(flags, "--busy-poll")
	}
	if err := b.startDaemon(ctx, b.on(b.dut), b.fwdCPU, bin, base, flags...); err != nil {
		return fmt.Errorf("swctl daemon: %w", err)
	}
	var steps [][]string
	if b.spec.Trunk {
		steps = append(steps, []string{"trunk", "create", "trunk0", "--proto", "roundrobin", "--port", "a1", "--port", "a2", "--promisc"})
	}
	steps = append(steps,
		[]string{"bridge", "create", "bridge0"},
		[]string{"bridge", "add", "bridge0", "p1", b.rxPort},
		[]string{"bridge", "static", "bridge0", b.txMAC, "p1"},
		[]string{"bridge", "static", "bridge0", b.rxMAC, b.rxPort},
		[]string{"bridge", "static", "bridge0", b.sinkMAC, b.rxPort},
	)
	return b.daemon.swctlAll(ctx, steps...)
}

// ovsMissing returns why the OVS rows cannot run, or "": one of the
// Open vSwitch programs they run (Debian package openvswitch-switch) is
// missing.
func ovsMissing() string {
	for _, t := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl"} {
		if _, err := exec.LookPath(t); err != nil {
			return "not installed"
		}
	}
	return ""
}

// ovsSwitch is a private Open vSwitch with the userspace datapath
// (datapath_type=netdev) in the dut namespace: ovsdb-server and
// ovs-vswitchd started by hand with their database, sockets, pidfiles
// and logs in their own directory, so they neither see nor disturb a
// host's Open vSwitch and need no kernel module. ovs-vswitchd is pinned
// to the forwarder CPU.
type ovsSwitch struct {
	// dir holds run/, db/, log/ and etc/.
	dir string
	// dut is the dut namespace.
	dut *Host
}

func (o *ovsSwitch) path(elem ...string) string {
	return filepath.Join(append([]string{o.dir}, elem...)...)
}

// run runs an OVS program in the dut namespace with an environment that
// points it at the private directories.
// Daemons that detach get a log file, not a pipe, for their output, so
// nothing waits on them.
func (o *ovsSwitch) run(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := os.CreateTemp(o.path("log"), "cmd-*.out")
	if err != nil {
		return fmt.Errorf("OVS: %w", err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := o.dut.command(ctx, args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+o.path("run"), "OVS_DBDIR="+o.path("db"), "OVS_LOGDIR="+o.path("log"), "OVS_SYSCONFDIR="+o.path("etc"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(out.Name())
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, bgproc.Clip(string(b)))
	}
	return nil
}

// startOVS starts OVS; the setup's TSO sets
// other_config:userspace-tso-enable=true before ovs-vswitchd starts (it
// reads it once, at start). The bed's stop stops it.
func startOVS(ctx context.Context, b *rateBed, _, base string) error {
	o := &ovsSwitch{dir: base + ".ovs", dut: b.on(b.dut)}
	b.changes = append(b.changes, o.stop)
	for _, d := range []string{"run", "db", "log", "etc"} {
		if err := os.MkdirAll(o.path(d), 0o755); err != nil {
			return fmt.Errorf("OVS: %w", err)
		}
	}
	if n := len(o.path("run", "ovs-vswitchd.ctl")); n > 100 {
		return fmt.Errorf("OVS: socket path %s is %d bytes, too long for a unix socket", o.path("run", "ovs-vswitchd.ctl"), n)
	}
	db, sock := o.path("db", "conf.db"), o.path("run", "db.sock")
	// detach are the options that detach the OVS daemon name, with its
	// pidfile, control socket and log in the private directories.
	detach := func(name string) []string {
		return []string{"--pidfile=" + o.path("run", name+".pid"), "--unixctl=" + o.path("run", name+".ctl"),
			"--log-file=" + o.path("log", name+".log"), "-vconsole:off", "--detach", "--no-chdir"}
	}
	vsctl := func(args ...string) []string {
		return append([]string{"ovs-vsctl", "--db=unix:" + sock, "--timeout=20"}, args...)
	}
	steps := [][]string{
		{"ovsdb-tool", "create", db, filepath.Join(cmp.Or(os.Getenv("OVS_PKGDATADIR"), "/usr/share/openvswitch"), "vswitch.ovsschema")},
		pinned(b.fwdCPU, append([]string{"ovsdb-server", db, "--remote=punix:" + sock}, detach("ovsdb-server")...)...),
		vsctl("--no-wait", "init"),
	}
	if b.spec.TSO {
		steps = append(steps, vsctl("--no-wait", "set", "Open_vSwitch", ".", "other_config:userspace-tso-enable=true"))
	}
	steps = append(steps, pinned(b.fwdCPU, append([]string{"ovs-vswitchd", "unix:" + sock}, detach("ovs-vswitchd")...)...))
	if err := runAll(ctx, o.run, steps...); err != nil {
		return fmt.Errorf("OVS: %w", err)
	}
	// Without --no-wait, ovs-vsctl waits until ovs-vswitchd applied the
	// change: the bridge and its ports exist when it returns.
	addBridge := vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"--", "add-port", "br0", "p1", "--", "add-port", "br0", "p2")
	if err := o.run(ctx, addBridge...); err != nil {
		return fmt.Errorf("OVS: %w; ovs-vswitchd.log: %s", err, bgproc.Tail(o.path("log", "ovs-vswitchd.log")))
	}
	return nil
}

// stop ends ovs-vswitchd, then ovsdb-server, each by the pid in its
// pidfile: SIGTERM, and SIGKILL if it is still there after 5 s.
func (o *ovsSwitch) stop() error {
	var errs []error
	for _, d := range []string{"ovs-vswitchd", "ovsdb-server"} {
		b, err := os.ReadFile(o.path("run", d+".pid"))
		if err != nil {
			continue // never started
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			errs = append(errs, fmt.Errorf("%s pidfile %s: %q", d, o.path("run", d+".pid"), b))
			continue
		}
		if bgproc.StopPID(pid, 5*time.Second) {
			errs = append(errs, fmt.Errorf("%s (pid %d) did not stop on SIGTERM within 5s; killed", d, pid))
		}
	}
	return errors.Join(errs...)
}
