package stp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// tick is the period at which tests call Tick, as the daemon would.
const tick = 100 * time.Millisecond

// mac returns the test MAC 02:00:00:00:00:<last>.
func mac(last byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, last} }

// bid returns the bridge identifier of priority and mac(last).
func bid(priority uint16, last byte) BridgeID { return NewBridgeID(priority, mac(last)) }

// up is a 1 Gb/s full-duplex link: path cost 20,000, point-to-point.
var up = Link{Up: true, SpeedMbps: 1000}

// sent is one frame a Bridge handed to Send.
type sent struct {
	// port is the port it went out of.
	port int
	// frame is a copy of the frame.
	frame []byte
	// at is the fake time it was sent.
	at time.Time
}

// kind returns the kind of the BPDU sent.
func (s sent) kind() Kind { k, _ := Decode(s.frame); return k }

// fields returns the fields of the BPDU sent (zero for a TCN).
func (s sent) fields() Fields {
	if s.kind() == KindTCN {
		return Fields{}
	}
	return Payload(s.frame).Fields()
}

// errorHandler is a slog handler that fails the test at every record of
// level Error (the machines that did not settle) and drops the rest.
type errorHandler struct {
	// t is the test to fail.
	t testing.TB
}

// failOnError returns a logger that fails t on errors.
func failOnError(t testing.TB) *slog.Logger { return slog.New(errorHandler{t}) }

func (h errorHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h errorHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h errorHandler) WithGroup(string) slog.Handler                { return h }
func (h errorHandler) Handle(_ context.Context, r slog.Record) error {
	h.t.Errorf("logged error: %s", r.Message)
	return nil
}

// rig is one Bridge under test, fed BPDUs by hand, on a fake clock.
type rig struct {
	// t reports failures.
	t *testing.T
	// clk is the fake clock.
	clk *clock.Fake
	// b is the Bridge under test.
	b *Bridge
	// out are the frames sent and not yet taken, oldest first.
	out []sent
	// flushed are the ports flushed and not yet taken, in order.
	flushed []int
}

// newRig returns a Bridge with cfg (MAC mac(0x50) unless set) and no
// ports.
func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	r := &rig{t: t, clk: clock.NewFake()}
	if cfg.MAC == [6]byte{} {
		cfg.MAC = mac(0x50)
	}
	b, err := New(cfg, r.clk, Outputs{
		Send:  func(port int, f []byte) { r.out = append(r.out, sent{port, bytes.Clone(f), r.clk.Now()}) },
		Flush: func(port int) { r.flushed = append(r.flushed, port) },
	}, failOnError(t))
	if err != nil {
		t.Fatal(err)
	}
	r.b = b
	return r
}

// withTimes returns the default configuration with priority and times.
func withTimes(priority uint16, hello, maxAge, fwdDelay int) Config {
	c := DefaultConfig()
	c.Priority, c.HelloTime, c.MaxAge, c.ForwardDelay = priority, hello, maxAge, fwdDelay
	return c
}

// addPort adds port id (named "p<id>") with cfg on a 1 Gb/s
// point-to-point link.
func (r *rig) addPort(id int, cfg PortConfig) {
	r.t.Helper()
	if err := r.b.AddPort(id, fmt.Sprintf("p%d", id), mac(byte(0x50+id)), up, cfg); err != nil {
		r.t.Fatal(err)
	}
}

// run advances the clock by d, ticking the Bridge every tick.
func (r *rig) run(d time.Duration) {
	for end := r.clk.Now().Add(d); r.clk.Now().Before(end); {
		r.clk.Advance(tick)
		r.b.Tick()
	}
}

// feed runs for d, port id receiving f every 2 s from now on, as from a
// neighbour with the default hello time.
func (r *rig) feed(id int, f []byte, d time.Duration) {
	for end := r.clk.Now().Add(d); r.clk.Now().Before(end); {
		r.b.Input(id, f)
		r.run(min(2*time.Second, end.Sub(r.clk.Now())))
	}
}

