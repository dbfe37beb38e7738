package lacp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
)

// TestNegotiationBackToBack wires two Actors (two systems, two ports each)
// back to back and checks which mode pairs reach collecting+distributing
// on every port of both ends, and how fast.
func TestNegotiationBackToBack(t *testing.T) {
	tests := []struct {
		name       string
		a, b       Config
		negotiates bool
		within     time.Duration
	}{
		{"active fast, active fast", Config{Timeout: Fast}, Config{Timeout: Fast}, true, 5 * time.Second},
		{"active slow, active slow", Config{}, Config{}, true, 5 * time.Second},
		{"active fast, active slow", Config{Timeout: Fast}, Config{}, true, 5 * time.Second},
		{"active, passive", Config{Timeout: Fast}, Config{Mode: Passive, Timeout: Fast}, true, 5 * time.Second},
		{"passive, active", Config{Mode: Passive}, Config{}, true, 5 * time.Second},
		{"passive, passive", Config{Mode: Passive, Timeout: Fast}, Config{Mode: Passive, Timeout: Fast}, false, 120 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPair(t, tc.a, tc.b, 2)
			took, ok := pr.until(tc.within, func() bool { return pr.allDistributing(2) })
			if ok != tc.negotiates {
				t.Fatalf("all ports collecting and distributing after %v: got %v, want %v\nA: %+v\nB: %+v",
					took, ok, tc.negotiates, pr.a.Ports(), pr.b.Ports())
			}
			if !tc.negotiates {
				if pr.anyCollecting(2) {
					t.Errorf("a port collects although neither end is active")
				}
				if n := len(pr.capture); n != 0 {
					t.Errorf("passive ends sent %d frames, want 0", n)
				}
				return
			}
			t.Logf("collecting and distributing after %v", took)
			// And it stays so: no flapping over the next minutes.
			pr.run(3 * time.Minute)
			if !pr.allDistributing(2) {
				t.Errorf("not all ports distributing 3 minutes later:\nA: %+v\nB: %+v", pr.a.Ports(), pr.b.Ports())
			}
		})
	}
}

// TestPartnerTimeout silences a scripted partner and checks that the port
// goes EXPIRED after our timeout (3 s fast, 90 s slow), stops collecting
// and distributing at once, asks for fast LACPDUs, and goes DEFAULTED
// ShortTimeoutTime later.
func TestPartnerTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout Timeout
		expiry  time.Duration
		// defaulted is the partner a defaulted port records: nobody,
		// asking for fast LACPDUs when our own timeout is fast.
		defaulted PortInfo
	}{
		{"fast", Fast, 3 * time.Second, PortInfo{State: StateTimeout}},
		{"slow", Slow, 90 * time.Second, PortInfo{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Timeout: tc.timeout})
			r.addPort(1, sysX, 7, partnerState)
			r.run(5 * time.Second)
			r.wantMux(1, MuxDistributing)
			// The last LACPDU from the partner arrives now.
			r.peerSend()
			r.silence()
			r.run(tc.expiry - tick)
			if s := r.state(1); s.Receive != RxCurrent {
				t.Fatalf("receive %v before the timeout: got %s, want current", tc.expiry-tick, s.Receive)
			}
			r.wantMux(1, MuxDistributing)
			r.run(tick)
			s := r.state(1)
			if s.Receive != RxExpired {
				t.Fatalf("receive after %v of silence: got %s, want expired", tc.expiry, s.Receive)
			}
			r.wantMux(1, MuxDetached)
			if s.Reason != reasonExpired {
				t.Errorf("reason when expired: got %q, want %q", s.Reason, reasonExpired)
			}
			const want = StateTimeout | StateExpired
			if s.Actor.State&want != want || s.Actor.State&StateSynchronization != 0 {
				t.Errorf("advertised state when expired: got %s, want timeout and expired set, synchronization clear", s.Actor.State)
			}
			if last := r.log[len(r.log)-1]; LACPDU(last.frame[frame.HeaderLen:]).Actor().State&want != want {
				t.Errorf("last LACPDU sent: got state %s, want timeout and expired set", LACPDU(last.frame[frame.HeaderLen:]).Actor().State)
			}
			r.run(ShortTimeoutTime - tick)
			if s := r.state(1); s.Receive != RxExpired {
				t.Fatalf("receive %v after expiry: got %s, want expired", ShortTimeoutTime-tick, s.Receive)
			}
			r.run(tick)
			s = r.state(1)
			if s.Receive != RxDefaulted || s.Partner != tc.defaulted || s.Reason != reasonDefaulted {
				t.Errorf("after expiry and %v: got receive %s, partner %+v, reason %q; want defaulted, partner %+v, %q",
					ShortTimeoutTime, s.Receive, s.Partner, s.Reason, tc.defaulted, reasonDefaulted)
			}
			if s.Actor.State&StateDefaulted == 0 {
				t.Errorf("advertised state when defaulted: got %s, want defaulted set", s.Actor.State)
			}
			if _, ok := r.a.Aggregator(); ok {
				t.Errorf("an aggregator is active with every partner defaulted")
			}
		})
	}
}

