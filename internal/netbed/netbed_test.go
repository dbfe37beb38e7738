package netbed

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// recorder is a Runner that records commands and fails the ones whose
// line contains fail.
type recorder struct {
	lines []string
	fail  string
}

func (r *recorder) run(_ context.Context, args ...string) error {
	line := strings.Join(args, " ")
	r.lines = append(r.lines, line)
	if r.fail != "" && strings.Contains(line, r.fail) {
		return errors.New(line + ": failed")
	}
	return nil
}

func TestAddQuietsAndDeleteRemoves(t *testing.T) {
	r := &recorder{}
	n := New(r.run)
	for _, ns := range []string{"a", "b"} {
		if err := n.Add(context.Background(), ns); err != nil {
			t.Fatal(err)
		}
	}
	n.Delete()
	want := []string{
		"ip netns add a", "ip -n a link set lo up", "ip netns exec a sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
		"ip netns add b", "ip -n b link set lo up", "ip netns exec b sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
		"ip netns del a", "ip netns del b",
	}
	if got := strings.Join(r.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if len(n.Names()) != 0 {
		t.Errorf("Names after Delete: %v, want none", n.Names())
	}
}

func TestAddFailures(t *testing.T) {
	// A namespace that could not be made is not deleted; one whose
	// quieting failed is, and the error names it.
	r := &recorder{fail: "netns add x"}
	n := New(r.run)
	if err := n.Add(context.Background(), "x"); err == nil || len(n.Names()) != 0 {
		t.Errorf("ip netns add failed: err %v, names %v; want an error and nothing to delete", err, n.Names())
	}
	r = &recorder{fail: "sysctl"}
	n = New(r.run)
	if err := n.Add(context.Background(), "y"); err == nil || !strings.HasPrefix(err.Error(), "namespace y: ") || len(n.Names()) != 1 {
		t.Errorf("sysctl failed: err %v, names %v; want an error naming y and y to delete", err, n.Names())
	}
}

func TestVeth(t *testing.T) {
	got := Veth("dut", "p1", "02:00:00:00:00:01", "tst", "t1", "02:00:00:00:00:02")
	want := [][]string{
		{"ip", "-n", "dut", "link", "add", "p1", "address", "02:00:00:00:00:01", "type", "veth", "peer", "name", "t1", "address", "02:00:00:00:00:02", "netns", "tst"},
		{"ip", "-n", "dut", "link", "set", "p1", "up"},
		{"ip", "-n", "tst", "link", "set", "t1", "up"},
	}
	if len(got) != len(want) {
		t.Fatalf("Veth: %v, want %v", got, want)
	}
	for i := range want {
		if strings.Join(got[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("command %d: %v, want %v", i, got[i], want[i])
		}
	}
}
