package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/api/apitest"
	"github.com/swctl/swctl/internal/config"
)

func newFake() *apitest.Fake {
	return &apitest.Fake{
		Bridges:     testBridges,
		Addrs:       map[string][]api.AddrInfo{"bridge0": testAddrs, "br1": nil},
		Trunks:      testTrunks,
		Ports:       testPorts,
		VersionInfo: *testVersion.Daemon,
		Samples:     testSamples,
		Errs: map[string]error{
			api.OpBridgeAdd: errors.New("bridge0: add eth9: no such interface"),
			api.OpTrunkDel:  errors.New("trunk0: del eth9: not a port of this trunk"),
		},
	}
}

// trunk2JSON is trunk show -o json for the fake's trunk trunk2.
const trunk2JSON = `[
  {
    "name": "trunk2",
    "proto": "roundrobin",
    "lladdr": "",
    "promisc": false,
    "hash": "l3,l4",
    "lacp_mode": "passive",
    "lacp_timeout": "slow",
    "lacp_system_priority": 1,
    "lacp_key": 0,
    "updelay": 0,
    "downdelay": 0,
    "min_links": 0,
    "preempt": true,
    "queue": {
      "tx_queue_bytes": 0,
      "tx_queue_delay_ms": 0,
      "tx_queue_target_us": 0,
      "tx_queue_super_frames": false,
      "send_buffer": 0
    },
    "active": false,
    "ports": [],
    "rx_packets": 0,
    "rx_bytes": 0,
    "tx_packets": 0,
    "tx_bytes": 0,
    "rx_dropped": 0,
    "tx_dropped": 0,
    "announced": 0
  }
]
`

// br1JSON is bridge show -o json for the fake's bridge br1.
const br1JSON = "[\n  {\n    \"name\": \"br1\",\n    \"timeout\": 0,\n    \"maxaddr\": 16,\n    \"local\": \"\",\n    \"ports\": [],\n    \"spans\": [],\n    \"addresses\": 0,\n    \"exceeded\": 0,\n    \"forwarded\": 0,\n    \"flooded\": 0,\n    \"dropped\": 0\n  }\n]\n"