// TestTransmitInterval counts the LACPDUs we send to a steady partner:
// one a second when its Timeout bit asks for fast, one per 30 s if not,
// whatever our own timeout.
func TestTransmitInterval(t *testing.T) {
	const span = 300 * time.Second
	tests := []struct {
		name       string
		ours       Timeout
		partner    State
		want, slop int
	}{
		{"partner fast, we slow", Slow, partnerState | StateTimeout, 300, 2},
		{"partner fast, we fast", Fast, partnerState | StateTimeout, 300, 2},
		{"partner slow, we fast", Fast, partnerState, 10, 1},
		{"partner slow, we slow", Slow, partnerState, 10, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Timeout: tc.ours})
			r.addPort(1, sysX, 7, tc.partner)
			r.run(10 * time.Second)
			r.wantMux(1, MuxDistributing)
			before := r.count[1]
			r.run(span)
			if got := r.count[1] - before; got < tc.want-tc.slop || got > tc.want+tc.slop {
				t.Errorf("LACPDUs sent in %v: got %d, want %d±%d", span, got, tc.want, tc.slop)
			}
		})
	}
}

// peerSpec is a scripted partner port for selection tests.
type peerSpec struct {
	// sys and prio are its system.
	sys  [6]byte
	prio uint16
	// key is its key.
	key uint16
	// state is its state; 0 means partnerState.
	state State
}

// TestSelection checks which ports join the single active aggregator and
// what the others say, for partners of several systems and keys.
func TestSelection(t *testing.T) {
	x, y := peerSpec{sys: sysX, prio: 32768, key: 7}, peerSpec{sys: sysY, prio: 32768, key: 7}
	xKey9 := peerSpec{sys: sysX, prio: 32768, key: 9}
	yPrio := peerSpec{sys: sysY, prio: 100, key: 7}
	xIndividual := peerSpec{sys: sysX, prio: 32768, key: 7, state: partnerState &^ StateAggregation}
	tests := []struct {
		name     string
		peers    []peerSpec // facing our ports 1, 2, ...
		selected []bool
		reasons  []string
	}{
		{"one partner, three ports", []peerSpec{x, x, x}, []bool{true, true, true}, []string{"", "", ""}},
		{"key mismatch: the larger key group wins", []peerSpec{xKey9, x, x}, []bool{false, true, true}, []string{reasonOtherSystem, "", ""}},
		{"two systems: the one with more ports wins", []peerSpec{y, x, x}, []bool{false, true, true}, []string{reasonOtherSystem, "", ""}},
		{"tie: lower partner system priority wins", []peerSpec{x, yPrio}, []bool{false, true}, []string{reasonOtherSystem, ""}},
		{"tie, same priority: lower system MAC wins", []peerSpec{y, x}, []bool{false, true}, []string{reasonOtherSystem, ""}},
		{"individual partner port stays out", []peerSpec{x, xIndividual}, []bool{true, false}, []string{"", reasonIndividual}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Timeout: Fast})
			for i, p := range tc.peers {
				st := p.state
				if st == 0 {
					st = partnerState
				}
				r.addPort(i+1, p.sys, p.key, st)
				r.peer[i+1].info.SystemPriority = p.prio
			}
			r.run(10 * time.Second)
			for i := range tc.peers {
				s := r.state(i + 1)
				if s.Selected != tc.selected[i] || s.Reason != tc.reasons[i] {
					t.Errorf("port %d: got selected %v reason %q, want selected %v reason %q",
						i+1, s.Selected, s.Reason, tc.selected[i], tc.reasons[i])
				}
				want := MuxDetached
				if tc.selected[i] {
					want = MuxDistributing
				}
				r.wantMux(i+1, want)
			}
		})
	}
}

