package stp

import (
	"fmt"
	"testing"
	"time"
)

// prio returns the default configuration with priority p.
func prio(p uint16) Config {
	c := DefaultConfig()
	c.Priority = p
	return c
}

// bridges returns default configurations for the names given.
func bridges(names ...string) map[string]Config {
	m := map[string]Config{}
	for _, n := range names {
		m[n] = DefaultConfig()
	}
	return m
}

// square wires A, B, C and D in a ring with one diagonal (A-C).
func square(nw *network) {
	nw.link("A1", "B1")
	nw.link("B2", "C1")
	nw.link("C2", "D1")
	nw.link("D2", "A2")
	nw.link("A3", "C3")
}

// TestElection checks, on a ring with a diagonal, which bridge becomes
// the root: the lowest priority, then the lowest MAC (A has the lowest,
// D the highest); and that the active topology is a spanning tree.
func TestElection(t *testing.T) {
	tests := []struct {
		name string
		cfgs map[string]Config
		root string
	}{
		{"equal priorities: the lowest MAC", bridges("A", "B", "C", "D"), "A"},
		{"the lowest priority, whatever its MAC", map[string]Config{"A": prio(32768), "B": prio(32768), "C": prio(32768), "D": prio(4096)}, "D"},
		{"equal lowest priorities: the lower MAC of the two", map[string]Config{"A": prio(32768), "B": prio(8192), "C": prio(8192), "D": prio(32768)}, "B"},
		{"priority 0", map[string]Config{"A": prio(61440), "B": prio(4096), "C": prio(0), "D": prio(4096)}, "C"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nw := newNetwork(t, tc.cfgs)
			square(nw)
			took := nw.converge(time.Second)
			want := nw.nodes[tc.root].b.Status().BridgeID
			for _, name := range nw.names {
				if s := nw.nodes[name].b.Status(); s.Root != want {
					t.Errorf("%s: root %s, want %s (%s)", name, s.Root, want, tc.root)
				}
			}
			t.Logf("spanning tree in %v", took)
			nw.stays(time.Minute)
		})
	}
}

// TestTriangle: root A and bridges B and C in a triangle. Each of B and C
// has its root port towards A; on B-C, B (the lower MAC) is designated
// and C's port is an alternate port, discarding. When A-C is cut, the
// alternate port takes over at once; when it is back, the first tree
// comes back.
func TestTriangle(t *testing.T) {
	nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": prio(32768), "C": prio(32768)})
	nw.link("A1", "B1")
	ac := nw.link("A2", "C1")
	nw.link("B2", "C2")
	took := nw.converge(time.Second)
	t.Logf("spanning tree from power-up in %v", took)
	want := map[string]Role{"A1": RoleDesignated, "A2": RoleDesignated, "B1": RoleRoot, "C1": RoleRoot, "B2": RoleDesignated, "C2": RoleAlternate}
	for name, role := range want {
		if got := nw.port(name).Role; got != role {
			t.Errorf("%s: got role %s, want %s", name, got, role)
		}
	}
	nw.stays(time.Minute)

	nw.setUp(ac, false)
	took = nw.converge(time.Second)
	t.Logf("A-C cut: spanning tree again in %v", took)
	if p := nw.port("C2"); p.Role != RoleRoot || p.State != Forwarding {
		t.Errorf("C2 after A-C was cut: got %s %s, want root forwarding", p.Role, p.State)
	}
	if s := nw.nodes["C"].b.Status(); s.RootPathCost != 40000 {
		t.Errorf("C's root path cost after A-C was cut: got %d, want 40000", s.RootPathCost)
	}
	nw.stays(time.Minute)

	nw.setUp(ac, true)
	took = nw.converge(time.Second)
	t.Logf("A-C back: spanning tree again in %v", took)
	for name, role := range want {
		if got := nw.port(name).Role; got != role {
			t.Errorf("%s after A-C came back: got role %s, want %s", name, got, role)
		}
	}
	nw.stays(time.Minute)
}

