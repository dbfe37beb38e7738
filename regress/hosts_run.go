package regress

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"
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
	var out []SetupSpec
	for _, s := range HostSetups {
		for _, n := range names {
			if s.Name == n {
				out = append(out, s)
			}
		}
	}
	return out
}

// hostBed is the real-host testbed: the device under test and its peer,
// the swctl binaries uploaded to the DUT and the peer's iperf3 server.
type hostBed struct {
	// conf is the parsed regress.conf.
	conf *HostsConfig
	// dut and peer are the hosts.
	dut, peer *Host
	// dutDir and peerDir are the suite's temporary directories there.
	dutDir, peerDir string
	// bins maps a local binary to its path on the DUT.
	bins map[string]string
	// ncpu is the DUT's CPU count (for the BSD engine figure).
	ncpu int
	// daemon is the running swctl daemon, nil when none.
	daemon *Proc
	// bin and sock are the current daemon's binary and socket on the DUT.
	bin, sock string
	// starts counts daemon starts, for file names.
	starts int
}

// newHostBed checks both hosts, makes the temporary directories, uploads
// the binaries and starts the peer's iperf3 server. Every change is
// recorded on its host; close puts them back.
func newHostBed(ctx context.Context, hc *HostsConfig, binaries []string, cmds *Commands) (_ *hostBed, err error) {
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
		if _, err := h.Run(ctx, nil, "iperf3", "--version"); err != nil {
			return nil, fmt.Errorf("%s: iperf3 is needed there: %w", h, err)
		}
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
		f, err := os.Open(bin)
		if err != nil {
			return nil, fmt.Errorf("upload %s: %w", bin, err)
		}
		dst := path.Join(b.dutDir, fmt.Sprintf("swctl-%d", i+1))
		_, err = b.dut.Run(ctx, f, "sh", "-c", `cat >"$0" && chmod 755 "$0"`, dst)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("upload %s: %w", bin, err)
		}
		b.bins[bin] = dst
	}
	if err := b.addr(ctx, b.peer, b.peer.Conf.Interfaces[0], b.peer.Conf.Addr); err != nil {
		return nil, err
	}
	if _, err := b.peer.Start(ctx, path.Join(b.peerDir, "iperf3.log"), "iperf3", "-s", "-p", iperfPort); err != nil {
		return nil, err
	}
	return b, nil
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
	b.starts++
	b.bin = b.bins[bin]
	base := path.Join(b.dutDir, fmt.Sprintf("%s-%d", in.Setup, b.starts))
	b.sock = base + ".sock"
	d, err := b.dut.Start(ctx, base+".log", b.bin, "daemon", "--socket", b.sock, "--config", base+".conf", "--state-dir", base+".state")
	if err != nil {
		return err
	}
	b.daemon = d
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := b.dut.Run(ctx, nil, b.bin, "--socket", b.sock, "bridge", "show"); err == nil {
			break
		} else if d.Exited() || time.Now().After(deadline) || ctx.Err() != nil {
			log, _ := b.dut.Run(context.WithoutCancel(ctx), nil, "tail", "-5", base+".log")
			return fmt.Errorf("%s: daemon did not answer within 10s: %v; log: %s", b.dut, err, strings.TrimSpace(string(log)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	steps := [][]string{
		{b.bin, "--socket", b.sock, "bridge", "create", "bridge0", "--local"},
		append([]string{b.bin, "--socket", b.sock, "bridge", "add", "bridge0"}, b.dut.Conf.Interfaces...),
	}
	for _, s := range steps {
		if _, err := b.dut.Run(ctx, nil, s...); err != nil {
			return err
		}
	}
	// The TAP goes with the daemon, and its address with it: no undo.
	a := b.dut.Conf.Addr.String()
	if b.dut.Conf.OS == "linux" {
		for _, s := range [][]string{{"ip", "addr", "add", a, "dev", "bridge0"}, {"ip", "link", "set", "bridge0", "up"}} {
			if _, err := b.dut.Run(ctx, nil, s...); err != nil {
				return err
			}
		}
		// The TAP carries no offloads yet (README, Trunks: The TAP).
		b.dut.Run(ctx, nil, "ethtool", "-K", "bridge0", "tx", "off", "gso", "off")
	} else if _, err := b.dut.Run(ctx, nil, "ifconfig", "bridge0", "inet", a, "up"); err != nil {
		return err
	}
	return b.waitPing(ctx)
}

// waitPing waits up to 15 s until the peer answers a ping from the DUT.
func (b *hostBed) waitPing(ctx context.Context) error {
	ip := b.peer.Conf.Addr.Addr().String()
	deadline := time.Now().Add(15 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := b.dut.Run(pctx, nil, "ping", "-c", "1", ip)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer ping from %s: %v", ip, b.dut, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
		c0, err := b.dut.CPU(tctx)
		if err != nil {
			cancel()
			return s, err
		}
		var e0, e1 uint64
		var eerr error
		w0 := time.Now()
		if b.daemon != nil {
			e0, eerr = b.dut.ProcCPU(tctx, b.daemon.PID)
		}
		out, err := b.dut.Run(tctx, nil, args...)
		c1, cerr := b.dut.CPU(tctx)
		if b.daemon != nil && eerr == nil {
			e1, eerr = b.dut.ProcCPU(tctx, b.daemon.PID)
		}
		wall := time.Since(w0)
		cancel()
		mbps, retr, perr := parseIperf(out)
		if err == nil && perr == nil && cerr == nil {
			s.Mbps, s.Retransmits, s.CPU = mbps, retr, CPUDelta(c0, c1)
			if b.daemon != nil && eerr == nil && s.CPU.Ticks > 0 {
				v := 100 * float64(e1-e0) / float64(s.CPU.Ticks)
				if b.dut.Conf.OS != "linux" {
					v = float64(e1-e0) / 100 / (wall.Seconds() * float64(b.ncpu)) * 100
				}
				s.EngineCPU = &v
			}
			return s, nil
		}
		lastErr = err
		if perr != nil {
			lastErr = perr
		}
		if cerr != nil {
			lastErr = cerr
		}
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		time.Sleep(time.Second)
	}
	return s, fmt.Errorf("%s: iperf3 failed twice: %v", row, lastErr)
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

// runHosts runs the promisc plan on the real test hosts of hc and
// appends instances and samples to res.
func runHosts(ctx context.Context, cfg Config, hc *HostsConfig, setups []SetupSpec, plan []Instance, trees *Trees, res *Results, cmds *Commands, prog *Progress, step *int) (err error) {
	b, err := newHostBed(ctx, hc, []string{trees.NoPatch.Binary, trees.Patch.Binary}, cmds)
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
	seq := 0
	for _, s := range setups {
		depth := b.dut.UndoDepth()
		if err := b.setup(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, in := range plan {
			if in.Setup != s.Name {
				continue
			}
			*step++
			prog.Step(*step, in.String())
			bin := trees.NoPatch.Binary
			if in.Role == RolePatch {
				bin = trees.Patch.Binary
			}
			inDepth := b.dut.UndoDepth()
			if err := b.start(ctx, in, bin); err != nil {
				return fmt.Errorf("%s: start: %w", in, err)
			}
			res.Instances = append(res.Instances, InstanceRecord{Instance: in, Promiscuity: b.promiscuity(ctx)})
			for _, row := range in.Rows {
				smp, err := b.measure(ctx, row, cfg.Seconds)
				if err != nil {
					return fmt.Errorf("%s: %w", in, err)
				}
				seq++
				smp.Setup, smp.Promisc, smp.Role, smp.Run, smp.Seq = in.Setup, in.Promisc, in.Role, in.Run, seq
				res.Samples = append(res.Samples, smp)
			}
			if err := b.stop(ctx); err != nil {
				return err
			}
			if err := b.dut.UndoTo(inDepth); err != nil {
				return err
			}
			prog.Done(float64(len(in.Rows))*(float64(cfg.Seconds)+1) + 1.5)
		}
		if err := b.dut.UndoTo(depth); err != nil {
			return err
		}
	}
	return nil
}
