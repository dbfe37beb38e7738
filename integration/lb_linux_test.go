package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// The lb testbed: one L2 segment, a Linux bridge in namespace sw, joining
// a client, backends running nginx that answer with their own name (the
// VIP on their loopback, arp_ignore=1, arp_announce=2), and one or more
// swctl daemons each running lb web on its eth1. Addresses are
// 10.77.<subnet>.0/24: lbs .2, .3, ..., client .5, backends .11, .12,
// ...; the VIP is .100.

// lbSeg is one lb testbed.
type lbSeg struct {
	t *testing.T
	// sw holds the segment's bridge br0.
	sw *netnstest.NS
	// subnet is the third octet.
	subnet int
	// client is the client's namespace, on the segment unless a router
	// sits between (ECMP).
	client *netnstest.NS
	// clientIP is its address.
	clientIP string
	// backends run nginx.
	backends []*lbBackend
	// lbs are the daemons, each with lb web on eth1.
	lbs []*testbed
	// ports counts the bridge ports made, for their names.
	ports int
	// vip6 is the IPv6 VIP, "" when the segment runs IPv4 only.
	vip6 string
}

// lbBackend is one backend namespace.
type lbBackend struct {
	ns *netnstest.NS
	// name is what its nginx answers ("b1"), ip its address.
	name, ip string
	// conf is its nginx configuration file.
	conf string
	// nginx is the running server, nil when stopped.
	nginx *exec.Cmd
}

func (s *lbSeg) addr(host int) string { return fmt.Sprintf("10.77.%d.%d", s.subnet, host) }
func (s *lbSeg) vip() string          { return s.addr(100) }

// cable puts ns's iface (with mac, "" for a random one) on the segment.
func (s *lbSeg) cable(ns *netnstest.NS, iface, mac string) {
	s.ports++
	port := fmt.Sprintf("s%d", s.ports)
	netnstest.Veth(s.t, ns, iface, mac, s.sw, port, "")
	s.sw.Run("ip", "link", "set", port, "master", "br0")
}

// newLBSeg makes the segment and n backends with nginx running, for the
// IPv4 VIP only.
func newLBSeg(t *testing.T, backends int) *lbSeg { t.Helper(); return newLBSegWith(t, backends, false) }

// addr6 is a host's IPv6 address on the segment (fd00:77:<subnet>::host).
func (s *lbSeg) addr6(host int) string { return fmt.Sprintf("fd00:77:%x::%x", s.subnet, host) }

// enable6 turns IPv6 on for ns and its iface (netnstest.New turns it off).
func enable6(ns *netnstest.NS, iface string) {
	ns.Run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.lo.disable_ipv6=0", "net.ipv6.conf."+iface+".disable_ipv6=0")
}

// newLBSegWith is newLBSeg, with an IPv6 VIP (fd00:77:<subnet>::100) as
// well when ipv6 is set.
func newLBSegWith(t *testing.T, backends int, ipv6 bool) *lbSeg {
	t.Helper()
	netnstest.Require(t)
	netnstest.RequireTool(t, "nginx", "nginx-light")
	netnstest.RequireTool(t, "curl", "curl")
	subnetCounter++
	s := &lbSeg{t: t, sw: netnstest.New(t, "lbsw"), subnet: subnetCounter%250 + 1}
	if ipv6 {
		s.vip6 = s.addr6(0x100)
	}
	s.sw.Run("ip", "link", "add", "br0", "type", "bridge")
	s.sw.Run("ip", "link", "set", "br0", "up")
	for i := 1; i <= backends; i++ {
		s.addBackend(i)
	}
	return s
}

// onSegmentClient puts the client on the segment.
func (s *lbSeg) onSegmentClient() {
	s.client, s.clientIP = netnstest.New(s.t, "lbc"), s.addr(5)
	s.cable(s.client, "eth0", "")
	s.client.Run("ip", "addr", "add", s.clientIP+"/24", "dev", "eth0")
	if s.vip6 != "" {
		enable6(s.client, "eth0")
		s.client.Run("ip", "addr", "add", s.addr6(5)+"/64", "dev", "eth0", "nodad")
	}
}

