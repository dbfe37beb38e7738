package daemon

import (
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

// fakeLBHost stands in for the host's addresses and the VIP stack guard
// for the length of a test: eth1 has 192.0.2.1/24.
func fakeLBHost(t *testing.T) *atomic.Int32 {
	var guards atomic.Int32
	oldPrefixes, oldGuard := ifacePrefixes, guardVIPs
	ifacePrefixes = func(string) ([]netip.Prefix, error) {
		return []netip.Prefix{netip.MustParsePrefix("192.0.2.1/24"), netip.MustParsePrefix("fe80::1/64")}, nil
	}
	guardVIPs = func(string, []netip.Addr) (io.Closer, error) {
		guards.Add(1)
		return closerFunc(func() error { guards.Add(-1); return nil }), nil
	}
	t.Cleanup(func() { ifacePrefixes, guardVIPs = oldPrefixes, oldGuard })
	return &guards
}

// arpFrame is an ARP packet from sha/spa about tpa, op 1 or 2, to dst.
func arpFrame(dst [6]byte, op uint16, sha [6]byte, spa, tpa netip.Addr) []byte {
	f := make([]byte, 60)
	copy(f[0:6], dst[:])
	copy(f[6:12], sha[:])
	binary.BigEndian.PutUint16(f[12:], 0x0806)
	copy(f[14:], []byte{0, 1, 8, 0, 6, 4})
	binary.BigEndian.PutUint16(f[20:], op)
	copy(f[22:28], sha[:])
	copy(f[28:32], spa.AsSlice())
	copy(f[38:42], tpa.AsSlice())
	return f
}

func TestEngineLB(t *testing.T) {
	guards := fakeLBHost(t)
	sys := newFakeSystem("eth1")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.LBCreateRequest{Name: "web", Iface: "eth1", VIPs: []string{"192.0.2.100"}}))
	if open, _ := sys.counts("eth1"); open != 1 || guards.Load() != 1 {
		t.Fatalf("after create: eth1 open %d times, %d VIP guards; want 1 and 1", open, guards.Load())
	}
	refusals := []struct{ addr, want string }{
		{"10.9.9.9", "web: backend 10.9.9.9: not on-link (the lb's networks are 192.0.2.0/24, fe80::/64)"},
		{"192.0.2.1", "web: backend 192.0.2.1: is the lb's own address on eth1"},
	}
	for _, r := range refusals {
		err := e.Change(bg, api.LBBackendAddRequest{Name: "web", Addr: r.addr})
		if err == nil || err.Error() != r.want {
			t.Errorf("backend add %s: %v; want %q", r.addr, err, r.want)
		}
	}
	mustDo(t, e.Change(bg, api.LBBackendAddRequest{Name: "web", Addr: "192.0.2.11", Weight: 2}))
	far := sys.far["eth1"]
	backend := [6]byte{2, 0, 0, 0, 0xbe, 1}
	if _, err := far.WriteBatch(platform.Plain(arpFrame([6]byte{2, 0, 0, 0, 0, 1}, 2, backend, netip.MustParseAddr("192.0.2.11"), netip.MustParseAddr("192.0.2.1")))); err != nil {
		t.Fatal(err)
	}
	show := func() api.LBInfo {
		infos, err := e.LBShow(bg, "web")
		mustDo(t, err)
		return infos[0]
	}
	netnstest.Eventually(t, 10*time.Second, "backend 192.0.2.11 resolved and serving", func() bool {
		b := show().Backends
		return len(b) == 1 && b[0].MAC == "02:00:00:00:be:01" && b[0].State == "serving"
	})
	if got := show(); got.State != "running" || got.Method != "maglev" || got.MAC != "02:00:00:00:00:01" || got.Backends[0].Weight != 2 {
		t.Errorf("lb show: %+v; want running, maglev, MAC of eth1, weight 2", got)
	}

	// Stats (and the metrics endpoint) see the lb: a client's ARP request
	// for the VIP is answered and counted, the backend serves.
	client := [6]byte{2, 0, 0, 0, 0xc1, 1}
	if _, err := far.WriteBatch(platform.Plain(arpFrame([6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1, client, netip.MustParseAddr("192.0.2.50"), netip.MustParseAddr("192.0.2.100")))); err != nil {
		t.Fatal(err)
	}
	samples := statsOnce(t, e, "swctl_lb_replies_total", map[string]string{"lb": "web", "proto": "arp"}, 1)
	bk := map[string]string{"lb": "web", "backend": "192.0.2.11"}
	wantSamples(t, "stats ", samples, []sampleWant{
		{"swctl_lb_running", map[string]string{"lb": "web"}, 1},
		{"swctl_lb_backends", map[string]string{"lb": "web", "state": "serving"}, 1},
		{"swctl_lb_backends", map[string]string{"lb": "web", "state": "down"}, 0},
		{"swctl_lb_backend_state", map[string]string{"lb": "web", "backend": "192.0.2.11", "state": "serving"}, 1},
		{"swctl_lb_backend_state", map[string]string{"lb": "web", "backend": "192.0.2.11", "state": "draining"}, 0},
		{"swctl_lb_backend_weight", bk, 2},
		{"swctl_lb_backend_forwarded_frames_total", bk, 0},
		{"swctl_lb_dropped_frames_total", map[string]string{"lb": "web", "reason": "no_backend"}, 0},
	})

	// Restart: a new engine from the file runs the same lb.
	cfg, err := config.Load(path)
	mustDo(t, err)
	e.Close()
	e2 := newEngine(path, sys, clock.NewFake(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	mustDo(t, e2.load(cfg))
	t.Cleanup(e2.Close)
	infos, err := e2.LBShow(bg, "")
	mustDo(t, err)
	if len(infos) != 1 || infos[0].State != "running" || len(infos[0].Backends) != 1 || infos[0].Backends[0].Addr != "192.0.2.11" {
		t.Fatalf("after restart: %+v; want lb web running with backend 192.0.2.11", infos)
	}
	mustDo(t, e2.Change(bg, api.LBBackendDrainRequest{Name: "web", Addr: "192.0.2.11"}))
	mustDo(t, e2.Change(bg, api.LBDestroyRequest{Name: "web"}))
	if open, _ := sys.counts("eth1"); open != 0 || guards.Load() != 0 {
		t.Errorf("after destroy: eth1 open %d times, %d VIP guards; want 0 and 0", open, guards.Load())
	}
	if _, err := e2.LBShow(bg, "web"); err == nil || !strings.Contains(err.Error(), "no such lb") {
		t.Errorf("show after destroy: %v; want no such lb", err)
	}
}

func TestEngineLBOnBridge(t *testing.T) {
	fakeLBHost(t)
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "br0", Local: true}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "br0", Ifaces: []string{"eth1", "eth2"}}))
	mustDo(t, e.Change(bg, api.LBCreateRequest{Name: "web", Bridge: "br0", VIPs: []string{"192.0.2.100"}}))
	// A client behind eth1 asks for the VIP: the answer crosses the
	// bridge from the lb's member with the lb's own MAC.
	client := [6]byte{2, 0, 0, 0, 0xc1, 1}
	bcast := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if _, err := sys.far["eth1"].WriteBatch(platform.Plain(arpFrame(bcast, 1, client, netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("192.0.2.100")))); err != nil {
		t.Fatal(err)
	}
	want := lbMemberMAC("web")
	buf := make([][]byte, 8)
	netnstest.Eventually(t, 10*time.Second, "ARP reply for the VIP from the lb's MAC on eth1", func() bool {
		n, _ := sys.far["eth1"].TryReadBatch(buf)
		for _, f := range buf[:n] {
			if len(f) >= 42 && binary.BigEndian.Uint16(f[12:]) == 0x0806 && binary.BigEndian.Uint16(f[20:]) == 2 && [6]byte(f[22:28]) == want {
				return true
			}
		}
		return false
	})
	mustDo(t, e.Change(bg, api.LBDestroyRequest{Name: "web"}))
	infos, err := e.BridgeShow(bg, "br0")
	mustDo(t, err)
	if len(infos[0].Ports) != 2 {
		t.Errorf("after destroy br0 has ports %+v; want eth1 and eth2 only", infos[0].Ports)
	}
}

