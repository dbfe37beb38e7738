package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/api"
)

func TestFormatLBs(t *testing.T) {
	ls := []api.LBInfo{{Name: "web", Iface: "eth1", MAC: "02:00:00:00:00:01", VIPs: []string{"192.0.2.100", "2001:db8::100"},
		Method: "maglev", Health: "tcp:80", State: "running", AllDown: true, Flows: 7, Frames: 10, Bytes: 1000, DroppedNoBackend: 4,
		Backends: []api.LBBackendInfo{{Addr: "192.0.2.11", Weight: 2, State: "down", Health: "down", LastError: "refused"}}}}
	var out bytes.Buffer
	if err := formatLBs(&out, ls); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"lb web", "on         iface eth1", "vip        192.0.2.100 2001:db8::100", "method     maglev", "health     tcp:80",
		"serving    0 of 1 (ALL BACKENDS DOWN: frames to the VIPs are dropped)", "flows      7",
		"forwarded  10 frames, 1000 bytes", "dropped    4 no backend, 0 backend MAC unknown",
		"ADDRESS     MAC  WEIGHT  STATE  HEALTH  SINCE  FRAMES  BYTES", "192.0.2.11  -    2       down   down    -      0       0",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lb show lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := formatLBs(&out, nil); err != nil || out.String() != "no load balancers\n" {
		t.Errorf("no lbs: %q, %v; want \"no load balancers\\n\"", out.String(), err)
	}
}