// TestHubBackup: A has two ports on one hub with B. A's lower port is
// designated, its other port a backup port (it hears A's own BPDUs);
// nothing is agreed on a shared segment, so A's designated port forwards
// only after fdWhile (MaxAge, from disabled) and HelloTime of learning.
// When that port's link goes down, the backup port takes over once the
// information it heard from it ages out (three hello times), after
// forwardDelay (HelloTime) discarding and as much learning.
func TestHubBackup(t *testing.T) {
	nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": prio(32768)})
	nw.hub("H", "A1", "A2", "B1")
	nw.run(19 * time.Second)
	if p := nw.port("A1"); p.Role != RoleDesignated || p.State != Discarding || p.PointToPoint {
		t.Errorf("A1 at 19 s: got %s %s (point-to-point %v), want designated discarding on a shared segment", p.Role, p.State, p.PointToPoint)
	}
	took := nw.converge(10 * time.Second)
	t.Logf("spanning tree in %v", 19*time.Second+took)
	if p := nw.port("A2"); p.Role != RoleBackup {
		t.Errorf("A2: got %s, want backup", p.Role)
	}
	if p := nw.port("B1"); p.Role != RoleRoot {
		t.Errorf("B1: got %s, want root", p.Role)
	}
	nw.stays(time.Minute)

	nw.nodes["A"].b.LinkChanged(1, Link{})
	// Aged 4 to 6 s after A1's last BPDU (sent 0 to 2 s before it went
	// down), then 2 s discarding and 2 s learning, each timer stepping
	// at whole seconds.
	took, ok := nw.until(15*time.Second, func() bool { return nw.port("A2").State == Forwarding })
	if !ok || took < 7*time.Second || took > 11*time.Second {
		t.Errorf("A2 after A1 went down: forwarding after %v (%v), want after 7-11 s", took, ok)
	}
	if p := nw.port("A2"); p.Role != RoleDesignated {
		t.Errorf("A2 after A1 went down: got %s, want designated", p.Role)
	}
}

// TestRootFailure: in a ring of four with a diagonal, the root fails. With
// a power cut its neighbours see their links go down and a new tree forms
// at once; with a hung root (links up, no BPDU) they drop its information
// after three hello times, and the ports facing it forward again once
// autoedge makes them edge ports.
func TestRootFailure(t *testing.T) {
	tests := []struct {
		name    string
		carrier bool
		within  time.Duration
	}{
		{"power cut", false, time.Second},
		// Three hello times to age A's information out; the ports facing A
		// then propose to nobody, and forward as edge ports by autoedge.
		{"hung, links up", true, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": prio(8192), "C": prio(32768), "D": prio(32768)})
			square(nw)
			nw.converge(time.Second)
			nw.stays(10 * time.Second)
			nw.crash("A", tc.carrier)
			took := nw.converge(tc.within)
			t.Logf("new tree after %v", took)
			if s := nw.nodes["C"].b.Status(); s.Root != nw.nodes["B"].b.Status().BridgeID {
				t.Errorf("C's root: got %s, want B", s.Root)
			}
			nw.stays(time.Minute)
		})
	}
}

// TestLinkCut: in a ring of six rooted at A, the link from B to C (C's
// root port) is cut: C and D switch to the other way round at once. Then
// it comes back.
func TestLinkCut(t *testing.T) {
	nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": prio(32768), "C": prio(32768), "D": prio(32768), "E": prio(32768), "F": prio(32768)})
	ring := "ABCDEF"
	var segs []*segment
	for i := range ring {
		a, b := ring[i:i+1], ring[(i+1)%len(ring):(i+1)%len(ring)+1]
		segs = append(segs, nw.link(a+"2", b+"1"))
	}
	nw.converge(time.Second)
	if p := nw.port("C1"); p.Role != RoleRoot {
		t.Fatalf("C1: got %s, want root (C is 2 hops from A through B, 4 the other way)", p.Role)
	}
	nw.stays(10 * time.Second)
	nw.setUp(segs[1], false) // B2-C1
	took := nw.converge(time.Second)
	t.Logf("B-C cut: new tree in %v", took)
	if s := nw.nodes["C"].b.Status(); s.RootPathCost != 4*20000 || s.RootPortName != "C2" {
		t.Errorf("C after the cut: cost %d via %s, want 80000 via C2", s.RootPathCost, s.RootPortName)
	}
	nw.stays(time.Minute)
	nw.setUp(segs[1], true)
	took = nw.converge(time.Second)
	t.Logf("B-C back: new tree in %v", took)
	nw.stays(time.Minute)
}

