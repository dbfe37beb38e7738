package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/api"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func ptr[T any](v T) *T { return &v }

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\nexpected\n%s\ngot\n%s", path, want, got)
	}
}

var testBridges = []api.BridgeInfo{
	{
		Name: "bridge0", Timeout: 240, MaxAddr: 8192, Local: "bridge0", LocalMAC: "02:5e:00:12:34:56",
		Ports: []api.BridgePortInfo{
			{Name: "eth1", Flags: []string{"learning", "discover", "-promisc"}, Link: "up"},
			{Name: "veth-long-name", Flags: []string{"discover", "blocknonip", "stack"}, Link: "absent"},
			{Name: "eth2", Link: "down"},
		},
		Spans: []string{"eth3", "eth4"}, Addresses: 3, Exceeded: 1, Forwarded: 1000, Flooded: 20, Dropped: 2,
	},
	{Name: "br1", Timeout: 0, MaxAddr: 16},
}

// testSTPBridges run spanning trees: bridge0 is not the root, and has a
// member that takes no part and one absent; core is the root.
var testSTPBridges = []api.BridgeInfo{
	{
		Name: "bridge0", Timeout: 240, MaxAddr: 8192, FwdMask: 0x4000,
		STP: &api.STPInfo{
			Proto: "rstp", Priority: 32768, HelloTime: 2, FwdDelay: 15, MaxAge: 20, HoldCount: 6,
			BridgeID: "8000.025e00123456", Root: "1000.020000000099", RootPathCost: 4000, RootPort: "eth1",
			RootMaxAge: 20, RootFwdDelay: 15, TopologyChanges: 3, TopologyChange: true, SinceTopologyChange: ptr(int64(12)),
		},
		Ports: []api.BridgePortInfo{
			{Name: "eth1", Flags: []string{"learning", "discover"}, Link: "up", STP: &api.PortSTPInfo{
				Enabled: true, AutoEdge: true, PTP: "auto", Priority: 128, PortID: "8001", Role: "root", State: "forwarding",
				PointToPoint: true, PathCost: 2000, Protocol: "rstp", DesignatedRoot: "1000.020000000099",
				DesignatedBridge: "8000.020000000042", DesignatedPort: "8003", DesignatedCost: 2000, BPDUsIn: 120, BPDUsOut: 4,
			}},
			{Name: "eth2", Flags: []string{"learning", "discover"}, Link: "up", STP: &api.PortSTPInfo{
				Enabled: true, AutoEdge: true, PTP: "auto", Priority: 128, PortID: "8002", Role: "alternate", State: "discarding",
				PathCost: 2000, Protocol: "stp", DesignatedRoot: "1000.020000000099", DesignatedBridge: "8000.020000000007",
				DesignatedPort: "8001", DesignatedCost: 2000, BPDUsIn: 60, BPDUsOut: 3, BPDUsBad: 1,
			}},
			{Name: "eth3", Flags: []string{"learning", "discover"}, Link: "up", STP: &api.PortSTPInfo{
				AutoEdge: true, PTP: "auto", Priority: 128, PortID: "8003", Role: "disabled", State: "forwarding", PathCost: 2000, Protocol: "rstp",
			}},
			{Name: "eth4", Flags: []string{"learning", "discover"}, Link: "absent", STP: &api.PortSTPInfo{
				Enabled: true, AdminEdge: true, PTP: "on", Priority: 64, Cost: 100, Role: "disabled", State: "discarding",
			}},
		},
	},
	{
		Name: "core", Timeout: 240, MaxAddr: 8192,
		STP: &api.STPInfo{
			Proto: "stp", Priority: 4096, HelloTime: 1, FwdDelay: 4, MaxAge: 6, HoldCount: 6,
			BridgeID: "1000.020000000099", Root: "1000.020000000099", IsRoot: true, RootMaxAge: 6, RootFwdDelay: 4,
		},
	},
}

var testAddrs = []api.AddrInfo{
	{MAC: "02:00:00:00:00:01", VLAN: 0, Port: "eth1", Age: ptr(int64(12))},
	{MAC: "02:00:00:00:00:02", VLAN: 4094, Port: "veth-long-name", Age: ptr(int64(0))},
	{MAC: "02:00:00:00:00:03", VLAN: 10, Port: "eth1", Static: true},
}

