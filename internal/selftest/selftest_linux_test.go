package selftest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform/statedir"
)

// wantAllPass fails the test for every check of rep that did not pass,
// and when a check is missing or out of order.
func wantAllPass(t *testing.T, rep Report) {
	t.Helper()
	var names []string
	for _, o := range rep.Checks {
		names = append(names, o.Check)
		if o.Result != Pass {
			t.Errorf("%s: %s, want PASS: %s", o.Check, o.Result, o.Reason)
		}
	}
	if !slices.Equal(names, Checks) {
		t.Errorf("checks %q, want %q", names, Checks)
	}
}

// On its own veth pair, in a namespace of its own, every check passes and
// nothing is left behind: no namespace, no interface, no temporary
// directory.
func TestIntegrationRunOwnPair(t *testing.T) {
	netnstest.Require(t)
	before := selftestDirs(t)
	rep, err := Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantAllPass(t, rep)
	if !slices.Equal(rep.Ifaces, []string{ownA, ownB}) {
		t.Errorf("interfaces %q, want %s, %s", rep.Ifaces, ownA, ownB)
	}
	for _, name := range []string{ownA, ownB, tapName()} {
		if _, err := netlink.LinkByName(name); err == nil {
			t.Errorf("%s exists in the test's namespace; want it only in the selftest's, gone", name)
		}
	}
	if after := selftestDirs(t); len(after) > len(before) {
		t.Errorf("temporary directories left: %q (before: %q)", after, before)
	}
}

// selftestDirs lists the selftest's temporary directories.
func selftestDirs(t *testing.T) []string {
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "swctl-selftest-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A daemon holding the state directory keeps the lladdr check off the
// journal: SKIP, saying so, and the interface keeps its MAC.
func TestIntegrationRunIfacesStateDirLocked(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "sl")
	netnstest.Veth(t, ns, "eth1", "02:00:00:5e:01:01", ns, "eth2", "02:00:00:5e:01:02")
	state := t.TempDir()
	unlock, err := statedir.Lock(state)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var rep Report
	ns.Do(func() {
		rep, err = Run(context.Background(), Options{Ifaces: []string{"eth1", "eth2"}, StateDir: state})
	})
	if err != nil {
		t.Fatal(err)
	}
	o := outcome(t, rep, CheckLLAddr)
	if o.Result != Skip || !strings.Contains(o.Reason, "holds the state directory "+state) {
		t.Errorf("%s: %s %q, want SKIP naming the locked state directory", o.Check, o.Result, o.Reason)
	}
	if out := ns.Run("ip", "link", "show", "eth1"); !strings.Contains(out, "02:00:00:5e:01:01") {
		t.Errorf("eth1 after the selftest: want MAC 02:00:00:5e:01:01; got\n%s", out)
	}
}

// outcome returns rep's outcome of check c.
func outcome(t *testing.T, rep Report, c string) Outcome {
	t.Helper()
	for _, o := range rep.Checks {
		if o.Check == c {
			return o
		}
	}
	t.Fatalf("no outcome of %q in %v", c, rep.Checks)
	return Outcome{}
}
