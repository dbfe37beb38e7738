package lacp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
)

// tick is the period at which tests call Tick, as the trunk would.
const tick = 100 * time.Millisecond

// Systems used by the tests.
var (
	sysA = [6]byte{0x02, 0xaa, 0, 0, 0, 0x01}
	sysB = [6]byte{0x02, 0xbb, 0, 0, 0, 0x01}
	sysX = [6]byte{0x02, 0xcc, 0, 0, 0, 0x01}
	sysY = [6]byte{0x02, 0xdd, 0, 0, 0, 0x01}
)

// portMAC returns the MAC of port id of the system whose MAC is sys.
func portMAC(sys [6]byte, id int) [6]byte {
	m := sys
	m[5] = byte(0x10 + id)
	return m
}

// sent is one frame an Actor handed to send.
type sent struct {
	// port is the port it went out of.
	port int
	// frame is a copy of the frame.
	frame []byte
	// at is the fake time it was sent.
	at time.Time
}

// outbox records what an Actor sends. Safe for concurrent use.
type outbox struct {
	// clk stamps the frames.
	clk clock.Clock
	// mu guards frames.
	mu sync.Mutex
	// frames are the frames sent, oldest first.
	frames []sent
}

// send is an Actor's send function.
func (o *outbox) send(port int, f []byte) {
	o.mu.Lock()
	o.frames = append(o.frames, sent{port, bytes.Clone(f), o.clk.Now()})
	o.mu.Unlock()
}

// take returns and forgets the frames sent so far.
func (o *outbox) take() []sent {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.frames
	o.frames = nil
	return f
}

// peerPort is one port of a scripted partner, facing one of our ports.
type peerPort struct {
	// info is what the scripted port says about itself.
	info PortInfo
	// heard is our actor information from the last LACPDU it got.
	heard PortInfo
	// silent stops its periodic LACPDUs.
	silent bool
}

// rig is one Actor under test facing a scripted partner on the fake clock.
type rig struct {
	// t reports failures.
	t *testing.T
	// clk is the fake clock.
	clk *clock.Fake
	// a is the Actor under test.
	a *Actor
	// out collects what a sends.
	out *outbox
	// peer maps our port ID to the scripted port facing it.
	peer map[int]*peerPort
	// every is the scripted partner's periodic interval.
	every time.Duration
	// version is the LACPDU version the scripted partner sends.
	version byte
	// next is when the scripted partner next sends.
	next time.Time
	// log collects everything we sent, for the pcap.
	log []sent
	// count counts the LACPDUs we sent, per port.
	count map[int]int
}

// newRig returns an Actor with cfg and no ports; the scripted partner
// sends every second.
func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	clk := clock.NewFake()
	out := &outbox{clk: clk}
	r := &rig{t: t, clk: clk, out: out, peer: map[int]*peerPort{}, every: time.Second,
		version: 1, count: map[int]int{}}
	if cfg.SystemMAC == [6]byte{} {
		cfg.SystemMAC = sysA
	}
	r.a = New(cfg, clk, out.send, nil)
	return r
}

// partnerState is what a healthy active partner says about itself.
const partnerState = StateActivity | StateAggregation | StateSynchronization | StateCollecting | StateDistributing

// addPort adds our port id facing a scripted port of system sys with key.
func (r *rig) addPort(id int, sys [6]byte, key uint16, state State) {
	r.t.Helper()
	if err := r.a.AddPort(id, fmt.Sprintf("eth%d", id), portMAC(sysA, id), DefaultPortPriority, true); err != nil {
		r.t.Fatal(err)
	}
	r.peer[id] = &peerPort{info: PortInfo{SystemPriority: 32768, System: sys, Key: key,
		PortPriority: 32768, Port: uint16(100 + id), State: state}}
}

// lacpFrame returns a LACPDU frame of the given version from src.
func lacpFrame(version byte, src [6]byte, actor, partner PortInfo) []byte {
	b := make([]byte, FrameLen)
	EncodeLACP(b, src, &LACPFields{Actor: actor, Partner: partner})
	b[frame.HeaderLen+1] = version
	if version >= 2 {
		// 802.1AX-2014: a Port Algorithm TLV (type 4, length 6) and a
		// Port Conversation ID Digest TLV (type 5, length 20) follow the
		// Collector TLV, then the Terminator.
		p := b[frame.HeaderLen+offTerminator:]
		p[0], p[1] = 4, 6
		binary.BigEndian.PutUint32(p[2:], 0x0080c201)
		p[6], p[7] = 5, 20
		p[8], p[9] = 0xde, 0xad
		p[26], p[27] = 0, 0
	}
	return b
}

// peerFrame returns the LACPDU the scripted port facing our port id sends.
func (r *rig) peerFrame(id int) []byte {
	pp := r.peer[id]
	return lacpFrame(r.version, pp.info.System, pp.info, pp.heard)
}

// deliver hands what we sent to the scripted partner.
func (r *rig) deliver() {
	for _, s := range r.out.take() {
		r.log = append(r.log, s)
		if k, c := Decode(s.frame); k != KindLACP || c != CauseNone {
			continue
		}
		r.count[s.port]++
		if pp := r.peer[s.port]; pp != nil {
			pp.heard = LACPDU(s.frame[frame.HeaderLen:]).Actor()
		}
	}
}

// peerSend makes every non-silent scripted port send a LACPDU now.
func (r *rig) peerSend() {
	r.deliver()
	for id, pp := range r.peer {
		if !pp.silent {
			r.a.Receive(id, r.peerFrame(id))
		}
	}
	r.deliver()
}

