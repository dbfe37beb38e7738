package daemon

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
	"github.com/swctl/swctl/stp"
)

// LinkSpeed reports every existing interface as a veth does: 10 Gb/s,
// full duplex.
func (s *fakeSystem) LinkSpeed(name string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.links[name]; !ok {
		return 0, false
	}
	return 10000, false
}

// stpOn is the edit that turns the spanning tree of bridge on with short
// timers.
func stpOn(bridge string) func(c *config.Config) error {
	return func(c *config.Config) error {
		return c.SetSTP(bridge, config.STPChange{On: ptr(true), HelloTime: ptr(1), FwdDelay: ptr(4), MaxAge: ptr(6)})
	}
}

// The spanning tree's state operations, run by the reconcile tests with
// the others (stateOps): each must fail at every step with what runs
// still what the file says, and then succeed.
func init() {
	change := func(edits ...func(c *config.Config) error) func(e *engine) error {
		return func(e *engine) error {
			for _, edit := range edits {
				if err := e.change(bg, edit); err != nil {
					return err
				}
			}
			return nil
		}
	}
	stateOps = append(stateOps, []struct {
		name string
		op   func(e *engine) error
	}{
		{"bridge stp on", change(stpOn("bridge0"))},
		{"bridge stp on, then off", change(stpOn("bridge0"), func(c *config.Config) error {
			return c.SetSTP("bridge0", config.STPChange{On: ptr(false)})
		})},
		{"bridge stp settings while it runs", change(stpOn("bridge0"), func(c *config.Config) error {
			return c.SetSTP("bridge0", config.STPChange{Priority: ptr(4096), Proto: ptr("stp"), HoldCount: ptr(2)})
		})},
		{"bridge stp on a bridge with a trunk member", change(stpOn("br1"))},
		{"bridge port stp settings while it runs", change(stpOn("bridge0"), func(c *config.Config) error {
			return c.SetPort("bridge0", "eth2", config.PortChange{STP: config.PortSTPChange{
				STP: ptr(false), IfPriority: ptr(16), IfCost: ptr(7), PTP: ptr("off"),
			}})
		})},
		{"bridge add and del while stp runs", func(e *engine) error {
			return change(stpOn("bridge0"), func(c *config.Config) error {
				if err := c.AddPorts("bridge0", []string{"eth7", "trunk2"}, e.host); err != nil {
					return err
				}
				return c.DelPorts("bridge0", []string{"eth1"})
			})(e)
		}},
		{"bridge fwd-mask", change(func(c *config.Config) error { return c.SetBridge("bridge0", nil, nil, ptr(uint16(0x4008))) })},
	}...)
}

// stpRunning describes bridge name's spanning tree and forward mask as
// they run, in the terms of stpConfigured.
func stpRunning(name string, b *bridgeObj) []string {
	out := []string{fmt.Sprintf("bridge %s fwd-mask 0x%04x", name, b.br.ForwardMask())}
	if b.stp == nil {
		return append(out, fmt.Sprintf("bridge %s stp off", name))
	}
	c := b.stp.tree.Config()
	out = append(out, fmt.Sprintf("bridge %s stp on %s priority %d hello %d fwddelay %d maxage %d holdcnt %d",
		name, c.Protocol, c.Priority, c.HelloTime, c.ForwardDelay, c.MaxAge, c.HoldCount))
	for _, p := range b.stp.tree.Ports() {
		out = append(out, fmt.Sprintf("bridge %s stp port %s enabled %v priority %d cost %d p2p %v",
			name, p.Name, p.Enabled, p.PortID.Priority(), p.PathCost, p.PointToPoint))
	}
	return out
}

