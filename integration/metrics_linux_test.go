package integration

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/swctl/swctl/internal/netnstest"
)

// sampleKey names one sample: its metric and its labels, sorted.
func sampleKey(name string, labels map[string]string) string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// scrape fetches /metrics over the unix socket at path and parses it with
// Prometheus's text parser, into values by sampleKey.
func scrape(t *testing.T, path string) map[string]float64 {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://swctl/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d, %v\n%s", path, resp.StatusCode, err, body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("scrape does not parse: %v\n%s", err, body)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			out[sampleKey(name, labels)] = v
		}
	}
	return out
}

// stats runs swctl stats -o json, into values by sampleKey.
func (tb *testbed) stats() map[string]float64 {
	tb.t.Helper()
	var ss []struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
		Value  float64           `json:"value"`
	}
	tb.swctlJSON(&ss, "stats")
	out := map[string]float64{}
	for _, s := range ss {
		out[sampleKey(s.Name, s.Labels)] = s.Value
	}
	return out
}

// withoutUptime returns m without swctl_uptime_seconds and
// swctl_goroutines, which move between any two readings.
func withoutUptime(m map[string]float64) map[string]float64 {
	return maps.Collect(func(yield func(string, float64) bool) {
		for k, v := range m {
			if !strings.HasPrefix(k, "swctl_uptime_seconds{") && !strings.HasPrefix(k, "swctl_goroutines{") && !yield(k, v) {
				return
			}
		}
	})
}

// TestIntegrationMetricsScrapeEqualsStats runs a daemon with --metrics on
// a unix socket, scrapes it while two hosts ping each other through a
// bridge, and once the traffic has stopped checks that the scrape and
// swctl stats give the same samples with the same values.
func TestIntegrationMetricsScrapeEqualsStats(t *testing.T) {
	tb := newTestbed(t, 2)
	sock := filepath.Join(tb.dir, "metrics.sock")
	tb.daemonArgs = []string{"--metrics", sock}
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	h := tb.hosts
	mustPing(t, h[0], h[1].ip)

	// Under traffic: a scrape parses and has the families of every kind
	// of object.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const pings = 100
	flood := h[0].Command(ctx, "ping", "-c", fmt.Sprint(pings), "-i", "0.01", "-q", h[1].ip)
	if err := flood.Start(); err != nil {
		t.Fatalf("start ping: %v", err)
	}
	p1 := map[string]string{"port": "p1", "owner": "bridge0", "role": "member"}
	during := scrape(t, sock)
	for _, k := range []string{
		sampleKey("swctl_port_received_frames_total", p1),
		sampleKey("swctl_port_dropped_frames_total", with(p1, "reason", "rx_ring_full")),
		sampleKey("swctl_bridge_fdb_entries", map[string]string{"bridge": "bridge0"}),
		sampleKey("swctl_bridge_dropped_frames_total", map[string]string{"bridge": "bridge0", "reason": "link_local"}),
		sampleKey("swctl_uptime_seconds", map[string]string{}),
	} {
		if _, ok := during[k]; !ok {
			t.Errorf("scrape under traffic: expected %s, got none", k)
		}
	}
	if err := flood.Wait(); err != nil {
		t.Fatalf("ping -c %d: %v", pings, err)
	}

	// After: once two scrapes agree (counters only grow, so a reading
	// between them can only agree too), swctl stats must give the same.
	var before, st, after map[string]float64
	netnstest.Eventually(t, 30*time.Second, "two scrapes with the same values", func() bool {
		before = withoutUptime(scrape(t, sock))
		st = withoutUptime(tb.stats())
		after = withoutUptime(scrape(t, sock))
		return maps.Equal(before, after)
	})
	for k, v := range before {
		if got, ok := st[k]; !ok || got != v {
			t.Errorf("%s: scrape %v, swctl stats %v (present %v)", k, v, got, ok)
		}
	}
	for k := range st {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: in swctl stats, not in the scrape", k)
		}
	}
	if got := before[sampleKey("swctl_port_received_frames_total", p1)]; got < pings {
		t.Errorf("p1 received frames: expected at least %d (the pings), got %v", pings, got)
	}
	if got := before[sampleKey("swctl_bridge_fdb_entries", map[string]string{"bridge": "bridge0"})]; got != 2 {
		t.Errorf("bridge0 fdb entries: expected 2 (the hosts), got %v", got)
	}
}

// with returns a copy of m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	m = maps.Clone(m)
	m[k] = v
	return m
}