// run advances the clock by d in ticks; the scripted partner answers at
// once what it hears and sends periodically, unless silenced.
func (r *rig) run(d time.Duration) {
	for end := r.clk.Now().Add(d); r.clk.Now().Before(end); {
		r.clk.Advance(tick)
		if now := r.clk.Now(); !now.Before(r.next) {
			r.next = now.Add(r.every)
			r.peerSend()
		}
		r.a.Tick()
		r.deliver()
	}
}

// silence stops the scripted partner entirely.
func (r *rig) silence() {
	for _, pp := range r.peer {
		pp.silent = true
	}
}

// state returns our port id's snapshot.
func (r *rig) state(id int) PortState {
	r.t.Helper()
	for _, s := range r.a.Ports() {
		if s.ID == id {
			return s
		}
	}
	r.t.Fatalf("port %d not in Ports()", id)
	return PortState{}
}

// wantMux fails unless our port id's mux is in state want, with data-path
// flags to match.
func (r *rig) wantMux(id int, want MuxState) {
	r.t.Helper()
	s := r.state(id)
	if s.Mux != want {
		r.t.Errorf("port %d mux: got %s, want %s (receive %s, reason %q)", id, s.Mux, want, s.Receive, s.Reason)
	}
	if got, want := r.a.Collecting(id), want >= MuxCollecting; got != want {
		r.t.Errorf("port %d Collecting(): got %v, want %v", id, got, want)
	}
	if got, want := r.a.Distributing(id), want == MuxDistributing; got != want {
		r.t.Errorf("port %d Distributing(): got %v, want %v", id, got, want)
	}
}

// link is a wire between a port of one Actor and a port of another.
type link struct {
	// to is the Actor at the far end.
	to *Actor
	// port is the port ID at the far end.
	port int
	// up is false when the wire is cut (frames are lost).
	up bool
}

// pair is two Actors wired back to back through their send functions.
type pair struct {
	// clk is the fake clock both run on.
	clk *clock.Fake
	// a and b are the two systems.
	a, b *Actor
	// mu guards queue.
	mu sync.Mutex
	// queue holds frames in flight: delivered by pump, outside any lock
	// of the Actors.
	queue []func()
	// wires maps (Actor, port) to the far end.
	wires map[*Actor]map[int]*link
	// capture records every frame sent, for the pcap.
	capture []sent
}

// newPair returns Actors with cfgA and cfgB, each with ports 1..n wired
// port i to port i.
func newPair(t *testing.T, cfgA, cfgB Config, n int) *pair {
	t.Helper()
	pr := &pair{clk: clock.NewFake(), wires: map[*Actor]map[int]*link{}}
	cfgA.SystemMAC, cfgB.SystemMAC = sysA, sysB
	pr.a = New(cfgA, pr.clk, pr.sender(&pr.a), nil)
	pr.b = New(cfgB, pr.clk, pr.sender(&pr.b), nil)
	pr.wires[pr.a], pr.wires[pr.b] = map[int]*link{}, map[int]*link{}
	for i := 1; i <= n; i++ {
		pr.wires[pr.a][i] = &link{to: pr.b, port: i, up: true}
		pr.wires[pr.b][i] = &link{to: pr.a, port: i, up: true}
	}
	for i := 1; i <= n; i++ {
		if err := pr.a.AddPort(i, fmt.Sprintf("a%d", i), portMAC(sysA, i), DefaultPortPriority, true); err != nil {
			t.Fatal(err)
		}
		if err := pr.b.AddPort(i, fmt.Sprintf("b%d", i), portMAC(sysB, i), DefaultPortPriority, true); err != nil {
			t.Fatal(err)
		}
	}
	pr.pump()
	return pr
}

// sender returns the send function of the Actor *self: it queues the
// frame for the far end of the wire.
func (pr *pair) sender(self **Actor) func(int, []byte) {
	return func(port int, f []byte) {
		c := bytes.Clone(f)
		pr.mu.Lock()
		defer pr.mu.Unlock()
		pr.capture = append(pr.capture, sent{port, c, pr.clk.Now()})
		pr.queue = append(pr.queue, func() {
			if l := pr.wires[*self][port]; l != nil && l.up {
				l.to.Receive(l.port, c)
			}
		})
	}
}

// pump delivers frames in flight until none is left.
func (pr *pair) pump() {
	for {
		pr.mu.Lock()
		q := pr.queue
		pr.queue = nil
		pr.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, deliver := range q {
			deliver()
		}
	}
}

// run advances the clock by d in ticks, ticking both Actors.
func (pr *pair) run(d time.Duration) {
	for end := pr.clk.Now().Add(d); pr.clk.Now().Before(end); {
		pr.clk.Advance(tick)
		pr.a.Tick()
		pr.b.Tick()
		pr.pump()
	}
}

// until runs ticks until cond holds or limit passes; it returns the time
// taken and whether cond held.
func (pr *pair) until(limit time.Duration, cond func() bool) (time.Duration, bool) {
	start := pr.clk.Now()
	for pr.clk.Now().Sub(start) < limit {
		if cond() {
			return pr.clk.Now().Sub(start), true
		}
		pr.run(tick)
	}
	return pr.clk.Now().Sub(start), cond()
}

// allDistributing reports whether ports 1..n of both Actors distribute.
func (pr *pair) allDistributing(n int) bool {
	for i := 1; i <= n; i++ {
		if !pr.a.Distributing(i) || !pr.b.Distributing(i) || !pr.a.Collecting(i) || !pr.b.Collecting(i) {
			return false
		}
	}
	return true
}

// anyCollecting reports whether any port of either Actor collects.
func (pr *pair) anyCollecting(n int) bool {
	for i := 1; i <= n; i++ {
		if pr.a.Collecting(i) || pr.b.Collecting(i) {
			return true
		}
	}
	return false
}
