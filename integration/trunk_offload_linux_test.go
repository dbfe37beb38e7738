package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform/tap"
)

// farSide is a namespace standing for a machine at the other end of a
// swctl trunk: its b<i> are cabled to the dut's a<i> and are ports of a
// Linux bridge br0 that holds the machine's address, all with the kernel's
// default offloads (what `make bench`'s trunk row uses).
type farSide struct {
	*netnstest.NS
	// mac is br0's address.
	mac string
	// ip is br0's IPv4 address, without the prefix length.
	ip string
}

// newFarSide cables n links a<i> (in tb's dut) <-> b<i> (in a new
// namespace) and bridges the b<i> in br0 with address 10.66.<subnet>.200.
func newFarSide(t *testing.T, tb *testbed, n int) *farSide {
	t.Helper()
	f := &farSide{
		NS:  netnstest.New(t, "far"),
		mac: fmt.Sprintf("02:fa:00:%02x:00:01", tb.subnet),
		ip:  fmt.Sprintf("10.66.%d.200", tb.subnet),
	}
	f.Run("ip", "link", "add", "br0", "address", f.mac, "type", "bridge")
	for i := 1; i <= n; i++ {
		netnstest.Veth(t, tb.dut, fmt.Sprintf("a%d", i), fmt.Sprintf("02:a0:00:%02x:00:%02x", tb.subnet, i),
			f.NS, fmt.Sprintf("b%d", i), fmt.Sprintf("02:b0:00:%02x:00:%02x", tb.subnet, i))
		f.Run("ip", "link", "set", fmt.Sprintf("b%d", i), "master", "br0")
	}
	f.Run("ip", "link", "set", "br0", "up")
	f.Run("ip", "addr", "add", f.ip+"/24", "dev", "br0")
	return f
}

// defaultOffloads fails the test unless dev in ns has TSO on: the
// defaults the test is about.
func defaultOffloads(t *testing.T, ns *netnstest.NS, dev string) {
	t.Helper()
	o, _ := ns.Try("ethtool", "-k", dev)
	if !strings.Contains(o, "tcp-segmentation-offload: on") || !strings.Contains(o, "tx-checksumming: on") {
		t.Fatalf("%s %s: offloads are not the defaults:\n%s", ns.Name, dev, o)
	}
}

// TestIntegrationTrunkTCPDefaultOffloads is `make bench`'s trunk row: h1
// <-> p1 [swctl bridge0] trunk0 (roundrobin over a1, a2) <-> b1, b2 [Linux
// br0] with the far address, every host interface with its default
// offloads. 32 MiB cross over TCP each way, SHA-256 verified: partial
// checksums and GSO super-frames cross the trunk members with their
// virtio_net_hdr.
func TestIntegrationTrunkTCPDefaultOffloads(t *testing.T) {
	tb := newTestbed(t, 1)
	far := newFarSide(t, tb, 2)
	h1 := tb.hosts[0]
	defaultOffloads(t, h1.NS, "eth0")
	defaultOffloads(t, far.NS, "b1")
	tb.start()
	tb.swctl("trunk", "create", "trunk0", "--proto", "roundrobin", "--port", "a1", "--port", "a2", "--promisc")
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "trunk0")
	// As the bench: the far Linux bridge floods h1's broadcasts from one
	// link back into the other, which would move h1 to trunk0.
	tb.swctl("bridge", "static", "bridge0", h1.mac, "p1")
	tb.swctl("bridge", "static", "bridge0", far.mac, "trunk0")
	mustPing(t, h1, far.ip)
	transfer(t, h1.NS, far.NS, far.ip+":5011")
	transfer(t, far.NS, h1.NS, h1.ip+":5012")
	if t.Failed() {
		t.Logf("bridge stats: %v", tb.bridgeStatsRaw())
		t.Logf("trunk show: %s", tb.swctl("trunk", "show", "trunk0"))
	}
}

// TestIntegrationTrunkTapTCPDefaultOffloads is the same with the trunk's
// own TAP (IFF_VNET_HDR, and with --workers 2 two queues, each pumped by
// its own goroutine) holding the dut's address instead of a bridge, and
// queue settings other than the defaults, which the members' backlogs
// take.
func TestIntegrationTrunkTapTCPDefaultOffloads(t *testing.T) {
	tb := newTestbed(t, 0)
	far := newFarSide(t, tb, 2)
	defaultOffloads(t, far.NS, "b1")
	tb.daemonArgs = []string{"--workers", "2"}
	tb.start()
	tb.swctl("trunk", "create", "trunk0", "--proto", "roundrobin", "--port", "a1", "--port", "a2", "--promisc",
		"--tx-queue-bytes", "262144", "--tx-queue-target", "500", "--send-buffer", "1048576")
	show := tb.swctl("trunk", "show", "trunk0")
	if !strings.Contains(show, "backlog 262144 bytes, 20 ms, codel target 500 us, super-frames off, send buffer 1048576 bytes") ||
		strings.Count(show, "/262144 ") != 2 {
		t.Errorf("trunk0: expected the queue settings given and both members' backlogs bounded at 262144 bytes, got:\n%s", show)
	}
	// One queue per worker, each read by its own goroutine.
	if out := tb.dut.Run("ls", "/sys/class/net/trunk0/queues"); !strings.Contains(out, "tx-1") || strings.Contains(out, "tx-2") {
		t.Errorf("trunk0 with --workers 2: expected the TAP's queues tx-0 and tx-1, got %q", out)
	}
	// The host's super-frames fit 64 KiB on a member's wire.
	if out, want := tb.dut.Run("ip", "-d", "link", "show", "trunk0"), fmt.Sprintf("gso_max_segs %d ", tap.SuperFrameSegments(1500)); !strings.Contains(out, want) {
		t.Errorf("trunk0: expected %q, got:\n%s", want, out)
	}
	tapIP := fmt.Sprintf("10.66.%d.1", tb.subnet)
	tb.dut.Run("ip", "addr", "add", tapIP+"/24", "dev", "trunk0")
	netnstest.Eventually(t, 10*time.Second, "far side answers pings across trunk0", func() bool {
		_, rcv, _ := nsPing(tb.dut, far.ip, "-c", "2", "-i", "0.2")
		return rcv > 0
	})
	transfer(t, far.NS, tb.dut, tapIP+":5013")
	transfer(t, tb.dut, far.NS, far.ip+":5014")
	if t.Failed() {
		t.Logf("trunk show: %s", tb.swctl("trunk", "show", "trunk0"))
	}
}
