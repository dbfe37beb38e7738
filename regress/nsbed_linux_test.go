package regress

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// An instance ends in the reverse order it was built: the changes it
// made after the suite's, newest first; every error is reported, the
// suite's changes stay, and a second stop has nothing left to do.
func TestTestbedStopEndsNewestFirst(t *testing.T) {
	b := newTestbed(&Commands{}, t.TempDir(), "test")
	var order []string
	b.changes = append(b.changes, func() error { order = append(order, "suite"); return nil })
	b.keep()
	b.changes = append(b.changes,
		func() error { order = append(order, "end 1"); return nil },
		func() error { order = append(order, "end 2"); return errors.New("end 2 failed") })
	if err := b.do(context.Background(), [2][]string{{"true", "do 1"}, {"echo", "undo 1"}}, [2][]string{{"true", "do 2"}}, [2][]string{{"true", "do 3"}, {"false", "undo 3"}}); err != nil {
		t.Fatal(err)
	}
	err := b.stop()
	if got, want := strings.Join(order, ", "), "end 2, end 1"; got != want {
		t.Errorf("ends ran as %s, want %s", got, want)
	}
	if got, want := strings.Join(b.cmds.Log, "; "), "true do 1; true do 2; true do 3; false undo 3; echo undo 1"; got != want {
		t.Errorf("commands: %s\nwant:     %s", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "end 2 failed") || !strings.Contains(err.Error(), "undo 3") {
		t.Errorf("stop: %v, want the end's and the undo's errors", err)
	}
	if err := b.stop(); err != nil || len(b.cmds.Log) != 5 || len(order) != 2 {
		t.Errorf("second stop: %v, %d commands, ran %v; want nothing done", err, len(b.cmds.Log), order)
	}
	if err := b.close(); err != nil || len(order) != 3 || order[2] != "suite" {
		t.Errorf("close: %v, ran %v; want the suite's change put back", err, order)
	}
}

// A hold makes the interface promiscuous in its namespace (the kernel's
// count goes up by one) until its release, and names the interface and the
// namespace when it cannot be made.
func TestIntegrationHoldPromisc(t *testing.T) {
	netnstest.Require(t)
	a := netnstest.New(t, "rph")
	a.Run("ip", "link", "add", "e0", "type", "veth", "peer", "name", "e1")
	count := func() string {
		return regexp.MustCompile(`promiscuity \d+`).FindString(a.Run("ip", "-d", "link", "show", "e0"))
	}
	release, err := holdPromisc(a.Name, "e0")
	if err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "promiscuity 1" {
		t.Errorf("held: %s, want promiscuity 1", got)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "promiscuity 0" {
		t.Errorf("closed: %s, want promiscuity 0", got)
	}
	if _, err := holdPromisc(a.Name, "nosuch0"); err == nil || !strings.Contains(err.Error(), "promisc nosuch0 in "+a.Name) {
		t.Errorf("hold on a missing interface: error %v, want one naming it and its namespace", err)
	}
}

// A process started on a test host (here a namespace) logs its stdout
// and stderr to its log there and is seen to end; Stop ends one that
// runs; one that cannot start (a missing program, a log in a missing
// directory) ends at once, its log or the error reading it naming why.
func TestIntegrationHostStart(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "rhb")
	h, dir, ctx := (&testbed{cmds: &Commands{}}).on(ns.Name), t.TempDir(), context.Background()
	ended := func(what string, p *Proc) {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not end within 10 s", what)
		}
		if !p.Exited() {
			t.Errorf("%s: Exited() = false after it ended", what)
		}
	}
	p, err := h.Start(ctx, filepath.Join(dir, "echo.log"), "sh", "-c", "echo hello; echo oops >&2")
	if err != nil {
		t.Fatal(err)
	}
	ended("sh", p)
	if got := p.Tail(); got != "hello\noops" {
		t.Errorf("Tail = %q, want both lines", got)
	}
	p, err = h.Start(ctx, filepath.Join(dir, "sleep.log"), "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited() {
		t.Fatal("sleep 60 ended at once")
	}
	if err := p.Stop(ctx); err != nil || !p.Exited() {
		t.Errorf("Stop: %v, exited %v; want nil (sleep ends on SIGTERM) and ended", err, p.Exited())
	}
	for _, c := range []struct{ what, log, prog, want string }{
		{"missing program", filepath.Join(dir, "x.log"), filepath.Join(dir, "no-such-program"), "no-such-program"},
		{"log in a missing directory", filepath.Join(dir, "no", "such", "dir", "x.log"), "true", "x.log"},
	} {
		p, err := h.Start(ctx, c.log, c.prog)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		ended(c.what, p)
		if got := p.Tail(); !strings.Contains(got, c.want) {
			t.Errorf("%s: Tail = %q, want it to name %s", c.what, got, c.want)
		}
	}
}
