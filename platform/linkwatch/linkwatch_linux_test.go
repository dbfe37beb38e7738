package linkwatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/linkwatch"
)

const within = 5 * time.Second

// testbed is namespace a with eth0, cabled to eth0 in namespace b, and a
// Watcher made inside a.
func testbed(t *testing.T) (a, b *netnstest.NS, w *linkwatch.Watcher) {
	t.Helper()
	netnstest.Require(t)
	a, b = netnstest.New(t, "lwa"), netnstest.New(t, "lwb")
	netnstest.Veth(t, a, "eth0", "02:00:00:00:0a:01", b, "eth0", "02:00:00:00:0b:01")
	w = newWatcher(t, a)
	// The kernel sets the operational state up a moment after the
	// carrier (its own link watch runs later, and then notifies).
	netnstest.Eventually(t, within, "eth0 never reported up", func() bool {
		e, _ := w.Lookup("eth0")
		return e.State == platform.LinkUp
	})
	return a, b, w
}

func newWatcher(t *testing.T, ns *netnstest.NS) *linkwatch.Watcher {
	t.Helper()
	var w *linkwatch.Watcher
	var err error
	ns.Do(func() { w, err = linkwatch.New() })
	if err != nil {
		t.Fatalf("New in %s: %v", ns.Name, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// waitFor reads events until one satisfies want, failing after within.
func waitFor(t *testing.T, w *linkwatch.Watcher, what string, want func(linkwatch.Event) bool) linkwatch.Event {
	t.Helper()
	timeout := time.After(within)
	var seen []linkwatch.Event
	for {
		select {
		case e, ok := <-w.Events():
			if !ok {
				t.Fatalf("Events closed (Err %v) while waiting for %s; saw %+v", w.Err(), what, seen)
			}
			if want(e) {
				return e
			}
			seen = append(seen, e)
		case <-timeout:
			t.Fatalf("after %v: no event %s; saw %+v", within, what, seen)
		}
	}
}

func is(name string, s platform.LinkState) func(linkwatch.Event) bool {
	return func(e linkwatch.Event) bool { return e.Name == name && e.State == s }
}

func TestIntegrationSnapshotListsExistingLinks(t *testing.T) {
	_, _, w := testbed(t)
	byName := map[string]linkwatch.Event{}
	for _, e := range w.Snapshot() {
		byName[e.Name] = e
	}
	if len(byName) != 2 {
		t.Errorf("Snapshot: %+v; want exactly lo and eth0 (the namespace's links)", w.Snapshot())
	}
	if lo := byName["lo"]; lo.State != platform.LinkUp {
		t.Errorf("lo: %+v, want up", lo)
	}
	eth0, ok := w.Lookup("eth0")
	if !ok || eth0.State != platform.LinkUp || !eth0.AdminUp || !eth0.Carrier ||
		eth0.MTU != 1500 || eth0.MAC.String() != "02:00:00:00:0a:01" || eth0.Index <= 0 {
		t.Errorf("Lookup(eth0) = %+v, %v; want up, MTU 1500, MAC 02:00:00:00:0a:01", eth0, ok)
	}
	if e, ok := w.Lookup("nope0"); ok || e.State != platform.LinkAbsent {
		t.Errorf("Lookup(nope0) = %+v, %v; want absent, false", e, ok)
	}
}

func TestIntegrationStateChanges(t *testing.T) {
	a, b, w := testbed(t)
	steps := []struct {
		name string
		do   func()
		want func(linkwatch.Event) bool
	}{
		{"admin down", func() { a.Run("ip", "link", "set", "eth0", "down") },
			func(e linkwatch.Event) bool { return e.Name == "eth0" && e.State == platform.LinkDown && !e.AdminUp }},
		{"admin up", func() { a.Run("ip", "link", "set", "eth0", "up") }, is("eth0", platform.LinkUp)},
		{"peer down: carrier lost", func() { b.Run("ip", "link", "set", "eth0", "down") },
			func(e linkwatch.Event) bool {
				return e.Name == "eth0" && e.State == platform.LinkDown && e.AdminUp && !e.Carrier
			}},
		{"peer up: carrier back", func() { b.Run("ip", "link", "set", "eth0", "up") }, is("eth0", platform.LinkUp)},
		{"MTU change", func() { a.Run("ip", "link", "set", "eth0", "mtu", "1400") },
			func(e linkwatch.Event) bool { return e.Name == "eth0" && e.MTU == 1400 && e.State == platform.LinkUp }},
		{"MAC change", func() { a.Run("ip", "link", "set", "eth0", "address", "02:00:00:00:0a:99") },
			func(e linkwatch.Event) bool { return e.Name == "eth0" && e.MAC.String() == "02:00:00:00:0a:99" }},
		{"delete", func() { a.Run("ip", "link", "del", "eth0") }, is("eth0", platform.LinkAbsent)},
	}
	for _, s := range steps {
		s.do()
		e := waitFor(t, w, s.name, s.want)
		if cur, ok := w.Lookup("eth0"); e.State != platform.LinkAbsent && (!ok || cur.State != e.State) {
			t.Errorf("%s: Lookup(eth0) = %+v, %v after event %+v", s.name, cur, ok, e)
		}
	}
	if _, ok := w.Lookup("eth0"); ok {
		t.Errorf("Lookup(eth0) still finds it after delete")
	}
}

func TestIntegrationNewLinkAppears(t *testing.T) {
	a, _, w := testbed(t)
	n1, n2 := netnstest.UniqueName("lw"), netnstest.UniqueName("lw")
	a.Run("ip", "link", "add", n1, "type", "veth", "peer", "name", n2)
	e := waitFor(t, w, "for the new veth "+n1, is(n1, platform.LinkDown))
	a.Run("ip", "link", "set", n1, "up", "address", "02:00:00:00:0c:01")
	a.Run("ip", "link", "set", n2, "up")
	waitFor(t, w, n1+" up", func(e linkwatch.Event) bool {
		return e.Name == n1 && e.State == platform.LinkUp && e.MAC.String() == "02:00:00:00:0c:01"
	})
	if cur, ok := w.Lookup(n1); !ok || cur.Index != e.Index || cur.State != platform.LinkUp {
		t.Errorf("Lookup(%s) = %+v, %v; want up, index %d", n1, cur, ok, e.Index)
	}
}

func TestIntegrationRenameReportsOldNameAbsent(t *testing.T) {
	a, _, w := testbed(t)
	old, _ := w.Lookup("eth0")
	a.Run("ip", "link", "set", "eth0", "down")
	a.Run("ip", "link", "set", "eth0", "name", "eth9")
	gone := waitFor(t, w, "eth0 absent after rename", is("eth0", platform.LinkAbsent))
	if gone.Renamed != "eth9" || gone.Index != old.Index {
		t.Errorf("eth0's absent event %+v: want Renamed eth9 and index %d (the link still exists)", gone, old.Index)
	}
	e := waitFor(t, w, "eth9 after rename", func(e linkwatch.Event) bool { return e.Name == "eth9" })
	if e.Index != old.Index || e.Renamed != "" {
		t.Errorf("eth9 %+v: want eth0's index %d and no Renamed", e, old.Index)
	}
	if _, ok := w.Lookup("eth0"); ok {
		t.Errorf("Lookup(eth0) finds the renamed link")
	}
}

func TestIntegrationOtherNamespacesAreInvisible(t *testing.T) {
	a, b, w := testbed(t)
	b.Run("ip", "link", "set", "eth0", "mtu", "1300")
	a.Run("ip", "link", "set", "eth0", "mtu", "1301") // the sentinel
	waitFor(t, w, "the sentinel", func(e linkwatch.Event) bool {
		if e.MTU == 1300 {
			t.Fatalf("saw %+v: a change in another namespace", e)
		}
		return e.MTU == 1301
	})
}

func TestIntegrationCloseAndCancelEndEvents(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "lwc")
	w := newWatcher(t, ns)
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	w.Close()
	drained(t, w)

	ctx, cancel := context.WithCancel(context.Background())
	var err error
	ns.Do(func() { w, err = linkwatch.Watch(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if len(w.Snapshot()) != 1 {
		t.Errorf("Snapshot in a fresh namespace: %+v, want just lo", w.Snapshot())
	}
	cancel()
	drained(t, w)
	if w.Err() != nil {
		t.Errorf("Err after cancel: %v, want nil", w.Err())
	}
}

// drained fails unless Events is closed within the deadline.
func drained(t *testing.T, w *linkwatch.Watcher) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case _, ok := <-w.Events():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("Events not closed %v after Close", within)
		}
	}
}