// TestAggregatorStability checks that an aggregator in use is not replaced
// by a larger group while it still has ports, and is replaced when it has
// none left.
func TestAggregatorStability(t *testing.T) {
	r := newRig(t, Config{Timeout: Fast})
	r.addPort(1, sysX, 7, partnerState)
	r.run(5 * time.Second)
	r.wantMux(1, MuxDistributing)

	steps := []struct {
		name     string
		do       func()
		selected [3]bool
		muxes    [3]MuxState
		partner  [6]byte
	}{
		{"two ports of another system arrive: the aggregator in use stays",
			func() { r.addPort(2, sysY, 7, partnerState); r.addPort(3, sysY, 7, partnerState) },
			[3]bool{true, false, false}, [3]MuxState{MuxDistributing, MuxDetached, MuxDetached}, sysX},
		{"its only port goes down: the other system takes over",
			func() { r.a.LinkChanged(1, false) },
			[3]bool{false, true, true}, [3]MuxState{MuxDetached, MuxDistributing, MuxDistributing}, sysY},
		{"the port comes back: it stays out, the new aggregator has ports",
			func() { r.a.LinkChanged(1, true) },
			[3]bool{false, true, true}, [3]MuxState{MuxDetached, MuxDistributing, MuxDistributing}, sysY},
		{"the new aggregator's ports leave: the first system again",
			func() { r.a.RemovePort(2); r.a.LinkChanged(3, false) },
			[3]bool{true, false, false}, [3]MuxState{MuxDistributing, MuxDetached, MuxDetached}, sysX},
	}
	for _, st := range steps {
		st.do()
		r.run(5 * time.Second)
		for i := range 3 {
			id := i + 1
			if _, ok := r.peer[id]; !ok || (id == 2 && st.name == steps[3].name) {
				continue
			}
			if s := r.state(id); s.Selected != st.selected[i] {
				t.Errorf("%s: port %d selected: got %v, want %v (reason %q)", st.name, id, s.Selected, st.selected[i], s.Reason)
			}
			r.wantMux(id, st.muxes[i])
		}
		if g, ok := r.a.Aggregator(); !ok || g.PartnerSystem != st.partner {
			t.Errorf("%s: aggregator: got %v (active %v), want partner %s", st.name, g, ok, net6(st.partner))
		}
	}
}

