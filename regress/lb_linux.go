package regress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/bgproc"
	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/netbed"
)

// lbBed is the load-balancing testbed: a segment namespace holding a
// Linux bridge, and the client, balancer and three backend namespaces,
// each cabled to it by one veth (eth0 on their side). nginx runs in the
// backends for the whole suite; each instance starts its row's balancer
// and puts back what it changed when it stops.
type lbBed struct {
	nsbed
	// cfg is the suite's configuration.
	cfg LBConfig
	// seg, client and balancer are namespace names; backends holds
	// backend 1-3's.
	seg, client, balancer string
	// backends are the backends' namespace names.
	backends []string
	// pin is the CPUs of wrk, the balancer and nginx.
	pin lbPinning
	// haproxy is the HAProxy row's process while it runs.
	haproxy *bgproc.Proc
}

// lbHost is one namespace on the segment.
type lbHost struct {
	// ns is the namespace's name.
	ns string
	// port is the segment bridge's port to it.
	port string
	// ip is its address.
	ip string
	// mac is its eth0's MAC.
	mac string
}

// hosts returns the namespaces on the segment: client, balancer,
// backends.
func (b *lbBed) hosts() []lbHost {
	h := []lbHost{{b.client, "s-cli", lbClientIP, "02:80:00:00:00:01"}, {b.balancer, "s-lb", lbBalancerIP, "02:80:00:00:00:02"}}
	for k, ns := range b.backends {
		h = append(h, lbHost{ns, fmt.Sprintf("s-b%d", k+1), lbBackendIP(k + 1), fmt.Sprintf("02:80:00:00:00:%02x", 0x10+k+1)})
	}
	return h
}

