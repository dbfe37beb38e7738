package linkwatch

import (
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

// A subscription the kernel drops (ENOBUFS) is replaced by one in the same
// namespace, and what changed meanwhile is reported.
func TestIntegrationResubscribesInItsNamespace(t *testing.T) {
	netnstest.Require(t)
	a, b := netnstest.New(t, "lwr"), netnstest.New(t, "lwr")
	netnstest.Veth(t, a, "eth0", "", b, "eth0", "")
	var w *Watcher
	var err error
	a.Do(func() { w, err = New() })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wait := func(what string, want func(Event) bool) {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case e, ok := <-w.Events():
				if !ok {
					t.Fatalf("Events closed (Err %v) waiting for %s", w.Err(), what)
				}
				if want(e) {
					return
				}
			case <-timeout:
				t.Fatalf("no event %s", what)
			}
		}
	}
	for round := 0; round < 3; round++ {
		old, _ := w.src.current()
		// This goroutine's thread is in the test's namespace, not a:
		// the new subscription must still be made in a.
		w.src.dropSubscription()
		a.Run("ip", "link", "set", "eth0", "down")
		wait("eth0 down across the re-subscription", func(e Event) bool { return e.Name == "eth0" && e.State == platform.LinkDown })
		netnstest.Eventually(t, 5*time.Second, "no new subscription", func() bool {
			cur, _ := w.src.current()
			return cur != old
		})
		a.Run("ip", "link", "set", "eth0", "up")
		wait("eth0 up on the new subscription", func(e Event) bool { return e.Name == "eth0" && e.State == platform.LinkUp })
	}
}