// TestConvergenceTime measures, on simulated time with latency per hop,
// how long networks of point-to-point links take to a stable spanning
// tree after a link fails: proposal and agreement make it well under a
// second. From power-up, with every bridge starting at once, the ports
// have more to say in the first second than the hold count lets them
// (six BPDUs a second), so the tree waits for the next second or two.
func TestConvergenceTime(t *testing.T) {
	type topo struct {
		name  string
		nodes int
		wire  func(nw *network, names []string) *segment // returns the link to cut
	}
	chain := func(nw *network, names []string) *segment {
		var first *segment
		for i := 0; i+1 < len(names); i++ {
			s := nw.link(names[i]+"2", names[i+1]+"1")
			if first == nil {
				first = s
			}
		}
		return first
	}
	ring := func(nw *network, names []string) *segment {
		first := chain(nw, names)
		nw.link(names[len(names)-1]+"2", names[0]+"1")
		return first
	}
	grid := func(nw *network, names []string) *segment { // 4 x 4
		var first *segment
		for r := range 4 {
			for c := range 4 {
				n := names[4*r+c]
				if c < 3 {
					s := nw.link(n+"2", names[4*r+c+1]+"1")
					if first == nil {
						first = s
					}
				}
				if r < 3 {
					nw.link(n+"4", names[4*(r+1)+c]+"3")
				}
			}
		}
		return first
	}
	for _, tp := range []topo{{"chain of 8", 8, chain}, {"ring of 8", 8, ring}, {"ring of 16", 16, ring}, {"grid of 4 x 4", 16, grid}} {
		t.Run(tp.name, func(t *testing.T) {
			cfgs := map[string]Config{}
			var names []string
			for i := range tp.nodes {
				n := fmt.Sprintf("N%c", 'a'+i) // no digit: port names are a bridge name and a number
				names = append(names, n)
				cfgs[n] = DefaultConfig()
			}
			nw := newNetwork(t, cfgs)
			cut := tp.wire(nw, names)
			took := nw.converge(3 * time.Second)
			t.Logf("power-up: stable spanning tree in %v", took)
			nw.stays(time.Minute)
			nw.setUp(cut, false)
			if tp.name == "chain of 8" {
				return // cut in two: no tree to find
			}
			took = nw.converge(time.Second)
			t.Logf("root link cut: stable spanning tree in %v", took)
			nw.stays(time.Minute)
		})
	}
}