// stpConfigured describes what b's spanning tree should be, every member
// attached and every link a veth's.
func stpConfigured(b *config.Bridge) []string {
	out := []string{fmt.Sprintf("bridge %s fwd-mask 0x%04x", b.Name, b.FwdMask)}
	s := b.STPSettings()
	if !s.On {
		return append(out, fmt.Sprintf("bridge %s stp off", b.Name))
	}
	out = append(out, fmt.Sprintf("bridge %s stp on %s priority %d hello %d fwddelay %d maxage %d holdcnt %d",
		b.Name, s.Proto, s.Priority, s.HelloTime, s.FwdDelay, s.MaxAge, s.HoldCount))
	for _, p := range b.Ports {
		ps := p.STPSettings()
		cost := uint32(ps.Cost)
		if cost == 0 {
			cost = stp.PathCostForSpeed(10000)
		}
		out = append(out, fmt.Sprintf("bridge %s stp port %s enabled %v priority %d cost %d p2p %v",
			b.Name, p.Name, ps.Enabled, ps.Priority, cost, ps.PTP != stp.PTPOff))
	}
	return out
}

// stpBench is an engine running bridge0 with the spanning tree on (hello
// 1, fwddelay 4, maxage 6) over members eth1, eth2 and eth3 and a local
// TAP, on a fake clock the test steps.
type stpBench struct {
	t   *testing.T
	e   *engine
	sys *fakeSystem
	clk *clock.Fake
}

func newSTPBench(t *testing.T) *stpBench {
	t.Helper()
	sys := newFakeSystem("eth1", "eth2", "eth3")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0", Local: true}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2", "eth3"}}))
	mustDo(t, e.change(bg, stpOn("bridge0")))
	return &stpBench{t: t, e: e, sys: sys, clk: e.graph.clock.(*clock.Fake)}
}

// tree returns bridge0's spanning tree, or nil when it does not run.
func (sb *stpBench) tree() *stp.Bridge {
	sb.e.mu.Lock()
	defer sb.e.mu.Unlock()
	if s := sb.e.graph.bridges["bridge0"].stp; s != nil {
		return s.tree
	}
	return nil
}

// seconds steps the fake clock n seconds, one at a time, ticking the
// tree after each.
func (sb *stpBench) seconds(n int) {
	for range n {
		sb.clk.Advance(time.Second)
		if tr := sb.tree(); tr != nil {
			tr.Tick()
		}
	}
}

// far returns the test's end of iface's cable.
func (sb *stpBench) far(iface string) *memport.Port {
	sb.sys.mu.Lock()
	defer sb.sys.mu.Unlock()
	return sb.sys.far[iface]
}

// drain reads what is queued at the far end of iface: the BPDUs and the
// other frames.
func (sb *stpBench) drain(iface string) (bpdus []stp.Kind, others [][]byte) {
	buf := make([][]byte, 64)
	for {
		n, _ := sb.far(iface).TryReadBatch(buf)
		if n == 0 {
			return bpdus, others
		}
		for _, f := range buf[:n] {
			if frame.Ethernet(f).Destination() == frame.MAC(stp.GroupMAC) {
				kind, cause := stp.Decode(f)
				if cause != stp.CauseNone {
					sb.t.Errorf("%s: a BPDU that does not decode (%v): %x", iface, cause, f)
				}
				bpdus = append(bpdus, kind)
				continue
			}
			others = append(others, slices.Clone(f))
		}
	}
}

// inject sends frames into the bridge from the far end of iface.
func (sb *stpBench) inject(iface string, frames ...[]byte) {
	sb.t.Helper()
	if _, err := sb.far(iface).WriteBatch(platform.Batch{Frames: frames}); err != nil {
		sb.t.Fatal(err)
	}
}

// port returns the tree's status of member name.
func (sb *stpBench) port(name string) stp.PortStatus {
	sb.t.Helper()
	for _, p := range sb.tree().Ports() {
		if p.Name == name {
			return p
		}
	}
	sb.t.Fatalf("%s is not a spanning tree port", name)
	return stp.PortStatus{}
}

