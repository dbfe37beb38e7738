package stp

import (
	"testing"
	"time"
)

// protocolOf returns the kinds of the BPDUs sent on port id since the
// last take, and forgets them.
func (r *rig) kinds(id int) []Kind {
	var k []Kind
	for _, s := range r.take(id) {
		k = append(k, s.kind())
	}
	return k
}

// onlyKind reports whether every kind in ks is k (and there is one).
func onlyKind(ks []Kind, k Kind) bool {
	for _, x := range ks {
		if x != k {
			return false
		}
	}
	return len(ks) > 0
}

// TestMigration: a port whose neighbour speaks 802.1D falls back to
// Configuration BPDUs (after the MigrateTime it first spends sending RST
// BPDUs), and moves back to RST BPDUs when the neighbour does (after the
// MigrateTime it keeps STP).
func TestMigration(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	worse := peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1)}
	r.feed(1, worse.config(), 2*time.Second)
	if p := r.port(1).Protocol; p != RSTP {
		t.Errorf("port 1 within MigrateTime of starting: got %s, want rstp (it keeps what it chose)", p)
	}
	r.feed(1, worse.config(), 4*time.Second)
	if p := r.port(1).Protocol; p != STP {
		t.Fatalf("port 1 after 6 s of Configuration BPDUs: got %s, want stp", p)
	}
	r.take(1)
	r.feed(1, worse.config(), 10*time.Second)
	if k := r.kinds(1); !onlyKind(k, KindConfig) {
		t.Errorf("BPDUs sent to the 802.1D neighbour: got %v, want only Configuration BPDUs", k)
	}

	// The neighbour now speaks RSTP.
	worse.flags = designated(0)
	r.feed(1, worse.rst(), 4*time.Second)
	if p := r.port(1).Protocol; p != RSTP {
		t.Fatalf("port 1 after 4 s of RST BPDUs: got %s, want rstp", p)
	}
	r.take(1)
	r.feed(1, worse.rst(), 10*time.Second)
	if k := r.kinds(1); !onlyKind(k, KindRST) {
		t.Errorf("BPDUs sent after migrating back: got %v, want only RST BPDUs", k)
	}
}

// TestMigrationHoldsMigrateTime: an RST BPDU right after falling back to
// STP does not bring the port back before MigrateTime has passed.
func TestMigrationHoldsMigrateTime(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	worse := peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1)}
	r.run(4 * time.Second) // past CHECKING_RSTP
	r.b.Input(1, worse.config())
	if p := r.port(1).Protocol; p != STP {
		t.Fatalf("port 1 after a Configuration BPDU while sensing: got %s, want stp", p)
	}
	worse.flags = designated(0)
	r.b.Input(1, worse.rst())
	r.run(2 * time.Second)
	r.b.Input(1, worse.rst())
	if p := r.port(1).Protocol; p != STP {
		t.Errorf("port 1 2 s after falling back: got %s, want stp still (MigrateTime is 3 s)", p)
	}
	r.run(2 * time.Second)
	r.b.Input(1, worse.rst())
	if p := r.port(1).Protocol; p != RSTP {
		t.Errorf("port 1 4 s after falling back: got %s, want rstp", p)
	}
}

// TestMCheck: a port left on STP by a neighbour that went silent sends
// RST BPDUs again on MCheck; on a bridge forced to STP, MCheck does
// nothing.
func TestMCheck(t *testing.T) {
	for _, proto := range []Protocol{RSTP, STP} {
		t.Run(proto.String(), func(t *testing.T) {
			c := DefaultConfig()
			c.Protocol = proto
			r := newRig(t, c)
			r.addPort(1, DefaultPortConfig())
			r.run(4 * time.Second)
			r.b.Input(1, peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1)}.config())
			r.run(10 * time.Second)
			if p := r.port(1).Protocol; p != STP {
				t.Fatalf("port 1: got %s, want stp", p)
			}
			r.take(1)
			r.b.MCheck(1)
			r.run(3 * time.Second)
			want := KindRST
			if proto == STP {
				want = KindConfig
			}
			if k := r.kinds(1); !onlyKind(k, want) {
				t.Errorf("after MCheck: got %v, want only %s BPDUs", k, want)
			}
		})
	}
}

// TestForceSTP: a bridge forced to STP sends Configuration BPDUs from the
// start, keeps them when it hears RST BPDUs, and a port on it forwards
// only after FwdDelay of listening and FwdDelay of learning, agreements
// or not. Switching the bridge to RSTP restarts its ports on RSTP.
func TestForceSTP(t *testing.T) {
	c := withTimes(4096, 2, 20, 15)
	c.Protocol = STP
	r := newRig(t, c)
	nc := DefaultPortConfig()
	r.addPort(1, nc)
	if k := r.kinds(1); !onlyKind(k, KindConfig) {
		t.Fatalf("first BPDUs: got %v, want Configuration BPDUs", k)
	}
	agree := peer{root: bid(4096, 0x50), cost: 20000, bridge: bid(32768, 0x99), port: NewPortID(128, 1), flags: rootRole(FlagAgreement)}
	r.feed(1, agree.rst(), 19*time.Second)
	r.want(1, RoleDesignated, Discarding)
	r.feed(1, agree.rst(), 15*time.Second)
	r.want(1, RoleDesignated, Learning)
	r.feed(1, agree.rst(), 2*time.Second)
	r.want(1, RoleDesignated, Forwarding)
	if k := r.kinds(1); !onlyKind(k, KindConfig) {
		t.Errorf("BPDUs sent while hearing RST BPDUs: got %v, want only Configuration BPDUs", k)
	}
	c.Protocol = RSTP
	if err := r.b.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	if p := r.port(1); p.Protocol != RSTP || p.State != Discarding {
		t.Errorf("after switching to RSTP: got %s %s, want rstp discarding (restarted)", p.Protocol, p.State)
	}
	r.b.Input(1, agree.rst())
	r.want(1, RoleDesignated, Forwarding)
}