// TestSTPNeighbour: B runs 802.1D STP as the Linux kernel bridge does
// (forced to STP, deaf to RST BPDUs) between A and C, which run RSTP and
// also share a link. The ports facing B fall back to STP, the A-C link
// stays on RSTP, and the tree forms within STP's timers. When B switches
// to RSTP, every port speaks RSTP again.
func TestSTPNeighbour(t *testing.T) {
	stp := prio(32768)
	stp.Protocol = STP
	nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": stp, "C": prio(32768)})
	nw.nodes["B"].legacy = true
	nw.link("A1", "B1")
	nw.link("B2", "C1")
	nw.link("A2", "C2")
	took := nw.converge(time.Minute)
	t.Logf("spanning tree with an STP bridge in %v", took)
	for name, want := range map[string]Protocol{"A1": STP, "B1": STP, "B2": STP, "C1": STP, "A2": RSTP, "C2": RSTP} {
		if got := nw.port(name).Protocol; got != want {
			t.Errorf("%s: speaks %s, want %s", name, got, want)
		}
	}
	nw.stays(2 * time.Minute)

	nw.nodes["B"].legacy = false
	if err := nw.nodes["B"].b.SetConfig(prio(32768)); err != nil {
		t.Fatal(err)
	}
	took, ok := nw.until(10*time.Second, func() bool {
		for _, name := range []string{"A1", "B1", "B2", "C1"} {
			if nw.port(name).Protocol != RSTP {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("B back on RSTP: after %v, A1 %s, B1 %s, B2 %s, C1 %s; want all rstp", took,
			nw.port("A1").Protocol, nw.port("B1").Protocol, nw.port("B2").Protocol, nw.port("C1").Protocol)
	}
	t.Logf("every port on RSTP %v after B", took)
	nw.converge(time.Minute)
	nw.stays(time.Minute)
}

// TestTopologyChangeFlushes: when a link of a converged ring is cut, the
// bridges flush the ports that did not see the change, and every bridge
// counts a topology change.
func TestTopologyChangeFlushes(t *testing.T) {
	nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": prio(32768), "C": prio(32768), "D": prio(32768)})
	nw.link("A2", "B1")
	bc := nw.link("B2", "C1")
	nw.link("C2", "D1")
	nw.link("D2", "A1")
	nw.converge(time.Second)
	nw.stays(10 * time.Second)
	counts := map[string]uint64{}
	for _, name := range nw.names {
		n := nw.nodes[name]
		counts[name] = n.b.Status().TopologyChanges
		clear(n.flushes)
	}
	nw.setUp(bc, false)
	nw.converge(time.Second)
	nw.run(5 * time.Second)
	for _, name := range nw.names {
		if got := nw.nodes[name].b.Status().TopologyChanges; got <= counts[name] {
			t.Errorf("%s: %d topology changes, want more than %d", name, got, counts[name])
		}
	}
	// C's alternate port C2 becomes its root port and forwards: C detects
	// a change and signals it to D, D to A, A to B. Each flushes its
	// forwarding ports but the one it heard the change on.
	for _, f := range []struct {
		name                string
		heardOn, flushedOne int
	}{{"D", 1, 2}, {"A", 1, 2}} {
		n := nw.nodes[f.name]
		if n.flushes[f.flushedOne] == 0 || n.flushes[f.heardOn] != 0 {
			t.Errorf("%s: flushed %v, want port %d flushed and not port %d, where the change came from",
				f.name, n.flushes, f.flushedOne, f.heardOn)
		}
	}
}

// TestMaxAgeDiameter: on a chain of nine bridges whose root sets MaxAge to
// 6 s, the root's information reaches six hops (message age 0 to 5, plus
// one, within 6) and is dropped at the seventh: the bridges beyond elect
// their own root, and the link between the two parts stays blocked on
// one side (the dispute stops the root's side), so no loop forms.
func TestMaxAgeDiameter(t *testing.T) {
	cfgs := map[string]Config{}
	var names []string
	for i := range 9 {
		n := fmt.Sprintf("N%c", 'a'+i)
		names = append(names, n)
		cfgs[n] = DefaultConfig()
	}
	cfgs["Na"] = withTimes(4096, 1, 6, 4)
	nw := newNetwork(t, cfgs)
	for i := 0; i+1 < len(names); i++ {
		nw.link(names[i]+"2", names[i+1]+"1")
	}
	nw.run(10 * time.Second)
	check := func() {
		t.Helper()
		for i, n := range names {
			s := nw.nodes[n].b.Status()
			want := nw.nodes["Na"].b.Status().BridgeID
			if i >= 7 {
				want = nw.nodes["Nh"].b.Status().BridgeID
			}
			if s.Root != want {
				t.Errorf("%s, %d hops from the root: got root %s, want %s", n, i, s.Root, want)
			}
		}
		if g2, h1 := nw.port("Ng2"), nw.port("Nh1"); g2.State == Forwarding && h1.State == Forwarding {
			t.Errorf("Ng2 and Nh1 both forward (%s, %s): want one side blocked", g2.Role, h1.Role)
		}
	}
	check()
	before := nw.snapshot()
	nw.run(time.Minute)
	check()
	if after := nw.snapshot(); after != before {
		t.Errorf("ports changed within a minute:\nbefore %s\nafter  %s", before, after)
	}
}