// TestLinkDownUp checks that a port stops at once when its link goes
// down, sends and accepts nothing while down, and negotiates again when
// it comes back.
func TestLinkDownUp(t *testing.T) {
	r := newRig(t, Config{Timeout: Fast})
	r.addPort(1, sysX, 7, partnerState)
	r.addPort(2, sysX, 7, partnerState)
	r.run(5 * time.Second)
	r.wantMux(1, MuxDistributing)
	r.wantMux(2, MuxDistributing)

	r.a.LinkChanged(1, false)
	s := r.state(1)
	if s.Receive != RxPortDisabled || s.Selected || s.Reason != reasonLinkDown {
		t.Errorf("link down: got receive %s selected %v reason %q, want port-disabled, false, %q", s.Receive, s.Selected, s.Reason, reasonLinkDown)
	}
	r.wantMux(1, MuxDetached)
	r.wantMux(2, MuxDistributing)
	sentBefore := r.count[1]
	r.run(10 * time.Second) // the scripted partner keeps sending on port 1
	if got := r.count[1] - sentBefore; got != 0 {
		t.Errorf("LACPDUs sent on a port whose link is down: got %d, want 0", got)
	}
	if got := r.state(1).Counters.Bad.PortDown; got == 0 {
		t.Errorf("LACPDUs received on a down port counted: got %d, want > 0", got)
	}
	r.wantMux(2, MuxDistributing)

	r.a.LinkChanged(1, true)
	if s := r.state(1); s.Receive != RxExpired {
		t.Errorf("link up: receive got %s, want expired", s.Receive)
	}
	r.run(5 * time.Second)
	r.wantMux(1, MuxDistributing)
	r.wantMux(2, MuxDistributing)
}

// TestPassiveSilentUntilPartnerActive checks that a passive port sends
// nothing to a passive or absent partner and answers an active one.
func TestPassiveSilentUntilPartnerActive(t *testing.T) {
	tests := []struct {
		name     string
		partner  State
		silent   bool
		wantSent bool
		wantMux  MuxState
	}{
		{"no partner", partnerState, true, false, MuxDetached},
		// A scripted passive partner that sends anyway never hears from
		// us, so it can never describe us: attached, never in sync.
		{"passive partner that sends anyway", partnerState &^ StateActivity, false, false, MuxAttached},
		{"active partner", partnerState, false, true, MuxDistributing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Mode: Passive, Timeout: Fast})
			r.addPort(1, sysX, 7, tc.partner)
			r.peer[1].silent = tc.silent
			r.run(10 * time.Second)
			if got := r.count[1] > 0; got != tc.wantSent {
				t.Errorf("passive port sent LACPDUs: got %v (%d), want %v", got, r.count[1], tc.wantSent)
			}
			r.wantMux(1, tc.wantMux)
		})
	}
}

// TestMarkerResponder checks that a Marker Information PDU is answered
// out of the port it came in on with the same fields, and that a Marker
// Response is counted and not answered.
func TestMarkerResponder(t *testing.T) {
	tests := []struct {
		name     string
		port     int
		fields   MarkerFields
		version  byte
		answered bool
	}{
		{"request on port 1", 1, MarkerFields{RequesterPort: 5, RequesterSystem: sysX, TransactionID: 0xdeadbeef}, 1, true},
		{"request on port 2", 2, MarkerFields{RequesterPort: 6, RequesterSystem: sysY, TransactionID: 1}, 1, true},
		{"request of version 2", 1, MarkerFields{RequesterPort: 7, RequesterSystem: sysX, TransactionID: 2}, 2, true},
		{"response: counted, not answered", 1, MarkerFields{Response: true, RequesterPort: 5, RequesterSystem: sysA, TransactionID: 3}, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Mode: Passive}) // passive: no LACPDUs in the way
			r.addPort(1, sysX, 7, 0)
			r.addPort(2, sysX, 7, 0)
			r.out.take()
			f := make([]byte, FrameLen)
			EncodeMarker(f, portMAC(sysX, tc.port), &tc.fields)
			f[frame.HeaderLen+1] = tc.version
			r.a.Receive(tc.port, f)
			out := r.out.take()
			c := r.state(tc.port).Counters
			if !tc.answered {
				if len(out) != 0 || c.RxMarkerResponse != 1 {
					t.Errorf("got %d frames sent and RxMarkerResponse %d, want 0 and 1", len(out), c.RxMarkerResponse)
				}
				return
			}
			if len(out) != 1 {
				t.Fatalf("frames sent: got %d, want 1 marker response", len(out))
			}
			got := out[0]
			if got.port != tc.port {
				t.Errorf("response sent on port %d, want %d", got.port, tc.port)
			}
			e := frame.Ethernet(got.frame)
			if e.Source() != frame.MAC(portMAC(sysA, tc.port)) || e.Destination() != frame.MAC(SlowProtocolsMAC) || len(got.frame) != FrameLen {
				t.Errorf("response header: got %s > %s, %d bytes; want %s > %s, %d bytes",
					e.Source(), e.Destination(), len(got.frame), frame.MAC(portMAC(sysA, tc.port)), frame.MAC(SlowProtocolsMAC), FrameLen)
			}
			if k, cause := Decode(got.frame); k != KindMarkerResponse {
				t.Fatalf("response decodes as kind %d cause %s, want a marker response", k, cause)
			}
			m := Marker(got.frame[frame.HeaderLen:])
			if m.RequesterPort() != tc.fields.RequesterPort || m.RequesterSystem() != tc.fields.RequesterSystem || m.TransactionID() != tc.fields.TransactionID {
				t.Errorf("response fields: got port %d system %s transaction %#x, want %d %s %#x",
					m.RequesterPort(), net6(m.RequesterSystem()), m.TransactionID(),
					tc.fields.RequesterPort, net6(tc.fields.RequesterSystem), tc.fields.TransactionID)
			}
			if c.RxMarker != 1 || c.TxMarkerResponse != 1 {
				t.Errorf("counters: got RxMarker %d TxMarkerResponse %d, want 1 and 1", c.RxMarker, c.TxMarkerResponse)
			}
		})
	}
}