func TestEngineLBRollsBack(t *testing.T) {
	guards := fakeLBHost(t)
	sys := newFakeSystem("eth1", "eth2")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.LBCreateRequest{Name: "web", Iface: "eth1", VIPs: []string{"192.0.2.100"}}))
	mustDo(t, e.Change(bg, api.LBBackendAddRequest{Name: "web", Addr: "192.0.2.11"}))
	before, err := os.ReadFile(path)
	mustDo(t, err)
	was, err := e.LBShow(bg, "web")
	mustDo(t, err)
	// Every change fails after its last step, or when the file is
	// written, or when it is renamed: what it did is undone, and the
	// running lb and the file agree.
	changes := []api.Edit{
		api.LBBackendAddRequest{Name: "web", Addr: "192.0.2.12"},
		api.LBBackendDelRequest{Name: "web", Addr: "192.0.2.11"},
		api.LBBackendDrainRequest{Name: "web", Addr: "192.0.2.11"},
		api.LBCreateRequest{Name: "web2", Iface: "eth2", VIPs: []string{"192.0.2.101"}},
		api.LBDestroyRequest{Name: "web"},
	}
	for _, fail := range []struct {
		name string
		set  func()
	}{
		{"last step fails", func() { e.fault = func() error { return errInjected } }},
		{"write fails", func() { e.fault, e.file = nil, &faultyFile{diskFile: diskFile(path), failWrite: true} }},
		{"rename fails", func() { e.fault, e.file = nil, &faultyFile{diskFile: diskFile(path), failRename: true} }},
	} {
		fail.set()
		for _, ch := range changes {
			if err := e.Change(bg, ch); !errors.Is(err, errInjected) {
				t.Fatalf("%s: %s: %v; want the injected failure", fail.name, ch.Op(), err)
			}
			infos, err := e.LBShow(bg, "")
			mustDo(t, err)
			if len(infos) != 1 || infos[0].State != "running" || len(infos[0].Backends) != 1 || infos[0].Backends[0].Addr != "192.0.2.11" || infos[0].Backends[0].State != was[0].Backends[0].State {
				t.Errorf("%s: after a failed %s: %+v; want web running with 192.0.2.11 only, %s", fail.name, ch.Op(), infos, was[0].Backends[0].State)
			}
			if st := e.graph.lbs["web"].svc.Status(); len(st.Backends) != 1 || st.Backends[0].Addr.String() != "192.0.2.11" {
				t.Errorf("%s: after a failed %s the running service has %+v; want 192.0.2.11 only", fail.name, ch.Op(), st.Backends)
			}
			if o1, _ := sys.counts("eth1"); o1 != 1 {
				t.Errorf("%s: after a failed %s eth1 is open %d times; want 1", fail.name, ch.Op(), o1)
			}
			if o2, _ := sys.counts("eth2"); o2 != 0 || guards.Load() != 1 {
				t.Errorf("%s: after a failed %s eth2 is open %d times and %d VIP guards are held; want 0 and 1", fail.name, ch.Op(), o2, guards.Load())
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("%s: after a failed %s the file changed:\n%s", fail.name, ch.Op(), after)
			}
		}
	}
}

