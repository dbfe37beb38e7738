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

func TestCommands(t *testing.T) {
	tests := []struct {
		name string
		got  [][]string
		want []string
	}{
		{"a veth with both MACs", Veth("dut", "p1", "02:00:00:00:00:01", "tst", "t1", "02:00:00:00:00:02"), []string{
			"ip -n dut link add p1 address 02:00:00:00:00:01 type veth peer name t1 address 02:00:00:00:00:02 netns tst",
			"ip -n dut link set p1 up",
			"ip -n tst link set t1 up",
		}},
		{"a veth whose first end's MAC the kernel picks", Veth("seg", "s1", "", "h1", "eth0", "02:00:00:00:00:02"), []string{
			"ip -n seg link add s1 type veth peer name eth0 address 02:00:00:00:00:02 netns h1",
			"ip -n seg link set s1 up",
			"ip -n h1 link set eth0 up",
		}},
		{"an address", [][]string{Addr("h1", "10.0.0.1/24", "eth0")}, []string{"ip -n h1 addr add 10.0.0.1/24 dev eth0"}},
		{"a permanent neighbour", [][]string{Neigh("h1", "10.0.0.2", "02:00:00:00:00:02", "eth0")}, []string{
			"ip -n h1 neigh replace 10.0.0.2 lladdr 02:00:00:00:00:02 nud permanent dev eth0",
		}},
		{"offloads off", [][]string{NoOffload("h1", "eth0")}, []string{"ip netns exec h1 ethtool -K eth0 tx off gso off"}},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range tt.got {
			got = append(got, strings.Join(c, " "))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}