// reaches waits for a broadcast from station src injected at iface to
// arrive at the far end of each of to, and checks that it reaches none
// of notTo.
func (sb *stpBench) reaches(iface string, src byte, to, notTo []string) {
	sb.t.Helper()
	f := make([]byte, 60)
	frame.Encode(f, frame.Broadcast, frame.MAC{2, 0, 0, 0, 0xee, src}, frame.TypeIPv4)
	sb.inject(iface, f)
	deadline := time.Now().Add(5 * time.Second)
	got := map[string]bool{}
	for len(got) < len(to) {
		for _, n := range to {
			if _, others := sb.drain(n); len(others) > 0 {
				got[n] = true
			}
		}
		if time.Now().After(deadline) {
			sb.t.Fatalf("broadcast from %s: expected at %v within 5 s, got at %v", iface, to, got)
		}
		time.Sleep(time.Millisecond)
	}
	for _, n := range notTo {
		if _, others := sb.drain(n); len(others) > 0 {
			sb.t.Errorf("broadcast from %s: expected nothing at %s, got %d frames", iface, n, len(others))
		}
	}
}

// TestSTPRunsOverMembers checks what a bridge running the spanning tree
// does with its members: BPDUs from the first moment, nothing forwarded
// until a port forwards, the local TAP outside the tree, a neighbour's
// better BPDU making the root port, and everything as before once it
// stops.
func TestSTPRunsOverMembers(t *testing.T) {
	sb := newSTPBench(t)
	var names []string
	for _, p := range sb.tree().Ports() {
		names = append(names, p.Name)
		if p.State != stp.Discarding {
			t.Errorf("%s: expected discarding at the start, got %v", p.Name, p.State)
		}
		if p.PathCost != 2000 {
			t.Errorf("%s: expected the path cost of 10 Gb/s, 2000, got %d", p.Name, p.PathCost)
		}
	}
	if want := []string{"eth1", "eth2", "eth3"}; !slices.Equal(names, want) {
		t.Errorf("spanning tree ports: expected %v (not the local TAP), got %v", want, names)
	}
	if bpdus, _ := sb.drain("eth1"); len(bpdus) == 0 || bpdus[0] != stp.KindRST {
		t.Errorf("eth1: expected RST BPDUs at once, got %v", bpdus)
	}
	sb.reaches("eth1", 1, nil, []string{"eth2", "eth3"})

	// No BPDU comes back: after MigrateTime the designated ports become
	// edge ports (autoedge) and forward.
	sb.seconds(stp.MigrateTime + 1)
	for _, n := range []string{"eth1", "eth2", "eth3"} {
		if p := sb.port(n); p.Role != stp.RoleDesignated || p.State != stp.Forwarding {
			t.Errorf("%s: expected designated and forwarding, got %v and %v", n, p.Role, p.State)
		}
	}
	sb.reaches("eth1", 2, []string{"eth2", "eth3"}, nil)

	// A better root behind eth2.
	root := stp.NewBridgeID(0, [6]byte{2, 0, 0, 0, 0, 0x99})
	bpdu := make([]byte, stp.FrameLen)
	stp.EncodeRST(bpdu, [6]byte{2, 0, 0, 0, 0, 0x99}, &stp.Fields{
		Flags: stp.FlagForwarding | stp.FlagLearning | uint8(stp.RoleBitsDesignated)<<2, Root: root, Bridge: root, Port: stp.NewPortID(128, 1),
		MaxAge: 6 * time.Second, HelloTime: time.Second, ForwardDelay: 4 * time.Second,
	})
	sb.inject("eth2", bpdu)
	netnstest.Eventually(t, 5*time.Second, "eth2 to become the root port", func() bool { return sb.port("eth2").Role == stp.RoleRoot })
	if st := sb.tree().Status(); st.Root != root || st.RootPortName != "eth2" || st.RootPathCost != 2000 {
		t.Errorf("status: expected root %v by eth2 at cost 2000, got root %v by %q at cost %d", root, st.Root, st.RootPortName, st.RootPathCost)
	}

	mustDo(t, sb.e.change(bg, func(c *config.Config) error { return c.SetSTP("bridge0", config.STPChange{On: ptr(false)}) }))
	if sb.tree() != nil {
		t.Fatal("the spanning tree still runs after stp off")
	}
	sb.drain("eth1")
	sb.drain("eth3")
	sb.inject("eth2", bpdu)
	netnstest.Eventually(t, 5*time.Second, "the BPDU flooded to eth1 and eth3 with the tree off", func() bool {
		b1, _ := sb.drain("eth1")
		b3, _ := sb.drain("eth3")
		return len(b1) == 1 && len(b3) == 1
	})
}

