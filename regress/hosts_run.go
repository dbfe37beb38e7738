package regress

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"

	"github.com/swctl/swctl/gen"
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
	// The transports' programs: ssh, or ip for ip netns exec.
	transport := map[string]string{"ssh": "ssh", "netns": "ip"}
	for _, tool := range []string{"git", "go", transport[hc.DUT.Transport], transport[hc.Peer.Transport]} {
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
// server (promisc tests) or swctl bench (rate test). Its daemons' files
// go to the DUT's temporary directory, its CPU spans read the DUT's.
type hostBed struct {
	testbed
	// dut and peer are the hosts.
	dut, peer *Host
	// bins maps a local binary to its path on the DUT.
	bins map[string]string
	// bench is the swctl binary on the peer that runs swctl bench; ""
	// when the rate test does not run.
	bench string
	// peerMACs are the MACs of the peer's first two interfaces, the
	// rate test's sender and receiver; set by prepare with bench.
	peerMACs [2]string
}

// prepare checks both hosts, makes the temporary directories and
// uploads the binaries: those for the DUT (a binary repeated next to
// itself once), and bench (a local swctl built for the peer, "" for
// none) to the peer. With iperf (promisc tests) it puts the peer's
// address on and starts its iperf3 server. Every change is recorded;
// the caller's close puts them back, also after a failed prepare.
func (b *hostBed) prepare(ctx context.Context, binaries []string, bench string, iperf bool) (err error) {
	// dir maps each host to the suite's temporary directory there.
	dir := map[*Host]string{}
	for _, h := range []*Host{b.dut, b.peer} {
		if iperf {
			if _, err := h.Run(ctx, nil, "iperf3", "--version"); err != nil {
				return fmt.Errorf("%s: iperf3 is needed there: %w", h, err)
			}
		}
		out, err := h.Run(ctx, nil, "mktemp", "-d", path.Join(h.Conf.Workdir, "swctl-regress.XXXXXX"))
		if err != nil {
			return err
		}
		dir[h] = strings.TrimSpace(string(out))
		b.onUndo(func(ctx context.Context) error { return h.run(ctx, "rm", "-rf", dir[h]) })
	}
	b.testbed.dir, b.cpuHost, b.dutHost, b.links = dir[b.dut], b.dut, b.dut, b.dut.Conf.Interfaces
	if b.ncpu, err = b.dut.NCPU(ctx); err != nil {
		return err
	}
	for i, bin := range slices.Compact(slices.Clone(binaries)) {
		b.bins[bin] = path.Join(dir[b.dut], fmt.Sprintf("swctl-%d", i+1))
		if err := upload(ctx, b.dut, bin, b.bins[bin]); err != nil {
			return err
		}
	}
	if bench != "" {
		b.bench = path.Join(dir[b.peer], "swctl")
		if err := upload(ctx, b.peer, bench, b.bench); err != nil {
			return err
		}
		for i := range b.peerMACs {
			if b.peerMACs[i], err = b.peer.MAC(ctx, b.peer.Conf.Interfaces[i]); err != nil {
				return err
			}
		}
	}
	if iperf {
		if err := b.addr(ctx, b.peer, b.peer.Conf.Interfaces[0], b.peer.Conf.Addr); err != nil {
			return err
		}
		if _, err := b.background(ctx, b.peer, path.Join(dir[b.peer], "iperf3.log"), "", "iperf3", "-s", "-p", iperfPort); err != nil {
			return err
		}
	}
	b.keep()
	return nil
}

// upload copies the local file src to dst on h (in its temporary
// directory, removed with it) and makes it executable.
func upload(ctx context.Context, h *Host, src, dst string) error {
	f, err := os.Open(src)
	if err == nil {
		defer f.Close()
		_, err = h.Run(ctx, f, "sh", "-c", `cat >"$0" && chmod 755 "$0"`, dst)
	}
	if err != nil {
		return fmt.Errorf("upload %s: %w", src, err)
	}
	return nil
}

// addr puts address a on interface ifname of h, and records its removal.
func (b *hostBed) addr(ctx context.Context, h *Host, ifname string, a netip.Prefix) error {
	if h.Conf.OS == "linux" {
		return b.change(ctx, h.run, []string{"ip", "addr", "add", a.String(), "dev", ifname}, []string{"ip", "addr", "del", a.String(), "dev", ifname})
	}
	return b.change(ctx, h.run, []string{"ifconfig", ifname, "inet", a.String(), "alias"}, []string{"ifconfig", ifname, "inet", a.Addr().String(), "-alias"})
}

// promisc sets ifname of h promiscuous, and records putting it back.
func (b *hostBed) promisc(ctx context.Context, h *Host, ifname string) error {
	if h.Conf.OS == "linux" {
		return b.change(ctx, h.run, []string{"ip", "link", "set", "dev", ifname, "promisc", "on"}, []string{"ip", "link", "set", "dev", ifname, "promisc", "off"})
	}
	return b.change(ctx, h.run, []string{"ifconfig", ifname, "promisc"}, []string{"ifconfig", ifname, "-promisc"})
}

// start brings the device under test up for one instance: plain's
// interface promiscuous or not (its address is the setup's), or a daemon
// bridging the test interfaces with its TAP addressed.
func (b *hostBed) start(ctx context.Context, in Instance, bin string) (err error) {
	defer failedStart(b.stop, &err)
	d := b.dut.Conf
	switch {
	case in.Setup == "bridge0":
		if err := b.daemonUp(ctx, b.dut, b.bins[bin], in.Setup,
			[]string{"bridge", "create", "bridge0", "--local"}, append([]string{"bridge", "add", "bridge0"}, d.Interfaces...)); err != nil {
			return err
		}
		// The TAP goes with the daemon, and its address with it: no undo.
		if d.OS != "linux" {
			if _, err := b.dut.Run(ctx, nil, "ifconfig", "bridge0", "inet", d.Addr.String(), "up"); err != nil {
				return err
			}
			break
		}
		if err := runAll(ctx, b.dut.run, []string{"ip", "addr", "add", d.Addr.String(), "dev", "bridge0"}, []string{"ip", "link", "set", "bridge0", "up"}); err != nil {
			return err
		}
		// The TAP carries no offloads yet (README, Trunks: The TAP).
		b.dut.Run(ctx, nil, "ethtool", "-K", "bridge0", "tx", "off", "gso", "off")
	case in.Promisc:
		if err := b.promisc(ctx, b.dut, d.Interfaces[0]); err != nil {
			return err
		}
	}
	return waitPing(ctx, b.dut, b.peer.Conf.Addr.Addr().String())
}

// measure runs one iperf3 test of row from the DUT to the peer, twice at
// most when it fails: CPU and the engine's CPU are read on the DUT
// through its transport. more are extra iperf3 client options.
func (b *hostBed) measure(ctx context.Context, row string, seconds int, more ...string) (Sample, error) {
	return b.iperfRow(ctx, row, row, seconds, b.dut, "", b.peer.Conf.Addr.Addr().String(), more...)
}

// close puts back everything the suite changed on both hosts and adds
// what failed there to *err.
func (b *hostBed) close(err *error) {
	switch cerr := b.testbed.close(); {
	case cerr == nil:
	case *err == nil:
		*err = cerr
	default:
		*err = fmt.Errorf("%w (and while putting back: %v)", *err, cerr)
	}
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
	b := &hostBed{testbed: newTestbed(cmds, "", "hosts"), bins: map[string]string{},
		dut: &Host{Conf: hc.DUT, cmds: cmds}, peer: &Host{Conf: hc.Peer, cmds: cmds}}
	defer b.close(&err)
	if err := b.prepare(ctx, []string{trees.NoPatch.Binary, trees.Patch.Binary}, bench, len(plan) > 0); err != nil {
		return err
	}
	start, measure := promiscSteps(ctx, b, trees, cfg.Seconds, res)
	for _, s := range setups {
		mark := len(b.changes)
		// plain's address stays on for the whole setup.
		if s.Name == "plain" {
			if err := b.addr(ctx, b.dut, b.dut.Conf.Interfaces[0], b.dut.Conf.Addr); err != nil {
				return fmt.Errorf("%s: %w", s.Name, err)
			}
		}
		b.keep()
		if err := runPlan(prog, step, ofSetup(plan, s.Name, func(in Instance) string { return in.Setup }), start, measure, b.stop,
			func(in Instance) float64 { return float64(len(in.Rows))*(float64(cfg.Seconds)+1) + 1.5 }); err != nil {
			return err
		}
		// plain's address goes with its setup.
		b.mark = mark
		if err := b.stop(); err != nil {
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
		d, p := hc.DUT.Interfaces, hc.Peer.Interfaces
		sizes := make([]string, len(rc.Sizes))
		for i, s := range rc.Sizes {
			sizes[i] = fmt.Sprintf("%d (--size %d)", s, gen.FrameSize(s))
		}
		m = append(m,
			fmt.Sprintf("Forwarding rate on real test hosts: a swctl bridge over the device under test's %s, static entries for the peer's %s and %s; the peer's swctl bench (built from the tree as checked out, the same for both roles) sends on %s and counts on %s, %d UDP flows; frame sizes %s, RFC 2544's sizes with the FCS (swctl bench's --size counts without it).",
				strings.Join(d, " "), p[0], p[1], p[0], p[1], rc.Flows, strings.Join(sizes, ", ")),
			"Tester method (each table's \"method\" line): receiving: swctl bench's receiver on the peer reads every frame (on its own machine, so it takes no CPU from the device under test); no CPU-per-frame run here.",
			fmt.Sprintf("Per size and instance: a max-rate run (swctl bench --window 0 --duration %v: \"max fps\" is frames delivered per second, \"loss %%\" its loss), then swctl bench --search (RFC 2544 throughput, \"0-loss fps\": its own max-rate run as the upper bound, then paced trials of %v, to within %.1f%% of the first run's sent rate, at most %d trials; 0 = no trial passed).", rc.Trial, rc.Trial, 100*rc.Resolution, rc.MaxTrials),
			"Forwarding-rate CPU: the device under test's whole machine (/proc/stat, kern.cp_time) and the daemon's own time, read through the transport just before and after the peer's max-rate bench command: the span holds the transports' round trips and bench's start, so with short trials the percentages understate the load during the run. The search's trials carry no CPU figures.",
		)
		if rc.Latency {
			m = append(m, fmt.Sprintf("Latency: one more swctl bench run of %v paced at the zero-loss trial's rate; one-way delay measured by the peer's one process, min/avg/max.", rc.Trial))
		}
		if rc.LossRate {
			m = append(m, fmt.Sprintf("Frame loss rate (RFC 2544 26.3): swctl bench runs of %v paced at 100%%, %d%%, ... of the max-rate run's sent rate until two successive runs lose nothing, each with the DUT's CPU around it.", rc.Trial, 100-LossRateStep))
		}
		if rc.WindowDuration > 0 {
			m = append(m, fmt.Sprintf("Window benchmark (BalanceNG's): per instance one swctl bench run of %v, --size %d --window %d, one flow, with the DUT's CPU around it.", rc.WindowDuration, rc.WindowSize, rc.Window))
		}
	}
	return append(m, "Runs are interleaved per cell: patch, no patch, no patch, patch, ... (A B B A). Every change on a host (temporary directory, binaries, addresses, promiscuous mode, daemons, iperf3 server) is recorded and put back at the end, also on Ctrl-C or failure.")
}
