package regress

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/iperf3"
)

// HostSetups are the promisc setups on real test hosts (regress.conf's
// [tests] run names them).
var HostSetups = []SetupSpec{
	{
		Name: "plain", Rows: []string{RowReceive, RowTransmit},
		Desc: "the device under test's first test interface, no engine (the baseline); PROMISC = promiscuous mode set by the suite (ip link set IF promisc on, ifconfig IF promisc on the BSDs) and put back, -PROMISC = none",
	},
	{
		Name: "bridge0", Rows: []string{RowReceive, RowTransmit}, Engine: true,
		Desc:        "swctl bridge over the device under test's test interfaces, its address on the bridge's --local TAP",
		NoPromiscNA: "on real NICs a bridge member without promiscuous mode sees only frames for its own MAC, so the bridge would not work",
	},
}

// checkHarness says what the harness lacks to drive the hosts of hc.
func checkHarness(hc *HostsConfig) error {
	tools := []string{"git", "go"}
	for _, h := range []HostConfig{hc.DUT, hc.Peer} {
		if h.Transport == "ssh" {
			tools = append(tools, "ssh")
		} else {
			tools = append(tools, "ip")
		}
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("regress: %s: needs %s on this machine: %w", hc.Path, tool, err)
		}
	}
	return nil
}

// hostSetups returns the HostSetups named in names, in table order.
func hostSetups(names []string) []SetupSpec {
	return slices.DeleteFunc(slices.Clone(HostSetups), func(s SetupSpec) bool { return !slices.Contains(names, s.Name) })
}

// hostBed is the real-host testbed: the device under test and its peer,
// the swctl binaries uploaded to the DUT, and on the peer the iperf3
// server (promisc tests) or swctl bench (rate test).
type hostBed struct {
	// conf is the parsed regress.conf.
	conf *HostsConfig
	// dut and peer are the hosts.
	dut, peer *Host
	// dutDir and peerDir are the suite's temporary directories there.
	dutDir, peerDir string
	// bins maps a local binary to its path on the DUT.
	bins map[string]string
	// bench is the swctl binary on the peer that runs swctl bench; ""
	// when the rate test does not run.
	bench string
	// peerMACs are the MACs of the peer's first two interfaces, the
	// rate test's sender and receiver; set by newHostBed with bench.
	peerMACs [2]string
	// ncpu is the DUT's CPU count (for the BSD engine figure).
	ncpu int
	// daemon is the running swctl daemon, nil when none.
	daemon *Proc
	// bin and sock are the current daemon's binary and socket on the DUT.
	bin, sock string
	// starts counts daemon starts, for file names.
	starts int
}

// newHostBed checks both hosts, makes the temporary directories and
// uploads the binaries: those for the DUT, and bench (a local swctl built
// for the peer, "" for none) to the peer. With iperf (promisc tests) it
// puts the peer's address on and starts its iperf3 server. Every change
// is recorded on its host; close puts them back.
func newHostBed(ctx context.Context, hc *HostsConfig, binaries []string, bench string, iperf bool, cmds *Commands) (_ *hostBed, err error) {
	b := &hostBed{conf: hc, bins: map[string]string{}}
	if b.dut, err = NewHost(hc.DUT, cmds); err != nil {
		return nil, err
	}
	if b.peer, err = NewHost(hc.Peer, cmds); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if cerr := b.close(); cerr != nil {
				err = fmt.Errorf("%w (and while putting back: %v)", err, cerr)
			}
		}
	}()
	for _, h := range []*Host{b.dut, b.peer} {
		if !iperf {
			continue
		}
		if _, err := h.Run(ctx, nil, "iperf3", "--version"); err != nil {
			return nil, fmt.Errorf("%s: iperf3 is needed there: %w", h, err)
		}
	}
	for _, h := range []*Host{b.dut, b.peer} {
		out, err := h.Run(ctx, nil, "mktemp", "-d", path.Join(h.Conf.Workdir, "swctl-regress.XXXXXX"))
		if err != nil {
			return nil, err
		}
		dir := strings.TrimSpace(string(out))
		h.OnUndo("directory "+dir, func(ctx context.Context) error {
			_, err := h.Run(ctx, nil, "rm", "-rf", dir)
			return err
		})
		if h == b.dut {
			b.dutDir = dir
		} else {
			b.peerDir = dir
		}
	}
	if b.ncpu, err = b.dut.NCPU(ctx); err != nil {
		return nil, err
	}
	for i, bin := range binaries {
		if _, ok := b.bins[bin]; ok {
			continue
		}
		dst := path.Join(b.dutDir, fmt.Sprintf("swctl-%d", i+1))
		if err := upload(ctx, b.dut, bin, dst); err != nil {
			return nil, err
		}
		b.bins[bin] = dst
	}
	if bench != "" {
		b.bench = path.Join(b.peerDir, "swctl")
		if err := upload(ctx, b.peer, bench, b.bench); err != nil {
			return nil, err
		}
		for i := range b.peerMACs {
			if b.peerMACs[i], err = b.peer.MAC(ctx, b.peer.Conf.Interfaces[i]); err != nil {
				return nil, err
			}
		}
	}
	if !iperf {
		return b, nil
	}
	if err := b.addr(ctx, b.peer, b.peer.Conf.Interfaces[0], b.peer.Conf.Addr); err != nil {
		return nil, err
	}
	if _, err := b.peer.Start(ctx, path.Join(b.peerDir, "iperf3.log"), "iperf3", "-s", "-p", iperfPort); err != nil {
		return nil, err
	}
	return b, nil
}