var testPorts = []api.PortInfo{
	{Name: "eth1", Bridge: "bridge0", Role: "member", Link: "up", Promisc: true, RxPackets: 1234567, RxBytes: 987654321, TxPackets: 3, TxBytes: 4, RxDropped: 5, RxBadOffload: 2, TxDropped: 6, RingDropped: 7, Errors: 8},
	{Name: "eth3", Bridge: "bridge0", Role: "span", Link: "down"},
	{Name: "bridge0", Bridge: "bridge0", Role: "local", Link: "up"},
	{Name: "gone0", Bridge: "bridge0", Role: "member", Link: "absent"},
	{Name: "eth5", Bridge: "trunk0", Role: "trunk", Link: "up", Promisc: false, RxPackets: 10, RxBytes: 1000, TxPackets: 20, TxBytes: 2000},
	{Name: "eth9", Bridge: "mirror0", Role: "some-future-role", Link: "down"},
}

var testTrunks = []api.TrunkInfo{
	{
		Name: "trunk0", Proto: "lacp", LLAddr: "02:5e:00:12:34:57", Hash: "l2,l3,l4", LACPMode: "active", LACPTimeout: "fast",
		LACPSystemPriority: 32768, LACPKey: 0, Active: true, Tap: "trunk0", MinLinks: 2, Preempt: true,
		Ports: []api.TrunkPortInfo{
			{Name: "eth5", Link: "up", Priority: 10, Flags: []string{"active", "collecting", "distributing"}, LACP: &api.LACPInfo{
				Actor:    api.LACPPeerInfo{System: "32768,02:5e:00:12:34:57", Key: 1, Port: 1, State: []string{"activity", "timeout", "aggregation", "synchronization", "collecting", "distributing"}},
				Partner:  api.LACPPeerInfo{System: "32768,02:00:00:00:00:aa", Key: 9, Port: 3, State: []string{"activity", "aggregation", "synchronization", "collecting", "distributing"}},
				Selected: true, RxLACPDUs: 100, TxLACPDUs: 101,
			}, RxPackets: 600, RxBytes: 90000, TxPackets: 500, TxBytes: 70000, RxControl: 100, RxDropped: 4, RxBadOffload: 1, TxDropped: 1, RingDropped: 7,
				TxQueueLimit: 1048576, TxQueueBytes: 4500, TxQueueOverflow: 12, TxQueueStale: 3},
			{Name: "eth6", Link: "up", Flags: []string{}, LACP: &api.LACPInfo{
				Actor:   api.LACPPeerInfo{System: "32768,02:5e:00:12:34:57", Key: 1, Port: 2, State: []string{"activity", "timeout", "aggregation"}},
				Partner: api.LACPPeerInfo{System: "100,02:00:00:00:00:bb", Key: 4, Port: 1, State: []string{"activity", "aggregation", "synchronization"}},
				Reason:  "partner differs from the aggregator's", RxLACPDUs: 7, TxLACPDUs: 8, RxBad: 2,
			}, RxPackets: 12, RxBytes: 1500, TxPackets: 8, TxBytes: 1000, RxRefused: 3, RxControl: 9, Errors: 2},
			{Name: "veth-long-name", Link: "absent", Flags: []string{}, LACP: &api.LACPInfo{
				Actor:   api.LACPPeerInfo{System: "32768,02:5e:00:12:34:57", Key: 1, Port: 3, State: []string{"activity", "timeout", "aggregation", "defaulted"}},
				Partner: api.LACPPeerInfo{State: []string{}},
				Reason:  "link down",
			}},
		},
		RxPackets: 1000, RxBytes: 150000, TxPackets: 900, TxBytes: 120000, RxDropped: 3, TxDropped: 1,
		Queue: api.TrunkQueueInfo{TxQueueBytes: 1048576, TxQueueDelayMS: 20, TxQueueTargetUS: 1000},
	},
	{
		Name: "trunk1", Proto: "failover", LLAddr: "02:00:00:00:00:07", Promisc: true, Hash: "l2,l3,l4", LACPMode: "active", LACPTimeout: "slow",
		LACPSystemPriority: 32768, LACPKey: 5, Active: true, Tap: "tap3", Announced: 4,
		UpDelay: 200, DownDelay: 50, Preempt: false,
		Queue: api.TrunkQueueInfo{TxQueueBytes: 524288, TxQueueDelayMS: 5, SuperFrames: true, SendBuffer: 4194304},
		Ports: []api.TrunkPortInfo{
			{Name: "eth7", Link: "up", Priority: 100, Flags: []string{"master", "active", "collecting", "distributing"},
				RxPackets: 20, RxBytes: 2400, TxPackets: 24, TxBytes: 2900},
			{Name: "eth8", Link: "down", Flags: []string{}, RxPackets: 5, RxBytes: 600, RxRefused: 5},
		},
		RxPackets: 20, RxBytes: 2400, TxPackets: 24, TxBytes: 2900, RxDropped: 5,
	},
	{Name: "trunk2", Proto: "roundrobin", Hash: "l3,l4", LACPMode: "passive", LACPTimeout: "slow", LACPSystemPriority: 1, Preempt: true},
}