// addBackend makes backend i on the segment and starts its nginx.
func (s *lbSeg) addBackend(i int) {
	ns := netnstest.New(s.t, fmt.Sprintf("lbb%d", i))
	s.cable(ns, "eth0", fmt.Sprintf("02:00:00:%02x:0b:%02x", s.subnet, i))
	ip := s.addr(10 + i)
	ns.Run("ip", "addr", "add", ip+"/24", "dev", "eth0")
	if s.vip6 != "" {
		// The replies from the VIP leave by eth0's IPv6 route.
		enable6(ns, "eth0")
		ns.Run("ip", "addr", "add", s.addr6(10+i)+"/64", "dev", "eth0", "nodad")
	}
	s.backends = append(s.backends, newBackend(s.t, ns, fmt.Sprintf("b%d", i), ip, s.vip(), s.vip6))
}

// newBackend makes ns, whose eth0 has ip, a backend called name for vip
// (and vip6 unless ""): the VIPs on lo, ARP for them left to the lb, and
// nginx answering name.
func newBackend(t *testing.T, ns *netnstest.NS, name, ip, vip, vip6 string) *lbBackend {
	t.Helper()
	b := &lbBackend{ns: ns, name: name, ip: ip}
	b.ns.Run("ip", "addr", "add", vip+"/32", "dev", "lo")
	listen6 := ""
	if vip6 != "" {
		enable6(ns, "eth0")
		b.ns.Run("ip", "addr", "add", vip6+"/128", "dev", "lo", "nodad")
		listen6 = "listen [::]:80 reuseport;"
	}
	for _, k := range []string{"all", "eth0"} {
		b.ns.Run("sysctl", "-qw", "net.ipv4.conf."+k+".arp_ignore=1", "net.ipv4.conf."+k+".arp_announce=2")
	}
	dir := t.TempDir()
	b.conf = filepath.Join(dir, "nginx.conf")
	conf := fmt.Sprintf(`user root;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 512; }
http {
    access_log off;
    keepalive_timeout 300s;
    keepalive_requests 100000;
    server {
        listen 80 reuseport;
        %[3]s
        location / { return 200 "%[2]s\n"; }
    }
}
`, dir, b.name, listen6)
	if err := os.WriteFile(b.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	b.start(t)
	return b
}

// start runs the backend's nginx in the foreground until stop or the
// test's end, and waits until it answers on its own address.
func (b *lbBackend) start(t *testing.T) {
	t.Helper()
	cmd := b.ns.Command(context.Background(), "nginx", "-c", b.conf, "-g", "daemon off;")
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start nginx: %v", b.name, err)
	}
	b.nginx = cmd
	t.Cleanup(b.stop)
	netnstest.Eventually(t, 10*time.Second, b.name+": nginx answers", func() bool {
		out, err := b.ns.Try("curl", "-s", "--max-time", "1", "http://"+b.ip+"/")
		return err == nil && strings.TrimSpace(out) == b.name
	})
}

// stop ends the backend's nginx (and its workers: a fast shutdown).
func (b *lbBackend) stop() {
	if b.nginx == nil {
		return
	}
	b.nginx.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { b.nginx.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.nginx.Process.Kill()
		<-done
	}
	b.nginx = nil
}

// addLB starts a daemon whose eth1 is lb host on the segment, and runs lb
// web there with every backend, health checked over HTTP every 300 ms.
func (s *lbSeg) addLB(host int) *testbed {
	tb := newTestbed(s.t, 0)
	s.cable(tb.dut, "eth1", fmt.Sprintf("02:00:00:%02x:1b:%02x", s.subnet, host))
	tb.dut.Run("ip", "addr", "add", s.addr(host)+"/24", "dev", "eth1")
	create := []string{"lb", "create", "web", "--iface", "eth1", "--vip", s.vip(), "--health", "http:80/", "--interval", "300ms", "--timeout", "250ms"}
	if s.vip6 != "" {
		enable6(tb.dut, "eth1")
		tb.dut.Run("ip", "addr", "add", s.addr6(host)+"/64", "dev", "eth1", "nodad")
		create = append(create, "--vip", s.vip6)
	}
	tb.start()
	tb.swctl(create...)
	for _, b := range s.backends {
		tb.swctl("lb", "backend", "add", "web", b.ip)
	}
	s.lbs = append(s.lbs, tb)
	netnstest.Eventually(s.t, 20*time.Second, "every backend resolved and serving", func() bool {
		l := lbShow(tb)
		if len(l.Backends) != len(s.backends) {
			return false
		}
		for _, b := range l.Backends {
			if b.State != "serving" {
				return false
			}
		}
		return true
	})
	return tb
}

