package regress

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A testbed makes its namespaces quiet and deletes them when it closes;
// a namespace that could not be made is not deleted, one whose quieting
// failed is, and the error names it. The commands run a stand-in for
// ip, which fails a command line holding $FAIL.
func TestTestbedNamespaces(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ip"), []byte("#!/bin/sh\n[ -n \"$FAIL\" ] && case \"$*\" in *\"$FAIL\"*) exit 1;; esac\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := context.Background()
	b := newTestbed(&Commands{}, t.TempDir(), "test")
	if err := b.build(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ip netns add a", "ip -n a link set lo up", "ip netns exec a sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
		"ip netns add b", "ip -n b link set lo up", "ip netns exec b sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
		"ip netns del b", "ip netns del a",
	}
	if got := strings.Join(b.cmds.Log, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if len(b.changes) != 0 {
		t.Errorf("%d changes after close, want none", len(b.changes))
	}

	t.Setenv("FAIL", "netns add x")
	b = newTestbed(&Commands{}, t.TempDir(), "test")
	if err := b.build(ctx, []string{"x"}); err == nil || len(b.changes) != 0 {
		t.Errorf("ip netns add failed: err %v, %d changes; want an error and nothing to delete", err, len(b.changes))
	}
	t.Setenv("FAIL", "sysctl")
	b = newTestbed(&Commands{}, t.TempDir(), "test")
	if err := b.build(ctx, []string{"y"}); err == nil || !strings.HasPrefix(err.Error(), "namespace y: ") || len(b.changes) != 1 {
		t.Errorf("sysctl failed: err %v, %d changes; want an error naming y and y to delete", err, len(b.changes))
	}
	b.close()
	if b.cmds.Log[len(b.cmds.Log)-1] != "ip netns del y" {
		t.Errorf("close ran %v, want y deleted last", b.cmds.Log)
	}
}

// undoTo puts back the changes after the mark newest first, goes on after
// an error and returns them all, and keeps the changes before the mark.
func TestTestbedUndoToNewestFirst(t *testing.T) {
	var order []string
	var b testbed
	for _, name := range []string{"a", "b", "c", "d"} {
		b.changes = append(b.changes, func() error {
			order = append(order, name)
			if name == "c" || name == "d" {
				return errors.New(name + " failed")
			}
			return nil
		})
	}
	err := b.undoTo(1)
	if got := strings.Join(order, " "); got != "d c b" {
		t.Errorf("undoTo(1) ran %q, want %q", got, "d c b")
	}
	if err == nil || !strings.Contains(err.Error(), "c failed") || !strings.Contains(err.Error(), "d failed") {
		t.Errorf("undoTo(1): error %v, want both failures", err)
	}
	if len(b.changes) != 1 {
		t.Fatalf("%d changes left, want 1", len(b.changes))
	}
	if err := b.undoTo(0); err != nil || strings.Join(order, " ") != "d c b a" || len(b.changes) != 0 {
		t.Errorf("undoTo(0): %v, ran %q, %d left; want nil, %q, 0", err, strings.Join(order, " "), len(b.changes), "d c b a")
	}
}
