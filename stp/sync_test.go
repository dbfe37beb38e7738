package stp

import (
	"testing"
	"time"
)

// TestProposalAgreementDesignated: we are the root; our designated port
// proposes, and forwards the moment the neighbour agrees, with no timer;
// a neighbour that does not agree leaves it discarding for fdWhile.
func TestProposalAgreementDesignated(t *testing.T) {
	cfg := DefaultPortConfig()
	cfg.AutoEdge = false
	r := newRig(t, withTimes(4096, 2, 20, 15))
	r.addPort(1, cfg)
	s := r.last(1)
	f := s.fields()
	if s.kind() != KindRST || f.Flags != designated(FlagProposal) || f.Root != bid(4096, 0x50) {
		t.Fatalf("first BPDU: got %s flags %#x root %s, want an RST BPDU, designated, proposal, root us", s.kind(), f.Flags, f.Root)
	}
	r.want(1, RoleDesignated, Discarding)
	r.run(time.Second)
	r.want(1, RoleDesignated, Discarding)
	// The neighbour's root port agrees, with our information plus its cost.
	r.b.Input(1, peer{root: bid(4096, 0x50), cost: 20000, bridge: bid(32768, 0x99), port: NewPortID(128, 1),
		flags: rootRole(FlagAgreement)}.rst())
	r.want(1, RoleDesignated, Forwarding)
	if f := r.last(1).fields(); f.Flags&(FlagProposal|FlagForwarding|FlagLearning) != FlagForwarding|FlagLearning {
		t.Errorf("BPDU after the agreement: got flags %#x, want forwarding and learning, no proposal", f.Flags)
	}

	t.Run("no agreement: fdWhile, then learning for HelloTime", func(t *testing.T) {
		r := newRig(t, withTimes(4096, 2, 20, 15))
		r.addPort(1, cfg)
		// Left disabled with fdWhile at MaxAge, the port waits 20 s
		// discarding, then HelloTime (forwardDelay on RSTP) learning.
		r.run(19 * time.Second)
		r.want(1, RoleDesignated, Discarding)
		r.run(2 * time.Second)
		r.want(1, RoleDesignated, Learning)
		r.run(2 * time.Second)
		r.want(1, RoleDesignated, Forwarding)
	})
	t.Run("an agreement on a shared segment does not count", func(t *testing.T) {
		r := newRig(t, withTimes(4096, 2, 20, 15))
		shared := cfg
		shared.PointToPoint = PTPOff
		r.addPort(1, shared)
		r.b.Input(1, peer{root: bid(4096, 0x50), cost: 20000, bridge: bid(32768, 0x99), port: NewPortID(128, 1),
			flags: rootRole(FlagAgreement)}.rst())
		r.want(1, RoleDesignated, Discarding)
	})
}

// TestProposalAgreementRoot: a better root proposes on our port 1; we
// sync (our other designated port, discarding, is synced already), agree
// at once, and port 1 forwards at once: the handshake takes no time.
func TestProposalAgreementRoot(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	r.addPort(2, DefaultPortConfig())
	r.run(time.Second)
	r.take(0)
	r.b.Input(1, rootPeer(0x01, FlagProposal).rst())
	r.want(1, RoleRoot, Forwarding)
	r.want(2, RoleDesignated, Discarding)
	out := r.take(1)
	if len(out) != 1 || out[0].fields().Flags&(flagRoleMask|FlagAgreement) != rootRole(FlagAgreement) {
		t.Fatalf("port 1 sent %d BPDUs; want one, root role with the agreement: %+v", len(out), out)
	}
	if f := out[0].fields(); f.Root != bid(4096, 0x01) || f.RootPathCost != 20000 || f.Bridge != bid(32768, 0x50) {
		t.Errorf("agreement: got root %s cost %d bridge %s, want the new root, 20000, us", f.Root, f.RootPathCost, f.Bridge)
	}
	// Port 2 proposes the new information downstream.
	if f := r.last(2).fields(); f.Root != bid(4096, 0x01) || f.Flags&FlagProposal == 0 {
		t.Errorf("port 2 BPDU: got root %s flags %#x, want the new root with a proposal", f.Root, f.Flags)
	}
	// A repeated proposal is agreed to again at once.
	r.b.Input(1, rootPeer(0x01, FlagProposal).rst())
	if out := r.take(1); len(out) != 1 || out[0].fields().Flags&FlagAgreement == 0 {
		t.Errorf("second proposal: got %d BPDUs on port 1, want one agreement", len(out))
	}
}