// upload copies the local file src to dst on h (in its temporary
// directory, removed with it) and makes it executable.
func upload(ctx context.Context, h *Host, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("upload %s: %w", src, err)
	}
	defer f.Close()
	if _, err := h.Run(ctx, f, "sh", "-c", `cat >"$0" && chmod 755 "$0"`, dst); err != nil {
		return fmt.Errorf("upload %s: %w", src, err)
	}
	return nil
}

// addr puts address a on interface ifname of h, and records its removal.
func (b *hostBed) addr(ctx context.Context, h *Host, ifname string, a netip.Prefix) error {
	if h.Conf.OS == "linux" {
		return h.Change(ctx, []string{"ip", "addr", "add", a.String(), "dev", ifname}, []string{"ip", "addr", "del", a.String(), "dev", ifname})
	}
	return h.Change(ctx, []string{"ifconfig", ifname, "inet", a.String(), "alias"}, []string{"ifconfig", ifname, "inet", a.Addr().String(), "-alias"})
}

// promisc sets ifname of h promiscuous, and records putting it back.
func (b *hostBed) promisc(ctx context.Context, h *Host, ifname string) error {
	if h.Conf.OS == "linux" {
		return h.Change(ctx, []string{"ip", "link", "set", "dev", ifname, "promisc", "on"}, []string{"ip", "link", "set", "dev", ifname, "promisc", "off"})
	}
	return h.Change(ctx, []string{"ifconfig", ifname, "promisc"}, []string{"ifconfig", ifname, "-promisc"})
}

// setup prepares setup s on the DUT for the whole setup (the plain
// interface's address); what it changes is put back by the caller.
func (b *hostBed) setup(ctx context.Context, s SetupSpec) error {
	if s.Name == "plain" {
		return b.addr(ctx, b.dut, b.dut.Conf.Interfaces[0], b.dut.Conf.Addr)
	}
	return nil
}

// start brings the device under test up for one instance.
func (b *hostBed) start(ctx context.Context, in Instance, bin string) error {
	if in.Setup == "plain" {
		if in.Promisc {
			if err := b.promisc(ctx, b.dut, b.dut.Conf.Interfaces[0]); err != nil {
				return err
			}
		}
		return b.waitPing(ctx)
	}
	if err := b.daemonUp(ctx, in.Setup, bin); err != nil {
		return err
	}
	if err := b.swctl(ctx, []string{"bridge", "create", "bridge0", "--local"}, append([]string{"bridge", "add", "bridge0"}, b.dut.Conf.Interfaces...)); err != nil {
		return err
	}
	// The TAP goes with the daemon, and its address with it: no undo.
	a := b.dut.Conf.Addr.String()
	if b.dut.Conf.OS == "linux" {
		if err := b.dut.RunAll(ctx, []string{"ip", "addr", "add", a, "dev", "bridge0"}, []string{"ip", "link", "set", "bridge0", "up"}); err != nil {
			return err
		}
		// The TAP carries no offloads yet (README, Trunks: The TAP).
		b.dut.Run(ctx, nil, "ethtool", "-K", "bridge0", "tx", "off", "gso", "off")
	} else if _, err := b.dut.Run(ctx, nil, "ifconfig", "bridge0", "inet", a, "up"); err != nil {
		return err
	}
	return b.waitPing(ctx)
}