// take returns and forgets the frames sent so far on port id (every
// port if id is 0).
func (r *rig) take(id int) []sent {
	var got, keep []sent
	for _, s := range r.out {
		if id == 0 || s.port == id {
			got = append(got, s)
		} else {
			keep = append(keep, s)
		}
	}
	r.out = keep
	return got
}

// last returns the last frame sent on port id, failing if none was.
func (r *rig) last(id int) sent {
	r.t.Helper()
	for i := len(r.out) - 1; i >= 0; i-- {
		if r.out[i].port == id {
			return r.out[i]
		}
	}
	r.t.Fatalf("nothing sent on port %d", id)
	return sent{}
}

// takeFlushed returns and forgets the ports flushed so far.
func (r *rig) takeFlushed() []int {
	f := r.flushed
	r.flushed = nil
	return f
}

// port returns port id's status.
func (r *rig) port(id int) PortStatus {
	r.t.Helper()
	for _, s := range r.b.Ports() {
		if s.ID == id {
			return s
		}
	}
	r.t.Fatalf("port %d not in Ports()", id)
	return PortStatus{}
}

// want fails unless port id has role and state, and its Gate agrees.
func (r *rig) want(id int, role Role, state State) {
	r.t.Helper()
	s := r.port(id)
	if s.Role != role || s.State != state {
		r.t.Errorf("port %d at %v: got %s %s, want %s %s", id, r.elapsed(), s.Role, s.State, role, state)
	}
	if g := r.b.Gate(id); g.State() != state || g.Forwarding() != (state == Forwarding) || g.Learning() != (state != Discarding) {
		r.t.Errorf("port %d Gate: got %s (forwarding %v, learning %v), want %s", id, g.State(), g.Forwarding(), g.Learning(), state)
	}
}

// start is the fake clock's starting time.
var start = clock.NewFake().Now()

// elapsed returns the fake time since the rig started.
func (r *rig) elapsed() time.Duration { return r.clk.Now().Sub(start) }

// peer describes the BPDU a scripted neighbour sends.
type peer struct {
	// root, cost, bridge and port are its priority vector.
	root   BridgeID
	cost   uint32
	bridge BridgeID
	port   PortID
	// flags are its flags (role bits included, for an RST BPDU).
	flags uint8
	// age and maxAge are its message age and max age in seconds
	// (maxAge 0 means 20).
	age, maxAge int
}

// designated returns the RST BPDU flags of a designated port with extra.
func designated(extra uint8) uint8 { return uint8(RoleBitsDesignated)<<flagRoleShift | extra }

// rootRole returns the RST BPDU flags of a root port with extra.
func rootRole(extra uint8) uint8 { return uint8(RoleBitsRoot)<<flagRoleShift | extra }

// fields returns the peer's BPDU fields.
func (p peer) fields() Fields {
	maxAge := p.maxAge
	if maxAge == 0 {
		maxAge = 20
	}
	return Fields{Flags: p.flags, Root: p.root, RootPathCost: p.cost, Bridge: p.bridge, Port: p.port,
		MessageAge: time.Duration(p.age) * time.Second, MaxAge: time.Duration(maxAge) * time.Second,
		HelloTime: 2 * time.Second, ForwardDelay: 15 * time.Second}
}

// rst returns the peer's RST BPDU frame.
func (p peer) rst() []byte {
	b := make([]byte, FrameLen)
	f := p.fields()
	EncodeRST(b, p.bridge.MAC(), &f)
	return b
}

// config returns the peer's Configuration BPDU frame.
func (p peer) config() []byte {
	b := make([]byte, FrameLen)
	f := p.fields()
	EncodeConfig(b, p.bridge.MAC(), &f)
	return b
}

// tcnFrame returns a TCN BPDU frame from mac(last).
func tcnFrame(last byte) []byte {
	b := make([]byte, FrameLen)
	EncodeTCN(b, mac(last))
	return b
}

// rootPeer is a root bridge (priority 4096) sending from its port 1 as
// designated port, with extra flags.
func rootPeer(last byte, extra uint8) peer {
	return peer{root: bid(4096, last), bridge: bid(4096, last), port: NewPortID(128, 1), flags: designated(extra)}
}