func TestCLI(t *testing.T) {
	readGolden := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name       string
		args       []string // after "swctl --socket PATH"
		wantCode   int
		wantStdout string
		wantStderr string
		wantCalls  []apitest.Call
	}{
		// Commands that print state.
		{name: "bridge show text", args: []string{"bridge", "show"}, wantStdout: readGolden("bridge-show.txt"),
			wantCalls: []apitest.Call{{Op: "bridge.show", Req: ""}}},
		{name: "bridge show json", args: []string{"bridge", "show", "-o", "json"}, wantStdout: readGolden("bridge-show.json"),
			wantCalls: []apitest.Call{{Op: "bridge.show", Req: ""}}},
		{name: "bridge show NAME -o json (flag after the argument)", args: []string{"bridge", "show", "br1", "-o", "json"},
			wantStdout: br1JSON,
			wantCalls:  []apitest.Call{{Op: "bridge.show", Req: "br1"}}},
		{name: "bridge show --output=json", args: []string{"bridge", "show", "--output=json", "br1"}, wantStdout: br1JSON,
			wantCalls: []apitest.Call{{Op: "bridge.show", Req: "br1"}}},
		{name: "bridge show unknown bridge", args: []string{"bridge", "show", "nope"}, wantCode: 1,
			wantStderr: "swctl: nope: no such bridge\n", wantCalls: []apitest.Call{{Op: "bridge.show", Req: "nope"}}},
		{name: "bridge show unknown bridge json", args: []string{"bridge", "show", "nope", "-o", "json"}, wantCode: 1,
			wantStderr: "{\"error\":\"nope: no such bridge\"}\n", wantCalls: []apitest.Call{{Op: "bridge.show", Req: "nope"}}},
		{name: "bridge addr text", args: []string{"bridge", "addr", "bridge0"}, wantStdout: readGolden("bridge-addr.txt"),
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "bridge0"}}}},
		{name: "bridge addr json", args: []string{"bridge", "addr", "bridge0", "-o", "json"}, wantStdout: readGolden("bridge-addr.json"),
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "bridge0"}}}},
		{name: "bridge addr empty json", args: []string{"bridge", "addr", "br1", "-o", "json"}, wantStdout: "[]\n",
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "br1"}}}},
		{name: "bridge addr empty text", args: []string{"bridge", "addr", "br1"}, wantStdout: readGolden("bridge-addr-empty.txt"),
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "br1"}}}},
		{name: "bridge addr one page", args: []string{"bridge", "addr", "bridge0", "--limit", "1", "--after", "02:00:00:00:00:01", "-o", "json"},
			wantStdout: "[\n  {\n    \"mac\": \"02:00:00:00:00:02\",\n    \"vlan\": 4094,\n    \"port\": \"veth-long-name\",\n    \"age\": 0,\n    \"static\": false\n  }\n]\n",
			wantCalls:  []apitest.Call{{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "bridge0", Limit: 1, After: &api.AddrKey{MAC: "02:00:00:00:00:01"}}}}},
		{name: "bridge addr after VLAN/MAC", args: []string{"bridge", "addr", "bridge0", "--limit", "2", "--after", "4094/02:00:00:00:00:02"},
			wantStdout: "MAC                VLAN  PORT  AGE  FLAGS\n02:00:00:00:00:03  10    eth1  -    static\n",
			wantCalls:  []apitest.Call{{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "bridge0", Limit: 2, After: &api.AddrKey{MAC: "02:00:00:00:00:02", VLAN: 4094}}}}},
		{name: "bridge addr --limit 0", args: []string{"bridge", "addr", "bridge0", "--limit", "0"}, wantCode: 2,
			wantStderr: "swctl: --limit: want 1 to 4096 entries, got 0\n"},
		{name: "bridge addr --limit too many", args: []string{"bridge", "addr", "bridge0", "--limit", "4097"}, wantCode: 2,
			wantStderr: "swctl: --limit: want 1 to 4096 entries, got 4097\n"},
		{name: "bridge addr --after bad VLAN", args: []string{"bridge", "addr", "bridge0", "--after", "4096/02:00:00:00:00:01"}, wantCode: 2,
			wantStderr: "swctl: --after: address table position \"4096/02:00:00:00:00:01\": VLAN ID \"4096\" not a number from 0 to 4095\n"},
		{name: "port show text", args: []string{"port", "show"}, wantStdout: readGolden("port-show.txt"),
			wantCalls: []apitest.Call{{Op: "port.show", Req: ""}}},
		{name: "port show json", args: []string{"port", "show", "-o", "json"}, wantStdout: readGolden("port-show.json"),
			wantCalls: []apitest.Call{{Op: "port.show", Req: ""}}},
		{name: "port show one", args: []string{"port", "show", "gone0"}, wantStdout: "NAME   BRIDGE   LINK    PROMISC  RX-PKTS  RX-BYTES  TX-PKTS  TX-BYTES  RX-DROP  BAD-OFFLOAD  TX-DROP  RING-DROP  ERRORS\ngone0  bridge0  absent  no       0        0         0        0         0        0            0        0          0\n",
			wantCalls: []apitest.Call{{Op: "port.show", Req: "gone0"}}},

		{name: "stats text", args: []string{"stats"}, wantStdout: readGolden("stats.txt"),
			wantCalls: []apitest.Call{{Op: "stats"}}},
		{name: "stats json", args: []string{"stats", "-o", "json"}, wantStdout: readGolden("stats.json"),
			wantCalls: []apitest.Call{{Op: "stats"}}},

		{name: "trunk show text", args: []string{"trunk", "show"}, wantStdout: readGolden("trunk-show.txt"),
			wantCalls: []apitest.Call{{Op: "trunk.show", Req: ""}}},
		{name: "trunk show json", args: []string{"trunk", "show", "-o", "json"}, wantStdout: readGolden("trunk-show.json"),
			wantCalls: []apitest.Call{{Op: "trunk.show", Req: ""}}},
		{name: "trunk show NAME -o json", args: []string{"trunk", "show", "trunk2", "-o", "json"}, wantStdout: trunk2JSON,
			wantCalls: []apitest.Call{{Op: "trunk.show", Req: "trunk2"}}},
		{name: "trunk show unknown trunk", args: []string{"trunk", "show", "nope"}, wantCode: 1,
			wantStderr: "swctl: nope: no such trunk\n", wantCalls: []apitest.Call{{Op: "trunk.show", Req: "nope"}}},
		{name: "trunk show failover", args: []string{"trunk", "show", "trunk1"},
			wantStdout: "trunk trunk1\n  proto      failover\n  tap        tap3\n  lladdr     02:00:00:00:00:07\n  policy     promisc (members keep their MACs, promiscuous)\n  hash       l2,l3,l4\n  links      updelay 200 ms, downdelay 50 ms, min-links 1\n  preempt    off\n  queue      backlog 524288 bytes, 5 ms, codel off, super-frames on, send buffer 4194304 bytes\n  active     yes\n  rx         20 packets, 2400 bytes, 5 dropped\n  tx         24 packets, 2900 bytes, 0 dropped\n  announced  4 frames (gratuitous ARP, unsolicited NA) after failovers\n  PORT  LINK  PRIO  FLAGS\n  eth7  up    100   master,active,collecting,distributing\n  eth8  down  0     -\n  PORT  RX-PKTS  RX-BYTES  TX-PKTS  TX-BYTES  REFUSED  CONTROL  RX-DROP  BAD-OFFLOAD  TX-DROP  RING-DROP  ERRORS  TX-QUEUE  Q-OVERFLOW  Q-STALE\n  eth7  20       2400      24       2900      0        0        0        0            0        0          0       -         0           0\n  eth8  5        600       0        0         5        0        0        0            0        0          0       -         0           0\n",
			wantCalls:  []apitest.Call{{Op: "trunk.show", Req: "trunk1"}}},

		// Commands that change state.
		{name: "bridge create --local", args: []string{"bridge", "create", "bridge0", "--local"},
			wantCalls: []apitest.Call{{Op: "bridge.create", Req: api.BridgeCreateRequest{Name: "bridge0", Local: true}}}},
		{name: "bridge destroy", args: []string{"bridge", "destroy", "bridge0"},
			wantCalls: []apitest.Call{{Op: "bridge.destroy", Req: api.BridgeDestroyRequest{Name: "bridge0"}}}},
		{name: "bridge add refused by the daemon", args: []string{"bridge", "add", "bridge0", "eth1", "eth9"}, wantCode: 1,
			wantStderr: "swctl: bridge0: add eth9: no such interface\n",
			wantCalls:  []apitest.Call{{Op: "bridge.add", Req: api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth9"}}}}},
		{name: "bridge add refused, json", args: []string{"bridge", "add", "-o", "json", "bridge0", "eth9"}, wantCode: 1,
			wantStderr: "{\"error\":\"bridge0: add eth9: no such interface\"}\n",
			wantCalls:  []apitest.Call{{Op: "bridge.add", Req: api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth9"}}}}},
		{name: "bridge add --force", args: []string{"bridge", "add", "bridge0", "eth0", "--force"}, wantCode: 1,
			wantStderr: "swctl: bridge0: add eth9: no such interface\n", // the fake's answer to every bridge add
			wantCalls:  []apitest.Call{{Op: "bridge.add", Req: api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth0"}, Force: true}}}},
		{name: "bridge del", args: []string{"bridge", "del", "bridge0", "eth1", "eth2"},
			wantCalls: []apitest.Call{{Op: "bridge.del", Req: api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}}}},
		{name: "bridge static --vlan", args: []string{"bridge", "static", "bridge0", "02:00:00:00:00:01", "eth1", "--vlan", "10"},
			wantCalls: []apitest.Call{{Op: "bridge.static", Req: api.StaticRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", Iface: "eth1", VLAN: 10}}}},
		{name: "bridge static --replace", args: []string{"bridge", "static", "--replace", "bridge0", "02:00:00:00:00:01", "eth2"},
			wantCalls: []apitest.Call{{Op: "bridge.static", Req: api.StaticRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", Iface: "eth2", Replace: true}}}},
		{name: "bridge deladdr", args: []string{"bridge", "deladdr", "bridge0", "02:00:00:00:00:01"},
			wantCalls: []apitest.Call{{Op: "bridge.deladdr", Req: api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01"}}}},
		{name: "bridge deladdr --vlan 0", args: []string{"bridge", "deladdr", "bridge0", "02:00:00:00:00:01", "--vlan", "0"},
			wantCalls: []apitest.Call{{Op: "bridge.deladdr", Req: api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", VLAN: ptr(uint16(0))}}}},
		{name: "bridge flush", args: []string{"bridge", "flush", "bridge0"},
			wantCalls: []apitest.Call{{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0"}}}},
		{name: "bridge flush --all", args: []string{"bridge", "flush", "bridge0", "--all"},
			wantCalls: []apitest.Call{{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0", All: true}}}},
		{name: "bridge flush --port", args: []string{"bridge", "flush", "bridge0", "--port", "eth1"},
			wantCalls: []apitest.Call{{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0", Port: "eth1"}}}},
		{name: "bridge set both", args: []string{"bridge", "set", "bridge0", "--timeout", "0", "--maxaddr", "100"},
			wantCalls: []apitest.Call{{Op: "bridge.set", Req: api.BridgeSetRequest{Name: "bridge0", Timeout: ptr(0), MaxAddr: ptr(100)}}}},
		{name: "bridge port flags", args: []string{"bridge", "port", "bridge0", "eth1", "--learning", "off", "--stack=on"},
			wantCalls: []apitest.Call{{Op: "bridge.port", Req: api.BridgePortRequest{Name: "bridge0", Iface: "eth1", Learning: ptr(false), Stack: ptr(true)}}}},
		{name: "bridge set --fwd-mask", args: []string{"bridge", "set", "bridge0", "--fwd-mask", "0x4008"},
			wantCalls: []apitest.Call{{Op: "bridge.set", Req: api.BridgeSetRequest{Name: "bridge0", FwdMask: ptr(uint16(0x4008))}}}},
		{name: "bridge port stp flags", args: []string{"bridge", "port", "bridge0", "eth1", "--stp", "off", "--edge=on", "--autoedge", "off", "--ptp", "on", "--ifpriority", "64", "--ifcost", "0"},
			wantCalls: []apitest.Call{{Op: "bridge.port", Req: api.BridgePortRequest{Name: "bridge0", Iface: "eth1", STP: ptr(false), Edge: ptr(true), AutoEdge: ptr(false), PTP: ptr("on"), IfPriority: ptr(64), IfCost: ptr(0)}}}},
		{name: "bridge stp on with every setting", args: []string{"bridge", "stp", "bridge0", "on", "--proto", "stp", "--priority", "4096", "--hellotime", "1", "--fwddelay", "4", "--maxage", "6", "--holdcnt", "3"},
			wantCalls: []apitest.Call{{Op: "bridge.stp", Req: api.BridgeSTPRequest{Name: "bridge0", On: ptr(true), Proto: ptr("stp"), Priority: ptr(4096), HelloTime: ptr(1), FwdDelay: ptr(4), MaxAge: ptr(6), HoldCount: ptr(3)}}}},
		{name: "bridge stp off", args: []string{"bridge", "stp", "bridge0", "off"},
			wantCalls: []apitest.Call{{Op: "bridge.stp", Req: api.BridgeSTPRequest{Name: "bridge0", On: ptr(false)}}}},
		{name: "bridge stp setting only", args: []string{"bridge", "stp", "--priority", "0", "bridge0"},
			wantCalls: []apitest.Call{{Op: "bridge.stp", Req: api.BridgeSTPRequest{Name: "bridge0", Priority: ptr(0)}}}},
		{name: "bridge addspan", args: []string{"bridge", "addspan", "bridge0", "eth3"},
			wantCalls: []apitest.Call{{Op: "bridge.addspan", Req: api.AddSpanRequest{Name: "bridge0", Iface: "eth3"}}}},
		{name: "bridge delspan", args: []string{"bridge", "delspan", "bridge0", "eth3"},
			wantCalls: []apitest.Call{{Op: "bridge.delspan", Req: api.DelSpanRequest{Name: "bridge0", Iface: "eth3"}}}},
		{name: "lb create", args: []string{"lb", "create", "web", "--iface", "eth1", "--vip", "192.0.2.100"},
			wantCalls: []apitest.Call{{Op: "lb.create", Req: api.LBCreateRequest{Name: "web", Iface: "eth1", VIPs: []string{"192.0.2.100"}}}}},
		{name: "lb create every flag", args: []string{"lb", "create", "web", "--iface", "eth1", "--vip", "192.0.2.100", "--vip", "2001:db8::100", "--method", "roundrobin",
			"--health", "http:80/hz", "--interval", "500ms", "--timeout", "200ms", "--rise", "1", "--fall", "2", "--source", "192.0.2.1"},
			wantCalls: []apitest.Call{{Op: "lb.create", Req: api.LBCreateRequest{Name: "web", Iface: "eth1", VIPs: []string{"192.0.2.100", "2001:db8::100"}, Method: "roundrobin",
				Health: "http:80/hz", Interval: "500ms", Timeout: "200ms", Rise: 1, Fall: 2, Sources: []string{"192.0.2.1"}}}}},
		{name: "lb create --bridge", args: []string{"lb", "create", "web", "--bridge", "br0", "--vip", "192.0.2.100", "--health", "tcp:80"},
			wantCalls: []apitest.Call{{Op: "lb.create", Req: api.LBCreateRequest{Name: "web", Bridge: "br0", VIPs: []string{"192.0.2.100"}, Health: "tcp:80"}}}},
		{name: "lb backend add", args: []string{"lb", "backend", "add", "web", "192.0.2.11", "--weight", "2"},
			wantCalls: []apitest.Call{{Op: "lb.backend.add", Req: api.LBBackendAddRequest{Name: "web", Addr: "192.0.2.11", Weight: 2}}}},
		{name: "lb backend del", args: []string{"lb", "backend", "del", "web", "192.0.2.11"},
			wantCalls: []apitest.Call{{Op: "lb.backend.del", Req: api.LBBackendDelRequest{Name: "web", Addr: "192.0.2.11"}}}},
		{name: "lb backend drain", args: []string{"lb", "backend", "drain", "web", "192.0.2.11"},
			wantCalls: []apitest.Call{{Op: "lb.backend.drain", Req: api.LBBackendDrainRequest{Name: "web", Addr: "192.0.2.11"}}}},
		{name: "lb destroy", args: []string{"lb", "destroy", "web"},
			wantCalls: []apitest.Call{{Op: "lb.destroy", Req: api.LBDestroyRequest{Name: "web"}}}},
		{name: "trunk create defaults", args: []string{"trunk", "create", "trunk0"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0"}}}},
		{name: "trunk create every flag", args: []string{"trunk", "create", "trunk0", "--proto", "lacp", "--port", "eth1", "--port=eth2", "--promisc", "--lacp-mode", "passive", "--lacp-timeout", "fast", "--hash", "l3,l2", "--force"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1", "eth2"}, Promisc: true, LACPMode: "passive", LACPTimeout: "fast", Hash: "l3,l2", Force: true}}}},
		{name: "trunk create positional ports", args: []string{"trunk", "create", "trunk0", "eth1", "eth2", "--proto", "lacp"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1", "eth2"}}}}},
		{name: "trunk create positional ports, then --port", args: []string{"trunk", "create", "trunk0", "eth1", "--port", "eth2"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}}}},
		{name: "trunk create LACP settings, port priorities and lladdr", args: []string{"trunk", "create", "trunk0", "eth1", "--proto", "lacp",
			"--lacp-system-priority", "0", "--lacp-key", "7", "--priority", "3", "--lacp-port-priority", "100", "--lladdr", "02:5e:00:00:00:09"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1"},
				LACPSystemPriority: ptr(0), LACPKey: ptr(7), Priority: ptr(3), LACPPortPriority: ptr(100), LLAddr: "02:5e:00:00:00:09"}}}},
		{name: "trunk create multicast lladdr", args: []string{"trunk", "create", "t0", "--lladdr", "01:00:5e:00:00:01"}, wantCode: 2,
			wantStderr: "swctl: t0: create: lladdr: 01:00:5e:00:00:01 is a multicast or broadcast MAC, not a station address\n"},
		{name: "trunk create malformed lladdr", args: []string{"trunk", "create", "t0", "--lladdr", "02:00"}, wantCode: 2,
			wantStderr: "swctl: t0: create: \"02:00\" is not a MAC address (want aa:bb:cc:dd:ee:ff)\n"},
		{name: "trunk create lacp-key too large", args: []string{"trunk", "create", "t0", "--lacp-key", "65536"}, wantCode: 2,
			wantStderr: "swctl: t0: create: lacp-key 65536 out of range (0 to 65535, 0 = derive)\n"},
		{name: "trunk create --port with a comma is one name", args: []string{"trunk", "create", "--port", "eth1,eth2", "trunk0"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1,eth2"}}}}},
		{name: "trunk destroy", args: []string{"trunk", "destroy", "trunk0", "-o", "json"},
			wantCalls: []apitest.Call{{Op: "trunk.destroy", Req: api.TrunkDestroyRequest{Name: "trunk0"}}}},
		{name: "trunk add", args: []string{"trunk", "add", "trunk0", "eth3", "eth4"},
			wantCalls: []apitest.Call{{Op: "trunk.add", Req: api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth3", "eth4"}}}}},
		{name: "trunk add priorities", args: []string{"trunk", "add", "trunk0", "eth3", "--priority", "10", "--lacp-port-priority", "0"},
			wantCalls: []apitest.Call{{Op: "trunk.add", Req: api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth3"}, Priority: ptr(10), LACPPortPriority: ptr(0)}}}},
		{name: "trunk add --force", args: []string{"trunk", "add", "trunk0", "eth0", "--force"},
			wantCalls: []apitest.Call{{Op: "trunk.add", Req: api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth0"}, Force: true}}}},
		{name: "trunk del refused by the daemon, json", args: []string{"trunk", "del", "trunk0", "eth3", "eth9", "-o", "json"}, wantCode: 1,
			wantStderr: "{\"error\":\"trunk0: del eth9: not a port of this trunk\"}\n",
			wantCalls:  []apitest.Call{{Op: "trunk.del", Req: api.TrunkDelRequest{Name: "trunk0", Ifaces: []string{"eth3", "eth9"}}}}},
		{name: "trunk set every flag", args: []string{"trunk", "set", "trunk0", "--proto", "loadbalance", "--lacp-mode", "active", "--lacp-timeout", "slow", "--lacp-system-priority", "0", "--lacp-key", "7", "--hash", "l4"},
			wantCalls: []apitest.Call{{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", Proto: ptr("loadbalance"), LACPMode: ptr("active"), LACPTimeout: ptr("slow"), Hash: ptr("l4"), LACPSystemPriority: ptr(0), LACPKey: ptr(7)}}}},
		{name: "trunk set --promisc", args: []string{"trunk", "set", "trunk0", "--promisc", "on"},
			wantCalls: []apitest.Call{{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", Promisc: ptr(true)}}}},
		{name: "trunk set --promisc off", args: []string{"trunk", "set", "trunk0", "--promisc=off"},
			wantCalls: []apitest.Call{{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", Promisc: ptr(false)}}}},
		{name: "trunk set bad --promisc", args: []string{"trunk", "set", "t0", "--promisc", "yes"}, wantCode: 2,
			wantStderr: "swctl: --promisc: want on or off, got \"yes\"\n"},
		{name: "trunk set key 0", args: []string{"trunk", "set", "trunk0", "--lacp-key", "0"},
			wantCalls: []apitest.Call{{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", LACPKey: ptr(0)}}}},
		{name: "trunk create link policy", args: []string{"trunk", "create", "trunk0", "--updelay", "200", "--downdelay", "0", "--min-links", "2", "--preempt", "off"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", UpDelay: ptr(200), DownDelay: ptr(0), MinLinks: ptr(2), Preempt: ptr(false)}}}},
		{name: "trunk create queue settings", args: []string{"trunk", "create", "trunk0", "--tx-queue-bytes", "65536", "--tx-queue-delay", "5", "--tx-queue-target", "off", "--tx-queue-super-frames", "on", "--send-buffer", "4194304"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Queue: &config.TrunkQueue{TxQueueBytes: 65536, TxQueueDelay: 5, TxQueueTarget: config.QueueOff, SuperFrames: true, SendBuffer: 4194304}}}}},
		{name: "trunk create no backlog", args: []string{"trunk", "create", "trunk0", "--tx-queue-bytes=off"},
			wantCalls: []apitest.Call{{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Queue: &config.TrunkQueue{TxQueueBytes: config.QueueOff}}}}},
		{name: "trunk create tx-queue-delay out of range", args: []string{"trunk", "create", "t0", "--tx-queue-delay", "1001"}, wantCode: 2,
			wantStderr: "swctl: t0: create: tx-queue-delay 1001 out of range (0 to 1000 ms, 0 = 20 ms)\n"},
		{name: "trunk create send-buffer off is not a value", args: []string{"trunk", "create", "t0", "--send-buffer", "off"}, wantCode: 2,
			wantStderr: "swctl: t0: create: send-buffer: \"off\" is not a number\n"},
		{name: "trunk create target not below the delay", args: []string{"trunk", "create", "t0", "--tx-queue-delay", "2", "--tx-queue-target", "2000"}, wantCode: 2,
			wantStderr: "swctl: t0: create: tx-queue-target 2000 us: not below tx-queue-delay 2 ms\n"},
		{name: "trunk set link policy", args: []string{"trunk", "set", "trunk0", "--preempt=on", "--min-links", "0", "--updelay", "3600000"},
			wantCalls: []apitest.Call{{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", UpDelay: ptr(3600000), MinLinks: ptr(0), Preempt: ptr(true)}}}},
		{name: "trunk port priority", args: []string{"trunk", "port", "trunk0", "eth3", "--priority", "0"},
			wantCalls: []apitest.Call{{Op: "trunk.port", Req: api.TrunkPortRequest{Name: "trunk0", Iface: "eth3", Priority: ptr(0)}}}},
		{name: "trunk port LACP port priority 0", args: []string{"trunk", "port", "trunk0", "eth3", "--lacp-port-priority", "0"},
			wantCalls: []apitest.Call{{Op: "trunk.port", Req: api.TrunkPortRequest{Name: "trunk0", Iface: "eth3", LACPPortPriority: ptr(0)}}}},
		{name: "--version answers without the daemon", args: []string{"--version"},
			wantStdout: versionLine("swctl", api.Build()) + "\n"},
		{name: "--version with a word that is no command", args: []string{"--version", "explode"}, wantCode: 2,
			wantStderr: "swctl: --version takes no command (see \"swctl version\")\n"},
		{name: "version", args: []string{"version", "-o", "json"}, wantCalls: []apitest.Call{{Op: "version"}},
			wantStdout: "CONTAINS \"daemon\": {\n    \"version\": \"v0.1.0\""},

		// Usage errors: caught before the daemon is asked.
		{name: "missing arguments", args: []string{"bridge", "add", "bridge0"}, wantCode: 2,
			wantStderr: "swctl: bridge add: missing arguments (usage: swctl bridge add NAME IFACE...)\n"},
		{name: "missing arguments json", args: []string{"bridge", "addr", "-o", "json"}, wantCode: 2,
			wantStderr: "{\"error\":\"bridge addr: missing arguments (usage: swctl bridge addr NAME)\"}\n"},
		{name: "too many arguments", args: []string{"bridge", "create", "a", "b"}, wantCode: 2,
			wantStderr: "swctl: bridge create: too many arguments (usage: swctl bridge create NAME)\n"},
		{name: "name too long", args: []string{"bridge", "create", "abcdefghijklmnop"}, wantCode: 2,
			wantStderr: "swctl: bridge name \"abcdefghijklmnop\" is 16 bytes long (at most 15)\n"},
		{name: "interface name too long", args: []string{"bridge", "add", "b0", "eth1", "abcdefghijklmnop"}, wantCode: 2,
			wantStderr: "swctl: b0: add: interface name \"abcdefghijklmnop\" is 16 bytes long (at most 15)\n"},
		{name: "malformed MAC", args: []string{"bridge", "static", "b0", "02:00:00:00:00", "eth1"}, wantCode: 2,
			wantStderr: "swctl: b0: static: \"02:00:00:00:00\" is not a MAC address (want aa:bb:cc:dd:ee:ff)\n"},
		{name: "malformed MAC json", args: []string{"bridge", "deladdr", "b0", "nope", "-o", "json"}, wantCode: 2,
			wantStderr: "{\"error\":\"b0: deladdr: \\\"nope\\\" is not a MAC address (want aa:bb:cc:dd:ee:ff)\"}\n"},
		{name: "multicast static", args: []string{"bridge", "static", "b0", "01:00:5e:00:00:01", "eth1"}, wantCode: 2,
			wantStderr: "swctl: b0: static 01:00:5e:00:00:01: a multicast or broadcast MAC is not a station address\n"},
		{name: "bad vlan", args: []string{"bridge", "static", "b0", "02:00:00:00:00:01", "eth1", "--vlan", "4095"}, wantCode: 2,
			wantStderr: "swctl: --vlan: vlan 4095 out of range (0 for untagged, 1 to 4094)\n"},
		{name: "bad on|off", args: []string{"bridge", "port", "b0", "eth1", "--learning", "yes"}, wantCode: 2,
			wantStderr: "swctl: --learning: want on or off, got \"yes\"\n"},
		{name: "port without flags", args: []string{"bridge", "port", "b0", "eth1"}, wantCode: 2,
			wantStderr: "swctl: b0: port eth1: no flag to change (give --learning, --discover, --blocknonip, --stack, --promisc, --stp, --edge, --autoedge, --ptp, --ifpriority, --ifcost, --storm-limit or --bpdu-guard)\n"},
		{name: "fwd-mask with BPDUs", args: []string{"bridge", "set", "b0", "--fwd-mask", "01"}, wantCode: 2,
			wantStderr: "swctl: --fwd-mask 0x0001: bit 0 (BPDUs, 01:80:c2:00:00:00: they follow the spanning tree setting) cannot be forwarded\n"},
		{name: "fwd-mask not a mask", args: []string{"bridge", "set", "b0", "--fwd-mask", "lldp"}, wantCode: 2,
			wantStderr: "swctl: --fwd-mask \"lldp\": want a 16-bit mask, such as 0x4000 (LLDP) or 0x0008 (802.1X)\n"},
		{name: "stp neither on nor off", args: []string{"bridge", "stp", "b0", "maybe"}, wantCode: 2,
			wantStderr: "swctl: stp: want on or off, got \"maybe\"\n"},
		{name: "stp without change", args: []string{"bridge", "stp", "b0"}, wantCode: 2,
			wantStderr: "swctl: b0: stp: nothing to change (give on, off, or a setting such as --priority)\n"},
		{name: "stp bad proto", args: []string{"bridge", "stp", "b0", "on", "--proto", "mstp"}, wantCode: 2,
			wantStderr: "swctl: b0: stp: protocol \"mstp\": want rstp or stp\n"},
		{name: "port bad ptp", args: []string{"bridge", "port", "b0", "eth1", "--ptp", "yes"}, wantCode: 2,
			wantStderr: "swctl: b0: port eth1: stp: ptp \"yes\": want auto, on or off\n"},
		{name: "set without settings", args: []string{"bridge", "set", "b0"}, wantCode: 2,
			wantStderr: "swctl: b0: set: nothing to set (give --timeout, --maxaddr or --fwd-mask)\n"},
		{name: "negative timeout", args: []string{"bridge", "set", "b0", "--timeout", "-1"}, wantCode: 2,
			wantStderr: "swctl: b0: set: timeout -1 out of range (0 to 1000000 seconds, 0 = never age)\n"},
		{name: "timeout not a number", args: []string{"bridge", "set", "b0", "--timeout", "4m"}, wantCode: 2,
			wantStderr: "swctl: invalid value \"4m\" for flag -timeout: parse error\n"},
		{name: "unknown flag", args: []string{"bridge", "show", "--bogus"}, wantCode: 2,
			wantStderr: "swctl: flag provided but not defined: -bogus\n"},
		{name: "bad -o", args: []string{"bridge", "show", "-o", "yaml"}, wantCode: 2,
			wantStderr: "swctl: -o: want json or text, got \"yaml\"\n"},
		{name: "unknown command", args: []string{"bridge", "explode"}, wantCode: 2,
			wantStderr: "swctl: unknown command \"swctl bridge explode\" (see \"swctl bridge --help\")\n"},
		{name: "trunk bad proto", args: []string{"trunk", "create", "t0", "--proto", "bonding"}, wantCode: 2,
			wantStderr: "swctl: t0: create: proto \"bonding\": want failover, roundrobin, loadbalance, broadcast, lacp or none\n"},
		{name: "trunk empty proto", args: []string{"trunk", "create", "t0", "--proto", ""}, wantCode: 2,
			wantStderr: "swctl: --proto: empty value\n"},
		{name: "trunk bad hash", args: []string{"trunk", "create", "t0", "--hash", "l2,l5"}, wantCode: 2,
			wantStderr: "swctl: t0: create: hash \"l2,l5\": unknown field \"l5\" (want a comma-separated list of l2, l3, l4)\n"},
		{name: "trunk bad lacp mode", args: []string{"trunk", "create", "t0", "--lacp-mode", "on", "-o", "json"}, wantCode: 2,
			wantStderr: "{\"error\":\"t0: create: lacp-mode \\\"on\\\": want active or passive\"}\n"},
		{name: "trunk bad lacp timeout", args: []string{"trunk", "set", "t0", "--lacp-timeout", "3s"}, wantCode: 2,
			wantStderr: "swctl: t0: set: lacp-timeout \"3s\": want slow or fast\n"},
		{name: "trunk set bad hash", args: []string{"trunk", "set", "t0", "--hash", "l2,l2"}, wantCode: 2,
			wantStderr: "swctl: t0: set: hash \"l2,l2\": l2 given twice\n"},
		{name: "trunk name too long", args: []string{"trunk", "create", "abcdefghijklmnop"}, wantCode: 2,
			wantStderr: "swctl: trunk name \"abcdefghijklmnop\" is 16 bytes long (at most 15)\n"},
		{name: "trunk port name too long", args: []string{"trunk", "create", "t0", "--port", "abcdefghijklmnop"}, wantCode: 2,
			wantStderr: "swctl: t0: port: interface name \"abcdefghijklmnop\" is 16 bytes long (at most 15)\n"},
		{name: "trunk add itself", args: []string{"trunk", "add", "t0", "eth1", "t0"}, wantCode: 2,
			wantStderr: "swctl: t0: add t0: is the trunk itself\n"},
		{name: "trunk add missing arguments", args: []string{"trunk", "add", "t0"}, wantCode: 2,
			wantStderr: "swctl: trunk add: missing arguments (usage: swctl trunk add NAME IFACE...)\n"},
		{name: "trunk add priority too large", args: []string{"trunk", "add", "t0", "eth1", "--priority", "65536"}, wantCode: 2,
			wantStderr: "swctl: t0: add: priority 65536 out of range (0 to 65535)\n"},
		{name: "trunk add priority not a number", args: []string{"trunk", "add", "t0", "eth1", "--priority", "high"}, wantCode: 2,
			wantStderr: "swctl: invalid value \"high\" for flag -priority: parse error\n"},
		{name: "trunk set nothing", args: []string{"trunk", "set", "t0"}, wantCode: 2,
			wantStderr: "swctl: t0: set: nothing to set (give --proto, --lacp-mode, --lacp-timeout, --lacp-system-priority, --lacp-key, --hash, --updelay, --downdelay, --min-links, --preempt or --promisc)\n"},
		{name: "trunk set bad preempt", args: []string{"trunk", "set", "t0", "--preempt", "no"}, wantCode: 2,
			wantStderr: "swctl: --preempt: want on or off, got \"no\"\n"},
		{name: "trunk create updelay negative", args: []string{"trunk", "create", "t0", "--updelay", "-1"}, wantCode: 2,
			wantStderr: "swctl: t0: create: updelay -1 out of range (0 to 3600000 ms, 0 = at once)\n"},
		{name: "trunk set downdelay too long", args: []string{"trunk", "set", "t0", "--downdelay", "3600001"}, wantCode: 2,
			wantStderr: "swctl: t0: set: downdelay 3600001 out of range (0 to 3600000 ms, 0 = at once)\n"},
		{name: "trunk set updelay with a unit", args: []string{"trunk", "set", "t0", "--updelay", "200ms"}, wantCode: 2,
			wantStderr: "swctl: invalid value \"200ms\" for flag -updelay: parse error\n"},
		{name: "trunk set min-links too large", args: []string{"trunk", "set", "t0", "--min-links", "65", "-o", "json"}, wantCode: 2,
			wantStderr: "{\"error\":\"t0: set: min-links 65 out of range (0 to 64)\"}\n"},
		{name: "trunk port without priority", args: []string{"trunk", "port", "t0", "eth1"}, wantCode: 2,
			wantStderr: "swctl: t0: port eth1: nothing to set (give --priority or --lacp-port-priority)\n"},
		{name: "trunk port priority too large", args: []string{"trunk", "port", "t0", "eth1", "--priority", "65536"}, wantCode: 2,
			wantStderr: "swctl: t0: port eth1: priority 65536 out of range (0 to 65535)\n"},
		{name: "trunk port missing interface", args: []string{"trunk", "port", "t0", "--priority", "1"}, wantCode: 2,
			wantStderr: "swctl: trunk port: missing arguments (usage: swctl trunk port NAME IFACE)\n"},
		{name: "trunk set key out of range", args: []string{"trunk", "set", "t0", "--lacp-key", "-1"}, wantCode: 2,
			wantStderr: "swctl: t0: set: lacp-key -1 out of range (0 to 65535, 0 = derive)\n"},
		{name: "trunk show too many arguments", args: []string{"trunk", "show", "a", "b"}, wantCode: 2,
			wantStderr: "swctl: trunk show: too many arguments (usage: swctl trunk show [NAME])\n"},
		{name: "trunk unknown command", args: []string{"trunk", "explode"}, wantCode: 2,
			wantStderr: "swctl: unknown command \"swctl trunk explode\" (see \"swctl trunk --help\")\n"},
		{name: "daemon workers out of range", args: []string{"daemon", "--workers", "0"}, wantCode: 2,
			wantStderr: "swctl: --workers: want 1-64, got 0\n"},
		{name: "daemon tx mode unknown", args: []string{"daemon", "--tx", "pigeon"}, wantCode: 2,
			wantStderr: "swctl: --tx: want ring or mmsg, got \"pigeon\"\n"},
		{name: "daemon rx ring too large", args: []string{"daemon", "--rx-ring", "2048"}, wantCode: 2,
			wantStderr: "swctl: --rx-ring: want 1-1024 MiB, got 2048\n"},
		{name: "daemon coalesce too long", args: []string{"daemon", "--coalesce", "20ms"}, wantCode: 2,
			wantStderr: "swctl: --coalesce: want 0-10ms, got 20ms\n"},
		{name: "daemon idle timeout too short", args: []string{"daemon", "--idle-timeout", "10ms"}, wantCode: 2,
			wantStderr: "swctl: --idle-timeout: want 1s-24h, got 10ms\n"},
		{name: "daemon max clients 0", args: []string{"daemon", "--max-clients", "0"}, wantCode: 2,
			wantStderr: "swctl: --max-clients: want 1-10000, got 0\n"},
		{name: "request timeout 0", args: []string{"bridge", "flush", "bridge0", "--request-timeout", "0s"}, wantCode: 2,
			wantStderr: "swctl: --request-timeout: want a positive duration, got 0s\n"},
		{name: "unknown top-level command", args: []string{"explode", "-o", "json"}, wantCode: 2,
			wantStderr: "{\"error\":\"unknown command \\\"swctl explode\\\" (see \\\"swctl --help\\\")\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			path := apitest.Serve(t, fake)
			var stdout, stderr bytes.Buffer
			args := append([]string{"swctl", "--socket", path}, tt.args...)
			code := run(context.Background(), args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code: expected %d, got %d (stderr %q)", tt.wantCode, code, stderr.String())
			}
			if part, ok := strings.CutPrefix(tt.wantStdout, "CONTAINS "); ok {
				if !strings.Contains(stdout.String(), part) {
					t.Errorf("stdout: expected it to contain %q, got\n%s", part, stdout.String())
				}
			} else if stdout.String() != tt.wantStdout {
				t.Errorf("stdout:\nexpected\n%s\ngot\n%s", tt.wantStdout, stdout.String())
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr:\nexpected %q\ngot      %q", tt.wantStderr, stderr.String())
			}
			if calls := fake.Recorded(); !reflect.DeepEqual(calls, tt.wantCalls) {
				t.Errorf("daemon calls:\nexpected %+v\ngot      %+v", tt.wantCalls, calls)
			}
		})
	}
}

func TestCLIWithoutDaemon(t *testing.T) {
	path := apitest.SocketPath(t)
	want := "cannot reach the daemon at " + path + ": connect: no such file or directory (is `swctl daemon` running?)"
	wantJSON := `{"error":"` + strings.ReplaceAll(want, `"`, `\"`) + "\"}\n"
	build := api.Build()
	tests := []struct {
		name       string
		args       []string
		wantStdout string // "CONTAINS x" for output that contains x
		wantStderr string
	}{
		{"text", []string{"bridge", "show"}, "", "swctl: " + want + "\n"},
		{"json", []string{"bridge", "show", "-o", "json"}, "", wantJSON},
		// The binary's own version is still printed.
		{"version", []string{"version"}, formatted(t, versionOutput{VersionInfo: build}), "swctl: " + want + "\n"},
		{"version json", []string{"version", "-o", "json"}, "CONTAINS \"daemon_error\": \"cannot reach the daemon", wantJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl", "--socket", path}, tt.args...), &stdout, &stderr)
			if code != 1 {
				t.Errorf("exit code: expected 1, got %d", code)
			}
			if part, ok := strings.CutPrefix(tt.wantStdout, "CONTAINS "); ok {
				if !strings.Contains(stdout.String(), part) {
					t.Errorf("stdout: expected it to contain %q, got\n%s", part, stdout.String())
				}
			} else if stdout.String() != tt.wantStdout {
				t.Errorf("stdout:\nexpected %q\ngot      %q", tt.wantStdout, stdout.String())
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr:\nexpected %q\ngot      %q", tt.wantStderr, stderr.String())
			}
		})
	}
}

// formatted is formatVersion's text for v.
func formatted(t *testing.T, v versionOutput) string {
	var b bytes.Buffer
	if err := formatVersion(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// gatedFake is a fake daemon whose bridge create holds the handler until
// gate is closed.
type gatedFake struct {
	*apitest.Fake
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedFake) Change(ctx context.Context, r api.Edit) error {
	if _, ok := r.(api.BridgeCreateRequest); ok {
		g.entered <- struct{}{}
		<-g.gate
	}
	return g.Fake.Change(ctx, r)
}

func TestCLIRequestTimeout(t *testing.T) {
	fake := &gatedFake{Fake: newFake(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	path := apitest.Serve(t, fake)
	// Another client's request holds the daemon.
	slowDone := make(chan int, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		slowDone <- run(context.Background(), []string{"swctl", "--socket", path, "bridge", "create", "slow0"}, &stdout, &stderr)
	}()
	select {
	case <-fake.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request: not in the handler after 10s")
	}

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"swctl", "--socket", path, "bridge", "add", "bridge0", "eth1", "--request-timeout", "100ms", "-o", "json"}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code: expected 1, got %d", code)
	}
	// The CLI's deadline and the daemon's refusal come at the same time:
	// either may be the reply.
	gotErr := stderr.String()
	if !strings.HasPrefix(gotErr, `{"error":"bridge.add: `) ||
		!strings.Contains(gotErr, "(no reply within 100ms, --request-timeout; the daemon refuses a request it reaches later)") &&
			!strings.Contains(gotErr, "not applied: the request's deadline passed before the daemon could serve it") {
		t.Errorf("stderr: expected the timeout or the daemon's refusal as JSON, got %q", gotErr)
	}
	close(fake.gate)
	select {
	case code := <-slowDone:
		if code != 0 {
			t.Errorf("the slow request: expected exit code 0, got %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request: not done 10s after its handler was released")
	}
	// Served after the slow one, the timed-out request would come now.
	var v bytes.Buffer
	if code := run(context.Background(), []string{"swctl", "--socket", path, "version"}, &v, &v); code != 0 {
		t.Fatalf("version: expected exit code 0, got %d: %s", code, v.String())
	}
	var got []string
	for _, c := range fake.Recorded() {
		got = append(got, c.Op)
	}
	if want := []string{"bridge.create", "version"}; !reflect.DeepEqual(got, want) {
		t.Errorf("daemon calls: expected %v (the timed-out bridge.add never applied), got %v", want, got)
	}
}

// TestBridgeAddrPages: without --limit, bridge addr fetches a large table
// page after page, each starting after the last entry of the one before,
// and writes every entry once, as one table or one JSON array.
func TestBridgeAddrPages(t *testing.T) {
	var table []api.AddrInfo
	for i := range 2*api.MaxAddrPage + 5 {
		table = append(table, api.AddrInfo{MAC: fmt.Sprintf("02:00:00:00:%02x:%02x", i>>8, i&0xff), VLAN: 1, Port: "eth1", Static: true})
	}
	wantCalls := []apitest.Call{
		{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "big"}},
		{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "big", After: &api.AddrKey{MAC: table[api.MaxAddrPage-1].MAC, VLAN: 1}}},
		{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "big", After: &api.AddrKey{MAC: table[2*api.MaxAddrPage-1].MAC, VLAN: 1}}},
	}
	for _, format := range []string{"text", "json"} {
		fake := newFake()
		fake.Addrs["big"] = table
		path := apitest.Serve(t, fake)
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"swctl", "--socket", path, "bridge", "addr", "big", "-o", format}, &stdout, &stderr); code != 0 {
			t.Fatalf("-o %s: exit code %d, want 0 (stderr %q)", format, code, stderr.String())
		}
		var got []string
		if format == "json" {
			var as []api.AddrInfo
			if err := json.Unmarshal(stdout.Bytes(), &as); err != nil {
				t.Fatalf("-o json: output is not one JSON array: %v", err)
			}
			for _, a := range as {
				got = append(got, a.MAC)
			}
		} else {
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if !strings.HasPrefix(lines[0], "MAC ") {
				t.Fatalf("-o text: first line %q, want the header", lines[0])
			}
			for _, l := range lines[1:] {
				got = append(got, strings.Fields(l)[0])
			}
		}
		var want []string
		for _, a := range table {
			want = append(want, a.MAC)
		}
		if !slices.Equal(got, want) {
			t.Errorf("-o %s: %d entries, want the %d of the table once each, in order", format, len(got), len(want))
		}
		if calls := fake.Recorded(); !reflect.DeepEqual(calls, wantCalls) {
			t.Errorf("-o %s: daemon calls:\nexpected %+v\ngot      %+v", format, wantCalls, calls)
		}
	}
}

func TestSocketFromEnvironment(t *testing.T) {
	fake := newFake()
	t.Setenv("SWCTL_SOCKET", apitest.Serve(t, fake))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"swctl", "bridge", "flush", "bridge0"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code: expected 0, got %d (stderr %q)", code, stderr.String())
	}
	if calls := fake.Recorded(); len(calls) != 1 || calls[0].Op != "bridge.flush" {
		t.Errorf("daemon calls: expected one bridge.flush, got %+v", calls)
	}
}

func TestGlobalSocketAfterCommand(t *testing.T) {
	fake := newFake()
	path := apitest.Serve(t, fake)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"swctl", "bridge", "flush", "bridge0", "--socket", path}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code: expected 0, got %d (stderr %q)", code, stderr.String())
	}
	if calls := fake.Recorded(); len(calls) != 1 {
		t.Errorf("daemon calls: expected one, got %+v", calls)
	}
}

func TestReorderArgs(t *testing.T) {
	app := newApp(nil, nil)
	tests := []struct {
		in   string
		want string
	}{
		{"swctl", "swctl"},
		{"swctl bridge show", "swctl bridge show"},
		{"swctl bridge show b0 -o json", "swctl bridge show -o json -- b0"},
		{"swctl --socket /s bridge show b0 -o=json", "swctl --socket /s bridge show -o=json -- b0"},
		{"swctl bridge show b0 --socket /s", "swctl --socket /s bridge show -- b0"},
		{"swctl bridge create b0 --local -o json", "swctl bridge create --local -o json -- b0"},
		{"swctl bridge set b0 --timeout -1", "swctl bridge set --timeout -1 -- b0"},
		{"swctl bridge add b0 -- -weird", "swctl bridge add -- b0 -weird"},
		{"swctl trunk create t0 --port eth1 --promisc --port eth2", "swctl trunk create --port eth1 --promisc --port eth2 -- t0"},
		{"swctl trunk add t0 eth1 --priority 10 eth2", "swctl trunk add --priority 10 -- t0 eth1 eth2"},
		{"swctl daemon --socket /s", "swctl daemon --socket /s"},
		{"swctl nosuch -x y", "swctl nosuch -x y"},
	}
	for _, tt := range tests {
		got := strings.Join(reorderArgs(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("reorderArgs(%q):\nexpected %q\ngot      %q", tt.in, tt.want, got)
		}
	}
}

// helpOf returns the help of the command at path, as "swctl PATH --help"
// prints it.
func helpOf(t *testing.T, path ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append(append([]string{"swctl"}, path...), "--help"), &stdout, &stderr); code != 0 {
		t.Fatalf("swctl %s --help: exit code %d (stderr %q)", strings.Join(path, " "), code, stderr.String())
	}
	return stdout.String()
}

// helpLine returns the line of help that describes --flag.
func helpLine(help, flag string) string {
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "--"+flag {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func TestHelpDefaults(t *testing.T) {
	tests := []struct {
		cmd         string
		flag        string
		wantDefault string // "" when omitting the flag changes nothing
	}{
		{"bridge set", "timeout", ""},
		{"bridge set", "maxaddr", ""},
		{"bridge deladdr", "vlan", ""},
		{"bridge static", "vlan", "0"},
		{"trunk add", "priority", "0"},
		{"trunk add", "lacp-port-priority", "32768"},
		{"trunk create", "proto", "failover"},
		{"trunk create", "lacp-mode", "active"},
		{"trunk create", "lacp-timeout", "slow"},
		{"trunk create", "hash", "l2,l3,l4"},
		{"trunk create", "updelay", "0"},
		{"trunk create", "preempt", "on"},
		{"trunk set", "lacp-system-priority", ""},
		{"trunk set", "lacp-key", ""},
		{"trunk set", "updelay", ""},
		{"trunk set", "min-links", ""},
		{"trunk set", "preempt", ""},
		{"trunk port", "priority", ""},
		{"trunk port", "lacp-port-priority", ""},
	}
	for _, tt := range tests {
		line := helpLine(helpOf(t, strings.Fields(tt.cmd)...), tt.flag)
		if line == "" {
			t.Errorf("swctl %s --help: no line for --%s", tt.cmd, tt.flag)
			continue
		}
		n := strings.Count(line, "(default")
		switch {
		case tt.wantDefault == "" && n != 0:
			t.Errorf("swctl %s --help: expected --%s without a default, got %q", tt.cmd, tt.flag, line)
		case tt.wantDefault != "" && (n != 1 || !strings.HasSuffix(line, "(default: "+tt.wantDefault+")")):
			t.Errorf("swctl %s --help: expected --%s to end in one \"(default: %s)\", got %q", tt.cmd, tt.flag, tt.wantDefault, line)
		}
	}
}

// TestHelpDefaultsOnce checks every command's help: no flag states its
// default twice, and no flag of a set or port command, which change only
// what is given, claims one.
func TestHelpDefaultsOnce(t *testing.T) {
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(slices.Clone(path), c.Name)
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
				continue
			}
			for _, l := range strings.Split(helpOf(t, p...), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "--output") || strings.HasPrefix(strings.TrimSpace(l), "--help") {
					continue
				}
				n := strings.Count(l, "(default")
				if n > 1 || (n > 0 && (c.Name == "set" || c.Name == "port")) {
					t.Errorf("swctl %s --help: %q", strings.Join(p, " "), strings.TrimSpace(l))
				}
			}
		}
	}
	walk(nil, newApp(nil, nil).Commands)
}

// TestGroupHelpUsage checks the usage line of each group of subcommands:
// it names the group and a COMMAND.
func TestGroupHelpUsage(t *testing.T) {
	for _, c := range newApp(nil, nil).Commands {
		if len(c.Subcommands) == 0 || c.Hidden {
			continue
		}
		help := helpOf(t, c.Name)
		want := "USAGE:\n   swctl " + c.Name + " COMMAND [command options] [arguments...]\n"
		if !strings.Contains(help, want) {
			t.Errorf("swctl %s --help: expected the usage %q, got\n%s", c.Name, want, help)
		}
	}
}
