package integration

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/api/apitest"
	"github.com/swctl/swctl/internal/netnstest"
)

// macOf returns dev's hardware address in ns.
func macOf(ns *netnstest.NS, dev string) string {
	return strings.TrimSpace(ns.Run("cat", "/sys/class/net/"+dev+"/address"))
}

// ifaceState is what the daemon changes on an interface and must give
// back: its promiscuity count and its hardware address.
func ifaceState(t *testing.T, ns *netnstest.NS, dev string) string {
	t.Helper()
	return fmt.Sprintf("promiscuity %d, address %s", promiscuity(t, ns, dev), macOf(ns, dev))
}

func TestIntegrationDaemonStopsDespiteAClientThatDoesNotRead(t *testing.T) {
	tests := []struct {
		name    string
		signals []syscall.Signal
	}{
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}},
		// The second signal cuts the shutdown short, but the interfaces
		// are still given back.
		{"SIGTERM then SIGINT", []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// bridge0: p1, p2 and trunk0; trunk0: a1, a2 (a2 takes a1's
			// address, journalled, which only the daemon puts back).
			tb := newTestbed(t, 2)
			far := netnstest.New(t, "far")
			members := []string{"p1", "p2", "a1", "a2"}
			for i := 1; i <= 2; i++ {
				netnstest.Veth(t, tb.dut, fmt.Sprintf("a%d", i), "", far, fmt.Sprintf("b%d", i), "")
			}
			before := map[string]string{}
			for _, m := range members {
				before[m] = ifaceState(t, tb.dut, m)
			}
			tb.start()
			tb.swctl("trunk", "create", "trunk0", "--port", "a1", "--port", "a2")
			tb.swctl("bridge", "create", "bridge0")
			tb.swctl("bridge", "add", "bridge0", "p1", "p2", "trunk0")
			if got, want := macOf(tb.dut, "a2"), macOf(tb.dut, "a1"); got != want {
				t.Fatalf("a2 as trunk0's port: address %s, want a1's %s", got, want)
			}
			if got := promiscuity(t, tb.dut, "p1"); got != 1 {
				t.Fatalf("p1 as bridge0's member: promiscuity %d, want 1", got)
			}

			apitest.NonReader(t, tb.socket(), 20000)
			tb.daemon.Process.Signal(tt.signals[0])
			for _, sig := range tt.signals[1:] {
				// The socket goes first: the signal before was taken.
				netnstest.Eventually(t, 5*time.Second, "control socket removed after "+tt.signals[0].String(), func() bool {
					_, err := os.Stat(tb.socket())
					return errors.Is(err, os.ErrNotExist)
				})
				tb.daemon.Process.Signal(sig)
			}
			select {
			case <-tb.exited:
				tb.daemon = nil
			case <-time.After(5 * time.Second):
				tb.daemon.Process.Kill()
				<-tb.exited
				tb.daemon = nil
				t.Fatalf("daemon after %v with a client that does not read: expected gone within 5s, still running", tt.signals)
			}
			for _, m := range members {
				if got := ifaceState(t, tb.dut, m); got != before[m] {
					t.Errorf("%s after the daemon exited: %s, want %s as before", m, got, before[m])
				}
			}
		})
	}
}
