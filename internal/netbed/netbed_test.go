package netbed

import (
	"strings"
	"testing"
)

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
		{"a quiet namespace", Namespace("a"), []string{
			"ip netns add a", "ip -n a link set lo up", "ip netns exec a sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
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
