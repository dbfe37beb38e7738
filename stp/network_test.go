package stp

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// latency is how long a BPDU takes from one bridge to the next in the
// simulated networks: generous for a NIC and an AF_PACKET ring, so that
// the convergence times measured are upper bounds.
const latency = time.Millisecond

// network is bridges wired by segments (point-to-point links and hubs),
// on one fake clock: every BPDU sent reaches every other port of its
// segment latency later, and every bridge ticks every tick.
type network struct {
	// t reports failures.
	t *testing.T
	// clk is the fake clock.
	clk *clock.Fake
	// nodes are the bridges by name; names in the order added.
	nodes map[string]*node
	names []string
	// segments are the segments, in the order added.
	segments []*segment
	// inflight are the frames on the wire, by due time, then order sent.
	inflight []delivery
	// nextTick is when the bridges next tick.
	nextTick time.Time
	// capture records every frame sent, when set.
	capture *[]sent
}

// node is one bridge of a network.
type node struct {
	// name names the bridge.
	name string
	// index is the bridge's place in names.
	index int
	// b is the bridge.
	b *Bridge
	// ports maps our port IDs to their segments.
	ports map[int]*segment
	// flushes counts the flushes per port.
	flushes map[int]int
	// dead is set once the bridge crashed: it sends and hears nothing.
	dead bool
	// legacy makes the bridge drop BPDUs of any version but 0, as the
	// Linux kernel bridge's 802.1D STP does: with Config.Protocol STP, it
	// stands for one.
	legacy bool
}

// segment is a link or a hub.
type segment struct {
	// name names it in failures: "A1-B1", or "hub H".
	name string
	// ends are the ports on it.
	ends []end
	// up is false while it is cut.
	up bool
}

// end is one port on a segment.
type end struct {
	// n is the bridge.
	n *node
	// port is its port ID.
	port int
}

// String names the port: bridge name and port ID ("B2").
func (e end) String() string { return fmt.Sprintf("%s%d", e.n.name, e.port) }

// delivery is a frame on its way to a port.
type delivery struct {
	// due is when it arrives.
	due time.Time
	// to is where.
	to end
	// frame is the frame.
	frame []byte
}

// newNetwork returns a network of bridges named by the keys of cfgs
// (sorted), with the configurations given; each bridge's MAC is
// mac(<index>+1) unless set.
func newNetwork(t *testing.T, cfgs map[string]Config) *network {
	t.Helper()
	nw := &network{t: t, clk: clock.NewFake(), nodes: map[string]*node{}}
	nw.nextTick = nw.clk.Now().Add(tick)
	for name := range cfgs {
		nw.names = append(nw.names, name)
	}
	sort.Strings(nw.names)
	for i, name := range nw.names {
		cfg := cfgs[name]
		if cfg.MAC == [6]byte{} {
			cfg.MAC = mac(byte(i + 1))
		}
		n := &node{name: name, index: i, ports: map[int]*segment{}, flushes: map[int]int{}}
		b, err := New(cfg, nw.clk, Outputs{Send: nw.sender(n), Flush: func(port int) { n.flushes[port]++ }}, failOnError(t))
		if err != nil {
			t.Fatal(err)
		}
		n.b = b
		nw.nodes[name] = n
	}
	return nw
}

// sender returns the Send function of n: the frame goes on the wire.
func (nw *network) sender(n *node) func(int, []byte) {
	return func(port int, f []byte) {
		s := n.ports[port]
		if n.dead {
			return
		}
		if nw.capture != nil {
			*nw.capture = append(*nw.capture, sent{port, bytes.Clone(f), nw.clk.Now()})
		}
		if s == nil || !s.up {
			return
		}
		due := nw.clk.Now().Add(latency)
		for _, e := range s.ends {
			if e.n != n || e.port != port {
				nw.inflight = append(nw.inflight, delivery{due, e, bytes.Clone(f)})
			}
		}
	}
}

// parseEnd parses "B2" into bridge B's port 2.
func (nw *network) parseEnd(s string) end {
	nw.t.Helper()
	i := strings.IndexAny(s, "0123456789")
	n := nw.nodes[s[:max(i, 0)]]
	var port int
	if _, err := fmt.Sscan(s[i:], &port); n == nil || i <= 0 || err != nil {
		nw.t.Fatalf("bad port name %q", s)
	}
	return end{n, port}
}

// connect puts ports (named "A1", "B3", ...) on one segment, with link
// state l and configuration cfg, and adds them to their bridges. Two
// ports make a link; more, a hub.
func (nw *network) connect(name string, l Link, cfg PortConfig, ports ...string) *segment {
	nw.t.Helper()
	s := &segment{name: name, up: true}
	for _, p := range ports {
		s.ends = append(s.ends, nw.parseEnd(p))
	}
	nw.segments = append(nw.segments, s)
	for _, e := range s.ends {
		e.n.ports[e.port] = s
		if err := e.n.b.AddPort(e.port, e.String(), [6]byte{0x02, 0, 0, 0, byte(e.n.index + 1), byte(e.port)}, l, cfg); err != nil {
			nw.t.Fatal(err)
		}
	}
	return s
}

