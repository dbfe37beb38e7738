package daemon

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

// sampleValue returns the value of the sample with exactly these name and
// labels.
func sampleValue(ss []api.Sample, name string, labels map[string]string) (float64, bool) {
	for _, s := range ss {
		if s.Name == name && maps.Equal(s.Labels, labels) {
			return s.Value, true
		}
	}
	return 0, false
}

// sampleWant is a sample expected among Stats.
type sampleWant struct {
	name   string
	labels map[string]string
	want   float64
}

// wantSamples checks that samples hold every sample of wants; what
// (may be "") says what the samples are of in failures.
func wantSamples(t *testing.T, what string, samples []api.Sample, wants []sampleWant) {
	t.Helper()
	for _, w := range wants {
		if got, ok := sampleValue(samples, w.name, w.labels); !ok || got != w.want {
			t.Errorf("%s%s%v: expected %v, got %v (present %v)", what, w.name, w.labels, w.want, got, ok)
		}
	}
}

// statsOnce waits until e's Stats give the sample name with labels the
// value want, and returns those Stats.
func statsOnce(t *testing.T, e *engine, name string, labels map[string]string, want float64) []api.Sample {
	t.Helper()
	var samples []api.Sample
	netnstest.Eventually(t, 10*time.Second, fmt.Sprintf("stats %s%v = %v", name, labels, want), func() bool {
		var err error
		samples, err = e.Stats(bg)
		mustDo(t, err)
		v, _ := sampleValue(samples, name, labels)
		return v == want
	})
	return samples
}

// TestEngineStatsSnapshot runs frames through a bridge and checks that
// Stats reports them for every kind of object: members (one absent),
// the bridge's table and counters, a trunk's member and its TAP.
func TestEngineStatsSnapshot(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth4")
	e, _ := newTestEngine(t, sys)
	cfg := &config.Config{Bridges: []config.Bridge{config.NewBridge("bridge0")}}
	cfg.Bridges[0].Ports = []config.Port{config.NewPort("eth1"), config.NewPort("eth2"), config.NewPort("eth7")}
	tr := config.NewTrunk("trunk0")
	tr.Ports = []config.TrunkPort{config.NewTrunkPort("eth4")}
	cfg.Trunks = []config.Trunk{tr}
	e.Close()
	mustDo(t, e.load(cfg))

	// Two broadcasts from a station behind eth1, one from behind eth2.
	for i, n := range []string{"eth1", "eth1", "eth2"} {
		f := make([]byte, 60)
		copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xbb, 0, 0, 0, byte(1 + i/2), 0x88, 0xb5})
		if _, err := sys.far[n].WriteBatch(platform.Batch{Frames: [][]byte{f}}); err != nil {
			t.Fatal(err)
		}
	}
	samples := statsOnce(t, e, "swctl_bridge_frames_total", map[string]string{"bridge": "bridge0", "fate": "received"}, 3)
	member := func(port string) map[string]string {
		return map[string]string{"port": port, "owner": "bridge0", "role": "member"}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		m = maps.Clone(m)
		m[k] = v
		return m
	}
	wantSamples(t, "", samples, []sampleWant{
		{"swctl_port_received_frames_total", member("eth1"), 2},
		{"swctl_port_received_bytes_total", member("eth1"), 120},
		{"swctl_port_sent_frames_total", member("eth1"), 1},
		{"swctl_port_up", member("eth1"), 1},
		{"swctl_port_up", member("eth7"), 0},
		{"swctl_port_received_frames_total", member("eth7"), 0},
		{"swctl_port_dropped_frames_total", with(member("eth2"), "reason", "rx_ring_full"), 0},
		{"swctl_bridge_fdb_entries", map[string]string{"bridge": "bridge0"}, 2},
		{"swctl_bridge_fdb_events_total", map[string]string{"bridge": "bridge0", "event": "learned"}, 2},
		{"swctl_bridge_frames_total", map[string]string{"bridge": "bridge0", "fate": "flooded"}, 3},
		{"swctl_bridge_dropped_frames_total", map[string]string{"bridge": "bridge0", "reason": "link_down"}, 0},
		{"swctl_port_up", map[string]string{"port": "eth4", "owner": "trunk0", "role": "trunk"}, 1},
		{"swctl_port_up", map[string]string{"port": "trunk0", "owner": "trunk0", "role": "local"}, 1},
		{"swctl_trunk_member_state", map[string]string{"trunk": "trunk0", "port": "eth4", "state": "collecting"}, 1},
		{"swctl_trunk_members", map[string]string{"trunk": "trunk0", "state": "all"}, 1},
	})
	if _, ok := sampleValue(samples, "swctl_uptime_seconds", nil); !ok {
		t.Errorf("swctl_uptime_seconds: expected a sample, got none")
	}
}