// daemonUp starts the DUT's daemon with the upload of the local binary
// bin, its files named after name, and waits up to 10 s until it answers.
func (b *hostBed) daemonUp(ctx context.Context, name, bin string) error {
	b.starts++
	b.bin = b.bins[bin]
	base := path.Join(b.dutDir, fmt.Sprintf("%s-%d", name, b.starts))
	b.sock = base + ".sock"
	d, err := b.dut.Start(ctx, base+".log", b.bin, "daemon", "--socket", b.sock, "--config", base+".conf", "--state-dir", base+".state")
	if err != nil {
		return err
	}
	b.daemon = d
	err = poll(ctx, 10*time.Second, 100*time.Millisecond, func() error {
		_, err := b.dut.Run(ctx, nil, b.bin, "--socket", b.sock, "bridge", "show")
		if err != nil && d.Exited() {
			return stopPoll{err}
		}
		return err
	})
	if err != nil {
		log, _ := b.dut.Run(context.WithoutCancel(ctx), nil, "tail", "-5", base+".log")
		return fmt.Errorf("%s: daemon did not answer within 10s: %v; log: %s", b.dut, err, strings.TrimSpace(string(log)))
	}
	return nil
}

// swctl runs the current daemon's CLI on the DUT with each of cmds in
// turn, up to the first error.
func (b *hostBed) swctl(ctx context.Context, cmds ...[]string) error {
	for i, c := range cmds {
		cmds[i] = slices.Concat([]string{b.bin, "--socket", b.sock}, c)
	}
	return b.dut.RunAll(ctx, cmds...)
}

// waitPing waits up to 15 s until the peer answers a ping from the DUT.
func (b *hostBed) waitPing(ctx context.Context) error {
	ip := b.peer.Conf.Addr.Addr().String()
	return poll(ctx, 15*time.Second, 200*time.Millisecond, func() error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := b.dut.Run(pctx, nil, "ping", "-c", "1", ip); err != nil {
			return fmt.Errorf("%s does not answer ping from %s: %v", ip, b.dut, err)
		}
		return nil
	})
}

// measure runs one iperf3 test of row from the DUT to the peer: CPU and
// the engine's CPU are read on the DUT through its transport.
func (b *hostBed) measure(ctx context.Context, row string, seconds int) (Sample, error) {
	args := []string{"iperf3", "-c", b.peer.Conf.Addr.Addr().String(), "-p", iperfPort, "-t", strconv.Itoa(seconds), "-J", "--connect-timeout", "3000"}
	if row == RowReceive {
		args = append(args, "-R")
	}
	s := Sample{Row: row, Command: fmt.Sprintf("[%s] %s", b.dut.T, strings.Join(args, " ")), Start: time.Now()}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		tctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+20)*time.Second)
		var out []byte
		var perr error
		cpu, engine, err := b.span(tctx, func() (err error) {
			out, err = b.dut.Run(tctx, nil, args...)
			return err
		})
		cancel()
		if err == nil {
			var r iperf3.Result
			if r, perr = iperf3.Parse(out); perr == nil {
				s.Mbps, s.Retransmits, s.CPU, s.EngineCPU = r.ReceivedBps/1e6, r.Retransmits, cpu, engine
				return s, nil
			}
		}
		lastErr = err
		if perr != nil {
			lastErr = perr
		}
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		time.Sleep(time.Second)
	}
	return s, fmt.Errorf("%s: iperf3 failed twice: %v", row, lastErr)
}

// span runs fn and reads the DUT's whole-machine CPU and the daemon's
// (when one runs) just before and after it, through the DUT's transport.
// The engine figure is nil when the daemon's time could not be read.
func (b *hostBed) span(ctx context.Context, fn func() error) (CPUPercent, *float64, error) {
	c0, err := b.dut.CPU(ctx)
	if err != nil {
		return CPUPercent{}, nil, err
	}
	var e0, e1 uint64
	var eerr error
	w0 := time.Now()
	if b.daemon != nil {
		e0, eerr = b.dut.ProcCPU(ctx, b.daemon.PID)
	}
	if err := fn(); err != nil {
		return CPUPercent{}, nil, err
	}
	c1, err := b.dut.CPU(ctx)
	if err != nil {
		return CPUPercent{}, nil, err
	}
	if b.daemon != nil && eerr == nil {
		e1, eerr = b.dut.ProcCPU(ctx, b.daemon.PID)
	}
	wall := time.Since(w0)
	cpu := CPUDelta(c0, c1)
	if b.daemon == nil || eerr != nil || cpu.Ticks == 0 {
		return cpu, nil, nil
	}
	v := 100 * float64(e1-e0) / float64(cpu.Ticks)
	if b.dut.Conf.OS != "linux" {
		v = float64(e1-e0) / 100 / (wall.Seconds() * float64(b.ncpu)) * 100
	}
	return cpu, &v, nil
}

// promiscuity reads the promiscuity count of the DUT's test interfaces
// (Linux only; nil elsewhere).
func (b *hostBed) promiscuity(ctx context.Context) map[string]int {
	if b.dut.Conf.OS != "linux" {
		return nil
	}
	m := map[string]int{}
	for _, l := range b.dut.Conf.Interfaces {
		out, err := b.dut.Run(ctx, nil, "ip", "-d", "link", "show", l)
		if i := strings.Index(string(out), "promiscuity "); err == nil && i >= 0 {
			f := strings.Fields(string(out)[i:])
			if len(f) > 1 {
				m[l], _ = strconv.Atoi(f[1])
			}
		}
	}
	return m
}