// link connects two ports with a 1 Gb/s point-to-point link.
func (nw *network) link(a, b string) *segment {
	nw.t.Helper()
	return nw.connect(a+"-"+b, up, DefaultPortConfig(), a, b)
}

// hub connects ports with a 100 Mb/s half-duplex hub.
func (nw *network) hub(name string, ports ...string) *segment {
	nw.t.Helper()
	return nw.connect("hub "+name, Link{Up: true, SpeedMbps: 100, HalfDuplex: true}, DefaultPortConfig(), ports...)
}

// setUp cuts or restores a segment: its ports see their links go down or
// up, and frames on it are lost.
func (nw *network) setUp(s *segment, up bool) {
	s.up = up
	nw.inflight = slices.DeleteFunc(nw.inflight, func(d delivery) bool { return slices.Contains(s.ends, d.to) })
	l := Link{}
	if up {
		l = Link{Up: true, SpeedMbps: 1000}
		if len(s.ends) > 2 {
			l = Link{Up: true, SpeedMbps: 100, HalfDuplex: true}
		}
	}
	for _, e := range s.ends {
		e.n.b.LinkChanged(e.port, l)
	}
}

// crash stops bridge name: it sends nothing more, hears nothing, and
// leaves the checks. With carrier, its neighbours' links stay up (a hung
// daemon); without, they go down (a power cut).
func (nw *network) crash(name string, carrier bool) {
	n := nw.nodes[name]
	n.dead = true
	nw.names = slices.DeleteFunc(nw.names, func(s string) bool { return s == name })
	for _, seg := range nw.segments {
		if !slices.ContainsFunc(seg.ends, func(e end) bool { return e.n == n }) {
			continue
		}
		seg.ends = slices.DeleteFunc(seg.ends, func(e end) bool { return e.n == n })
		nw.inflight = slices.DeleteFunc(nw.inflight, func(d delivery) bool { return d.to.n == n })
		if !carrier && len(seg.ends) == 1 {
			seg.up = false
			seg.ends[0].n.b.LinkChanged(seg.ends[0].port, Link{})
		}
	}
}

// step moves the clock to the next event not after end (a delivery or a
// tick) and handles it; it reports false when none is left before end.
func (nw *network) step(end time.Time) bool {
	next := nw.nextTick
	if len(nw.inflight) > 0 && nw.inflight[0].due.Before(next) {
		next = nw.inflight[0].due
	}
	if next.After(end) {
		nw.clk.Advance(end.Sub(nw.clk.Now()))
		return false
	}
	nw.clk.Advance(next.Sub(nw.clk.Now()))
	now := nw.clk.Now()
	for len(nw.inflight) > 0 && !nw.inflight[0].due.After(now) {
		d := nw.inflight[0]
		nw.inflight = nw.inflight[1:]
		if d.to.n.legacy && len(d.frame) > HeaderLen+offVersion && d.frame[HeaderLen+offVersion] != 0 {
			continue // an 802.1D-1998 bridge drops what it does not know
		}
		d.to.n.b.Input(d.to.port, d.frame)
	}
	if !now.Before(nw.nextTick) {
		for _, name := range nw.names {
			nw.nodes[name].b.Tick()
		}
		nw.nextTick = nw.nextTick.Add(tick)
	}
	return true
}

// run runs the network for d.
func (nw *network) run(d time.Duration) {
	for end := nw.clk.Now().Add(d); nw.step(end); {
	}
}

// until runs the network until cond holds (checked after every event) or
// limit passes; it returns the time taken and whether cond held.
func (nw *network) until(limit time.Duration, cond func() bool) (time.Duration, bool) {
	start := nw.clk.Now()
	for end := start.Add(limit); !cond(); {
		if !nw.step(end) {
			return nw.clk.Now().Sub(start), cond()
		}
	}
	return nw.clk.Now().Sub(start), true
}

// status returns the port status of e.
func (nw *network) status(e end) PortStatus {
	for _, s := range e.n.b.Ports() {
		if s.ID == e.port {
			return s
		}
	}
	nw.t.Fatalf("no port %s", e)
	return PortStatus{}
}

// port returns the status of a port named "B2".
func (nw *network) port(name string) PortStatus {
	nw.t.Helper()
	return nw.status(nw.parseEnd(name))
}

