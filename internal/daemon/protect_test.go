package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/platform"
)

// TestEngineStormLimitAndBPDUGuard checks that a member's storm limit and
// BPDU guard reach its bridge, that the guard is armed on every guarded
// member without a spanning tree and on guarded edge members with one,
// and that bridge show and bridge port --enable see and clear a member
// the guard disabled.
func TestEngineStormLimitAndBPDUGuard(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))
	br := e.graph.bridges["bridge0"].br
	eth1 := func() bridge.PortInfo {
		t.Helper()
		for _, p := range br.Ports() {
			if p.Name == "eth1" {
				return p
			}
		}
		t.Fatal("eth1 is not a member of bridge0")
		return bridge.PortInfo{}
	}
	steps := []struct {
		name      string
		change    api.Edit
		wantLimit int
		wantArmed bool
	}{
		{"limit and guard", api.BridgePortRequest{StormLimit: ptr(1000), BPDUGuard: ptr(true)}, 1000, true},
		{"spanning tree on, not edge", api.BridgeSTPRequest{On: ptr(true)}, 1000, false},
		{"edge", api.BridgePortRequest{Edge: ptr(true)}, 1000, true},
		{"member out of the tree", api.BridgePortRequest{Edge: ptr(false), STP: ptr(false)}, 1000, true},
		{"back in the tree", api.BridgePortRequest{STP: ptr(true)}, 1000, false},
		{"spanning tree off", api.BridgeSTPRequest{On: ptr(false)}, 1000, true},
		{"limit off", api.BridgePortRequest{StormLimit: ptr(0)}, 0, true},
	}
	for _, s := range steps {
		switch r := s.change.(type) {
		case api.BridgePortRequest:
			r.Name, r.Iface = "bridge0", "eth1"
			s.change = r
		case api.BridgeSTPRequest:
			r.Name = "bridge0"
			s.change = r
		}
		mustDo(t, e.Change(bg, s.change))
		if p := eth1(); p.StormLimit != s.wantLimit || p.BPDUGuard != s.wantArmed {
			t.Errorf("%s: eth1 storm limit %d, guard armed %v; want %d, %v", s.name, p.StormLimit, p.BPDUGuard, s.wantLimit, s.wantArmed)
		}
	}

	flags := func() []string {
		t.Helper()
		bs, err := e.BridgeShow(bg, "bridge0")
		mustDo(t, err)
		return bs[0].Ports[0].Flags
	}
	bpdu := make([]byte, 60)
	frame.Encode(bpdu, frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}, frame.MAC{0x02, 0, 0, 0, 0, 9}, 39)
	br.Forward(bridge.NewWorker(), br.Member("eth1"), platform.Batch{Frames: [][]byte{bpdu}}, time.Now())
	if got := flags(); !slices.Contains(got, api.FlagBPDUGuardDisabled) {
		t.Errorf("after a BPDU on guarded eth1: flags %q, want %q among them", got, api.FlagBPDUGuardDisabled)
	}
	mustDo(t, e.BridgeEnable(bg, api.EnableRequest{Name: "bridge0", Iface: "eth1"}))
	if got, want := flags(), []string{"learning", "discover", api.FlagBPDUGuard}; !slices.Equal(got, want) {
		t.Errorf("after --enable: flags %q, want %q", got, want)
	}
	if err := e.BridgeEnable(bg, api.EnableRequest{Name: "bridge0", Iface: "eth9"}); err == nil || err.Error() != "bridge0: enable eth9: not a member" {
		t.Errorf("enable of a non-member: got %v, want \"bridge0: enable eth9: not a member\"", err)
	}
}
