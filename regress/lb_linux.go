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
	testbed
	// cfg is the suite's configuration.
	cfg LBConfig
	// client and balancer are namespace names.
	client, balancer string
	// backends are backend 1-3's namespace names.
	backends []string
	// pin is the CPUs of wrk, the balancer and nginx.
	pin lbPinning
	// bal is the running instance's balancer process (the swctl daemon
	// or HAProxy); nil in the rows without one.
	bal *Proc
	// nginx are the backends' nginx processes.
	nginx []*Proc
}

// lbRowTool is the program a row needs besides wrk, nginx and curl.
var lbRowTool = map[string]string{LBNftables: "nft", LBHAProxy: "haproxy"}

// newLBBed builds the testbed for plan's rows and starts nginx in the
// backends; on error what was made is removed.
func newLBBed(ctx context.Context, cfg LBConfig, plan []LBInstance, dir string, cmds *Commands) (_ *lbBed, err error) {
	tools := []string{"wrk", "nginx", "curl"}
	for _, in := range lbRowsOf(plan) {
		if t := lbRowTool[in.Row]; t != "" {
			tools = append(tools, t)
		}
	}
	if err := needTools(tools...); err != nil {
		return nil, fmt.Errorf("load-balancing testbed: %w", err)
	}
	tag := fmt.Sprintf("swl%d", os.Getpid()%100000)
	seg := tag + "seg"
	b := &lbBed{testbed: newTestbed(cmds, dir, "load-balancing testbed"), cfg: cfg, client: tag + "cli", balancer: tag + "lb", pin: pinningFor(runtime.NumCPU())}
	defer b.failedBuild("load-balancing testbed", &err)
	// The namespaces on the segment (tag+name), cabled to the bridge's
	// port s-name.
	type host struct{ name, ip, mac string }
	hosts := []host{{"cli", lbClientIP, "02:80:00:00:00:01"}, {"lb", lbBalancerIP, "02:80:00:00:00:02"}}
	for k := 1; k <= lbBackends; k++ {
		hosts = append(hosts, host{fmt.Sprintf("b%d", k), lbBackendIP(k), fmt.Sprintf("02:80:00:00:00:%02x", 0x10+k)})
		b.backends = append(b.backends, fmt.Sprintf("%sb%d", tag, k))
	}
	steps := [][]string{{"ip", "-n", seg, "link", "add", "br0", "type", "bridge"}, {"ip", "-n", seg, "link", "set", "br0", "up"}}
	for _, h := range hosts {
		ns := tag + h.name
		steps = append(steps, netbed.Veth(seg, "s-"+h.name, "", ns, "eth0", h.mac)...)
		steps = append(steps, []string{"ip", "-n", seg, "link", "set", "s-" + h.name, "master", "br0"}, netbed.Addr(ns, h.ip+"/24", "eth0"), netbed.NoOffload(ns, "eth0"))
		for _, peer := range hosts {
			// Permanent entries between real addresses; the VIP is
			// resolved by ARP, as a client would.
			if peer != h {
				steps = append(steps, netbed.Neigh(ns, peer.ip, peer.mac, "eth0"))
			}
		}
	}
	steps = append(steps,
		inNS(b.client, "sysctl", "-qw", "net.ipv4.ip_local_port_range=1024 65535", "net.ipv4.tcp_tw_reuse=1"),
		inNS(b.balancer, "sysctl", "-qw", "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.eth0.send_redirects=0",
			"net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.eth0.rp_filter=0"),
	)
	for _, ns := range b.backends {
		steps = append(steps, netbed.Addr(ns, lbVIP+"/32", "lo"), inNS(ns, "sysctl", "-qw", "net.ipv4.conf.all.arp_ignore=1",
			"net.ipv4.conf.all.arp_announce=2", "net.ipv4.conf.all.accept_redirects=0", "net.ipv4.conf.eth0.accept_redirects=0"))
	}
	if err := b.build(ctx, append([]string{seg, b.client, b.balancer}, b.backends...), steps...); err != nil {
		return nil, err
	}
	for k, ns := range b.backends {
		if err := b.startNginx(ctx, k+1, ns); err != nil {
			return nil, err
		}
	}
	b.keep()
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
	conf := filepath.Join(dir, "nginx.conf")
	if err := errors.Join(os.MkdirAll(filepath.Join(dir, "www"), 0o755), os.MkdirAll(filepath.Join(dir, "tmp"), 0o755),
		os.WriteFile(filepath.Join(dir, "www", "index.html"), nil, 0o644), os.WriteFile(conf, []byte(nginxConf(dir)), 0o644)); err != nil {
		return fmt.Errorf("nginx %d: %w", k, err)
	}
	p, err := b.background(ctx, b.on(ns), filepath.Join(dir, "stderr.log"), b.pin.Backends, "nginx", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf)
	if err != nil {
		return err
	}
	b.nginx = append(b.nginx, p)
	err = poll(ctx, 10*time.Second, 50*time.Millisecond, func() error { _, err := b.requestCounts(ctx, ns); return err })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("nginx in %s did not answer within 10s: %v: %s", ns, err, bgproc.Tail(filepath.Join(dir, "error.log")))
	}
	return err
}

