package stp

import (
	"testing"
	"time"
)

// We are bridge 8000.020000000050 in these tests; peers are named by
// their priority and the last octet of their MAC.

// TestRootElection has one neighbour claim to be the root and checks who
// is: the lower priority wins, then the lower MAC.
func TestRootElection(t *testing.T) {
	tests := []struct {
		name     string
		priority uint16 // the neighbour's
		last     byte   // the last octet of the neighbour's MAC (ours is 0x50)
		theyWin  bool
	}{
		{"lower priority wins", 4096, 0x99, true},
		{"higher priority loses, whatever its MAC", 61440, 0x01, false},
		{"same priority: lower MAC wins", 32768, 0x10, true},
		{"same priority: higher MAC loses", 32768, 0x99, false},
		{"priority 0 wins over 4096 and any MAC", 0, 0xff, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, DefaultConfig())
			r.addPort(1, DefaultPortConfig())
			them := bid(tc.priority, tc.last)
			r.b.Input(1, peer{root: them, bridge: them, port: NewPortID(128, 1), flags: designated(0)}.rst())
			s := r.b.Status()
			if tc.theyWin {
				if s.Root != them || s.IsRoot || s.RootPathCost != 20000 || s.RootPortName != "p1" {
					t.Errorf("status: got root %s (we are root: %v) cost %d via %q, want root %s cost 20000 via p1",
						s.Root, s.IsRoot, s.RootPathCost, s.RootPortName, them)
				}
				r.want(1, RoleRoot, Forwarding) // the neighbour proposed nothing: no sync needed, no other port
				return
			}
			if s.Root != bid(32768, 0x50) || !s.IsRoot || s.RootPathCost != 0 || s.RootPortName != "" {
				t.Errorf("status: got root %s (we are root: %v) cost %d via %q, want us, cost 0, no root port",
					s.Root, s.IsRoot, s.RootPathCost, s.RootPortName)
			}
			if got := r.port(1).Role; got != RoleDesignated {
				t.Errorf("port 1 role: got %s, want designated", got)
			}
			if f := r.last(1).fields(); f.Root != bid(32768, 0x50) || f.Flags&flagRoleMask != designated(0) {
				t.Errorf("BPDU we send: got root %s flags %#x, want us as root, designated role", f.Root, f.Flags)
			}
		})
	}
}

// TestRootPortSelection gives ports 1 and 2 messages about the same root
// (4096/0x01) and checks which becomes the root port and what the other
// becomes, by root path cost, designated bridge, designated port, then
// our own port identifier.
func TestRootPortSelection(t *testing.T) {
	root := bid(4096, 0x01)
	x, y := bid(32768, 0x10), bid(32768, 0x30) // both better than us (0x50)
	p1, p2 := NewPortID(128, 1), NewPortID(128, 2)
	tests := []struct {
		name       string
		cfg1, cfg2 func(c *PortConfig)
		in1, in2   peer
		rootPort   int
		other      Role
		cost       uint32
	}{
		{"lower root path cost wins", nil, nil,
			peer{root: root, cost: 20000, bridge: x, port: p1}, peer{root: root, cost: 0, bridge: root, port: p1},
			2, RoleAlternate, 20000},
		{"equal cost: lower designated bridge wins", nil, nil,
			peer{root: root, cost: 20000, bridge: y, port: p1}, peer{root: root, cost: 20000, bridge: x, port: p1},
			2, RoleAlternate, 40000},
		{"equal bridge: lower designated port wins", nil, nil,
			peer{root: root, cost: 20000, bridge: x, port: p2}, peer{root: root, cost: 20000, bridge: x, port: p1},
			2, RoleAlternate, 40000},
		{"same message on both (a shared segment): lower port of ours wins", nil, nil,
			peer{root: root, cost: 20000, bridge: x, port: p1}, peer{root: root, cost: 20000, bridge: x, port: p1},
			1, RoleAlternate, 40000},
		{"our port priority decides before our port number", nil, func(c *PortConfig) { c.Priority = 64 },
			peer{root: root, cost: 20000, bridge: x, port: p1}, peer{root: root, cost: 20000, bridge: x, port: p1},
			2, RoleAlternate, 40000},
		{"our path cost is added: a cheap link to a far bridge wins", func(c *PortConfig) { c.PathCost = 1000 },
			func(c *PortConfig) { c.PathCost = 200_000 },
			peer{root: root, cost: 20000, bridge: x, port: p1}, peer{root: root, cost: 0, bridge: root, port: p1},
			1, RoleAlternate, 21000},
		{"a worse bridge on the other port: we are designated there", nil, nil,
			peer{root: root, cost: 0, bridge: root, port: p1}, peer{root: root, cost: 40000, bridge: bid(32768, 0x90), port: p1},
			1, RoleDesignated, 20000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, DefaultConfig())
			for i, edit := range []func(*PortConfig){tc.cfg1, tc.cfg2} {
				c := DefaultPortConfig()
				if edit != nil {
					edit(&c)
				}
				r.addPort(i+1, c)
			}
			tc.in1.flags, tc.in2.flags = designated(0), designated(0)
			r.b.Input(1, tc.in1.rst())
			r.b.Input(2, tc.in2.rst())
			s := r.b.Status()
			if s.RootPort != tc.rootPort || s.Root != root || s.RootPathCost != tc.cost {
				t.Errorf("got root %s via port %d at cost %d, want %s via port %d at cost %d",
					s.Root, s.RootPort, s.RootPathCost, root, tc.rootPort, tc.cost)
			}
			other := 3 - tc.rootPort
			if got := r.port(other).Role; got != tc.other {
				t.Errorf("port %d: got role %s, want %s", other, got, tc.other)
			}
			if got := r.port(tc.rootPort).Role; got != RoleRoot {
				t.Errorf("port %d: got role %s, want root", tc.rootPort, got)
			}
		})
	}
}