// TestSyncDiscardsUnagreedPorts: on a new root port proposal, a forwarding
// designated port towards an 802.1D neighbour (never agreed) discards
// before we agree, so no loop can form through it.
func TestSyncDiscardsUnagreedPorts(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	r.addPort(2, DefaultPortConfig())
	// An 802.1D bridge, worse than us, on port 2.
	stp := peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1)}
	for range 25 {
		r.b.Input(2, stp.config())
		r.run(2 * time.Second)
	}
	r.want(2, RoleDesignated, Forwarding)
	if p := r.port(2).Protocol; p != STP {
		t.Fatalf("port 2 speaks %s, want stp", p)
	}
	r.b.Input(1, rootPeer(0x01, FlagProposal).rst())
	r.want(1, RoleRoot, Forwarding)
	r.want(2, RoleDesignated, Discarding)
	if f := r.last(1).fields(); f.Flags&FlagAgreement == 0 {
		t.Errorf("port 1: got flags %#x, want the agreement (port 2 discards, so we are in sync)", f.Flags)
	}
}

// TestEdgePorts checks admin edge (forwards at once, normal at its first
// BPDU), autoedge (an edge port after MigrateTime without a BPDU on a
// point-to-point link, MaxAge on a shared one) and that edge ports make no
// topology change.
func TestEdgePorts(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *PortConfig)
		edgeBy  time.Duration // forwarding as an edge port by then; 0: never within 19 s
		notYet  time.Duration // still discarding then
		wantTCs uint64
	}{
		{"admin edge forwards at once", func(c *PortConfig) { c.AdminEdge = true }, 0, 0, 0},
		{"autoedge on a point-to-point link: edge after MigrateTime", nil, 4 * time.Second, 2 * time.Second, 0},
		{"autoedge on a shared link: edge after MaxAge", func(c *PortConfig) { c.PointToPoint = PTPOff }, 21 * time.Second, 19 * time.Second, 0},
		{"no autoedge: not an edge port", func(c *PortConfig) { c.AutoEdge = false }, -1, 19 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, DefaultConfig())
			c := DefaultPortConfig()
			if tc.edit != nil {
				tc.edit(&c)
			}
			r.addPort(1, c)
			if tc.edgeBy == 0 {
				r.want(1, RoleDesignated, Forwarding)
			} else {
				r.run(tc.notYet)
				r.want(1, RoleDesignated, Discarding)
				if tc.edgeBy > 0 {
					r.run(tc.edgeBy - tc.notYet)
					r.want(1, RoleDesignated, Forwarding)
				}
			}
			if s := r.port(1); s.Edge != (tc.edgeBy >= 0) {
				t.Errorf("edge: got %v, want %v", s.Edge, tc.edgeBy >= 0)
			}
			if got := r.b.Status().TopologyChanges; got != tc.wantTCs {
				t.Errorf("topology changes: got %d, want %d", got, tc.wantTCs)
			}
			if tc.edgeBy < 0 {
				return
			}
			// The first BPDU ends edge status; the port stays designated
			// and forwarding (the neighbour is worse).
			r.b.Input(1, peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1), flags: designated(0)}.rst())
			if s := r.port(1); s.Edge {
				t.Errorf("edge after a BPDU: got true, want false")
			}
			r.want(1, RoleDesignated, Forwarding)
		})
	}
}

// TestAdminEdgeChange: setting AdminEdge on a discarding port makes it an
// edge port that forwards at once; clearing it makes it a normal port.
func TestAdminEdgeChange(t *testing.T) {
	r := newRig(t, DefaultConfig())
	c := DefaultPortConfig()
	c.AutoEdge = false
	r.addPort(1, c)
	r.want(1, RoleDesignated, Discarding)
	c.AdminEdge = true
	if err := r.b.SetPortConfig(1, c); err != nil {
		t.Fatal(err)
	}
	r.want(1, RoleDesignated, Forwarding)
	c.AdminEdge = false
	if err := r.b.SetPortConfig(1, c); err != nil {
		t.Fatal(err)
	}
	if r.port(1).Edge {
		t.Errorf("edge after clearing AdminEdge: got true, want false")
	}
}