// requestCounts reads the requests count of the nginx in each of the
// backend namespaces nss (nginx stub_status).
func (b *lbBed) requestCounts(ctx context.Context, nss ...string) ([]uint64, error) {
	var out []uint64
	for _, ns := range nss {
		text, err := b.on(ns).Run(ctx, nil, "curl", "-sS", "--max-time", "2", "http://127.0.0.1:8080/status")
		if err != nil {
			return nil, err
		}
		n, err := ParseStubStatus(text)
		if err != nil {
			return nil, fmt.Errorf("nginx in %s: %w", ns, err)
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

// start brings up in's row with swctl binary bin (swctl row only) and
// warms it up.
func (b *lbBed) start(ctx context.Context, in LBInstance, bin string) (err error) {
	defer failedStart(b.stop, &err)
	base := b.base("lb-" + in.Row)
	b.bal = nil
	// The client learns the VIP's MAC afresh for every row.
	b.cmds.run(ctx, "ip", "-n", b.client, "neigh", "flush", "to", lbVIP)
	// nftables and HAProxy answer for the VIP with the kernel.
	vip := [2][]string{netbed.Addr(b.balancer, lbVIP+"/32", "eth0"), {"ip", "-n", b.balancer, "addr", "del", lbVIP + "/32", "dev", "eth0"}}
	switch in.Row {
	case LBSwctl:
		// The daemon is pinned (its threads inherit the CPU) and
		// configured through swctl's CLI; a CLI without `swctl lb` fails
		// here with its own error.
		if err := b.startDaemon(ctx, b.on(b.balancer), b.pin.Balancer, bin, base); err != nil {
			return err
		}
		b.bal = b.daemon.Proc
		cmds := [][]string{{"lb", "create", "web", "--iface", "eth0", "--vip", lbVIP, "--method", "maglev", "--health", "tcp:80"}}
		for k := 1; k <= lbBackends; k++ {
			cmds = append(cmds, []string{"lb", "backend", "add", "web", lbBackendIP(k)})
		}
		if err := b.daemon.swctlAll(ctx, cmds...); err != nil {
			return fmt.Errorf("swctl lb row: %w", err)
		}
	case LBNftables:
		if err := os.WriteFile(base+".nft", []byte(nftRules()), 0o644); err != nil {
			return err
		}
		steps := [][2][]string{vip,
			{inNS(b.balancer, "sysctl", "-qw", "net.ipv4.ip_forward=1"), inNS(b.balancer, "sysctl", "-qw", "net.ipv4.ip_forward=0")},
			{inNS(b.balancer, "nft", "-f", base+".nft"), inNS(b.balancer, "nft", "delete", "table", "ip", "swctl_lb")},
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
		if err := os.WriteFile(base+".cfg", []byte(haproxyConf()), 0o644); err != nil {
			return err
		}
		if err := b.do(ctx, vip); err != nil {
			return err
		}
		if b.bal, err = b.background(ctx, b.on(b.balancer), base+".log", b.pin.Balancer, "haproxy", "-db", "-f", base+".cfg"); err != nil {
			return err
		}
	}
	return b.warmUp(ctx, in)
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
// row's URL (backend 1's for direct, the VIP's elsewhere), pinned to the
// client's CPU, for the client namespace.
func (b *lbBed) wrkArgs(row, mode string, seconds int) []string {
	args := pinned(b.pin.Client, "wrk", "-t1", "-c"+strconv.Itoa(b.cfg.Connections), "-d"+strconv.Itoa(seconds)+"s", "--latency", "--timeout", "5s")
	if mode == LBClose {
		args = append(args, "-H", "Connection: close")
	}
	if row == LBDirect {
		return append(args, "http://"+lbBackendIP(1)+"/")
	}
	return append(args, "http://"+lbVIP+"/")
}

// warmUp runs unrecorded connection-per-request wrk runs until one
// passes measure's checks (every backend of a balanced row served
// requests), for up to 20 s: the balancer may need a moment (swctl
// resolves the backends and checks their health first).
func (b *lbBed) warmUp(ctx context.Context, in LBInstance) error {
	return poll(ctx, 20*time.Second, 200*time.Millisecond, func() error {
		_, err := b.measure(ctx, in, LBClose, b.cfg.Warmup)
		if err != nil && b.bal != nil && b.bal.Exited() {
			return stopPoll{fmt.Errorf("%s exited: %s", b.bal.desc, b.bal.Tail())}
		}
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		return nil
	})
}

// lbTicks is one reading of the CPU counters a sample is made of.
type lbTicks struct {
	// machine is the whole machine's reading.
	machine cpustat.Reading
	// balancerUser and balancerSys are the balancer process's utime and
	// stime; nginx is the backends' utime+stime.
	balancerUser, balancerSys, nginx uint64
}

// ticks reads the machine's CPU, then the balancer's and the nginx
// processes'.
func (b *lbBed) ticks() (t lbTicks, err error) {
	if t.machine, err = cpustat.Read(); err != nil {
		return t, err
	}
	if b.bal != nil {
		if t.balancerUser, t.balancerSys, err = cpustat.ReadPidTimes(b.bal.PID); err != nil {
			return t, fmt.Errorf("%s: %w", b.bal.desc, err)
		}
	}
	for _, p := range b.nginx {
		n, err := cpustat.ReadPid(p.PID)
		if err != nil {
			return t, fmt.Errorf("%s: %w", p.desc, err)
		}
		t.nginx += n
	}
	return t, nil
}

// measure runs wrk for seconds against in's row in mode, with the CPU
// readings around it and the backends' counts before and after; that a
// balanced row left a backend without requests is an error.
func (b *lbBed) measure(ctx context.Context, in LBInstance, mode string, seconds int) (LBSample, error) {
	client, args := b.on(b.client), b.wrkArgs(in.Row, mode, seconds)
	s := LBSample{Command: client.line(args)}
	before, err := b.requestCounts(ctx, b.backends...)
	t0, terr := b.ticks()
	if err := errors.Join(err, terr); err != nil {
		return s, err
	}
	s.Start = time.Now()
	wctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+20)*time.Second)
	defer cancel()
	wrk := client.command(wctx, args...)
	out, err := capture(wrk, "wrk")
	if err != nil {
		return s, fmt.Errorf("%w %s", err, strings.TrimSpace(string(out)))
	}
	t1, terr := b.ticks()
	after, err := b.requestCounts(ctx, b.backends...)
	if err := errors.Join(terr, err); err != nil {
		return s, err
	}
	if s.Wrk, err = ParseWrk(out); err != nil {
		return s, err
	}
	if s.Wrk.Requests == 0 {
		return s, fmt.Errorf("wrk completed no request: %s", strings.TrimSpace(string(out)))
	}
	s.BackendRequests = served(before, after)
	m0, m1 := t0.machine.Times, t1.machine.Times
	s.WallSeconds, s.CPUs = t1.machine.At.Sub(t0.machine.At).Seconds(), t1.machine.CPUs
	s.Machine = cpustat.Times{User: m1.User - m0.User, Nice: m1.Nice - m0.Nice, System: m1.System - m0.System, Idle: m1.Idle - m0.Idle,
		IOWait: m1.IOWait - m0.IOWait, IRQ: m1.IRQ - m0.IRQ, SoftIRQ: m1.SoftIRQ - m0.SoftIRQ, Steal: m1.Steal - m0.Steal}
	if b.bal != nil {
		s.BalancerSystemTicks = new(t1.balancerSys - t0.balancerSys)
		s.BalancerTicks = new(t1.balancerUser - t0.balancerUser + *s.BalancerSystemTicks)
	}
	s.BackendTicks = t1.nginx - t0.nginx
	if total := s.Machine.Total(); total > 0 && s.WallSeconds > 0 && s.CPUs > 0 {
		// wrk's rusage (ip netns exec execs wrk) in seconds, as ticks of
		// the same clock as /proc/stat's.
		clientCPU := (wrk.ProcessState.UserTime() + wrk.ProcessState.SystemTime()).Seconds()
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
	for name, flag := range map[string]string{"wrk": "-v", "nginx": "-v", "haproxy": "-v", "nft": "--version"} {
		out, _ := exec.CommandContext(ctx, name, flag).CombinedOutput()
		if l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); l != "" {
			m[name] = strings.TrimSpace(l)
		}
	}
	return m
}

// runLB runs the suite's instances (res.Plan) on its testbed, appending
// a sample per instance and mode to res.
func runLB(ctx context.Context, env suiteEnv, res *LBResults) error {
	b, err := newLBBed(ctx, res.Config, res.Plan, env.work, env.cmds)
	if err != nil {
		return err
	}
	defer b.close()
	res.Pinning, res.Tools = b.pin, lbTools(ctx)
	return runPlan(env.prog, env.step, res.Plan,
		func(in LBInstance) error { return b.start(ctx, in, env.trees.binaryFor(in.Role)) },
		func(in LBInstance) error {
			for _, mode := range in.Modes {
				smp, err := b.measure(ctx, in, mode, b.cfg.Seconds)
				if err != nil {
					return fmt.Errorf("%s: %w", mode, err)
				}
				smp.Row, smp.Role, smp.Mode, smp.Run, smp.Seq = in.Row, in.Role, mode, in.Run, len(res.Samples)+1
				res.Samples = append(res.Samples, smp)
			}
			return nil
		},
		b.stop, func(LBInstance) float64 { return res.Config.weight() })
}
