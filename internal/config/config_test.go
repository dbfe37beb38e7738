package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/stp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func mac(s string) frame.MAC {
	m, err := frame.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// sample is a configuration using every feature.
func sample() *Config {
	return &Config{Bridges: []Bridge{
		{
			Name: "bridge0", Local: true, LocalMAC: mac("02:5e:00:12:34:56"),
			Timeout: 240, MaxAddr: 8192,
			Ports: []Port{
				{Name: "eth1", Learning: true, Discover: true},
				{Name: "eth2", Learning: false, Discover: true, BlockNonIP: true, Stack: true,
					STP: &PortSTP{Enabled: true, Edge: true, PTP: stp.PTPOn, Priority: 64, Cost: 2000}},
				{Name: "eth4", Learning: true, Discover: false, STP: &PortSTP{AutoEdge: true, Priority: 128}, StormLimit: 1000, BPDUGuard: true},
				{Name: "trunk0", Learning: true, Discover: true},
			},
			Spans: []string{"eth3"},
			Statics: []Static{
				{MAC: mac("02:00:00:00:00:01"), Port: "eth1"},
				{MAC: mac("02:00:00:00:00:01"), VLAN: 10, Port: "eth2"},
			},
			STP:     &STP{On: true, Priority: 4096, HelloTime: 1, FwdDelay: 4, MaxAge: 6, HoldCount: 6},
			FwdMask: 0x4008,
		},
		{Name: "br1", Local: true, Timeout: 0, MaxAddr: 100, Ports: []Port{{Name: "veth-a", Learning: true, Discover: true}}},
		{Name: "empty", Timeout: 240, MaxAddr: 8192},
	}, Trunks: []Trunk{
		{
			Name: "trunk0", Proto: "lacp", LLAddr: mac("02:5e:00:12:34:57"), Hash: "l2,l3,l4",
			LACPMode: "active", LACPTimeout: "fast", LACPSystemPriority: 32768, LACPKey: 1,
			Ports: []TrunkPort{
				{Name: "eth5", Priority: 10, LACPPortPriority: 100},
				{Name: "eth6", LACPPortPriority: 32768},
			},
		},
		{
			Name: "trunk1", Proto: "failover", Promisc: true, Hash: "l3,l4",
			LACPMode: "active", LACPTimeout: "slow", LACPSystemPriority: 32768,
			UpDelay: 200, DownDelay: 3600000, MinLinks: 2, NoPreempt: true,
			Ports: []TrunkPort{{Name: "eth7", Priority: 65535, LACPPortPriority: 0}, {Name: "eth8", LACPPortPriority: 32768}},
		},
		{Name: "trunk2", Proto: "roundrobin", Hash: "l2", LACPMode: "passive", LACPTimeout: "slow", LACPSystemPriority: 1, LACPKey: 65535},
		NewTrunk("trunk3"),
	}}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want *Config
	}{
		{"empty file", "", &Config{}},
		{"only comments", "# nothing\n   # here\n\n", &Config{}},
		{"defaults", "bridge b0 {\n}\n", &Config{Bridges: []Bridge{NewBridge("b0")}}},
		{"one line", "bridge b0 { timeout 10; maxaddr 5 }", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 10, MaxAddr: 5}}}},
		{"brace attached", "bridge b0{\nport eth1}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}}}}},
		{"local without MAC", "bridge b0 {\n local\n}", &Config{Bridges: []Bridge{{Name: "b0", Local: true, Timeout: 240, MaxAddr: 8192}}}},
		{"timeout 0 means never", "bridge b0 {\n timeout 0\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 0, MaxAddr: 8192}}}},
		{"explicit default flags", "bridge b0 {\n port eth1 learning discover -blocknonip -stack\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}}}}},
		{"storm-limit and bpdu-guard", "bridge b0 {\n port eth1 storm-limit 1000 bpdu-guard on\n port eth2 storm-limit 0 bpdu-guard off\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{{Name: "eth1", Learning: true, Discover: true, StormLimit: 1000, BPDUGuard: true}, NewPort("eth2")}}}}},
		{"flags off and on", "bridge b0 {\n port eth1 -learning -discover blocknonip stack\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{{Name: "eth1", BlockNonIP: true, Stack: true}}}}}},
		{"static before its port", "bridge b0 {\n static 02:00:00:00:00:01 eth1 vlan 0\n port eth1\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}, Statics: []Static{{MAC: mac("02:00:00:00:00:01"), Port: "eth1"}}}}}},
		{"static in dash notation with vlan", "bridge b0 {\n port eth1\n static 02-00-00-00-00-01 eth1 vlan 4094\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}, Statics: []Static{{MAC: mac("02:00:00:00:00:01"), VLAN: 4094, Port: "eth1"}}}}}},
		{"trunk defaults", "trunk t0 {\n}\n", &Config{Trunks: []Trunk{NewTrunk("t0")}}},
		{"trunk one line", "trunk t0 { proto lacp; port eth1 priority 5; port eth2 lacp-port-priority 1 priority 2 }", &Config{Trunks: []Trunk{func() Trunk {
			t := NewTrunk("t0")
			t.Proto = "lacp"
			t.Ports = []TrunkPort{{Name: "eth1", Priority: 5, LACPPortPriority: 32768}, {Name: "eth2", Priority: 2, LACPPortPriority: 1}}
			return t
		}()}}},
		{"trunk every setting", "trunk t0 {\n proto loadbalance\n lladdr 02-00-00-00-00-09\n promisc\n hash l4,l2\n lacp-mode passive\n lacp-timeout fast\n lacp-system-priority 0\n lacp-key 65535\n}", &Config{Trunks: []Trunk{{
			Name: "t0", Proto: "loadbalance", LLAddr: mac("02:00:00:00:00:09"), Promisc: true, Hash: "l2,l4",
			LACPMode: "passive", LACPTimeout: "fast", LACPSystemPriority: 0, LACPKey: 65535,
		}}}},
		{"trunk link policy", "trunk t0 {\n updelay 0\n downdelay 3600000\n min-links 64\n preempt off\n}", &Config{Trunks: []Trunk{func() Trunk {
			t := NewTrunk("t0")
			t.DownDelay, t.MinLinks, t.NoPreempt = 3600000, 64, true
			return t
		}()}}},
		{"trunk queue settings", "trunk t0 {\n tx-queue-bytes 65536\n tx-queue-delay 1000\n tx-queue-target 999999\n tx-queue-super-frames on\n send-buffer 1073741824\n}", &Config{Trunks: []Trunk{func() Trunk {
			t := NewTrunk("t0")
			t.Queue = TrunkQueue{TxQueueBytes: 65536, TxQueueDelay: 1000, TxQueueTarget: 999999, SuperFrames: true, SendBuffer: 1 << 30}
			return t
		}()}}},
		{"trunk queue bounds off", "trunk t0 {\n tx-queue-bytes off\n tx-queue-target off\n tx-queue-super-frames off\n}", &Config{Trunks: []Trunk{func() Trunk {
			t := NewTrunk("t0")
			t.Queue = TrunkQueue{TxQueueBytes: QueueOff, TxQueueTarget: QueueOff}
			return t
		}()}}},
		{"trunk preempt on is the default", "trunk t0 {\n preempt on\n}", &Config{Trunks: []Trunk{NewTrunk("t0")}}},
		{"bridge member is a trunk", "bridge b0 {\n port t0\n}\ntrunk t0 {\n port eth1\n}", &Config{
			Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("t0")}}},
			Trunks:  []Trunk{func() Trunk { t := NewTrunk("t0"); t.Ports = []TrunkPort{NewTrunkPort("eth1")}; return t }()},
		}},
		{"trunk declared before the bridge it joins", "trunk t0 {\n}\nbridge b0 {\n port t0\n span eth3\n}", &Config{
			Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("t0")}, Spans: []string{"eth3"}}},
			Trunks:  []Trunk{NewTrunk("t0")},
		}},
		{"canonical sample", string(sample().Format()), sample()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.text), "swctl.conf")
			if err != nil {
				t.Fatalf("Parse: expected no error, got %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse:\nexpected %+v\ngot      %+v", tt.want, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"unknown statement", "router r0 {\n}", `swctl.conf:1: unknown statement "router" (want bridge, trunk or lb)`},
		{"bridge without block", "bridge b0\n", `swctl.conf:1: want "bridge NAME {", got "bridge b0"`},
		{"bridge without name", "bridge {\n}", `swctl.conf:1: want "bridge NAME {", got "bridge"`},
		{"unclosed block", "\nbridge b0 {\n port eth1\n", `swctl.conf:2: block opened here is not closed by "}"`},
		{"stray close", "}\n", `swctl.conf:1: "}" without a block to close`},
		{"stray open", "{\n}\n", `swctl.conf:1: "{" without a statement before it`},
		{"nested block", "bridge b0 {\n port eth1 {\n }\n}", `swctl.conf:2: port: unexpected block inside bridge b0`},
		{"bridge name too long", "bridge abcdefghijklmnop {\n}", `swctl.conf:1: bridge name "abcdefghijklmnop" is 16 bytes long (at most 15)`},
		{"bridge name with slash", "bridge a/b {\n}", `swctl.conf:1: bridge name "a/b" contains '/'`},
		{"bridge twice", "bridge b0 {\n}\nbridge b0 {\n}", `swctl.conf:3: bridge b0: declared twice (line 1)`},
		{"unknown setting", "bridge b0 {\n learn eth1\n}", `swctl.conf:2: unknown setting "learn" in bridge b0 (want local, timeout, maxaddr, stp, fwd-mask, port, span or static)`},
		{"unknown flag", "bridge b0 {\n port eth1\n port eth2 -learning blocknonipp\n}", `swctl.conf:3: port eth2: unknown flag "blocknonipp" (want learning, discover, blocknonip, stack, promisc, stp, edge, autoedge, each optionally prefixed by "-", or ptp auto|on|off, ifpriority N, ifcost N, storm-limit N, bpdu-guard on|off)`},
		{"storm-limit without a value", "bridge b0 {\n port eth1 storm-limit\n}", `swctl.conf:2: port eth1: storm-limit: missing value`},
		{"storm-limit not a number", "bridge b0 {\n port eth1 storm-limit many\n}", `swctl.conf:2: port eth1: storm-limit: "many" is not a number`},
		{"storm-limit negative", "bridge b0 {\n port eth1 storm-limit -1\n}", `swctl.conf:2: port eth1: storm-limit -1: want 0 (off) to 100000000 packets per second`},
		{"storm-limit twice", "bridge b0 {\n port eth1 storm-limit 5 storm-limit 6\n}", `swctl.conf:2: port eth1: flag storm-limit given twice`},
		{"bpdu-guard bad value", "bridge b0 {\n port eth1 bpdu-guard yes\n}", `swctl.conf:2: port eth1: bpdu-guard "yes": want on or off`},
		{"flag twice", "bridge b0 {\n port eth1 learning -learning\n}", `swctl.conf:2: port eth1: flag learning given twice`},
		{"port without name", "bridge b0 {\n port\n}", `swctl.conf:2: want "port IFACE [FLAG...]"`},
		{"port name too long", "bridge b0 {\n port eth0123456789abc\n}", `swctl.conf:2: port: interface name "eth0123456789abc" is 16 bytes long (at most 15)`},
		{"port twice in a bridge", "bridge b0 {\n port eth1\n port eth1\n}", `swctl.conf:3: port eth1: listed twice (line 2)`},
		{"port in two bridges", "bridge b0 {\n port eth1\n}\nbridge b1 {\n port eth1\n}", `swctl.conf:5: port eth1: already a port of bridge b0 (line 2)`},
		{"port and span", "bridge b0 {\n port eth1\n span eth1\n}", `swctl.conf:3: span eth1: already a port of this bridge (line 2)`},
		{"span then port elsewhere", "bridge b0 {\n span eth1\n}\nbridge b1 {\n port eth1\n}", `swctl.conf:5: port eth1: already a span of bridge b0 (line 2)`},
		{"span with two names", "bridge b0 {\n span eth1 eth2\n}", `swctl.conf:2: want "span IFACE", got "span eth1 eth2"`},
		{"local TAP as a member", "bridge b0 {\n local\n}\nbridge b1 {\n port b0\n}", `swctl.conf:5: bridge b1: port b0: is the local TAP of bridge b0, swctl's own interface`},
		{"local twice", "bridge b0 {\n local\n local\n}", `swctl.conf:3: local given twice (first on line 2)`},
		{"local bad MAC", "bridge b0 {\n local 02:00:00:00:00\n}", `swctl.conf:2: local: "02:00:00:00:00" is not a MAC address (want aa:bb:cc:dd:ee:ff)`},
		{"local multicast MAC", "bridge b0 {\n local 01:00:5e:00:00:01\n}", `swctl.conf:2: local: 01:00:5e:00:00:01 is a multicast or broadcast MAC, not a station address`},
		{"local two words", "bridge b0 {\n local 02:00:00:00:00:01 x\n}", `swctl.conf:2: want "local [MAC]", got "local 02:00:00:00:00:01 x"`},
		{"timeout not a number", "bridge b0 {\n timeout 4m\n}", `swctl.conf:2: timeout: "4m" is not a number`},
		{"timeout negative", "bridge b0 {\n timeout -1\n}", `swctl.conf:2: timeout -1 out of range (0 to 1000000 seconds, 0 = never age)`},
		{"timeout too large", "bridge b0 {\n timeout 1000001\n}", `swctl.conf:2: timeout 1000001 out of range (0 to 1000000 seconds, 0 = never age)`},
		{"timeout twice", "bridge b0 {\n timeout 1\n timeout 2\n}", `swctl.conf:3: timeout given twice (first on line 2)`},
		{"timeout without value", "bridge b0 {\n timeout\n}", `swctl.conf:2: want "timeout NUMBER", got "timeout"`},
		{"maxaddr zero", "bridge b0 {\n maxaddr 0\n}", `swctl.conf:2: maxaddr 0 out of range (1 to 16777216)`},
		{"static bad MAC", "bridge b0 {\n port eth1\n static 02:00:00:00:00:0g eth1\n}", `swctl.conf:3: static: "02:00:00:00:00:0g" is not a MAC address (want aa:bb:cc:dd:ee:ff)`},
		{"static multicast", "bridge b0 {\n port eth1\n static 01:00:00:00:00:01 eth1\n}", `swctl.conf:3: static 01:00:00:00:00:01: 01:00:00:00:00:01 is a multicast or broadcast MAC, not a station address`},
		{"static broadcast", "bridge b0 {\n port eth1\n static ff:ff:ff:ff:ff:ff eth1\n}", `swctl.conf:3: static ff:ff:ff:ff:ff:ff: ff:ff:ff:ff:ff:ff is a multicast or broadcast MAC, not a station address`},
		{"static zero", "bridge b0 {\n port eth1\n static 00:00:00:00:00:00 eth1\n}", `swctl.conf:3: static 00:00:00:00:00:00: the all-zero MAC is not a station address`},
		{"static vlan out of range", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1 vlan 4095\n}", `swctl.conf:3: static 02:00:00:00:00:01: vlan 4095 out of range (0 for untagged, 1 to 4094)`},
		{"static vlan not a number", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1 vlan x\n}", `swctl.conf:3: static 02:00:00:00:00:01: vlan "x" is not a number`},
		{"static wrong shape", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1 10\n}", `swctl.conf:3: want "static MAC IFACE [vlan N]", got "static 02:00:00:00:00:01 eth1 10"`},
		{"static twice", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1\n static 02:00:00:00:00:01 eth1 vlan 0\n}", `swctl.conf:4: static 02:00:00:00:00:01 vlan 0: listed twice (line 3)`},
		{"static on a non-member", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth2\n}", `swctl.conf:3: static 02:00:00:00:00:01: eth2 is not a port of this bridge`},
		{"static on a span", "bridge b0 {\n port eth1\n span eth3\n static 02:00:00:00:00:01 eth3\n}", `swctl.conf:4: static 02:00:00:00:00:01: eth3 is not a port of this bridge`},
		{"line too long", "bridge b0 {\n" + strings.Repeat("x", maxLineLen+1) + "\n}", `swctl.conf:2: line longer than 65536 bytes`},

		// Trunks.
		{"trunk without block", "trunk t0\n", `swctl.conf:1: want "trunk NAME {", got "trunk t0"`},
		{"trunk without name", "trunk {\n}", `swctl.conf:1: want "trunk NAME {", got "trunk"`},
		{"trunk name too long", "trunk abcdefghijklmnop {\n}", `swctl.conf:1: trunk name "abcdefghijklmnop" is 16 bytes long (at most 15)`},
		{"trunk twice", "trunk t0 {\n}\ntrunk t0 {\n}", `swctl.conf:3: trunk t0: declared twice (line 1)`},
		{"trunk named as a bridge", "bridge b0 {\n}\ntrunk b0 {\n}", `swctl.conf:3: trunk b0: name already used by bridge b0 (line 1)`},
		{"bridge named as a trunk", "trunk t0 {\n}\nbridge t0 {\n}", `swctl.conf:3: bridge t0: name already used by trunk t0 (line 1)`},
		{"unknown trunk setting", "trunk t0 {\n mode lacp\n}", `swctl.conf:2: unknown setting "mode" in trunk t0 (want proto, lladdr, promisc, hash, lacp-mode, lacp-timeout, lacp-system-priority, lacp-key, updelay, downdelay, min-links, preempt, tx-queue-bytes, tx-queue-delay, tx-queue-target, tx-queue-super-frames, send-buffer or port)`},
		{"nested block in trunk", "trunk t0 {\n port eth1 {\n }\n}", `swctl.conf:2: port: unexpected block inside trunk t0`},
		{"unknown proto", "trunk t0 {\n proto bonding\n}", `swctl.conf:2: proto "bonding": want failover, roundrobin, loadbalance, broadcast, lacp or none`},
		{"proto in upper case", "trunk t0 {\n proto LACP\n}", `swctl.conf:2: proto "LACP": want failover, roundrobin, loadbalance, broadcast, lacp or none`},
		{"proto twice", "trunk t0 {\n proto lacp\n proto none\n}", `swctl.conf:3: proto given twice (first on line 2)`},
		{"proto without value", "trunk t0 {\n proto\n}", `swctl.conf:2: want "proto VALUE", got "proto"`},
		{"proto with two values", "trunk t0 {\n proto lacp none\n}", `swctl.conf:2: want "proto VALUE", got "proto lacp none"`},
		{"lladdr bad MAC", "trunk t0 {\n lladdr 02:00\n}", `swctl.conf:2: lladdr: "02:00" is not a MAC address (want aa:bb:cc:dd:ee:ff)`},
		{"lladdr multicast", "trunk t0 {\n lladdr 01:80:c2:00:00:02\n}", `swctl.conf:2: lladdr: 01:80:c2:00:00:02 is a multicast or broadcast MAC, not a station address`},
		{"lladdr zero", "trunk t0 {\n lladdr 00:00:00:00:00:00\n}", `swctl.conf:2: lladdr: the all-zero MAC is not a station address`},
		{"lladdr without value", "trunk t0 {\n lladdr\n}", `swctl.conf:2: want "lladdr VALUE", got "lladdr"`},
		{"promisc with a value", "trunk t0 {\n promisc on\n}", `swctl.conf:2: want "promisc", got "promisc on"`},
		{"promisc twice", "trunk t0 {\n promisc\n promisc\n}", `swctl.conf:3: promisc given twice (first on line 2)`},
		{"hash unknown field", "trunk t0 {\n hash l2,l5\n}", `swctl.conf:2: hash "l2,l5": unknown field "l5" (want a comma-separated list of l2, l3, l4)`},
		{"hash field twice", "trunk t0 {\n hash l3,l3\n}", `swctl.conf:2: hash "l3,l3": l3 given twice`},
		{"hash empty field", "trunk t0 {\n hash l2,\n}", `swctl.conf:2: hash "l2,": empty field (want a comma-separated list of l2, l3, l4)`},
		{"lacp-mode bad", "trunk t0 {\n lacp-mode on\n}", `swctl.conf:2: lacp-mode "on": want active or passive`},
		{"lacp-timeout bad", "trunk t0 {\n lacp-timeout short\n}", `swctl.conf:2: lacp-timeout "short": want slow or fast`},
		{"lacp-system-priority too large", "trunk t0 {\n lacp-system-priority 65536\n}", `swctl.conf:2: lacp-system-priority 65536 out of range (0 to 65535)`},
		{"lacp-system-priority not a number", "trunk t0 {\n lacp-system-priority high\n}", `swctl.conf:2: lacp-system-priority: "high" is not a number`},
		{"lacp-key negative", "trunk t0 {\n lacp-key -1\n}", `swctl.conf:2: lacp-key -1 out of range (0 to 65535, 0 = derive)`},
		{"lacp-key twice", "trunk t0 {\n lacp-key 1\n lacp-key 1\n}", `swctl.conf:3: lacp-key given twice (first on line 2)`},
		{"updelay negative", "trunk t0 {\n updelay -1\n}", `swctl.conf:2: updelay -1 out of range (0 to 3600000 ms, 0 = at once)`},
		{"downdelay over an hour", "trunk t0 {\n downdelay 3600001\n}", `swctl.conf:2: downdelay 3600001 out of range (0 to 3600000 ms, 0 = at once)`},
		{"updelay with a unit", "trunk t0 {\n updelay 200ms\n}", `swctl.conf:2: updelay: "200ms" is not a number`},
		{"downdelay twice", "trunk t0 {\n downdelay 1\n downdelay 2\n}", `swctl.conf:3: downdelay given twice (first on line 2)`},
		{"min-links over the port limit", "trunk t0 {\n min-links 65\n}", `swctl.conf:2: min-links 65 out of range (0 to 64)`},
		{"tx-queue-bytes negative", "trunk t0 {\n tx-queue-bytes -2\n}", `swctl.conf:2: tx-queue-bytes -2 out of range (0 to 1073741824 bytes or off, 0 = 1 MiB)`},
		{"tx-queue-delay off", "trunk t0 {\n tx-queue-delay off\n}", `swctl.conf:2: tx-queue-delay: "off" is not a number`},
		{"tx-queue-target too long", "trunk t0 {\n tx-queue-target 1000001\n}", `swctl.conf:2: tx-queue-target 1000001 out of range (0 to 1000000 us or off, 0 = 1000 us)`},
		{"tx-queue-target not below the default delay", "trunk t0 {\n tx-queue-target 20000\n}", `swctl.conf:1: trunk t0: tx-queue-target 20000 us: not below tx-queue-delay 20 ms`},
		{"tx-queue-super-frames yes", "trunk t0 {\n tx-queue-super-frames yes\n}", `swctl.conf:2: tx-queue-super-frames "yes": want on or off`},
		{"send-buffer twice", "trunk t0 {\n send-buffer 1\n send-buffer 2\n}", `swctl.conf:3: send-buffer given twice (first on line 2)`},
		{"min-links without value", "trunk t0 {\n min-links\n}", `swctl.conf:2: want "min-links VALUE", got "min-links"`},
		{"preempt bad value", "trunk t0 {\n preempt no\n}", `swctl.conf:2: preempt "no": want on or off`},
		{"preempt without value", "trunk t0 {\n preempt\n}", `swctl.conf:2: want "preempt VALUE", got "preempt"`},
		{"trunk port without name", "trunk t0 {\n port\n}", `swctl.conf:2: want "port IFACE [priority N] [lacp-port-priority N]"`},
		{"trunk port name too long", "trunk t0 {\n port eth0123456789abc\n}", `swctl.conf:2: port: interface name "eth0123456789abc" is 16 bytes long (at most 15)`},
		{"trunk port unknown option", "trunk t0 {\n port eth1 -learning\n}", `swctl.conf:2: port eth1: unknown option "-learning" (want priority N or lacp-port-priority N)`},
		{"trunk port option without value", "trunk t0 {\n port eth1 priority\n}", `swctl.conf:2: port eth1: priority: missing value`},
		{"trunk port option twice", "trunk t0 {\n port eth1 priority 1 priority 2\n}", `swctl.conf:2: port eth1: priority given twice`},
		{"trunk port priority too large", "trunk t0 {\n port eth1 priority 65536\n}", `swctl.conf:2: port eth1: priority 65536 out of range (0 to 65535)`},
		{"trunk port lacp priority not a number", "trunk t0 {\n port eth1 lacp-port-priority x\n}", `swctl.conf:2: port eth1: lacp-port-priority: "x" is not a number`},
		{"trunk port twice", "trunk t0 {\n port eth1\n port eth1 priority 3\n}", `swctl.conf:3: port eth1: listed twice (line 2)`},
		{"port in two trunks", "trunk t0 {\n port eth1\n}\ntrunk t1 {\n port eth1\n}", `swctl.conf:5: port eth1: already a port of trunk t0 (line 2)`},
		{"bridge port then trunk port", "bridge b0 {\n port eth1\n}\ntrunk t0 {\n port eth1\n}", `swctl.conf:5: port eth1: already a port of bridge b0 (line 2)`},
		{"trunk port then bridge port", "trunk t0 {\n port eth1\n}\nbridge b0 {\n port eth1\n}", `swctl.conf:5: port eth1: already a port of trunk t0 (line 2)`},
		{"trunk port then bridge span", "trunk t0 {\n port eth1\n}\nbridge b0 {\n span eth1\n}", `swctl.conf:5: span eth1: already a port of trunk t0 (line 2)`},
		{"bridge span then trunk port", "bridge b0 {\n span eth1\n}\ntrunk t0 {\n port eth1\n}", `swctl.conf:5: port eth1: already a span of bridge b0 (line 2)`},
		{"trunk in two bridges", "trunk t0 {\n}\nbridge b0 {\n port t0\n}\nbridge b1 {\n port t0\n}", `swctl.conf:7: port t0: already a port of bridge b0 (line 4)`},
		{"trunk port is a trunk", "trunk t0 {\n port eth1\n port t1\n}\ntrunk t1 {\n}", `swctl.conf:3: trunk t0: port t1: is trunk t1, not an interface a trunk can aggregate`},
		{"trunk port is the trunk itself", "trunk t0 {\n port t0\n}", `swctl.conf:2: trunk t0: port t0: is trunk t0, not an interface a trunk can aggregate`},
		{"trunk port is a bridge", "bridge b0 {\n}\ntrunk t0 {\n port b0\n}", `swctl.conf:4: trunk t0: port b0: is bridge b0, not an interface a trunk can aggregate`},
		{"trunk port is a local TAP", "bridge b0 {\n local\n}\ntrunk t0 {\n port b0\n}", `swctl.conf:5: trunk t0: port b0: is the local TAP of bridge b0, swctl's own interface`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(strings.NewReader(tt.text), "swctl.conf")
			if err == nil {
				t.Fatalf("Parse: expected error %q, got none (config %+v)", tt.want, c)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse error:\nexpected %s\ngot      %s", tt.want, err)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("Parse error: expected an *Error, got %T", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		want   string // "" for no error
	}{
		{"sample is valid", func(c *Config) {}, ""},
		{"empty is valid", func(c *Config) { c.Bridges = nil }, ""},
		{"bad bridge name", func(c *Config) { c.Bridges[2].Name = "with space" }, `bridge name "with space" contains whitespace or a control character`},
		{"duplicate bridge", func(c *Config) { c.Bridges[2].Name = "br1" }, `bridge br1: declared twice`},
		{"local MAC without local", func(c *Config) { c.Bridges[2].LocalMAC = mac("02:00:00:00:00:09") }, `bridge empty: local MAC 02:00:00:00:00:09 set without local`},
		{"bad timeout", func(c *Config) { c.Bridges[0].Timeout = -5 }, `bridge bridge0: timeout -5 out of range (0 to 1000000 seconds, 0 = never age)`},
		{"bad maxaddr", func(c *Config) { c.Bridges[0].MaxAddr = 0 }, `bridge bridge0: maxaddr 0 out of range (1 to 16777216)`},
		{"port in two bridges", func(c *Config) { c.Bridges[2].Ports = []Port{NewPort("eth1")} }, `bridge empty: port eth1: already a port of bridge bridge0`},
		{"span is a port", func(c *Config) { c.Bridges[0].Spans = []string{"eth2"} }, `bridge bridge0: span eth2: already a port of this bridge`},
		{"static on a non-member", func(c *Config) { c.Bridges[0].Statics[0].Port = "eth9" }, `bridge bridge0: static 02:00:00:00:00:01: eth9 is not a port of this bridge`},
		{"local TAP as a member", func(c *Config) { c.Bridges[2].Ports = []Port{NewPort("br1")} }, `bridge empty: port br1: is the local TAP of bridge br1, swctl's own interface`},
		{"no trunks is valid", func(c *Config) { c.Trunks = nil; c.Bridges[0].Ports = c.Bridges[0].Ports[:3] }, ""},
		{"bad trunk name", func(c *Config) { c.Trunks[3].Name = "" }, `trunk name is empty`},
		{"duplicate trunk", func(c *Config) { c.Trunks[3].Name = "trunk2" }, `trunk trunk2: declared twice`},
		{"trunk named as a bridge", func(c *Config) { c.Trunks[3].Name = "empty" }, `trunk empty: name already used by bridge empty`},
		{"empty proto", func(c *Config) { c.Trunks[3].Proto = "" }, `trunk trunk3: proto "": want failover, roundrobin, loadbalance, broadcast, lacp or none`},
		{"multicast lladdr", func(c *Config) { c.Trunks[0].LLAddr = mac("ff:ff:ff:ff:ff:ff") }, `trunk trunk0: lladdr: ff:ff:ff:ff:ff:ff is a multicast or broadcast MAC, not a station address`},
		{"empty hash", func(c *Config) { c.Trunks[0].Hash = "" }, `trunk trunk0: hash "": empty (want a comma-separated list of l2, l3, l4)`},
		{"hash not canonical", func(c *Config) { c.Trunks[0].Hash = "l4,l2" }, `trunk trunk0: hash "l4,l2": not in canonical form (want "l2,l4")`},
		{"empty lacp mode", func(c *Config) { c.Trunks[0].LACPMode = "" }, `trunk trunk0: lacp-mode "": want active or passive`},
		{"bad lacp timeout", func(c *Config) { c.Trunks[0].LACPTimeout = "Fast" }, `trunk trunk0: lacp-timeout "Fast": want slow or fast`},
		{"lacp system priority too large", func(c *Config) { c.Trunks[0].LACPSystemPriority = 65536 }, `trunk trunk0: lacp-system-priority 65536 out of range (0 to 65535)`},
		{"lacp key negative", func(c *Config) { c.Trunks[0].LACPKey = -1 }, `trunk trunk0: lacp-key -1 out of range (0 to 65535, 0 = derive)`},
		{"updelay negative", func(c *Config) { c.Trunks[1].UpDelay = -1 }, `trunk trunk1: updelay -1 out of range (0 to 3600000 ms, 0 = at once)`},
		{"downdelay too long", func(c *Config) { c.Trunks[1].DownDelay = 3600001 }, `trunk trunk1: downdelay 3600001 out of range (0 to 3600000 ms, 0 = at once)`},
		{"send-buffer negative", func(c *Config) { c.Trunks[1].Queue.SendBuffer = -1 }, `trunk trunk1: send-buffer -1 out of range (0 to 1073741824 bytes, 0 = the kernel's)`},
		{"tx-queue-target not below tx-queue-delay", func(c *Config) { c.Trunks[1].Queue = TrunkQueue{TxQueueDelay: 1, TxQueueTarget: 1000} },
			`trunk trunk1: tx-queue-target 1000 us: not below tx-queue-delay 1 ms`},
		{"min-links negative", func(c *Config) { c.Trunks[1].MinLinks = -1 }, `trunk trunk1: min-links -1 out of range (0 to 64)`},
		{"port priority negative", func(c *Config) { c.Trunks[0].Ports[1].Priority = -1 }, `trunk trunk0: port eth6: priority -1 out of range (0 to 65535)`},
		{"lacp port priority too large", func(c *Config) { c.Trunks[0].Ports[1].LACPPortPriority = 1 << 16 }, `trunk trunk0: port eth6: lacp-port-priority 65536 out of range (0 to 65535)`},
		{"bad trunk port name", func(c *Config) { c.Trunks[0].Ports[1].Name = "a:b" }, `trunk trunk0: port: interface name "a:b" contains ':'`},
		{"trunk port twice", func(c *Config) { c.Trunks[0].Ports[1].Name = "eth5" }, `trunk trunk0: port eth5: listed twice`},
		{"trunk port is a bridge port", func(c *Config) { c.Trunks[1].Ports[1].Name = "eth1" }, `trunk trunk1: port eth1: already a port of bridge bridge0`},
		{"trunk port is a bridge span", func(c *Config) { c.Trunks[1].Ports[1].Name = "eth3" }, `trunk trunk1: port eth3: already a span of bridge bridge0`},
		{"port in two trunks", func(c *Config) { c.Trunks[2].Ports = []TrunkPort{NewTrunkPort("eth7")} }, `trunk trunk2: port eth7: already a port of trunk trunk1`},
		{"trunk port is a trunk", func(c *Config) { c.Trunks[2].Ports = []TrunkPort{NewTrunkPort("trunk3")} }, `trunk trunk2: port trunk3: is trunk trunk3, not an interface a trunk can aggregate`},
		{"trunk port is a bridge", func(c *Config) { c.Trunks[2].Ports = []TrunkPort{NewTrunkPort("empty")} }, `trunk trunk2: port empty: is bridge empty, not an interface a trunk can aggregate`},
		{"trunk in two bridges", func(c *Config) { c.Bridges[2].Ports = []Port{NewPort("trunk0")} }, `bridge empty: port trunk0: already a port of bridge bridge0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sample()
			tt.modify(c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate:\nexpected %q\ngot      %q", tt.want, got)
			}
		})
	}
}

func TestFormatGolden(t *testing.T) {
	golden := filepath.Join("testdata", "sample.conf")
	got := sample().Format()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("Format: expected (%s)\n%s\ngot\n%s", golden, want, got)
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    *Config
	}{
		{"empty", &Config{}},
		{"sample", sample()},
		{"every flag combination", func() *Config {
			b := NewBridge("flags")
			for i := range 16 {
				b.Ports = append(b.Ports, Port{Name: "p" + string(rune('a'+i)), Learning: i&1 != 0, Discover: i&2 != 0, BlockNonIP: i&4 != 0, Stack: i&8 != 0})
			}
			return &Config{Bridges: []Bridge{b}}
		}()},
		{"every protocol, default LACP settings", func() *Config {
			c := &Config{}
			for i, p := range Protos {
				t := NewTrunk("t-" + p)
				t.Ports = []TrunkPort{NewTrunkPort("p" + string(rune('a'+i)))}
				c.Trunks = append(c.Trunks, t)
			}
			return c
		}()},
		{"every hash", func() *Config {
			c := &Config{}
			for _, h := range []string{"l2", "l3", "l4", "l2,l3", "l2,l4", "l3,l4", "l2,l3,l4"} {
				t := NewTrunk("h" + strings.ReplaceAll(h, ",", ""))
				t.Hash = h
				c.Trunks = append(c.Trunks, t)
			}
			return c
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.c.Format()
			got, err := Parse(strings.NewReader(string(text)), "x.conf")
			if err != nil {
				t.Fatalf("Parse(Format(c)): expected no error, got %v\n%s", err, text)
			}
			if !reflect.DeepEqual(got, tt.c) {
				t.Errorf("Parse(Format(c)):\nexpected %+v\ngot      %+v", tt.c, got)
			}
			if again := got.Format(); string(again) != string(text) {
				t.Errorf("Format(Parse(Format(c))) differs:\nexpected\n%s\ngot\n%s", text, again)
			}
		})
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "none", "swctl.conf"))
	if err != nil {
		t.Fatalf("Load: expected no error for a missing file, got %v", err)
	}
	if len(c.Bridges) != 0 || len(c.Trunks) != 0 {
		t.Errorf("Load: expected an empty config, got %+v", c)
	}
}

func TestLoadNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "swctl.conf")
	if err := os.WriteFile(path, []byte("bridge b0 {\n bogus\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	want := path + `:2: unknown setting "bogus" in bridge b0 (want local, timeout, maxaddr, stp, fwd-mask, port, span or static)`
	if err == nil || err.Error() != want {
		t.Errorf("Load: expected error %q, got %v", want, err)
	}
}

// errSymlink is Load's error for a symbolic link, after "PATH: ".
const errSymlink = "is a symbolic link (give the file's own path: the daemon replaces the file when it saves)"

// symlinkTo returns a maker of a symbolic link to a file elsewhere that
// holds content; to no file at all when content is "".
func symlinkTo(content string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		target := filepath.Join(t.TempDir(), "target")
		if content != "" {
			if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		wantErr string // after "PATH: "
	}{
		{"symbolic link to another file", symlinkTo("root:secret-first-line:19000::::::\n"), errSymlink},
		{"symbolic link to a valid configuration", symlinkTo("bridge b0 {\n}\n"), errSymlink},
		{"dangling symbolic link", symlinkTo(""), errSymlink},
		{"FIFO nobody writes to", func(t *testing.T, path string) {
			if err := unix.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file but a FIFO"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file but a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "swctl.conf")
			tt.make(t, path)
			done := make(chan error, 1)
			go func() { _, err := Load(path); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Load: expected an error at once, still blocked after 5s")
			}
			if want := path + ": " + tt.wantErr; err == nil || err.Error() != want {
				t.Errorf("Load:\nexpected %s\ngot      %v", want, err)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc", "swctl")
	path := filepath.Join(dir, "swctl.conf")
	for i, c := range []*Config{sample(), {Bridges: []Bridge{NewBridge("b9")}}, {Trunks: []Trunk{NewTrunk("t9")}}} {
		if err := c.WriteFile(path); err != nil {
			t.Fatalf("WriteFile #%d: expected no error, got %v", i, err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatalf("Load after WriteFile #%d: %v", i, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("Load after WriteFile #%d:\nexpected %+v\ngot      %+v", i, c, got)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode != 0o644 {
		t.Errorf("mode: expected 0644, got %#o", mode)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory: expected only swctl.conf, got %v", names)
	}
}

func TestWriteFileRefusesInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "swctl.conf")
	c := &Config{Bridges: []Bridge{NewBridge("b0"), NewBridge("b0")}}
	err := c.WriteFile(path)
	want := path + ": not written: bridge b0: declared twice"
	if err == nil || err.Error() != want {
		t.Errorf("WriteFile: expected error %q, got %v", want, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFile: expected no file after a refused write, got stat error %v", err)
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"eth0", ""},
		{"abcdefghijklmno", ""},
		{"veth-a.10@x", ""},
		{"", `interface name is empty`},
		{"abcdefghijklmnop", `interface name "abcdefghijklmnop" is 16 bytes long (at most 15)`},
		{"a b", `interface name "a b" contains whitespace or a control character`},
		{"a\tb", `interface name "a\tb" contains whitespace or a control character`},
		{"a\x01", `interface name "a\x01" contains whitespace or a control character`},
		{"a/b", `interface name "a/b" contains '/'`},
		{"eth0:1", `interface name "eth0:1" contains ':'`},
		{"a#b", `interface name "a#b" contains '#'`},
		{"a{", `interface name "a{" contains '{'`},
		{".", `interface name "." is not allowed`},
		{"..", `interface name ".." is not allowed`},
		{"\xff", `interface name "\xff" contains whitespace or a control character`},
	}
	for _, tt := range tests {
		err := CheckName("interface", tt.name)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckName(%q): expected %q, got %q", tt.name, tt.want, got)
		}
	}
}

func TestCanonicalHash(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"l2,l3,l4", "l2,l3,l4", ""},
		{"l4,l3,l2", "l2,l3,l4", ""},
		{"l3", "l3", ""},
		{"l4,l2", "l2,l4", ""},
		{"", "", `hash "": empty (want a comma-separated list of l2, l3, l4)`},
		{",", "", `hash ",": empty field (want a comma-separated list of l2, l3, l4)`},
		{"L2", "", `hash "L2": unknown field "L2" (want a comma-separated list of l2, l3, l4)`},
		{"l2, l3", "", `hash "l2, l3": unknown field " l3" (want a comma-separated list of l2, l3, l4)`},
		{"l2,l2", "", `hash "l2,l2": l2 given twice`},
	}
	for _, tt := range tests {
		got, err := CanonicalHash(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.err {
			t.Errorf("CanonicalHash(%q): expected %q, %q; got %q, %q", tt.in, tt.want, tt.err, got, gotErr)
		}
		if (CheckHash(tt.in) == nil) != (tt.err == "") {
			t.Errorf("CheckHash(%q): expected error %q, got %v", tt.in, tt.err, CheckHash(tt.in))
		}
	}
}

func TestTrunkChecks(t *testing.T) {
	for _, p := range Protos {
		if err := CheckProto(p); err != nil {
			t.Errorf("CheckProto(%q): expected no error, got %v", p, err)
		}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"proto", CheckProto("trunk"), `proto "trunk": want failover, roundrobin, loadbalance, broadcast, lacp or none`},
		{"mode active", CheckLACPMode("active"), ""},
		{"mode passive", CheckLACPMode("passive"), ""},
		{"mode bad", CheckLACPMode("Active"), `lacp-mode "Active": want active or passive`},
		{"timeout slow", CheckLACPTimeout("slow"), ""},
		{"timeout fast", CheckLACPTimeout("fast"), ""},
		{"timeout bad", CheckLACPTimeout("3s"), `lacp-timeout "3s": want slow or fast`},
		{"priority 0", CheckPriority("priority", 0), ""},
		{"priority max", CheckPriority("priority", 65535), ""},
		{"priority over", CheckPriority("lacp-port-priority", 65536), `lacp-port-priority 65536 out of range (0 to 65535)`},
		{"key under", CheckPriority("lacp-key", -1), `lacp-key -1 out of range (0 to 65535, 0 = derive)`},
		{"updelay 0", CheckDelay("updelay", 0), ""},
		{"downdelay max", CheckDelay("downdelay", MaxDelay), ""},
		{"updelay over", CheckDelay("updelay", MaxDelay+1), `updelay 3600001 out of range (0 to 3600000 ms, 0 = at once)`},
		{"min-links 0", CheckMinLinks(0), ""},
		{"min-links max", CheckMinLinks(MaxMinLinks), ""},
		{"min-links over", CheckMinLinks(MaxMinLinks + 1), `min-links 65 out of range (0 to 64)`},
	}
	for _, tt := range tests {
		got := ""
		if tt.err != nil {
			got = tt.err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: expected %q, got %q", tt.name, tt.want, got)
		}
	}
}

func TestNewTrunk(t *testing.T) {
	want := Trunk{Name: "t0", Proto: "failover", Hash: "l2,l3,l4", LACPMode: "active", LACPTimeout: "slow", LACPSystemPriority: 32768}
	if got := NewTrunk("t0"); !reflect.DeepEqual(got, want) {
		t.Errorf("NewTrunk:\nexpected %+v\ngot      %+v", want, got)
	}
	if got, want := NewTrunkPort("eth1"), (TrunkPort{Name: "eth1", LACPPortPriority: 32768}); got != want {
		t.Errorf("NewTrunkPort: expected %+v, got %+v", want, got)
	}
	c := sample()
	if tr := c.Trunk("trunk1"); tr == nil || tr.Port("eth8") == nil || tr.Port("eth5") != nil {
		t.Errorf("Trunk/Port lookups: expected trunk1 with eth8 and without eth5, got %+v", tr)
	}
	if c.Trunk("bridge0") != nil {
		t.Errorf("Trunk(bridge0): expected nil, got a trunk")
	}
}
