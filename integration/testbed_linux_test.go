// Package integration runs the real swctl binary, daemon and CLI, in network
// namespaces cabled with veth, and checks what hosts on either side see.
package integration

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// swctlBin is the binary built once for the whole package.
var swctlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "swctl-it")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	swctlBin = filepath.Join(dir, "swctl")
	out, err := exec.Command("go", "build", "-o", swctlBin, "../cmd/swctl").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build swctl: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// host is a namespace standing for one machine with one interface, eth0.
type host struct {
	*netnstest.NS
	// mac is eth0's address.
	mac string
	// ip is eth0's IPv4 address, without the prefix length.
	ip string
}

// testbed is a device-under-test namespace running swctl daemon, and hosts
// cabled to it: host i's eth0 <-> dut's p<i>.
type testbed struct {
	t *testing.T
	// dut is where the daemon and the bridge members live.
	dut *netnstest.NS
	// hosts are cabled to dut's p1, p2, ...
	hosts []*host
	// dir holds the daemon's socket, configuration, state and log.
	dir string
	// daemon is the running daemon, nil when stopped.
	daemon *exec.Cmd
	// exited is closed when the running daemon has exited and been reaped.
	exited chan struct{}
	// log collects the daemon's stderr across restarts; tests may read
	// it while the daemon writes.
	log *lockedBuffer
	// subnet is the third octet of the hosts' 10.66.x.0/24.
	subnet int
	// offloadsOff turns checksum and segmentation offloads off on the
	// hosts' eth0 (ethtool -K eth0 tx off gso off).
	offloadsOff bool
	// daemonArgs are extra arguments of swctl daemon (--workers 2).
	daemonArgs []string
	// daemonBin is the swctl binary the daemon runs; "" means swctlBin.
	daemonBin string
}

var subnetCounter = os.Getpid() % 200

// newTestbed makes the dut namespace and n hosts, with the hosts' default
// offloads (TSO, GSO, partial checksums: swctl carries them through).
func newTestbed(t *testing.T, n int) *testbed { t.Helper(); return newTestbedWith(t, n, false) }

// newTestbedWith is newTestbed with the hosts' offloads off when
// offloadsOff is set.
func newTestbedWith(t *testing.T, n int, offloadsOff bool) *testbed {
	t.Helper()
	netnstest.Require(t)
	subnetCounter++
	tb := &testbed{t: t, dut: netnstest.New(t, "dut"), dir: t.TempDir(), log: &lockedBuffer{}, subnet: subnetCounter%250 + 1, offloadsOff: offloadsOff}
	if err := os.Mkdir(filepath.Dir(tb.configPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		tb.addHost(i)
	}
	t.Cleanup(func() {
		tb.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("daemon log:\n%s", tb.log.String())
		}
	})
	return tb
}

// addHost makes host i cabled to dut's p<i>.
func (tb *testbed) addHost(i int) *host {
	h := &host{
		NS:  netnstest.New(tb.t, fmt.Sprintf("h%d", i)),
		mac: fmt.Sprintf("02:00:00:%02x:00:%02x", tb.subnet, i),
		ip:  fmt.Sprintf("10.66.%d.%d", tb.subnet, i),
	}
	netnstest.Veth(tb.t, h.NS, "eth0", h.mac, tb.dut, fmt.Sprintf("p%d", i), "")
	h.Run("ip", "addr", "add", h.ip+"/24", "dev", "eth0")
	if tb.offloadsOff {
		h.Run("ethtool", "-K", "eth0", "tx", "off", "gso", "off")
	}
	tb.hosts = append(tb.hosts, h)
	return h
}

func (tb *testbed) socket() string { return filepath.Join(tb.dir, "swctl.sock") }

// configPath is the daemon's configuration file, alone in its directory
// (a test may make that directory unusable).
func (tb *testbed) configPath() string { return filepath.Join(tb.dir, "etc", "swctl.conf") }