// TestSTPLinkDownDisablesPort checks that a member whose link goes down
// is disabled, and comes back discarding when its link returns.
func TestSTPLinkDownDisablesPort(t *testing.T) {
	sb := newSTPBench(t)
	sb.sys.setLink("eth3", platform.LinkDown)
	netnstest.Eventually(t, 5*time.Second, "eth3 disabled", func() bool { return sb.port("eth3").Role == stp.RoleDisabled })
	sb.sys.setLink("eth3", platform.LinkUp)
	netnstest.Eventually(t, 5*time.Second, "eth3 designated again", func() bool { return sb.port("eth3").Role == stp.RoleDesignated })
	if p := sb.port("eth3"); p.State != stp.Discarding {
		t.Errorf("eth3: expected discarding when its link returns, got %v", p.State)
	}
}

// TestSTPShow checks what bridge show says of the spanning tree: the
// bridge's identifier, root and settings, each member's role, state,
// settings and counters, nothing of the local TAP, and nothing once the
// tree stops.
func TestSTPShow(t *testing.T) {
	sb := newSTPBench(t)
	mustDo(t, sb.e.Change(bg, api.BridgePortRequest{Name: "bridge0", Iface: "eth3", IfCost: ptr(7), PTP: ptr("off"), Edge: ptr(true)}))
	mustDo(t, sb.e.Change(bg, api.BridgeSetRequest{Name: "bridge0", FwdMask: ptr(uint16(0x4000))}))
	sb.seconds(1)
	bs, err := sb.e.BridgeShow(bg, "bridge0")
	mustDo(t, err)
	b := bs[0]
	if b.FwdMask != 0x4000 {
		t.Errorf("fwd-mask: expected 0x4000, got 0x%04x", b.FwdMask)
	}
	if b.STP == nil {
		t.Fatal("stp: expected the spanning tree, got none")
	}
	// The bridge's identifier takes the local TAP's MAC.
	id := stp.NewBridgeID(32768, sb.e.cfg.Bridge("bridge0").LocalMAC).String()
	wantSTP := api.STPInfo{
		Proto: "rstp", Priority: 32768, HelloTime: 1, FwdDelay: 4, MaxAge: 6, HoldCount: 6,
		BridgeID: id, Root: id, IsRoot: true, RootMaxAge: 6, RootFwdDelay: 4,
	}
	got := *b.STP
	got.TopologyChanges, got.TopologyChange, got.SinceTopologyChange = 0, false, nil
	if got != wantSTP {
		t.Errorf("stp:\nexpected %+v\ngot      %+v", wantSTP, got)
	}
	for _, p := range b.Ports {
		s := p.STP
		switch {
		case s == nil:
			t.Errorf("%s: expected its spanning tree port, got none", p.Name)
		case p.Name == "eth3" && (s.Cost != 7 || s.PathCost != 7 || s.PTP != "off" || s.PointToPoint || !s.AdminEdge || !s.Edge || s.State != "forwarding"):
			t.Errorf("eth3: expected cost 7, ptp off and an edge port forwarding, got %+v", *s)
		case p.Name != "eth3" && (s.Role != "designated" || s.State != "discarding" || s.PathCost != 2000 || !s.PointToPoint || s.Protocol != "rstp" || s.PortID == ""):
			t.Errorf("%s: expected designated, discarding, cost 2000, point-to-point, rstp, got %+v", p.Name, *s)
		case s.BPDUsOut == 0:
			t.Errorf("%s: expected BPDUs sent, got none", p.Name)
		}
	}
	mustDo(t, sb.e.Change(bg, api.BridgeSTPRequest{Name: "bridge0", On: ptr(false)}))
	bs, err = sb.e.BridgeShow(bg, "bridge0")
	mustDo(t, err)
	if bs[0].STP != nil || bs[0].Ports[0].STP != nil {
		t.Errorf("after stp off: expected no spanning tree in show, got %+v and %+v", bs[0].STP, bs[0].Ports[0].STP)
	}
}
