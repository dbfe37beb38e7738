package stp

import (
	"slices"
	"testing"
	"time"
)

// converged returns a rig whose port 1 is the root port towards root
// 4096/0x01 and whose ports 2 and 3 are designated ports, each agreed by
// a downstream RSTP neighbour: all forwarding. Frames, flushes and the
// topology changes of getting there are taken.
func converged(t *testing.T) *rig {
	t.Helper()
	r := newRig(t, DefaultConfig())
	for id := 1; id <= 3; id++ {
		r.addPort(id, DefaultPortConfig())
	}
	r.b.Input(1, rootPeer(0x01, FlagProposal).rst())
	for id := 2; id <= 3; id++ {
		r.b.Input(id, peer{root: bid(4096, 0x01), cost: 40000, bridge: bid(32768, byte(0x90+id)), port: NewPortID(128, 1),
			flags: rootRole(FlagAgreement)}.rst())
	}
	for id := 1; id <= 3; id++ {
		want := RoleDesignated
		if id == 1 {
			want = RoleRoot
		}
		r.want(id, want, Forwarding)
	}
	r.run(5 * time.Second) // past every tcWhile
	r.take(0)
	r.takeFlushed()
	return r
}

// TestTopologyChangeReceived: a BPDU with the TC flag on the root port
// flushes the other forwarding ports (not the one it came on), sends the
// TC flag out of them at once and for HelloTime + 1, and counts one
// topology change.
func TestTopologyChangeReceived(t *testing.T) {
	r := converged(t)
	before := r.b.Status().TopologyChanges
	r.b.Input(1, rootPeer(0x01, FlagTC).rst())
	if got := r.takeFlushed(); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("ports flushed: got %v, want [2 3]", got)
	}
	for id := 2; id <= 3; id++ {
		out := r.take(id)
		if len(out) != 1 || out[0].fields().Flags&FlagTC == 0 {
			t.Errorf("port %d: got %d BPDUs at once, want one with the TC flag", id, len(out))
		}
	}
	if out := r.take(1); len(out) != 0 {
		t.Errorf("port 1 (where the change came from): got %d BPDUs, want none", len(out))
	}
	s := r.b.Status()
	if s.TopologyChanges != before+1 || !s.TopologyChange || s.SinceTopologyChange != 0 {
		t.Errorf("status: got %d changes (in progress %v, %v ago), want %d, in progress, 0 s ago",
			s.TopologyChanges, s.TopologyChange, s.SinceTopologyChange, before+1)
	}
	// Periodic BPDUs carry the flag while tcWhile (HelloTime + 1 = 3 s)
	// runs, and not after.
	r.run(2 * time.Second)
	if f := r.last(2).fields(); f.Flags&FlagTC == 0 {
		t.Errorf("port 2 BPDU 2 s later: got flags %#x, want TC", f.Flags)
	}
	r.run(2 * time.Second)
	r.take(0)
	r.run(2 * time.Second)
	if f := r.last(2).fields(); f.Flags&FlagTC != 0 {
		t.Errorf("port 2 BPDU after tcWhile: got flags %#x, want no TC", f.Flags)
	}
	if s := r.b.Status(); s.TopologyChange || s.SinceTopologyChange != 6*time.Second {
		t.Errorf("status 6 s later: got in progress %v, %v ago; want over, 6s ago", s.TopologyChange, s.SinceTopologyChange)
	}
	if got := r.takeFlushed(); len(got) != 0 {
		t.Errorf("flushes after the change: got %v, want none", got)
	}
}

// TestTopologyChangeDetected: a non-edge port that starts forwarding is a
// topology change: every other forwarding port flushes, and the TC flag
// goes out of all of them, the root port included. An edge port that
// starts forwarding is not one.
func TestTopologyChangeDetected(t *testing.T) {
	r := converged(t)
	before := r.b.Status().TopologyChanges
	edge := DefaultPortConfig()
	edge.AdminEdge = true
	r.addPort(5, edge)
	r.want(5, RoleDesignated, Forwarding)
	if got := r.b.Status().TopologyChanges; got != before {
		t.Errorf("an edge port forwarding: got %d topology changes, want %d", got, before)
	}
	r.addPort(4, DefaultPortConfig())
	r.take(0)
	r.takeFlushed() // the new port's own flush as it starts
	r.b.Input(4, peer{root: bid(4096, 0x01), cost: 40000, bridge: bid(32768, 0x94), port: NewPortID(128, 1),
		flags: rootRole(FlagAgreement)}.rst())
	r.want(4, RoleDesignated, Forwarding)
	if got := r.takeFlushed(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("ports flushed: got %v, want [1 2 3] (not the new port, not the edge port)", got)
	}
	for id := 1; id <= 4; id++ {
		if f := r.last(id).fields(); f.Flags&FlagTC == 0 {
			t.Errorf("port %d: got flags %#x, want TC", id, f.Flags)
		}
	}
	if got := r.b.Status().TopologyChanges; got != before+1 {
		t.Errorf("topology changes: got %d, want %d", got, before+1)
	}
}