// start runs swctl daemon in the dut namespace and waits for its socket.
func (tb *testbed) start() {
	tb.t.Helper()
	os.Remove(tb.socket())
	args := []string{cmp.Or(tb.daemonBin, swctlBin), "daemon", "--socket", tb.socket(),
		"--config", tb.configPath(), "--state-dir", filepath.Join(tb.dir, "state"), "--log-level", "debug"}
	cmd := tb.dut.Command(context.Background(), append(args, tb.daemonArgs...)...)
	cmd.Stdout, cmd.Stderr = tb.log, tb.log
	if err := cmd.Start(); err != nil {
		tb.t.Fatalf("start daemon: %v", err)
	}
	tb.daemon = cmd
	exited := make(chan struct{})
	tb.exited = exited
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := tb.try("bridge", "show"); err == nil {
			return
		}
		select {
		case <-exited:
			tb.daemon = nil
			tb.t.Fatalf("daemon exited at start:\n%s", tb.log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("daemon did not answer within 10s:\n%s", tb.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends sig to the daemon and waits for it to exit.
func (tb *testbed) stop(sig syscall.Signal) {
	if tb.daemon == nil {
		return
	}
	// ip netns exec execs the daemon, so the pid is the daemon's.
	tb.daemon.Process.Signal(sig)
	select {
	case <-tb.exited:
	case <-time.After(15 * time.Second):
		tb.daemon.Process.Kill()
		<-tb.exited
		tb.t.Errorf("daemon did not stop on %v within 15s", sig)
	}
	tb.daemon = nil
}

// try runs the CLI against the daemon and returns stdout, or an error with
// stderr.
func (tb *testbed) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, swctlBin, append([]string{"--socket", tb.socket()}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("swctl %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// swctl runs the CLI and fails the test if it fails.
func (tb *testbed) swctl(args ...string) string {
	tb.t.Helper()
	out, err := tb.try(args...)
	if err != nil {
		tb.t.Fatal(err)
	}
	return out
}

// swctlJSON runs the CLI with -o json and decodes its output into v.
func (tb *testbed) swctlJSON(v any, args ...string) {
	tb.t.Helper()
	out := tb.swctl(append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		tb.t.Fatalf("swctl %s -o json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// addrEntry is one row of `bridge addr -o json`.
type addrEntry struct {
	MAC    string `json:"mac"`
	VLAN   int    `json:"vlan"`
	Port   string `json:"port"`
	Age    *int64 `json:"age"`
	Static bool   `json:"static"`
}

func (tb *testbed) addrs(bridge string) []addrEntry {
	tb.t.Helper()
	var a []addrEntry
	tb.swctlJSON(&a, "bridge", "addr", bridge)
	return a
}

// portOf returns the port the bridge learned mac on, or "".
func (tb *testbed) portOf(bridge, mac string) string {
	for _, a := range tb.addrs(bridge) {
		if a.MAC == mac {
			return a.Port
		}
	}
	return ""
}

// members returns the names of a bridge's members, from bridge show.
func (tb *testbed) members(bridge string) []string {
	tb.t.Helper()
	var shown []struct {
		Ports []struct{ Name string } `json:"ports"`
	}
	tb.swctlJSON(&shown, "bridge", "show", bridge)
	if len(shown) != 1 {
		tb.t.Fatalf("bridge show %s: want 1 bridge, got %d", bridge, len(shown))
	}
	var names []string
	for _, p := range shown[0].Ports {
		names = append(names, p.Name)
	}
	return names
}

// portEntry is one row of `port show -o json`.
type portEntry struct {
	Name      string `json:"name"`
	Bridge    string `json:"bridge"`
	Link      string `json:"link"`
	Promisc   bool   `json:"promisc"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	// RxBadOffload counts frames dropped for a bad virtio_net_hdr.
	RxBadOffload uint64 `json:"rx_bad_offload"`
}

func (tb *testbed) port(name string) portEntry {
	tb.t.Helper()
	var ps []portEntry
	tb.swctlJSON(&ps, "port", "show", name)
	if len(ps) != 1 {
		tb.t.Fatalf("port show %s: want 1 port, got %d", name, len(ps))
	}
	return ps[0]
}

// ping sends count pings from h to ip and returns how many came back.
func ping(h *host, ip string, count int) int {
	out, _ := h.Try("ping", "-c", strconv.Itoa(count), "-i", "0.2", "-W", "1", ip)
	m := regexp.MustCompile(`(\d+) received`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// mustPing fails the test unless at least one of a few pings is answered
// (the first may be lost while ARP resolves).
func mustPing(t *testing.T, h *host, ip string) {
	t.Helper()
	netnstest.Eventually(t, 10*time.Second, fmt.Sprintf("ping %s -> %s answered", h.Name, ip), func() bool {
		return ping(h, ip, 2) > 0
	})
}

// promiscuity returns the kernel's promiscuity count of dev in ns.
func promiscuity(t *testing.T, ns *netnstest.NS, dev string) int {
	t.Helper()
	out := ns.Run("ip", "-d", "link", "show", dev)
	m := regexp.MustCompile(`promiscuity (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("ip -d link show %s: no promiscuity in:\n%s", dev, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
