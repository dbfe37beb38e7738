package stp

import (
	"testing"
	"time"
)

// TestBadBPDUsCounted feeds a port every kind of bad frame and checks that
// each is dropped and counted once, under its cause, and changes nothing.
func TestBadBPDUsCounted(t *testing.T) {
	cfg, rst, tcn := encoded(KindConfig), encoded(KindRST), encoded(KindTCN)
	bpdu := func(b []byte) []byte { return b[HeaderLen:] }
	tests := []struct {
		name  string
		frame func(r *rig) []byte
		cause Cause
	}{
		{"LLDP frame", func(*rig) []byte { return edit(rst, func(b []byte) { b[5] = 0x0e }) }, CauseNotBPDU},
		{"Ethernet II frame", func(*rig) []byte { return edit(rst, func(b []byte) { setLength(b, 0x88cc) }) }, CauseNotBPDU},
		{"SNAP LLC", func(*rig) []byte { return edit(rst, func(b []byte) { b[14], b[15] = 0xaa, 0xaa }) }, CauseNotBPDU},
		{"runt", func(*rig) []byte { return rst[:8] }, CauseTruncated},
		{"802.3 length beyond the frame", func(*rig) []byte { return edit(rst, func(b []byte) { setLength(b, 200) }) }, CauseTruncated},
		{"RST BPDU of 35 octets", func(*rig) []byte { return edit(rst, func(b []byte) { setLength(b, llcLen+35) }) }, CauseTruncated},
		{"Configuration BPDU of 34 octets", func(*rig) []byte { return edit(cfg, func(b []byte) { setLength(b, llcLen+34) }) }, CauseTruncated},
		{"TCN BPDU of 3 octets", func(*rig) []byte { return edit(tcn, func(b []byte) { setLength(b, llcLen+3) }) }, CauseTruncated},
		{"protocol identifier 0x0101", func(*rig) []byte { return edit(rst, func(b []byte) { bpdu(b)[0], bpdu(b)[1] = 1, 1 }) }, CauseProtocol},
		{"BPDU type 0x7f", func(*rig) []byte { return edit(rst, func(b []byte) { bpdu(b)[offType] = 0x7f }) }, CauseType},
		{"RST BPDU of version 1", func(*rig) []byte { return edit(rst, func(b []byte) { bpdu(b)[offVersion] = 1 }) }, CauseVersion},
		{"Configuration BPDU past its max age", func(*rig) []byte {
			return edit(cfg, func(b []byte) { bpdu(b)[offMessageAge] = 0x15 }) // 21 s
		}, CauseMessageAge},
		{"our own Configuration BPDU, looped back", func(r *rig) []byte {
			f := DefaultConfig()
			f.Protocol = STP
			if err := r.b.SetConfig(f); err != nil {
				r.t.Fatal(err)
			}
			return r.last(1).frame
		}, CauseLoopback},
		{"a BPDU on a port whose link is down", func(r *rig) []byte {
			r.b.LinkChanged(1, Link{})
			return rst
		}, CausePortDown},
		{"a BPDU on a port that takes no part", func(r *rig) []byte {
			c := DefaultPortConfig()
			c.Enabled = false
			if err := r.b.SetPortConfig(1, c); err != nil {
				r.t.Fatal(err)
			}
			return rst
		}, CausePortDown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, DefaultConfig())
			r.addPort(1, DefaultPortConfig())
			f := tc.frame(r)
			before := r.port(1)
			status := r.b.Status()
			r.b.Input(1, f)
			after := r.port(1)
			if got := after.Counters.Bad.Of(tc.cause); got != 1 {
				t.Errorf("count of cause %q: got %d, want 1", tc.cause, got)
			}
			if got := after.Counters.Bad.Total(); got != 1 {
				t.Errorf("bad frames counted: got %d (%+v), want 1", got, after.Counters.Bad)
			}
			if got := after.Counters.Rx(); got != before.Counters.Rx() {
				t.Errorf("valid BPDUs counted: got %d, want %d", got, before.Counters.Rx())
			}
			before.Counters, after.Counters = Counters{}, Counters{}
			if after != before || r.b.Status() != status {
				t.Errorf("the frame changed the port or the bridge:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
	t.Run("a frame for a port the Bridge does not know is ignored", func(t *testing.T) {
		r := newRig(t, DefaultConfig())
		r.addPort(1, DefaultPortConfig())
		r.b.Input(7, rst)
		if c := r.port(1).Counters; c.Bad.Total() != 0 || c.Rx() != 0 {
			t.Errorf("port 1 counters: got %+v, want nothing counted", c)
		}
	})
}

// TestBPDUsCountedByKind checks the receive and transmit counters.
func TestBPDUsCountedByKind(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	worse := peer{root: bid(61440, 0x99), bridge: bid(61440, 0x99), port: NewPortID(128, 1)}
	r.b.Input(1, worse.config())
	r.b.Input(1, worse.config())
	r.b.Input(1, tcnFrame(0x99))
	worse.flags = designated(0)
	r.b.Input(1, worse.rst())
	c := r.port(1).Counters
	if c.RxConfig != 2 || c.RxTCN != 1 || c.RxRST != 1 || c.Rx() != 4 {
		t.Errorf("receive counters: got %+v, want 2 config, 1 TCN, 1 RST", c)
	}
	if c.TxRST != uint64(len(r.take(1))) || c.TxRST == 0 || c.TxConfig != 0 || c.TxTCN != 0 {
		t.Errorf("transmit counters: got %+v, want every frame sent counted as RST", c)
	}
}

// TestMaxAge: information whose sender falls silent is dropped after three
// of its hello times; information that has travelled MaxAge hops is
// dropped at once (message age + 1 beyond max age); our BPDUs carry the message age plus one.
func TestMaxAge(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	r.addPort(2, DefaultPortConfig())
	r.feed(1, rootPeer(0x01, 0).rst(), 10*time.Second)
	if s := r.b.Status(); s.Root != bid(4096, 0x01) {
		t.Fatalf("root: got %s, want 1000.020000000001", s.Root)
	}
	// The last BPDU came 2 s ago. rcvdInfoWhile is 3 x HelloTime = 6 s,
	// counted in whole seconds: it ends 5 to 6 s after the BPDU.
	r.run(2 * time.Second)
	if s := r.b.Status(); s.Root != bid(4096, 0x01) {
		t.Errorf("root 4 s after the last BPDU: got %s, want it kept", s.Root)
	}
	r.run(3 * time.Second)
	if s := r.b.Status(); !s.IsRoot {
		t.Errorf("7 s after the last BPDU: got root %s, want us", s.Root)
	}
	if got := r.port(1).Role; got != RoleDesignated {
		t.Errorf("port 1 role when the information aged: got %s, want designated", got)
	}

	for _, tc := range []struct {
		age    int
		accept bool
	}{{18, true}, {19, true}, {20, false}, {25, false}} {
		r := newRig(t, DefaultConfig())
		r.addPort(1, DefaultPortConfig())
		r.addPort(2, DefaultPortConfig())
		far := rootPeer(0x01, 0)
		far.age = tc.age
		r.b.Input(1, far.rst())
		if s := r.b.Status(); s.IsRoot == tc.accept {
			t.Errorf("message age %d of max age 20: got root %s, want the far root accepted: %v", tc.age, s.Root, tc.accept)
		}
		if tc.accept {
			if f := r.last(2).fields(); f.MessageAge != time.Duration(tc.age+1)*time.Second {
				t.Errorf("message age %d: we send %v, want %d s", tc.age, f.MessageAge, tc.age+1)
			}
		}
	}
}

// TestLinkDown: a port whose link goes down is disabled: it discards,
// forgets what it learned, and sends nothing; back up, it starts over.
func TestLinkDown(t *testing.T) {
	r := converged(t)
	r.b.LinkChanged(2, Link{})
	r.want(2, RoleDisabled, Discarding)
	if got := r.takeFlushed(); len(got) != 1 || got[0] != 2 {
		t.Errorf("flushed when port 2 went down: got %v, want [2]", got)
	}
	r.take(0)
	r.feed(1, rootPeer(0x01, 0).rst(), 10*time.Second)
	if out := r.take(2); len(out) != 0 {
		t.Errorf("port 2 down: got %d BPDUs sent, want none", len(out))
	}
	r.b.LinkChanged(2, up)
	r.want(2, RoleDesignated, Discarding)
	if f := r.last(2).fields(); f.Flags&FlagProposal == 0 {
		t.Errorf("port 2 back up: got flags %#x, want a proposal", f.Flags)
	}
}

// TestPortNotTakingPart: a port with Enabled false forwards as if no
// spanning tree ran, sends nothing, and is a disabled port to the tree.
func TestPortNotTakingPart(t *testing.T) {
	r := newRig(t, DefaultConfig())
	c := DefaultPortConfig()
	c.Enabled = false
	r.addPort(1, c)
	r.want(1, RoleDisabled, Forwarding)
	r.run(10 * time.Second)
	if out := r.take(1); len(out) != 0 {
		t.Errorf("got %d BPDUs sent, want none", len(out))
	}
	c.Enabled = true
	if err := r.b.SetPortConfig(1, c); err != nil {
		t.Fatal(err)
	}
	r.want(1, RoleDesignated, Discarding)
	if len(r.take(1)) == 0 {
		t.Errorf("enabled: got no BPDU, want a proposal")
	}
}

// TestSpeedSetsPathCost: the automatic path cost follows the link speed,
// and a new cost changes the root path cost.
func TestSpeedSetsPathCost(t *testing.T) {
	r := newRig(t, DefaultConfig())
	r.addPort(1, DefaultPortConfig())
	r.b.Input(1, rootPeer(0x01, 0).rst())
	if s := r.b.Status(); s.RootPathCost != 20000 {
		t.Errorf("at 1 Gb/s: root path cost %d, want 20000", s.RootPathCost)
	}
	r.b.LinkChanged(1, Link{Up: true, SpeedMbps: 10_000})
	if s := r.b.Status(); s.RootPathCost != 2000 || r.port(1).PathCost != 2000 {
		t.Errorf("at 10 Gb/s: root path cost %d, port path cost %d, want 2000", s.RootPathCost, r.port(1).PathCost)
	}
	c := DefaultPortConfig()
	c.PathCost = 7
	if err := r.b.SetPortConfig(1, c); err != nil {
		t.Fatal(err)
	}
	if s := r.b.Status(); s.RootPathCost != 7 {
		t.Errorf("path cost 7 set: root path cost %d, want 7", s.RootPathCost)
	}
}