// TestBadFramesCounted feeds malformed frames to a negotiating port and
// checks each is counted under its cause, changes nothing and is not
// answered.
func TestBadFramesCounted(t *testing.T) {
	good := func() []byte {
		return lacpFrame(1, sysX, PortInfo{SystemPriority: 1, System: sysX, Key: 7, Port: 9, State: partnerState}, PortInfo{})
	}
	with := func(f []byte, off int, v byte) []byte { f[frame.HeaderLen+off] = v; return f }
	tests := []struct {
		name  string
		frame []byte
		cause Cause
	}{
		{"runt", make([]byte, 5), CauseNotSlow},
		{"IPv4 frame", with(good(), -2, 0x08), CauseNotSlow},
		{"OAM subtype", with(good(), 0, 3), CauseSubtype},
		{"header only", good()[:frame.HeaderLen], CauseTruncated},
		{"truncated at 60 bytes", good()[:60], CauseTruncated},
		{"one octet short", good()[:FrameLen-1], CauseTruncated},
		{"version 0", with(good(), 1, 0), CauseVersion},
		{"actor TLV type 2", with(good(), offActorTLV, 2), CauseTLVType},
		{"actor TLV length 255", with(good(), offActorTLV+1, 255), CauseTLVLength},
		{"actor TLV length 0", with(good(), offActorTLV+1, 0), CauseTLVLength},
		{"partner TLV length 19", with(good(), offPartnerTLV+1, 19), CauseTLVLength},
		{"partner TLV type 1", with(good(), offPartnerTLV, 1), CauseTLVType},
		{"collector TLV type 0", with(good(), offCollectorTLV, 0), CauseTLVType},
		{"collector TLV length 200", with(good(), offCollectorTLV+1, 200), CauseTLVLength},
		{"version 1 terminator length 5", with(good(), offTerminator+1, 5), CauseTLVLength},
		{"version 1 terminator type 4", with(good(), offTerminator, 4), CauseTLVType},
		{"marker truncated", markerFrame(1, 1, 16)[:40], CauseTruncated},
		{"marker version 0", markerFrame(0, 1, 16), CauseVersion},
		{"marker TLV type 3", markerFrame(1, 3, 16), CauseTLVType},
		{"marker TLV length 250", markerFrame(1, 1, 250), CauseTLVLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Mode: Passive})
			r.addPort(1, sysX, 7, 0)
			before := r.state(1)
			r.a.Receive(1, tc.frame)
			after := r.state(1)
			if got := after.Counters.Bad.Of(tc.cause); got != 1 {
				t.Errorf("bad %s: got %d, want 1", tc.cause, got)
			}
			if got := after.Counters.Bad.Total(); got != 1 {
				t.Errorf("bad frames in all: got %d, want 1 (%+v)", got, after.Counters.Bad)
			}
			if after.Receive != before.Receive || after.Partner != before.Partner || after.Counters.RxLACPDU != 0 {
				t.Errorf("state changed: got receive %s partner %+v rx %d, want %s %+v 0",
					after.Receive, after.Partner, after.Counters.RxLACPDU, before.Receive, before.Partner)
			}
			if out := r.out.take(); len(out) != 0 {
				t.Errorf("frames sent in reply: got %d, want 0", len(out))
			}
		})
	}
}