// TestTopologyChangeSTP: towards an 802.1D neighbour, a TCN BPDU on our
// designated port is acknowledged (TCA in the next Configuration BPDU)
// and propagated; as a root port towards an 802.1D root we send TCN BPDUs
// every HelloTime until it acknowledges.
func TestTopologyChangeSTP(t *testing.T) {
	r := newRig(t, withTimes(4096, 2, 20, 15)) // we are the root
	notEdge := DefaultPortConfig()
	notEdge.AutoEdge = false // edge ports are neither flushed nor signalled
	r.addPort(1, notEdge)
	r.addPort(2, notEdge)
	// An 802.1D bridge on port 1: we speak STP there, and it forwards
	// after MaxAge + FwdDelay (20 + 15 s).
	stp := peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1)}
	r.b.Input(1, stp.config())
	r.run(4 * time.Second)
	r.b.Input(1, stp.config())
	r.run(40 * time.Second)
	r.want(1, RoleDesignated, Forwarding)
	// Going forwarding was a topology change, signalled for MaxAge +
	// FwdDelay; let it end.
	r.run(40 * time.Second)
	if p := r.port(1).Protocol; p != STP {
		t.Fatalf("port 1 speaks %s, want stp", p)
	}
	r.take(0)
	r.takeFlushed()
	r.b.Input(1, tcnFrame(0x99))
	if got := r.takeFlushed(); !slices.Equal(got, []int{2}) {
		t.Errorf("flushed after a TCN on port 1: got %v, want [2]", got)
	}
	r.run(2 * time.Second)
	out := r.take(1)
	if len(out) == 0 || out[0].kind() != KindConfig || out[0].fields().Flags != FlagTC|FlagTCAck {
		t.Fatalf("port 1 after the TCN: got %+v, want a Configuration BPDU with TC and TCA", out)
	}
	// TCA once; TC for MaxAge + FwdDelay.
	r.run(30 * time.Second)
	if f := r.last(1).fields(); f.Flags != FlagTC {
		t.Errorf("port 1 30 s later: got flags %#x, want TC only", f.Flags)
	}
	r.run(10 * time.Second)
	if f := r.last(1).fields(); f.Flags != 0 {
		t.Errorf("port 1 40 s later: got flags %#x, want none", f.Flags)
	}

	t.Run("TCN BPDUs from our root port", func(t *testing.T) {
		c := withTimes(STPTestPriority, 2, 20, 15)
		c.Protocol = STP
		r := newRig(t, c)
		r.addPort(1, DefaultPortConfig())
		root := peer{root: bid(4096, 0x01), bridge: bid(4096, 0x01), port: NewPortID(128, 1)}
		r.feed(1, root.config(), 50*time.Second) // root port after MaxAge + FwdDelay
		r.want(1, RoleRoot, Forwarding)
		// No TCN before the port forwards, the change it signals: not
		// for agreeing to the root's information, which 802.1D bridges
		// would take for a topology change.
		for _, s := range r.take(1) {
			if at := s.at.Sub(start); s.kind() == KindTCN && at < 35*time.Second {
				t.Errorf("TCN BPDU at %v, before port 1 forwarded (35 s)", at)
			}
		}
		ack := root
		ack.flags = FlagTCAck
		r.b.Input(1, ack.config()) // for our first topology change
		r.take(0)
		// A second port starts forwarding (after 22 s): a topology change.
		r.addPort(2, notEdge)
		r.feed(1, root.config(), 40*time.Second)
		r.want(2, RoleDesignated, Forwarding)
		var tcns []time.Duration
		for _, s := range r.take(1) {
			if s.kind() != KindTCN {
				t.Fatalf("port 1 sent a %s BPDU, want only TCN BPDUs", s.kind())
			}
			tcns = append(tcns, s.at.Sub(start))
		}
		if len(tcns) < 3 {
			t.Fatalf("TCN BPDUs before the acknowledgement: got %v, want one every HelloTime", tcns)
		}
		for i := 1; i < len(tcns); i++ {
			if tcns[i]-tcns[i-1] != 2*time.Second {
				t.Errorf("TCN BPDUs at %v: want one every HelloTime (2 s)", tcns)
				break
			}
		}
		r.b.Input(1, ack.config())
		r.take(1)
		r.feed(1, root.config(), 10*time.Second)
		if out := r.take(1); len(out) != 0 {
			t.Errorf("after the acknowledgement: got %d BPDUs on port 1, want none", len(out))
		}
	})
}

// STPTestPriority is a priority worse than every neighbour's.
const STPTestPriority = 61440