// treeError says what is wrong with the active topology, or "" when it
// is a spanning tree as 802.1D-2004 defines it, checked against what is
// computed here independently of the machines: every bridge of the part
// reachable from the lowest bridge identifier agrees that it is the root,
// with the root path cost of the cheapest path (port path costs of the
// receiving ports); every other bridge has one root port on such a path;
// every working segment has exactly one designated port, and every port
// is stable (root and designated ports forwarding, alternate and backup
// ports discarding); the forwarding ports form a tree.
func (nw *network) treeError() string {
	dist, root := nw.shortest()
	var errs []string
	for _, name := range nw.names {
		n := nw.nodes[name]
		s := n.b.Status()
		want := dist[n]
		if s.Root != root || s.RootPathCost != want || s.IsRoot != (want == 0) || (want != 0) != (s.RootPortName != "") {
			errs = append(errs, fmt.Sprintf("%s: root %s cost %d (we are root %v), want %s cost %d", name, s.Root, s.RootPathCost, s.IsRoot, root, want))
		}
	}
	forwarding := 0
	for _, seg := range nw.segments {
		if !seg.up {
			continue
		}
		designated := 0
		for _, e := range seg.ends {
			ps := nw.status(e)
			switch {
			case ps.Role == RoleDesignated:
				designated++
			case ps.Role == RoleRoot && e.n.b.Status().RootPathCost != dist[e.n]:
				errs = append(errs, fmt.Sprintf("%s: root port not on a cheapest path", e))
			}
			stable := (ps.Role == RoleRoot || ps.Role == RoleDesignated) == (ps.State == Forwarding) && ps.State != Learning
			if !stable {
				errs = append(errs, fmt.Sprintf("%s: %s %s", e, ps.Role, ps.State))
			}
			if ps.State == Forwarding {
				forwarding++
			}
		}
		if designated != 1 {
			errs = append(errs, fmt.Sprintf("segment %s: %d designated ports, want 1", seg.name, designated))
		}
	}
	// A tree over bridges and working segments: the forwarding ports
	// connect them all, and are one fewer than they are.
	nodes, reached := nw.forwardingReach()
	if forwarding != nodes-1 || reached != nodes {
		errs = append(errs, fmt.Sprintf("%d forwarding ports reach %d of %d bridges and segments, want %d reaching all (a tree)",
			forwarding, reached, nodes, nodes-1))
	}
	return strings.Join(errs, "\n")
}

// forwardingReach returns how many bridges and working segments there
// are, and how many of them the first bridge reaches through forwarding
// ports.
func (nw *network) forwardingReach() (nodes, reached int) {
	seen := map[any]bool{nw.nodes[nw.names[0]]: true}
	queue := []any{nw.nodes[nw.names[0]]}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, seg := range nw.segments {
			if !seg.up {
				continue
			}
			for _, e := range seg.ends {
				if (e.n == x || seg == x) && nw.status(e).State == Forwarding {
					for _, y := range []any{e.n, seg} {
						if !seen[y] {
							seen[y] = true
							queue = append(queue, y)
						}
					}
				}
			}
		}
	}
	nodes = len(nw.names)
	for _, seg := range nw.segments {
		if seg.up {
			nodes++
		}
	}
	return nodes, len(seen)
}

// shortest returns the lowest bridge identifier of the network and each
// bridge's cheapest root path cost to it over working segments (the path
// cost of the port a bridge receives on), by Dijkstra. It fails the test
// if the network is not connected.
func (nw *network) shortest() (map[*node]uint32, BridgeID) {
	var root *node
	for _, name := range nw.names {
		if n := nw.nodes[name]; root == nil || n.b.Status().BridgeID < root.b.Status().BridgeID {
			root = n
		}
	}
	dist := map[*node]uint32{root: 0}
	done := map[*node]bool{}
	for len(done) < len(dist) {
		var u *node
		for n, d := range dist {
			if !done[n] && (u == nil || d < dist[u]) {
				u = n
			}
		}
		done[u] = true
		for _, seg := range nw.segments {
			if !seg.up || !slices.ContainsFunc(seg.ends, func(e end) bool { return e.n == u }) {
				continue
			}
			for _, e := range seg.ends {
				if e.n == u {
					continue
				}
				d := uint64(dist[u]) + uint64(nw.status(e).PathCost)
				if old, ok := dist[e.n]; (!ok || d < uint64(old)) && d < math.MaxUint32 {
					dist[e.n] = uint32(d)
				}
			}
		}
	}
	if len(dist) != len(nw.names) {
		nw.t.Fatalf("the network is not connected: %d of %d bridges reach the root", len(dist), len(nw.names))
	}
	return dist, root.b.Status().BridgeID
}

// converge runs until the active topology is a spanning tree, failing the
// test if it is not one within limit; it returns the time taken.
func (nw *network) converge(limit time.Duration) time.Duration {
	nw.t.Helper()
	took, ok := nw.until(limit, func() bool { return nw.treeError() == "" })
	if !ok {
		nw.t.Fatalf("no spanning tree after %v:\n%s", took, nw.treeError())
	}
	return took
}

// stays runs for d and fails the test if the tree breaks or a port
// changes role or state meanwhile (a loop of flapping).
func (nw *network) stays(d time.Duration) {
	nw.t.Helper()
	before := nw.snapshot()
	nw.run(d)
	if msg := nw.treeError(); msg != "" {
		nw.t.Fatalf("tree broke within %v:\n%s", d, msg)
	}
	if after := nw.snapshot(); after != before {
		nw.t.Errorf("ports changed within %v:\nbefore %s\nafter  %s", d, before, after)
	}
}

// snapshot returns every port's role and state, as one line.
func (nw *network) snapshot() string {
	var b strings.Builder
	for _, name := range nw.names {
		for _, s := range nw.nodes[name].b.Ports() {
			fmt.Fprintf(&b, "%s:%s/%s ", s.Name, s.Role, s.State)
		}
	}
	return b.String()
}
