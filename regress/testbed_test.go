package regress

import (
	"context"
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
