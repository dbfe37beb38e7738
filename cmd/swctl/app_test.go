package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/api/apitest"
)

func newFake() *apitest.Fake {
	return &apitest.Fake{
		Bridges:     testBridges,
		Addrs:       map[string][]api.AddrInfo{"bridge0": testAddrs, "br1": nil},
		Ports:       testPorts,
		VersionInfo: *testVersion.Daemon,
		Errs: map[string]error{
			api.OpBridgeAdd: errors.New("bridge0: add eth9: no such interface"),
		},
	}
}

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
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: "bridge0"}}},
		{name: "bridge addr json", args: []string{"bridge", "addr", "bridge0", "-o", "json"}, wantStdout: readGolden("bridge-addr.json"),
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: "bridge0"}}},
		{name: "bridge addr empty json", args: []string{"bridge", "addr", "br1", "-o", "json"}, wantStdout: "[]\n",
			wantCalls: []apitest.Call{{Op: "bridge.addr", Req: "br1"}}},
		{name: "port show text", args: []string{"port", "show"}, wantStdout: readGolden("port-show.txt"),
			wantCalls: []apitest.Call{{Op: "port.show", Req: ""}}},
		{name: "port show json", args: []string{"port", "show", "-o", "json"}, wantStdout: readGolden("port-show.json"),
			wantCalls: []apitest.Call{{Op: "port.show", Req: ""}}},
		{name: "port show one", args: []string{"port", "show", "gone0"}, wantStdout: "NAME   BRIDGE   LINK    PROMISC  RX-PKTS  RX-BYTES  TX-PKTS  TX-BYTES  RX-DROP  TX-DROP  RING-DROP  ERRORS\ngone0  bridge0  absent  no       0        0         0        0         0        0        0          0\n",
			wantCalls: []apitest.Call{{Op: "port.show", Req: "gone0"}}},

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
		{name: "bridge del", args: []string{"bridge", "del", "bridge0", "eth1", "eth2"},
			wantCalls: []apitest.Call{{Op: "bridge.del", Req: api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}}}},
		{name: "bridge static --vlan", args: []string{"bridge", "static", "bridge0", "02:00:00:00:00:01", "eth1", "--vlan", "10"},
			wantCalls: []apitest.Call{{Op: "bridge.static", Req: api.StaticRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", Iface: "eth1", VLAN: 10}}}},
		{name: "bridge deladdr", args: []string{"bridge", "deladdr", "bridge0", "02:00:00:00:00:01"},
			wantCalls: []apitest.Call{{Op: "bridge.deladdr", Req: api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01"}}}},
		{name: "bridge deladdr --vlan 0", args: []string{"bridge", "deladdr", "bridge0", "02:00:00:00:00:01", "--vlan", "0"},
			wantCalls: []apitest.Call{{Op: "bridge.deladdr", Req: api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", VLAN: ptr(uint16(0))}}}},
		{name: "bridge flush", args: []string{"bridge", "flush", "bridge0"},
			wantCalls: []apitest.Call{{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0"}}}},
		{name: "bridge flush --all", args: []string{"bridge", "flush", "bridge0", "--all"},
			wantCalls: []apitest.Call{{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0", All: true}}}},
		{name: "bridge set both", args: []string{"bridge", "set", "bridge0", "--timeout", "0", "--maxaddr", "100"},
			wantCalls: []apitest.Call{{Op: "bridge.set", Req: api.BridgeSetRequest{Name: "bridge0", Timeout: ptr(0), MaxAddr: ptr(100)}}}},
		{name: "bridge port flags", args: []string{"bridge", "port", "bridge0", "eth1", "--learning", "off", "--stack=on"},
			wantCalls: []apitest.Call{{Op: "bridge.port", Req: api.BridgePortRequest{Name: "bridge0", Iface: "eth1", Learning: ptr(false), Stack: ptr(true)}}}},
		{name: "bridge addspan", args: []string{"bridge", "addspan", "bridge0", "eth3"},
			wantCalls: []apitest.Call{{Op: "bridge.addspan", Req: api.SpanRequest{Name: "bridge0", Iface: "eth3"}}}},
		{name: "bridge delspan", args: []string{"bridge", "delspan", "bridge0", "eth3"},
			wantCalls: []apitest.Call{{Op: "bridge.delspan", Req: api.SpanRequest{Name: "bridge0", Iface: "eth3"}}}},
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
			wantStderr: "swctl: b0: port eth1: no flag to change (give learning, discover, blocknonip or stack)\n"},
		{name: "set without settings", args: []string{"bridge", "set", "b0"}, wantCode: 2,
			wantStderr: "swctl: b0: set: nothing to set (give timeout or maxaddr)\n"},
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
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"text", []string{"bridge", "show"}, "swctl: " + want + "\n"},
		{"json", []string{"bridge", "show", "-o", "json"}, `{"error":"` + strings.ReplaceAll(want, `"`, `\"`) + "\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl", "--socket", path}, tt.args...), &stdout, &stderr)
			if code != 1 {
				t.Errorf("exit code: expected 1, got %d", code)
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr:\nexpected %q\ngot      %q", tt.wantStderr, stderr.String())
			}
		})
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