// lbInfo is lb show -o json, in the fields the tests read.
type lbInfo struct {
	MAC      string `json:"mac"`
	State    string `json:"state"`
	Serving  int    `json:"serving"`
	AllDown  bool   `json:"all_down"`
	Flows    int    `json:"flows"`
	Frames   uint64 `json:"frames"`
	Backends []struct {
		Addr   string `json:"addr"`
		MAC    string `json:"mac"`
		State  string `json:"state"`
		Health string `json:"health"`
		Frames uint64 `json:"frames"`
	} `json:"backends"`
}

func lbShow(tb *testbed) lbInfo {
	tb.t.Helper()
	var ls []lbInfo
	tb.swctlJSON(&ls, "lb", "show", "web")
	if len(ls) != 1 {
		tb.t.Fatalf("lb show web: %d lbs; want 1", len(ls))
	}
	return ls[0]
}

// backendState returns the state of the backend at ip in lb show.
func backendState(tb *testbed, ip string) string {
	for _, b := range lbShow(tb).Backends {
		if b.Addr == ip {
			return b.State
		}
	}
	return ""
}

// curl fetches http://VIP/ from the client on a new connection and
// returns the backend that answered, or an error. It gives the
// connection 5 s, room for a retransmitted SYN: on the loaded test
// machine the first connection of a test now and then needs one.
func (s *lbSeg) curl() (string, error) {
	out, err := s.client.Try("curl", "-s", "--max-time", "5", "http://"+s.vip()+"/")
	if err != nil {
		return "", fmt.Errorf("curl http://%s/: %v: %s", s.vip(), err, out)
	}
	return strings.TrimSpace(out), nil
}

// spread makes n new connections to the VIP and counts the answers by
// backend; it fails the test if one fails.
func (s *lbSeg) spread(n int) map[string]int {
	s.t.Helper()
	got := map[string]int{}
	for range n {
		who, err := s.curl()
		if err != nil {
			s.t.Fatal(err)
		}
		got[who]++
	}
	return got
}

// keepAlive is one long-lived HTTP/1.1 connection from the client to the
// VIP.
type keepAlive struct {
	conn net.Conn
	r    *bufio.Reader
	// backend is who answered its first request.
	backend string
}

// dial opens a keep-alive connection from the client and makes its
// first request.
func (s *lbSeg) dial() (*keepAlive, error) {
	var conn net.Conn
	var err error
	s.client.Do(func() {
		d := net.Dialer{Timeout: 2 * time.Second}
		conn, err = d.Dial("tcp", net.JoinHostPort(s.vip(), "80"))
	})
	if err != nil {
		return nil, err
	}
	s.t.Cleanup(func() { conn.Close() })
	k := &keepAlive{conn: conn, r: bufio.NewReader(conn)}
	k.backend, err = k.get()
	return k, err
}

// get makes one request on the connection and returns the body.
func (k *keepAlive) get() (string, error) {
	k.conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(k.conn, "GET / HTTP/1.1\r\nHost: vip\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return strings.TrimSpace(string(body)), err
}

// sport is the connection's local port.
func (k *keepAlive) sport() int { return k.conn.LocalAddr().(*net.TCPAddr).Port }

// holdOnEach opens keep-alive connections until it holds one on each
// backend.
func (s *lbSeg) holdOnEach() map[string]*keepAlive {
	s.t.Helper()
	held := map[string]*keepAlive{}
	for i := 0; i < 200 && len(held) < len(s.backends); i++ {
		k, err := s.dial()
		if err != nil {
			s.t.Fatalf("keep-alive connection to the VIP: %v", err)
		}
		if held[k.backend] == nil {
			held[k.backend] = k
		} else {
			k.conn.Close()
		}
	}
	if len(held) < len(s.backends) {
		s.t.Fatalf("200 connections reached only %d of %d backends", len(held), len(s.backends))
	}
	return held
}

// forwarded reads Ip ForwDatagrams, the datagrams the kernel of ns
// forwarded.
func forwarded(t *testing.T, ns *netnstest.NS) int {
	t.Helper()
	lines := strings.Split(ns.Run("cat", "/proc/net/snmp"), "\n")
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "Ip:" || len(values) != len(names) {
			continue
		}
		for j, n := range names {
			if n == "ForwDatagrams" {
				v, _ := strconv.Atoi(values[j])
				return v
			}
		}
	}
	t.Fatalf("no Ip ForwDatagrams in /proc/net/snmp")
	return 0
}

