package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/internal/metrics"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/service"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/trunk"
)

// snapshot is a small engine: a bridge with a member and a trunk with
// two members, one of them distributing.
func snapshot() metrics.Snapshot {
	return metrics.Snapshot{
		Ports: []metrics.Port{
			{Name: "eth1", Owner: "bridge0", Role: "member", Up: true, Counters: platform.Counters{
				RxPackets: 10, RxBytes: 1000, TxPackets: 20, TxBytes: 2000, RxDropped: 5, RxBadOffload: 2, TxDropped: 3, RingDropped: 4, Errors: 1}},
			{Name: "eth5", Owner: "trunk0", Role: "trunk", Up: false},
		},
		Bridges: []metrics.Bridge{{Name: "bridge0", Addresses: 7, Stats: bridge.Stats{
			Received: 100, Forwarded: 60, Flooded: 30, DroppedRunt: 1, DroppedLinkLocal: 2, DroppedOversize: 3,
			Learned: 9, Moved: 1, Aged: 2, Exceeded: 0, Sent: 95, SoftwareOffload: 4, Segments: 12},
			Capture: metrics.Capture{Sessions: 1, Queued: 30, Dropped: 6, Cut: 2},
			STP: &metrics.STP{IsRoot: false, RootPathCost: 2000, TopologyChanges: 3, Ports: []metrics.STPPort{
				{Name: "eth1", Role: "root", State: "forwarding", BPDUsIn: 40, BPDUsOut: 2},
				{Name: "eth2", Role: "alternate", State: "discarding", BPDUsIn: 39, BPDUsOut: 1},
			}}}},
		Trunks: []metrics.Trunk{{Name: "trunk0", Proto: "lacp", Active: true,
			Stats: trunk.Stats{RxPackets: 8, TxPackets: 9, RxRefused: 1, TxNoPort: 2, RxControl: 5, TxQueueOverflow: 6, TxQueueStale: 4},
			Members: []metrics.TrunkMember{
				{Name: "eth5", Collecting: true, Distributing: true, LACP: true, Selected: true},
				{Name: "eth6", LACP: true},
			}}},
		LBs: []metrics.LB{{Name: "web", Running: true, Status: service.Status{Flows: 3, Frames: 50, Bytes: 5000, NoBackend: 2, BadND: 1, ARPReplies: 4,
			Backends: []service.BackendStatus{
				{Addr: netip.MustParseAddr("192.0.2.11"), Weight: 2, State: lb.Serving, Health: "up", Frames: 30, Bytes: 3000},
				{Addr: netip.MustParseAddr("192.0.2.12"), Weight: 1, State: lb.Down, Health: "down", Frames: 20, Bytes: 2000},
			}}}},
	}
}

func newCollector() *metrics.Collector {
	return metrics.New(func() metrics.Snapshot { return snapshot() },
		metrics.Build{Version: "v1", Revision: "abc", Go: "go1.26"}, time.Now().Add(-time.Minute))
}