// markerFrame returns a Marker PDU frame with the given version, TLV type
// and length.
func markerFrame(version, tlv, length byte) []byte {
	f := make([]byte, FrameLen)
	EncodeMarker(f, sysX, &MarkerFields{RequesterPort: 1, RequesterSystem: sysX, TransactionID: 1})
	p := f[frame.HeaderLen:]
	p[1], p[offMarkerTLV], p[offMarkerTLV+1] = version, tlv, length
	return f
}

// TestVersion2Partner checks that a partner sending version-2 LACPDUs
// with extra TLVs is read by its version-1 fields and negotiates.
func TestVersion2Partner(t *testing.T) {
	for _, version := range []byte{2, 3, 255} {
		r := newRig(t, Config{Timeout: Fast})
		r.version = version
		r.addPort(1, sysX, 7, partnerState)
		r.run(5 * time.Second)
		r.wantMux(1, MuxDistributing)
		s := r.state(1)
		if want := r.peer[1].info; s.Partner != want {
			t.Errorf("version %d: partner recorded: got %+v, want %+v", version, s.Partner, want)
		}
		if s.Counters.Bad.Total() != 0 || s.Counters.RxLACPDU == 0 {
			t.Errorf("version %d: got %d bad, %d accepted; want 0 bad, some accepted", version, s.Counters.Bad.Total(), s.Counters.RxLACPDU)
		}
	}
}