func TestIntegrationLBReachesEveryBackend(t *testing.T) {
	s := newLBSeg(t, 3)
	s.onSegmentClient()
	lb := s.addLB(2)
	// A host that forwards must still not forward the VIP's frames: the
	// stack guard keeps them from it.
	lb.dut.Run("sysctl", "-qw", "net.ipv4.ip_forward=1")
	got := s.spread(90)
	for _, b := range s.backends {
		if got[b.name] < 10 {
			t.Errorf("%s answered %d of 90 connections; want about 30 (all: %v)", b.name, got[b.name], got)
		}
	}
	l := lbShow(lb)
	if l.Frames == 0 || l.Flows == 0 {
		t.Errorf("lb show: %d frames, %d flows; want both counted", l.Frames, l.Flows)
	}
	// swctl stats (the metrics) counts what lb show does, per backend.
	st, l := lb.stats(), lbShow(lb)
	web := map[string]string{"lb": "web"}
	if r, f := st[sampleKey("swctl_lb_running", web)], st[sampleKey("swctl_lb_forwarded_frames_total", web)]; r != 1 || f == 0 || f > float64(l.Frames) {
		t.Errorf("stats: lb web running %v, %v frames forwarded; want 1, and some, at most lb show's %d (taken after)", r, f, l.Frames)
	}
	for _, b := range l.Backends {
		bk := map[string]string{"lb": "web", "backend": b.Addr}
		if f := st[sampleKey("swctl_lb_backend_forwarded_frames_total", bk)]; f == 0 || f > float64(b.Frames) {
			t.Errorf("stats: %v frames forwarded to %s; want some, at most lb show's %d (taken after)", f, b.Addr, b.Frames)
		}
		if v := st[sampleKey("swctl_lb_backend_state", map[string]string{"lb": "web", "backend": b.Addr, "state": "serving"})]; v != 1 {
			t.Errorf("stats: backend %s serving %v; want 1", b.Addr, v)
		}
	}
	if fwd := forwarded(t, lb.dut); fwd != 0 {
		t.Errorf("the lb host's kernel forwarded %d datagrams with ip_forward on; want 0 (the stack guard keeps the VIP's frames from it)", fwd)
	}
	// The VIP resolves to the lb's MAC and nothing else, and the lb
	// answers for nothing but the VIP.
	lbMAC := fmt.Sprintf("02:00:00:%02x:1b:02", s.subnet)
	out, _ := s.client.Try("arping", "-c", "3", "-w", "3", "-I", "eth0", s.vip())
	if !strings.Contains(strings.ToLower(out), lbMAC) {
		t.Errorf("arping %s: no answer from the lb's %s:\n%s", s.vip(), lbMAC, out)
	}
	for _, b := range s.backends {
		if strings.Contains(strings.ToLower(out), fmt.Sprintf("02:00:00:%02x:0b:", s.subnet)) {
			t.Errorf("arping %s: a backend (%s) answered for the VIP:\n%s", s.vip(), b.name, out)
			break
		}
	}
	if out, err := s.client.Try("arping", "-c", "2", "-w", "2", "-I", "eth0", s.addr(99)); err == nil {
		t.Errorf("arping %s (nobody's address) was answered:\n%s", s.addr(99), out)
	}
	// Frames not for the VIP are left alone: the client reaches a backend
	// and the lb's host directly, and the lb forwards none of it.
	before := lbShow(lb).Frames
	for _, ip := range []string{s.backends[0].ip, s.addr(2)} {
		if out, err := s.client.Try("curl", "-s", "--max-time", "2", "-o", "/dev/null", "-w", "%{http_code}", "http://"+ip+"/"); ip == s.backends[0].ip && (err != nil || out != "200") {
			t.Errorf("curl %s directly: %v %s; want 200", ip, err, out)
		}
		mustPingNS(t, s.client, ip)
	}
	if after := lbShow(lb).Frames; after != before {
		t.Errorf("traffic to other addresses moved the lb's forwarded frames from %d to %d; want it left alone", before, after)
	}
}