func TestMetricsFollowPrometheusConventions(t *testing.T) {
	problems, err := testutil.CollectAndLint(newCollector())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// TestScrapeEqualsSamples scrapes a served collector, parses the text
// with Prometheus's own parser, and checks chosen values and that every
// scraped value is what Samples (`swctl stats`) gives.
func TestScrapeEqualsSamples(t *testing.T) {
	c := newCollector()
	ln, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metrics.Serve(ctx, ln, c) }()
	t.Cleanup(func() { cancel(); <-done })
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("scrape does not parse: %v\n%s", err, body)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		fam := fams[name]
		if fam == nil {
			return 0, false
		}
	next:
		for _, m := range fam.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			if len(got) != len(labels) {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
		return 0, false
	}
	port := map[string]string{"port": "eth1", "owner": "bridge0", "role": "member"}
	with := func(m map[string]string, k, v string) map[string]string {
		n := map[string]string{k: v}
		for a, b := range m {
			n[a] = b
		}
		return n
	}
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"swctl_port_received_frames_total", port, 10},
		{"swctl_port_dropped_frames_total", with(port, "reason", "rx_invalid"), 3},
		{"swctl_port_dropped_frames_total", with(port, "reason", "rx_bad_offload"), 2},
		{"swctl_port_dropped_frames_total", with(port, "reason", "rx_ring_full"), 4},
		{"swctl_port_up", map[string]string{"port": "eth5", "owner": "trunk0", "role": "trunk"}, 0},
		{"swctl_bridge_fdb_entries", map[string]string{"bridge": "bridge0"}, 7},
		{"swctl_bridge_fdb_events_total", map[string]string{"bridge": "bridge0", "event": "aged"}, 2},
		{"swctl_bridge_dropped_frames_total", map[string]string{"bridge": "bridge0", "reason": "oversize"}, 3},
		{"swctl_bridge_capture_frames_total", map[string]string{"bridge": "bridge0", "fate": "dropped"}, 6},
		{"swctl_bridge_capture_streams_cut_total", map[string]string{"bridge": "bridge0"}, 2},
		{"swctl_trunk_members", map[string]string{"trunk": "trunk0", "state": "distributing"}, 1},
		{"swctl_trunk_member_state", map[string]string{"trunk": "trunk0", "port": "eth6", "state": "lacp_selected"}, 0},
		{"swctl_trunk_dropped_frames_total", map[string]string{"trunk": "trunk0", "reason": "tx_no_member"}, 2},
		{"swctl_trunk_dropped_frames_total", map[string]string{"trunk": "trunk0", "reason": "tx_queue_overflow"}, 6},
		{"swctl_trunk_dropped_frames_total", map[string]string{"trunk": "trunk0", "reason": "tx_queue_stale"}, 4},
		{"swctl_bridge_stp_root_path_cost", map[string]string{"bridge": "bridge0"}, 2000},
		{"swctl_bridge_stp_port_role", map[string]string{"bridge": "bridge0", "port": "eth2", "role": "alternate"}, 1},
		{"swctl_bridge_stp_port_role", map[string]string{"bridge": "bridge0", "port": "eth2", "role": "root"}, 0},
		{"swctl_bridge_stp_port_state", map[string]string{"bridge": "bridge0", "port": "eth1", "state": "forwarding"}, 1},
		{"swctl_bridge_stp_bpdus_total", map[string]string{"bridge": "bridge0", "port": "eth1", "direction": "in"}, 40},
		{"swctl_build_info", map[string]string{"version": "v1", "revision": "abc", "goversion": "go1.26"}, 1},
		{"swctl_lb_flows", map[string]string{"lb": "web"}, 3},
		{"swctl_lb_forwarded_frames_total", map[string]string{"lb": "web"}, 50},
		{"swctl_lb_dropped_frames_total", map[string]string{"lb": "web", "reason": "no_backend"}, 2},
		{"swctl_lb_dropped_frames_total", map[string]string{"lb": "web", "reason": "malformed_nd"}, 1},
		{"swctl_lb_replies_total", map[string]string{"lb": "web", "proto": "arp"}, 4},
		{"swctl_lb_backends", map[string]string{"lb": "web", "state": "all"}, 2},
		{"swctl_lb_backends", map[string]string{"lb": "web", "state": "down"}, 1},
		{"swctl_lb_backends", map[string]string{"lb": "web", "state": "draining"}, 0},
		{"swctl_lb_backend_state", map[string]string{"lb": "web", "backend": "192.0.2.12", "state": "down"}, 1},
		{"swctl_lb_backend_state", map[string]string{"lb": "web", "backend": "192.0.2.12", "state": "serving"}, 0},
		{"swctl_lb_backend_health", map[string]string{"lb": "web", "backend": "192.0.2.11", "health": "up"}, 1},
		{"swctl_lb_backend_health", map[string]string{"lb": "web", "backend": "192.0.2.11", "health": "unknown"}, 0},
		{"swctl_lb_backend_weight", map[string]string{"lb": "web", "backend": "192.0.2.11"}, 2},
		{"swctl_lb_backend_forwarded_bytes_total", map[string]string{"lb": "web", "backend": "192.0.2.12"}, 2000},
	} {
		if got, ok := value(w.name, w.labels); !ok || got != w.want {
			t.Errorf("%s%v = %v (found %v), want %v", w.name, w.labels, got, ok, w.want)
		}
	}
	samples, err := metrics.Samples(c)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range samples {
		if s.Name == "swctl_uptime_seconds" || s.Name == "swctl_goroutines" {
			continue // they move between the scrape and the samples
		}
		got, ok := value(s.Name, s.Labels)
		if !ok || got != s.Value {
			t.Errorf("sample %s%v = %v, scrape has %v (found %v)", s.Name, s.Labels, s.Value, got, ok)
		}
		n++
	}
	total := 0
	for name, f := range fams {
		if name != "swctl_uptime_seconds" && name != "swctl_goroutines" {
			total += len(f.GetMetric())
		}
	}
	if n != total {
		t.Errorf("Samples gave %d values, the scrape %d", n, total)
	}
}

func TestListenRefusesWhatIsNotLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:9477", "192.0.2.1:9477", ":9477", "[::]:9477", "example.org:9477", "9477"} {
		if ln, err := metrics.Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted a non-loopback address", addr)
		}
	}
	path := filepath.Join(t.TempDir(), "m.sock")
	ln, err := metrics.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("unix socket mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}
