package integration

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	ebpflink "github.com/cilium/ebpf/link"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
)

// tcxIngress returns how many tcx ingress programs are attached to dev in
// ns (the stack guard's).
func tcxIngress(t *testing.T, ns *netnstest.NS, dev string) int {
	t.Helper()
	n, failed := 0, ""
	ns.Do(func() {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			failed = err.Error()
			return
		}
		res, err := ebpflink.QueryPrograms(ebpflink.QueryOptions{Target: ifi.Index, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			failed = err.Error()
			return
		}
		n = len(res.Programs)
	})
	if failed != "" {
		t.Fatalf("%s: query tcx ingress programs: %s", dev, failed)
	}
	return n
}

// TestIntegrationPanicGivesInterfacesBack: a bridge reader that panics
// (the frame that makes it is compiled only into a binary built with the
// tag swctl_panictest) takes the daemon down with exit status 2, after it
// logged the stack and gave back every interface: promiscuity, the trunk
// member's address, the stack guard's tcx programs, the bridge's TAP.
func TestIntegrationPanicGivesInterfacesBack(t *testing.T) {
	netnstest.Require(t)
	bin := filepath.Join(t.TempDir(), "swctl-panictest")
	if out, err := exec.Command("go", "build", "-tags", "swctl_panictest", "-o", bin, "../cmd/swctl").CombinedOutput(); err != nil {
		t.Fatalf("build swctl -tags swctl_panictest: %v\n%s", err, out)
	}
	// bridge0 (with its TAP): p1, p2 and trunk0; trunk0: a1, a2 (a2 takes
	// a1's address, journalled).
	tb := newTestbed(t, 2)
	tb.daemonBin = bin
	far := netnstest.New(t, "far")
	members := []string{"p1", "p2", "a1", "a2"}
	for _, i := range []string{"1", "2"} {
		netnstest.Veth(t, tb.dut, "a"+i, "", far, "b"+i, "")
	}
	before := map[string]string{}
	for _, m := range members {
		before[m] = ifaceState(t, tb.dut, m)
	}
	tb.start()
	tb.swctl("trunk", "create", "trunk0", "--port", "a1", "--port", "a2")
	tb.swctl("bridge", "create", "bridge0", "--local")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2", "trunk0")
	if got, want := macOf(tb.dut, "a2"), macOf(tb.dut, "a1"); got != want {
		t.Fatalf("a2 as trunk0's port: address %s, want a1's %s", got, want)
	}
	if got := promiscuity(t, tb.dut, "p1"); got != 1 {
		t.Fatalf("p1 as bridge0's member: promiscuity %d, want 1", got)
	}
	if got := tcxIngress(t, tb.dut, "p1"); got != 1 {
		t.Fatalf("p1 as bridge0's member: %d tcx ingress programs, want the stack guard's", got)
	}
	if _, err := tb.dut.Try("ip", "link", "show", "bridge0"); err != nil {
		t.Fatalf("bridge0's TAP: %v", err)
	}

	// The frame that makes p1's reader panic, from h1.
	var port *afpacket.Port
	var err error
	tb.hosts[0].Do(func() { port, err = afpacket.Open("eth0", afpacket.Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	f := make([]byte, 60)
	frame.Encode(f, frame.Broadcast, frame.MACOf(port.HardwareAddr()), 0x88b5)
	copy(f[frame.HeaderLen:], "swctl-panic-test")
	if _, err := port.WriteBatch(platform.Batch{Frames: [][]byte{f}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tb.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("daemon still running 20s after the panic frame:\n%s", tb.log.String())
	}
	code := tb.daemon.ProcessState.ExitCode()
	tb.daemon = nil
	if code != 2 {
		t.Errorf("daemon exit status %d after the panic, want 2", code)
	}
	log := tb.log.String()
	for _, want := range []string{"panic: giving the interfaces back", "bridge0 reader p1", "bridge.panicOnTestFrame", "interfaces given back after the panic"} {
		if !strings.Contains(log, want) {
			t.Errorf("daemon log lacks %q:\n%s", want, log)
		}
	}
	for _, m := range members {
		if got := ifaceState(t, tb.dut, m); got != before[m] {
			t.Errorf("%s after the panic: %s, want %s as before", m, got, before[m])
		}
		if got := tcxIngress(t, tb.dut, m); got != 0 {
			t.Errorf("%s after the panic: %d tcx ingress programs, want none", m, got)
		}
	}
	if _, err := tb.dut.Try("ip", "link", "show", "bridge0"); err == nil {
		t.Error("bridge0's TAP still there after the panic")
	}
}