func TestIntegrationLBBackendDownAndDrain(t *testing.T) {
	s := newLBSeg(t, 3)
	s.onSegmentClient()
	lb := s.addLB(2)
	held := s.holdOnEach()
	down, drained, kept := s.backends[0], s.backends[1], s.backends[2]

	down.stop()
	start := time.Now()
	netnstest.Eventually(t, 10*time.Second, down.name+" marked down", func() bool { return backendState(lb, down.ip) == "down" })
	t.Logf("%s marked down %v after its nginx stopped (checks every 300ms, down after 3 failures)", down.name, time.Since(start).Round(10*time.Millisecond))
	if got := s.spread(30); got[down.name] != 0 || got[drained.name] == 0 || got[kept.name] == 0 {
		t.Errorf("new connections with %s down: %v; want none on it, some on each other", down.name, got)
	}
	for _, b := range []*lbBackend{drained, kept} {
		if who, err := held[b.name].get(); err != nil || who != b.name {
			t.Errorf("established connection on %s while %s is down: %q, %v; want it answered by %s", b.name, down.name, who, err, b.name)
		}
	}

	lb.swctl("lb", "backend", "drain", "web", drained.ip)
	if st := backendState(lb, drained.ip); st != "draining" {
		t.Fatalf("after drain %s is %q; want draining", drained.name, st)
	}
	if got := s.spread(30); got[kept.name] != 30 {
		t.Errorf("new connections with %s down and %s drained: %v; want all on %s", down.name, drained.name, got, kept.name)
	}
	for i := range 3 {
		if who, err := held[drained.name].get(); err != nil || who != drained.name {
			t.Fatalf("request %d on the established connection to drained %s: %q, %v; want it kept there", i, drained.name, who, err)
		}
	}

	// All down: the lb says so and drops frames to the VIP.
	kept.stop()
	lb.swctl("lb", "backend", "del", "web", drained.ip)
	netnstest.Eventually(t, 10*time.Second, "every backend down", func() bool { return lbShow(lb).AllDown })
	if _, err := s.curl(); err == nil {
		t.Errorf("a connection to the VIP succeeded with every backend down")
	}
	if text := lb.swctl("lb", "show", "web"); !strings.Contains(text, "ALL BACKENDS DOWN") {
		t.Errorf("lb show does not say every backend is down:\n%s", text)
	}
}

func TestIntegrationLBECMPScaleOut(t *testing.T) {
	s := newLBSeg(t, 3)
	// The client is behind a router whose route to the VIP has two
	// nexthops, the lbs at .2 and .3.
	router := netnstest.New(t, "lbr")
	s.client, s.clientIP = netnstest.New(t, "lbc"), fmt.Sprintf("10.78.%d.5", s.subnet)
	netnstest.Veth(t, s.client, "eth0", "", router, "eth0", "")
	s.cable(router, "eth1", "")
	s.client.Run("ip", "addr", "add", s.clientIP+"/24", "dev", "eth0")
	s.client.Run("ip", "route", "add", "default", "via", fmt.Sprintf("10.78.%d.1", s.subnet))
	router.Run("ip", "addr", "add", fmt.Sprintf("10.78.%d.1/24", s.subnet), "dev", "eth0")
	router.Run("ip", "addr", "add", s.addr(1)+"/24", "dev", "eth1")
	router.Run("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=1")
	for _, b := range s.backends {
		b.ns.Run("ip", "route", "add", "default", "via", s.addr(1))
	}
	lb1, lb2 := s.addLB(2), s.addLB(3)
	route := func(w1, w2 int) []string {
		return []string{"ip", "route", "replace", s.vip() + "/32",
			"nexthop", "via", s.addr(2), "weight", strconv.Itoa(w1), "nexthop", "via", s.addr(3), "weight", strconv.Itoa(w2)}
	}
	router.Run(route(1, 1)...)
	// via returns the lb the router sends connection k by.
	via := func(k *keepAlive) string {
		out := router.Run("ip", "route", "get", s.vip(), "from", s.clientIP, "iif", "eth0",
			"ipproto", "tcp", "sport", strconv.Itoa(k.sport()), "dport", "80")
		for _, a := range []string{s.addr(2), s.addr(3)} {
			if strings.Contains(out, "via "+a+" ") {
				return a
			}
		}
		t.Fatalf("ip route get: no nexthop in %q", out)
		return ""
	}
	const n = 60
	var conns []*keepAlive
	first := make([]string, 0, n)
	before := map[string]int{}
	for range n {
		k, err := s.dial()
		if err != nil {
			t.Fatalf("connection %d to the VIP: %v", len(conns), err)
		}
		conns = append(conns, k)
		first = append(first, via(k))
		before[first[len(first)-1]]++
	}
	if before[s.addr(2)] == 0 || before[s.addr(3)] == 0 {
		t.Fatalf("the router sent all %d connections by one lb: %v", n, before)
	}
	f1, f2 := lbShow(lb1).Frames, lbShow(lb2).Frames
	if f1 == 0 || f2 == 0 {
		t.Errorf("forwarded frames: lb1 %d, lb2 %d; want both lbs used", f1, f2)
	}
	router.Run(route(1, 4)...)
	moved, survived := 0, 0
	for i, k := range conns {
		path := via(k)
		if path != first[i] {
			moved++
		}
		// Two requests, so that data crosses the new path both before
		// and after the connection's ACKs do.
		for range 2 {
			if who, err := k.get(); err != nil || who != k.backend {
				t.Errorf("connection %d (port %d, %s then %s): after the route change %q, %v; want it answered by %s", i, k.sport(), first[i], path, who, err, k.backend)
				survived--
				break
			}
		}
		survived++
	}
	t.Logf("ECMP scale-out: %d connections, %v by lb (.2, .3) at weights 1:1; %d moved to the other lb at 1:4; %d of %d survived (same backend answered)",
		n, before, moved, survived, n)
	if moved == 0 {
		t.Errorf("no connection moved between the lbs after the route change; the test proves nothing")
	}
	if survived != n {
		t.Errorf("%d of %d connections survived the route change; want all", survived, n)
	}
	if lbShow(lb2).Frames <= f2 {
		t.Errorf("lb2 forwarded nothing after the route change")
	}
}