// TestBackupPort puts ports 1 and 2 on one segment: port 2 hears port 1's
// BPDUs, so it is a backup port and discards, while port 1 stays
// designated.
func TestBackupPort(t *testing.T) {
	r := newRig(t, DefaultConfig())
	cfg := DefaultPortConfig()
	cfg.PointToPoint, cfg.AutoEdge = PTPOff, false
	r.addPort(1, cfg)
	r.addPort(2, cfg)
	r.b.Input(2, r.last(1).frame)
	r.b.Input(1, r.last(2).frame)
	r.want(1, RoleDesignated, Discarding)
	r.want(2, RoleBackup, Discarding)
	if s := r.port(2); s.DesignatedBridge != bid(32768, 0x50) || s.DesignatedPort != NewPortID(128, 1) {
		t.Errorf("port 2's designated bridge and port: got %s %s, want us (8000.020000000050) and port 8001", s.DesignatedBridge, s.DesignatedPort)
	}
	// On a shared segment nothing agrees: port 1 forwards after fdWhile
	// (MaxAge, since it was disabled) and forwardDelay of learning.
	for range 10 {
		r.run(2 * tick)
		r.b.Input(2, r.last(1).frame) // port 1 keeps the backup port informed
	}
	r.want(1, RoleDesignated, Discarding)
	r.run(25 * time.Second)
	r.b.Input(2, r.last(1).frame)
	r.want(1, RoleDesignated, Forwarding)
	r.want(2, RoleBackup, Discarding)
}

// TestAlternatePortTakesOver checks that when the root port's link goes
// down, an alternate port becomes the root port and forwards at once.
func TestAlternatePortTakesOver(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	r.addPort(2, DefaultPortConfig())
	root := bid(4096, 0x01)
	r.b.Input(1, peer{root: root, bridge: root, port: NewPortID(128, 1), flags: designated(0)}.rst())
	r.b.Input(2, peer{root: root, cost: 20000, bridge: bid(32768, 0x10), port: NewPortID(128, 1), flags: designated(0)}.rst())
	r.want(1, RoleRoot, Forwarding)
	r.want(2, RoleAlternate, Discarding)
	r.run(5 * tick)
	r.b.LinkChanged(1, Link{})
	r.want(1, RoleDisabled, Discarding)
	r.want(2, RoleRoot, Forwarding)
	if s := r.b.Status(); s.RootPathCost != 40000 || s.RootPortName != "p2" {
		t.Errorf("after the root port failed: got cost %d via %q, want 40000 via p2", s.RootPathCost, s.RootPortName)
	}
}