var testVersion = versionOutput{
	VersionInfo: api.VersionInfo{Version: "v0.1.0", Revision: "0123abcd", Go: "go1.26.0", Protocol: 1},
	Daemon:      &api.VersionInfo{Version: "v0.1.0", Go: "go1.26.0", Protocol: 1},
}

func TestFormat(t *testing.T) {
	tests := []struct {
		golden string
		format func(w *bytes.Buffer) error
	}{
		{"bridge-show.txt", func(w *bytes.Buffer) error { return formatBridges(w, testBridges) }},
		{"bridge-show-none.txt", func(w *bytes.Buffer) error { return formatBridges(w, nil) }},
		{"bridge-show.json", func(w *bytes.Buffer) error { return writeJSON(w, testBridges) }},
		{"bridge-show-stp.txt", func(w *bytes.Buffer) error { return formatBridges(w, testSTPBridges) }},
		{"bridge-show-stp.json", func(w *bytes.Buffer) error { return writeJSON(w, testSTPBridges) }},
		{"bridge-addr.txt", func(w *bytes.Buffer) error { return formatAddrs(w, testAddrs) }},
		{"bridge-addr-empty.txt", func(w *bytes.Buffer) error { return formatAddrs(w, nil) }},
		{"bridge-addr.json", func(w *bytes.Buffer) error { return writeJSON(w, testAddrs) }},
		{"port-show.txt", func(w *bytes.Buffer) error { return formatPorts(w, testPorts) }},
		{"port-show.json", func(w *bytes.Buffer) error { return writeJSON(w, testPorts) }},
		{"trunk-show.txt", func(w *bytes.Buffer) error { return formatTrunks(w, testTrunks) }},
		{"trunk-show-none.txt", func(w *bytes.Buffer) error { return formatTrunks(w, nil) }},
		{"trunk-show.json", func(w *bytes.Buffer) error { return writeJSON(w, testTrunks) }},
		{"version.txt", func(w *bytes.Buffer) error { return formatVersion(w, testVersion) }},
		{"version-no-daemon.txt", func(w *bytes.Buffer) error {
			return formatVersion(w, versionOutput{VersionInfo: testVersion.VersionInfo, DaemonError: "cannot reach the daemon at /x: connect: no such file or directory (is `swctl daemon` running?)"})
		}},
		{"version.json", func(w *bytes.Buffer) error { return writeJSON(w, testVersion) }},
		{"stats.txt", func(w *bytes.Buffer) error { return formatStats(w, testSamples) }},
		{"stats.json", func(w *bytes.Buffer) error { return writeJSON(w, testSamples) }},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.format(&b); err != nil {
				t.Fatalf("expected no error, got %v", err)
			}
			golden(t, tt.golden, b.Bytes())
		})
	}
}

// TestREADMEAddrSample keeps the README's sample of bridge addr equal to
// what the CLI prints for the same table.
func TestREADMEAddrSample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "    # swctl bridge addr bridge0\n"
	_, after, ok := strings.Cut(string(b), cmd)
	if !ok {
		t.Fatalf("README.md: no line %q", strings.TrimSpace(cmd))
	}
	var sample strings.Builder
	for _, l := range strings.Split(after, "\n") {
		if !strings.HasPrefix(l, "    ") {
			break
		}
		sample.WriteString(strings.TrimPrefix(l, "    ") + "\n")
	}
	var got bytes.Buffer
	if err := formatAddrs(&got, []api.AddrInfo{
		{MAC: "02:00:00:00:00:10", Port: "eth1", Static: true},
		{MAC: "02:00:00:00:00:22", Port: "eth2", Age: ptr(int64(3))},
	}); err != nil {
		t.Fatal(err)
	}
	if sample.String() != got.String() {
		t.Errorf("README.md sample of bridge addr:\n%s\nthe CLI prints:\n%s", sample.String(), got.String())
	}
}