func TestIntegrationLBOnBridge(t *testing.T) {
	netnstest.RequireTool(t, "nginx", "nginx-light")
	netnstest.RequireTool(t, "curl", "curl")
	tb := bridged(t, 3, "--local")
	tb.dut.Run("ip", "addr", "add", fmt.Sprintf("10.66.%d.200/24", tb.subnet), "dev", "bridge0")
	vip := fmt.Sprintf("10.66.%d.100", tb.subnet)
	client := tb.hosts[0]
	var backends []*lbBackend
	for i, h := range tb.hosts[1:] {
		backends = append(backends, newBackend(t, h.NS, fmt.Sprintf("b%d", i+1), h.ip, vip, ""))
	}
	tb.swctl("lb", "create", "web", "--bridge", "bridge0", "--vip", vip, "--health", "tcp:80", "--interval", "300ms", "--timeout", "250ms")
	for _, b := range backends {
		tb.swctl("lb", "backend", "add", "web", b.ip)
	}
	netnstest.Eventually(t, 20*time.Second, "both backends serving", func() bool { return lbShow(tb).Serving == 2 })
	got := map[string]int{}
	for range 40 {
		out, err := client.Try("curl", "-s", "--max-time", "5", "http://"+vip+"/")
		if err != nil {
			t.Fatalf("curl http://%s/ across the bridge: %v: %s\n%s\n%s\n%s", vip, err, out, tb.swctl("lb", "show"), tb.swctl("bridge", "addr", "bridge0"), client.Run("ip", "neigh"))
		}
		got[strings.TrimSpace(out)]++
	}
	if got["b1"] == 0 || got["b2"] == 0 {
		t.Errorf("40 connections across the bridge: %v; want both backends", got)
	}
	l := lbShow(tb)
	if nb := tb.members("bridge0"); len(nb) != 3 {
		t.Errorf("bridge0 shows members %v; want p1, p2, p3 only (the lb's own port is internal)", nb)
	}
	if l.Frames == 0 {
		t.Errorf("lb show: no frames forwarded")
	}
}

func TestIntegrationLBIPv6VIP(t *testing.T) {
	s := newLBSegWith(t, 2, true)
	s.onSegmentClient()
	lb := s.addLB(2)
	got := map[string]int{}
	for range 40 {
		out, err := s.client.Try("curl", "-s", "-6", "--max-time", "5", "http://["+s.vip6+"]/")
		if err != nil {
			t.Fatalf("curl http://[%s]/: %v: %s\n%s", s.vip6, err, out, lb.swctl("lb", "show"))
		}
		got[strings.TrimSpace(out)]++
	}
	if got["b1"] == 0 || got["b2"] == 0 {
		t.Errorf("40 IPv6 connections to the VIP: %v; want both backends", got)
	}
	// The client learned the VIP's MAC from the lb's neighbour
	// advertisement.
	lbMAC := fmt.Sprintf("02:00:00:%02x:1b:02", s.subnet)
	if out := s.client.Run("ip", "-6", "neigh", "show", s.vip6); !strings.Contains(out, lbMAC) {
		t.Errorf("client's neighbour entry for %s: %q; want the lb's %s", s.vip6, out, lbMAC)
	}
	if l := lbShow(lb); l.Frames == 0 {
		t.Errorf("lb show: no frames forwarded")
	}
}