// TestPortsJSON checks the fields `trunk show -o json` relies on.
func TestPortsJSON(t *testing.T) {
	r := newRig(t, Config{Timeout: Fast, Key: 42, SystemPriority: 10})
	r.addPort(1, sysX, 7, partnerState)
	r.addPort(2, sysY, 7, partnerState)
	r.run(5 * time.Second)
	b, err := json.Marshal(r.a.Ports())
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
		Mux    string `json:"mux"`
		Actor  struct {
			System string   `json:"system"`
			Key    int      `json:"key"`
			Port   int      `json:"port"`
			State  string   `json:"state"`
			Flags  []string `json:"flags"`
		} `json:"actor"`
		Partner struct {
			System string `json:"system"`
			Key    int    `json:"key"`
			Port   int    `json:"port"`
		} `json:"partner"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("ports in JSON: got %d, want 2: %s", len(got), b)
	}
	p := got[0]
	if p.Name != "eth1" || p.Mux != "distributing" || p.Actor.System != "02:aa:00:00:00:01" || p.Actor.Key != 42 ||
		p.Actor.Port != 1 || p.Actor.State != "0x3f" || strings.Join(p.Actor.Flags, ",") != "activity,timeout,aggregation,synchronization,collecting,distributing" ||
		p.Partner.System != "02:cc:00:00:00:01" || p.Partner.Key != 7 || p.Partner.Port != 101 {
		t.Errorf("port 1 JSON: got %+v, want eth1 distributing, actor 02:aa:00:00:00:01 key 42 port 1 state 0x3f, partner 02:cc:00:00:00:01 key 7 port 101\n%s", p, b)
	}
	if got[1].Reason != reasonOtherSystem || got[1].Mux != "detached" {
		t.Errorf("port 2 JSON: got reason %q mux %q, want %q detached", got[1].Reason, got[1].Mux, reasonOtherSystem)
	}
}

// TestConfigChanges checks SetConfig and SetPortPriority: the new values
// are advertised at once and negotiation recovers.
func TestConfigChanges(t *testing.T) {
	tests := []struct {
		name  string
		apply func(a *Actor)
		check func(in PortInfo) bool
		want  string
	}{
		{"new key", func(a *Actor) { a.SetConfig(Config{Timeout: Fast, Key: 99}) },
			func(in PortInfo) bool { return in.Key == 99 }, "key 99"},
		{"new system priority", func(a *Actor) { a.SetConfig(Config{Timeout: Fast, SystemPriority: 5}) },
			func(in PortInfo) bool { return in.SystemPriority == 5 }, "system priority 5"},
		{"system priority 0, exact", func(a *Actor) { a.SetConfig(Config{Timeout: Fast, ExactSystemPriority: true}) },
			func(in PortInfo) bool { return in.SystemPriority == 0 }, "system priority 0"},
		{"timeout slow", func(a *Actor) { a.SetConfig(Config{Timeout: Slow}) },
			func(in PortInfo) bool { return in.State&StateTimeout == 0 }, "timeout bit clear"},
		{"port priority", func(a *Actor) {
			if err := a.SetPortPriority(1, 7); err != nil {
				panic(err)
			}
		}, func(in PortInfo) bool { return in.PortPriority == 7 }, "port priority 7"},
		{"port priority 0", func(a *Actor) {
			if err := a.SetPortPriority(1, 0); err != nil {
				panic(err)
			}
		}, func(in PortInfo) bool { return in.PortPriority == 0 }, "port priority 0, not the default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{Timeout: Fast})
			r.addPort(1, sysX, 7, partnerState)
			r.run(5 * time.Second)
			r.wantMux(1, MuxDistributing)
			tc.apply(r.a)
			r.deliver()
			last := r.log[len(r.log)-1]
			if in := LACPDU(last.frame[frame.HeaderLen:]).Actor(); !tc.check(in) {
				t.Errorf("LACPDU sent after the change: got %+v, want %s", in, tc.want)
			}
			r.run(5 * time.Second)
			r.wantMux(1, MuxDistributing)
		})
	}
	r := newRig(t, Config{})
	if err := r.a.SetPortPriority(9, 1); err == nil || !strings.Contains(err.Error(), "port id 9") {
		t.Errorf("SetPortPriority on an unknown port: got %v, want an error naming port id 9", err)
	}
	r.addPort(1, sysX, 7, 0)
	if err := r.a.AddPort(1, "again", sysX, 0, true); err == nil || !strings.Contains(err.Error(), "again") {
		t.Errorf("AddPort twice: got %v, want an error naming the port", err)
	}
}

// TestLatePartnerAggregatedFast checks that a fast actor whose partner
// appears late (here: the wires deliver nothing for 10 s, long enough for
// our ports to go DEFAULTED) keeps sending at the fast rate, as 802.1AX
// allows with Partner_Admin_Port_State.LACP_Timeout = Short, so that a
// passive partner hears us within a second and the ports distribute
// within 5 s of it appearing, not after the slow 30 s period.
func TestLatePartnerAggregatedFast(t *testing.T) {
	pr := newPair(t, Config{Mode: Active, Timeout: Fast}, Config{Mode: Passive, Timeout: Fast}, 2)
	for _, w := range pr.wires {
		for _, l := range w {
			l.up = false
		}
	}
	pr.run(10 * time.Second)
	if st := pr.a.Ports(); st[0].Receive != RxDefaulted {
		t.Fatalf("after 10 s alone, port 1 receive machine is %v, want defaulted", st[0].Receive)
	}
	for _, w := range pr.wires {
		for _, l := range w {
			l.up = true
		}
	}
	took, ok := pr.until(30*time.Second, func() bool { return pr.allDistributing(2) })
	if !ok || took > 5*time.Second {
		t.Fatalf("late partner distributing after %v (ok %v), want within 5s", took, ok)
	}
}