// stop ends the current instance: the daemon, or the plain interface's
// promiscuous mode (put back by the caller's UndoTo).
func (b *hostBed) stop(ctx context.Context) error {
	if b.daemon == nil {
		return nil
	}
	err := b.daemon.Stop(ctx)
	b.daemon = nil
	return err
}

// close puts back everything changed on both hosts: the DUT first (its
// daemon, addresses, promiscuous mode, directory), then the peer.
func (b *hostBed) close() error {
	b.daemon = nil
	var first error
	for _, h := range []*Host{b.dut, b.peer} {
		if h == nil {
			continue
		}
		if err := h.Undo(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// runHosts runs the promisc plan, then the forwarding-rate plan (with
// cfg.Rate), on the real test hosts of hc and appends instances and
// samples to res.
func runHosts(ctx context.Context, cfg Config, hc *HostsConfig, setups []SetupSpec, plan []Instance, ratePlan []RateInstance, trees *Trees, res *Results, cmds *Commands, prog *Progress, step *int) (err error) {
	bench := ""
	if len(ratePlan) > 0 {
		if bench, err = trees.benchBinary(ctx, hc.Peer); err != nil {
			return err
		}
	}
	b, err := newHostBed(ctx, hc, []string{trees.NoPatch.Binary, trees.Patch.Binary}, bench, len(plan) > 0, cmds)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := b.close(); cerr != nil {
			if err == nil {
				err = cerr
			} else {
				err = fmt.Errorf("%w (and while putting back: %v)", err, cerr)
			}
		}
	}()
	for _, s := range setups {
		depth := b.dut.UndoDepth()
		if err := b.setup(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		inDepth := 0
		err := runPlan(prog, step, ofSetup(plan, s.Name, func(in Instance) string { return in.Setup }),
			func(in Instance) error {
				inDepth = b.dut.UndoDepth()
				if err := b.start(ctx, in, trees.binaryFor(in.Role)); err != nil {
					return fmt.Errorf("start: %w", err)
				}
				res.Instances = append(res.Instances, InstanceRecord{Instance: in, Promiscuity: b.promiscuity(ctx)})
				return nil
			},
			func(in Instance) error {
				return measureRows(res, in, func(row string) (Sample, error) { return b.measure(ctx, row, cfg.Seconds) })
			},
			func() error { return b.stopTo(ctx, inDepth) },
			func(in Instance) float64 { return float64(len(in.Rows))*(float64(cfg.Seconds)+1) + 1.5 })
		if err != nil {
			return err
		}
		if err := b.dut.UndoTo(depth); err != nil {
			return err
		}
	}
	return b.runRate(ctx, cfg.Rate, ratePlan, trees, res, prog, step)
}

// hostsMethod is report.md's method text for a run on the real test
// hosts of hc: the promisc tests' (iperf3 tests of seconds) when
// promisc, the forwarding rate's when rc is set.
func hostsMethod(hc *HostsConfig, seconds int, promisc bool, rc *RateConfig) []string {
	host := func(h HostConfig) string {
		s := fmt.Sprintf("%s over %s, interfaces %s", h.Host, h.Transport, strings.Join(h.Interfaces, " "))
		if h.Addr.IsValid() {
			s += ", address " + h.Addr.String()
		}
		return s
	}
	m := []string{fmt.Sprintf("Real test hosts (%s): device under test %s; peer %s.", hc.Path, host(hc.DUT), host(hc.Peer))}
	if promisc {
		m = append(m,
			fmt.Sprintf("iperf3 TCP, one stream, %d s per test, the device under test's client (Receive: with -R) to the peer's server; no CPU pinning; offloads as the hosts have them (off on the bridge's TAP on Linux).", seconds),
			"CPU: the device under test's whole machine (/proc/stat on Linux, kern.cp_time on the BSDs) from just before to just after each iperf3 client, read through the transport; engine = the swctl daemon's user+system time (/proc/PID/stat on Linux, ps cputime on the BSDs), percent of the whole machine.",
		)
	}
	if rc != nil {
		m = append(m, hostRateDescribe(hc, *rc)...)
	}
	return append(m, "Runs are interleaved per cell: patch, no patch, no patch, patch, ... (A B B A). Every change on a host (temporary directory, binaries, addresses, promiscuous mode, daemons, iperf3 server) is recorded and put back at the end, also on Ctrl-C or failure.")
}