// newLBBed builds the testbed and starts nginx in the backends; on error
// what was made is removed.
func newLBBed(ctx context.Context, cfg LBConfig, dir string, cmds *Commands) (_ *lbBed, err error) {
	rows, err := cfg.rows()
	if err != nil {
		return nil, err
	}
	tools := []string{"wrk", "nginx", "curl"}
	for _, r := range rows {
		switch r.Name {
		case LBNftables:
			tools = append(tools, "nft")
		case LBHAProxy:
			tools = append(tools, "haproxy")
		}
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return nil, fmt.Errorf("load-balancing testbed: needs %s (scripts/install-deps.sh installs wrk, nginx-light, haproxy, nftables, curl): %w", t, err)
		}
	}
	tag := fmt.Sprintf("swl%d", os.Getpid()%100000)
	b := &lbBed{nsbed: newNSBed(cmds, dir), cfg: cfg, seg: tag + "seg", client: tag + "cli", balancer: tag + "lb", pin: pinningFor(runtime.NumCPU())}
	for k := 1; k <= lbBackends; k++ {
		b.backends = append(b.backends, fmt.Sprintf("%sb%d", tag, k))
	}
	defer func() {
		if err != nil {
			b.close()
			err = fmt.Errorf("load-balancing testbed: %w", err)
		}
	}()
	steps := [][]string{
		{"ip", "-n", b.seg, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", b.seg, "link", "set", "br0", "up"},
	}
	hosts := b.hosts()
	for _, h := range hosts {
		steps = append(steps, netbed.Veth(b.seg, h.port, "", h.ns, "eth0", h.mac)...)
		steps = append(steps,
			[]string{"ip", "-n", b.seg, "link", "set", h.port, "master", "br0"},
			netbed.Addr(h.ns, h.ip+"/24", "eth0"),
			netbed.NoOffload(h.ns, "eth0"),
		)
		for _, peer := range hosts {
			// Permanent entries between real addresses; the VIP is
			// resolved by ARP, as a client would.
			if peer.ns != h.ns {
				steps = append(steps, netbed.Neigh(h.ns, peer.ip, peer.mac, "eth0"))
			}
		}
	}
	steps = append(steps,
		[]string{"ip", "netns", "exec", b.client, "sysctl", "-qw", "net.ipv4.ip_local_port_range=1024 65535", "net.ipv4.tcp_tw_reuse=1"},
		[]string{"ip", "netns", "exec", b.balancer, "sysctl", "-qw", "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.eth0.send_redirects=0",
			"net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.eth0.rp_filter=0"},
	)
	for _, ns := range b.backends {
		steps = append(steps,
			netbed.Addr(ns, lbVIP+"/32", "lo"),
			[]string{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.all.arp_announce=2",
				"net.ipv4.conf.all.accept_redirects=0", "net.ipv4.conf.eth0.accept_redirects=0"},
		)
	}
	if err := b.build(ctx, append([]string{b.seg, b.client, b.balancer}, b.backends...), steps...); err != nil {
		return nil, err
	}
	for k, ns := range b.backends {
		if err := b.startNginx(ctx, k+1, ns); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// nginxConf is a backend's nginx configuration: one process, an empty
// index.html on port 80, stub_status on 8080, no access log, files
// under dir.
func nginxConf(dir string) string {
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 8192; }
http {
	access_log off;
	keepalive_requests 1000000;
	client_body_temp_path %[1]s/tmp;
	proxy_temp_path %[1]s/tmp;
	fastcgi_temp_path %[1]s/tmp;
	uwsgi_temp_path %[1]s/tmp;
	scgi_temp_path %[1]s/tmp;
	server { listen 80; root %[1]s/www; index index.html; }
	server { listen 8080; location = /status { stub_status; } }
}
`, dir)
}

// startNginx starts backend k's nginx in namespace ns, pinned, and waits
// until its status page answers.
func (b *lbBed) startNginx(ctx context.Context, k int, ns string) error {
	dir := filepath.Join(b.dir, fmt.Sprintf("lb-b%d", k))
	for _, d := range []string{filepath.Join(dir, "www"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("nginx %d: %w", k, err)
		}
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(filepath.Join(dir, "www", "index.html"), nil, 0o644); err != nil {
		return fmt.Errorf("nginx %d: %w", k, err)
	}
	if err := os.WriteFile(conf, []byte(nginxConf(dir)), 0o644); err != nil {
		return fmt.Errorf("nginx %d: %w", k, err)
	}
	if err := b.serve("nginx in "+ns, filepath.Join(dir, "stderr.log"), ns, b.pin.Backends, "nginx", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf); err != nil {
		return err
	}
	err := poll(ctx, 10*time.Second, 50*time.Millisecond, func() error { _, err := b.stubStatus(ctx, ns); return err })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("nginx in %s did not answer within 10s: %v: %s", ns, err, bgproc.Tail(filepath.Join(dir, "error.log")))
	}
	return err
}

// stubStatus reads the requests backend namespace ns's nginx has served.
func (b *lbBed) stubStatus(ctx context.Context, ns string) (uint64, error) {
	out, err := b.cmds.Output(ctx, "", nil, "ip", "netns", "exec", ns, "curl", "-sS", "--max-time", "2", "http://127.0.0.1:8080/status")
	if err != nil {
		return 0, err
	}
	return ParseStubStatus(out)
}

// backendCounts reads every backend's requests count.
func (b *lbBed) backendCounts(ctx context.Context) ([]uint64, error) {
	var out []uint64
	for _, ns := range b.backends {
		n, err := b.stubStatus(ctx, ns)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// served returns the requests each backend served between two counts,
// less the status request each count itself is.
func served(before, after []uint64) []uint64 {
	out := make([]uint64, len(before))
	for i := range before {
		if i < len(after) && after[i] > before[i] {
			out[i] = after[i] - before[i] - 1
		}
	}
	return out
}

// url is what wrk asks for in row.
func lbURL(row string) string {
	if row == LBDirect {
		return "http://" + lbBackendIP(1) + "/"
	}
	return "http://" + lbVIP + "/"
}

// vipOnBalancer is the steps that put the VIP on the balancer's eth0
// (nftables and HAProxy answer for it with the kernel).
func (b *lbBed) vipOnBalancer() [2][]string {
	return [2][]string{
		netbed.Addr(b.balancer, lbVIP+"/32", "eth0"),
		{"ip", "-n", b.balancer, "addr", "del", lbVIP + "/32", "dev", "eth0"},
	}
}

// start brings up in's row with swctl binary bin (swctl row only) and
// warms it up.
func (b *lbBed) start(ctx context.Context, in LBInstance, bin string) (err error) {
	defer failedStart(in, b.stop, &err)
	b.starts++
	// The client learns the VIP's MAC afresh for every row.
	b.cmds.Output(ctx, "", nil, "ip", "-n", b.client, "neigh", "flush", "to", lbVIP)
	switch in.Row {
	case LBSwctl:
		if err := b.startSwctl(ctx, bin); err != nil {
			return err
		}
	case LBNftables:
		rules := filepath.Join(b.dir, fmt.Sprintf("lb-nft-%d.nft", b.starts))
		if err := os.WriteFile(rules, []byte(nftRules()), 0o644); err != nil {
			return err
		}
		steps := [][2][]string{
			b.vipOnBalancer(),
			{{"ip", "netns", "exec", b.balancer, "sysctl", "-qw", "net.ipv4.ip_forward=1"}, {"ip", "netns", "exec", b.balancer, "sysctl", "-qw", "net.ipv4.ip_forward=0"}},
			{{"ip", "netns", "exec", b.balancer, "nft", "-f", rules}, {"ip", "netns", "exec", b.balancer, "nft", "delete", "table", "ip", "swctl_lb"}},
		}
		for _, ns := range b.backends {
			steps = append(steps, [2][]string{
				{"ip", "-n", ns, "route", "replace", lbClientIP + "/32", "via", lbBalancerIP, "dev", "eth0"},
				{"ip", "-n", ns, "route", "del", lbClientIP + "/32"},
			})
		}
		if err := b.do(ctx, steps...); err != nil {
			return err
		}
	case LBHAProxy:
		if err := b.do(ctx, b.vipOnBalancer()); err != nil {
			return err
		}
		cfg := filepath.Join(b.dir, fmt.Sprintf("lb-haproxy-%d.cfg", b.starts))
		if err := os.WriteFile(cfg, []byte(haproxyConf()), 0o644); err != nil {
			return err
		}
		if b.haproxy, err = startProc(b.cmds, "haproxy", cfg+".log", b.balancer, b.pin.Balancer, "haproxy", "-db", "-f", cfg); err != nil {
			return err
		}
		b.ends = append(b.ends, func() error { p := b.haproxy; b.haproxy = nil; return p.Stop() })
	}
	return b.warmUp(ctx, in)
}

// startSwctl starts the swctl daemon in the balancer namespace, pins
// every thread of it, and configures the lb through swctl's CLI. A CLI
// without `swctl lb` fails here with its own error.
func (b *lbBed) startSwctl(ctx context.Context, bin string) error {
	if err := b.startDaemon(ctx, b.balancer, "", bin, filepath.Join(b.dir, fmt.Sprintf("lb-swctl-%d", b.starts))); err != nil {
		return err
	}
	if _, err := b.cmds.Output(ctx, "", nil, "taskset", "-a", "-p", "-c", b.pin.Balancer, strconv.Itoa(b.daemon.pid())); err != nil {
		return err
	}
	cmds := [][]string{{"lb", "create", "web", "--iface", "eth0", "--vip", lbVIP, "--method", "maglev", "--health", "tcp:80"}}
	for k := 1; k <= lbBackends; k++ {
		cmds = append(cmds, []string{"lb", "backend", "add", "web", lbBackendIP(k)})
	}
	for _, c := range cmds {
		if err := b.daemon.swctl(ctx, c...); err != nil {
			return fmt.Errorf("swctl lb row: %w", err)
		}
	}
	return nil
}

// nftRules is the nftables balancer: DNAT of the VIP's port 80 to the
// backends in turn (numgen inc, per new connection; conntrack keeps a
// connection on its backend and undoes the DNAT on the replies).
func nftRules() string {
	var m []string
	for k := 1; k <= lbBackends; k++ {
		m = append(m, fmt.Sprintf("%d : %s", k-1, lbBackendIP(k)))
	}
	return fmt.Sprintf(`table ip swctl_lb {
	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr %s tcp dport 80 dnat to numgen inc mod %d map { %s }
	}
}
`, lbVIP, lbBackends, strings.Join(m, ", "))
}

// haproxyConf is the HAProxy balancer: one thread, TCP mode, round robin
// over the backends. maxconn stays under the file limit HAProxy can
// raise itself to here.
func haproxyConf() string {
	var s strings.Builder
	fmt.Fprintf(&s, `global
	nbthread 1
	maxconn 4096
defaults
	mode tcp
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend vip
	bind %s:80
	default_backend web
backend web
	balance roundrobin
`, lbVIP)
	for k := 1; k <= lbBackends; k++ {
		fmt.Fprintf(&s, "\tserver b%d %s:80\n", k, lbBackendIP(k))
	}
	return s.String()
}

// wrkArgs is the wrk command line of a run of seconds in mode against
// row's URL, pinned to the client's CPU.
func (b *lbBed) wrkArgs(row, mode string, seconds int) []string {
	args := []string{"ip", "netns", "exec", b.client, "taskset", "-c", b.pin.Client, "wrk", "-t1", "-c" + strconv.Itoa(b.cfg.Connections),
		"-d" + strconv.Itoa(seconds) + "s", "--latency", "--timeout", "5s"}
	if mode == LBClose {
		args = append(args, "-H", "Connection: close")
	}
	return append(args, lbURL(row))
}

// runWrk runs wrk with args and returns its output and its own CPU time
// (rusage) in seconds.
func (b *lbBed) runWrk(ctx context.Context, args []string, seconds int) ([]byte, float64, error) {
	b.cmds.Log = append(b.cmds.Log, commandLine(args))
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+20)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	var cpu float64
	if cmd.ProcessState != nil {
		cpu = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	if err != nil {
		return out, cpu, fmt.Errorf("wrk: %v: %s", err, strings.TrimSpace(errb.String()+" "+string(out)))
	}
	return out, cpu, nil
}

// warmUp runs unrecorded connection-per-request wrk runs until every
// backend in's row reaches (backend 1 for direct, all for a balancer)
// has served requests, for up to 20 s: the balancer may need a moment
// (swctl resolves the backends and checks their health first).
func (b *lbBed) warmUp(ctx context.Context, in LBInstance) error {
	want := lbBackends
	if in.Row == LBDirect {
		want = 1
	}
	return poll(ctx, 20*time.Second, 200*time.Millisecond, func() error {
		before, err := b.backendCounts(ctx)
		if err != nil {
			return stopPoll{err}
		}
		_, _, werr := b.runWrk(ctx, b.wrkArgs(in.Row, LBClose, b.cfg.Warmup), b.cfg.Warmup)
		after, err := b.backendCounts(ctx)
		if err != nil {
			return stopPoll{err}
		}
		got := served(before, after)
		switch {
		case werr != nil:
			err = fmt.Errorf("warm-up: %w", werr)
		case slices.Contains(got[:want], 0):
			err = fmt.Errorf("warm-up: backends served %v requests in the last %d s run; want all of the first %d to serve some", got, b.cfg.Warmup, want)
		default:
			return nil
		}
		if aerr := b.balancerAlive(); aerr != nil {
			return stopPoll{aerr}
		}
		return err
	})
}

// balancerAlive says whether the row's balancer process, if any, still
// runs.
func (b *lbBed) balancerAlive() error {
	if b.haproxy != nil && b.haproxy.Exited() {
		return fmt.Errorf("haproxy exited: %s", bgproc.Tail(b.haproxy.Log))
	}
	return nil
}

// balancerPID is the running balancer process's PID, 0 without one.
func (b *lbBed) balancerPID() int {
	switch {
	case b.daemon != nil:
		return b.daemon.pid()
	case b.haproxy != nil:
		return b.haproxy.Pid()
	}
	return 0
}

// procTicks reads utime and stime, summed, of every process in pids
// (0: none).
func procTicks(pids ...int) (utime, stime uint64, err error) {
	for _, p := range pids {
		if p == 0 {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			return 0, 0, err
		}
		u, s, err := cpustat.ParsePidStat(string(b))
		if err != nil {
			return 0, 0, fmt.Errorf("process %d: %w", p, err)
		}
		utime, stime = utime+u, stime+s
	}
	return utime, stime, nil
}

// measure runs one recorded wrk run of in's row in mode, with the CPU
// readings around it and the backends' counts before and after.
func (b *lbBed) measure(ctx context.Context, in LBInstance, mode string) (LBSample, error) {
	args := b.wrkArgs(in.Row, mode, b.cfg.Seconds)
	s := LBSample{Command: commandLine(args)}
	before, err := b.backendCounts(ctx)
	if err != nil {
		return s, err
	}
	var nginxPIDs []int
	for _, p := range b.procs {
		nginxPIDs = append(nginxPIDs, p.Pid())
	}
	bal := b.balancerPID()
	c0, err := cpustat.Read()
	if err != nil {
		return s, err
	}
	bu0, bs0, berr := procTicks(bal)
	nu0, ns0, nerr := procTicks(nginxPIDs...)
	s.Start = time.Now()
	out, clientCPU, werr := b.runWrk(ctx, args, b.cfg.Seconds)
	c1, cerr := cpustat.Read()
	bu1, bs1, berr1 := procTicks(bal)
	nu1, ns1, nerr1 := procTicks(nginxPIDs...)
	if err := errors.Join(werr, cerr, berr, berr1, nerr, nerr1); err != nil {
		return s, err
	}
	if s.Wrk, err = ParseWrk(out); err != nil {
		return s, err
	}
	if s.Wrk.Requests == 0 {
		return s, fmt.Errorf("wrk completed no request: %s", strings.TrimSpace(string(out)))
	}
	after, err := b.backendCounts(ctx)
	if err != nil {
		return s, err
	}
	s.BackendRequests = served(before, after)
	s.WallSeconds, s.CPUs = c1.At.Sub(c0.At).Seconds(), c1.CPUs
	s.Machine = cpustat.Times{
		User: c1.Times.User - c0.Times.User, Nice: c1.Times.Nice - c0.Times.Nice, System: c1.Times.System - c0.Times.System,
		Idle: c1.Times.Idle - c0.Times.Idle, IOWait: c1.Times.IOWait - c0.Times.IOWait, IRQ: c1.Times.IRQ - c0.Times.IRQ,
		SoftIRQ: c1.Times.SoftIRQ - c0.Times.SoftIRQ, Steal: c1.Times.Steal - c0.Times.Steal,
	}
	if bal != 0 {
		t, sys := bu1+bs1-bu0-bs0, bs1-bs0
		s.BalancerTicks, s.BalancerSystemTicks = &t, &sys
	}
	s.BackendTicks = nu1 + ns1 - nu0 - ns0
	if total := s.Machine.Total(); total > 0 && s.WallSeconds > 0 && s.CPUs > 0 {
		// rusage seconds as ticks of the same clock as /proc/stat's.
		s.ClientTicks = uint64(clientCPU / (s.WallSeconds * float64(s.CPUs)) * float64(total))
	}
	if in.Row != LBDirect && slices.Contains(s.BackendRequests, 0) {
		return s, fmt.Errorf("a backend served no request: %v (wrk: %d requests)", s.BackendRequests, s.Wrk.Requests)
	}
	return s, nil
}

// lbTools returns the versions of the suite's tools, as they print them.
func lbTools(ctx context.Context) map[string]string {
	m := map[string]string{}
	for name, args := range map[string][]string{
		"wrk": {"wrk", "-v"}, "nginx": {"nginx", "-v"}, "haproxy": {"haproxy", "-v"}, "nft": {"nft", "--version"},
	} {
		out, _ := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
		if l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); l != "" {
			m[name] = strings.TrimSpace(l)
		}
	}
	return m
}

// runLB runs the suite's instances (plan) on its testbed, appending a
// sample per instance and mode to res.
func runLB(ctx context.Context, cfg LBConfig, plan []LBInstance, env suiteEnv, res *LBResults) error {
	b, err := newLBBed(ctx, cfg, env.work, env.cmds)
	if err != nil {
		return err
	}
	defer b.close()
	res.Pinning, res.Tools = b.pin, lbTools(ctx)
	for _, in := range plan {
		*env.step++
		env.prog.Step(*env.step, in.String())
		if err := b.start(ctx, in, env.trees.binaryFor(in.Role)); err != nil {
			return err
		}
		for _, mode := range in.Modes {
			smp, err := b.measure(ctx, in, mode)
			if err != nil {
				b.stop()
				return fmt.Errorf("%s %s: %w", in, mode, err)
			}
			smp.Row, smp.Role, smp.Mode, smp.Run, smp.Seq = in.Row, in.Role, mode, in.Run, len(res.Samples)+1
			res.Samples = append(res.Samples, smp)
		}
		if err := b.stop(); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		env.prog.Done(cfg.weight())
	}
	return nil
}