func TestEngineLBFollowsItsInterface(t *testing.T) {
	guards := fakeLBHost(t)
	sys := newFakeSystem()
	e := newEngine(filepath.Join(t.TempDir(), "swctl.conf"), sys, clock.NewFake(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	cfg, err := config.Parse(strings.NewReader("lb web {\n iface eth9\n vip 192.0.2.100\n backend 192.0.2.11\n}\n"), "test")
	mustDo(t, err)
	mustDo(t, e.load(cfg))
	t.Cleanup(e.Close)
	sys.Watch(e.linkChanged)
	state := func() string {
		infos, err := e.LBShow(bg, "web")
		mustDo(t, err)
		return infos[0].State
	}
	if got := state(); got != "absent: no interface eth9" {
		t.Fatalf("lb on a missing interface: state %q; want it absent, saying why", got)
	}
	samples, err := e.Stats(bg)
	mustDo(t, err)
	bk := map[string]string{"lb": "web", "backend": "192.0.2.11"}
	wantSamples(t, "stats of the absent lb: ", samples, []sampleWant{
		{"swctl_lb_running", map[string]string{"lb": "web"}, 0},
		{"swctl_lb_backend_state", map[string]string{"lb": "web", "backend": "192.0.2.11", "state": "down"}, 1},
		{"swctl_lb_backends", map[string]string{"lb": "web", "state": "down"}, 1},
		{"swctl_lb_backend_forwarded_frames_total", bk, 0},
	})
	if v, ok := sampleValue(samples, "swctl_lb_backend_health", map[string]string{"lb": "web", "backend": "192.0.2.11", "health": "unknown"}); ok {
		t.Errorf("stats of the absent lb without a health check: backend health unknown = %v; want no health family", v)
	}
	sys.setLink("eth9", platform.LinkUp)
	if got, open := state(), func() int { o, _ := sys.counts("eth9"); return o }(); got != "running" || open != 1 || guards.Load() != 1 {
		t.Fatalf("after eth9 appeared: state %q, open %d, guards %d; want running, 1, 1", got, open, guards.Load())
	}
	sys.setLink("eth9", platform.LinkAbsent)
	if got, open := state(), func() int { o, _ := sys.counts("eth9"); return o }(); got != "absent: no interface eth9" || open != 0 || guards.Load() != 0 {
		t.Errorf("after eth9 went: state %q, open %d, guards %d; want absent, 0, 0", got, open, guards.Load())
	}
}
