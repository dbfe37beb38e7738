package stp

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/swctl/swctl/clock"
)

// Outputs are where a Bridge's decisions go. The Bridge calls them
// synchronously, with its lock held: they must not call back into the
// Bridge, and must not keep the frame slice after they return.
type Outputs struct {
	// Send writes a BPDU frame (FrameLen bytes) out of port, whatever the
	// port's state.
	Send func(port int, frame []byte)
	// Flush removes the addresses learned on port from the forwarding
	// database: the port stopped learning, or a topology change moved
	// stations. May be nil.
	Flush func(port int)
}

// Bridge runs the spanning tree of one bridge. It does no I/O and starts
// no goroutine: the daemon feeds it received BPDUs (Input), link changes
// (LinkChanged) and clock ticks (Tick), and it sends BPDUs and flush
// requests through Outputs. Its methods are safe for concurrent use.
type Bridge struct {
	// mu guards t and every port.
	mu sync.Mutex
	// t is the protocol state.
	t tree
}

// tree is the protocol state of a Bridge: the bridge's variables of
// 802.1D-2004 17.18 and its ports. The machines are functions of a tree
// and one of its ports.
type tree struct {
	// clk is the time source of every timer.
	clk clock.Clock
	// out receives frames and flush requests.
	out Outputs
	// log receives one line per change of role, state, root or protocol.
	log *slog.Logger
	// cfg is the configuration in force.
	cfg Config
	// id is our bridge identifier.
	id BridgeID
	// ports are the ports, sorted by ID.
	ports []*port
	// rootPriority and rootTimes are the root priority vector and the
	// root times (17.18.6, 17.18.7); rootPort is the root port, or nil.
	rootPriority vector
	rootTimes    times
	rootPort     *port
	// nextSecond is when the timers next step.
	nextSecond time.Time
	// tcCount counts topology changes, tcLast is when the last one was
	// counted, and tcUntil is when the changes seen stop being news (a
	// change seen before then is counted with the one before).
	tcCount uint64
	tcLast  time.Time
	tcUntil time.Time
	// buf holds the frame being sent.
	buf [FrameLen]byte
}

// New returns a Bridge with cfg and no ports, or the error of
// cfg.Validate. out.Send must not be nil. log may be nil; give it the
// bridge's name (log.With("bridge", name)), since the Bridge names only
// ports.
func New(cfg Config, clk clock.Clock, out Outputs, log *slog.Logger) (*Bridge, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if out.Flush == nil {
		out.Flush = func(int) {}
	}
	b := &Bridge{t: tree{clk: clk, out: out, log: log, cfg: cfg}}
	b.t.setID()
	b.t.rootPriority = b.t.bridgeVector()
	b.t.rootTimes = b.t.bridgeTimes()
	return b, nil
}

// AddPort adds port id. mac is the source of its BPDUs; link its link
// state; cfg its configuration (DefaultPortConfig, or the error of
// cfg.Validate). The port gets the lowest port number not in use and
// starts discarding.
func (b *Bridge) AddPort(id int, name string, mac [6]byte, link Link, cfg PortConfig) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("stp: add port %s: %w", name, err)
	}
	if b.find(id) != nil {
		return fmt.Errorf("stp: add port %s (id %d): already a port", name, id)
	}
	number := uint16(1)
	for ; slices.ContainsFunc(b.t.ports, func(p *port) bool { return p.number == number }); number++ {
		if number == 0x0fff {
			return fmt.Errorf("stp: add port %s (id %d): no free port number", name, id)
		}
	}
	if b.t.cfg.MAC == [6]byte{} {
		b.t.cfg.MAC = mac
		b.t.setID()
	}
	p := &port{id: id, name: name, mac: mac, number: number, cfg: cfg, link: link, gate: &Gate{}}
	p.portID = NewPortID(cfg.Priority, number)
	p.applyLink()
	i, _ := slices.BinarySearchFunc(b.t.ports, id, func(p *port, id int) int { return cmp.Compare(p.id, id) })
	b.t.ports = slices.Insert(b.t.ports, i, p)
	b.t.begin(p)
	b.t.run()
	return nil
}

// RemovePort removes port id; its Gate says discarding from then on. An
// unknown id is ignored.
func (b *Bridge) RemovePort(id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.t.ports, func(p *port) bool { return p.id == id })
	if i < 0 {
		return
	}
	p := b.t.ports[i]
	b.t.ports = slices.Delete(b.t.ports, i, i+1)
	p.gate.set(Discarding)
	b.t.reselectAll()
	b.t.run()
}

// LinkChanged tells the Bridge that port id's link changed (carrier,
// speed or duplex). A port whose link goes down becomes disabled and
// discards; one whose link comes up starts discarding and looks for its
// role.
func (b *Bridge) LinkChanged(id int, link Link) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.find(id)
	if p == nil || p.link == link {
		return
	}
	p.link = link
	if p.applyLink() {
		p.reselect, p.selected = true, false
	}
	b.t.run()
}

// Input processes a frame port id received for the bridge group address
// (the whole Ethernet frame). A valid BPDU drives the machines; anything
// else is counted by cause and dropped. The frame is only read, and not
// kept. Input allocates nothing in steady state.
func (b *Bridge) Input(id int, f []byte) {
	kind, cause := Decode(f)
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.find(id)
	if p == nil {
		if b.debugging() {
			b.t.log.Debug("stp: frame dropped", "port_id", id, "cause", "not a port")
		}
		return
	}
	var in Fields
	if kind == KindConfig || kind == KindRST {
		in = Payload(f).Fields()
	}
	switch {
	case cause != CauseNone:
	case !p.portEnabled:
		cause = CausePortDown
	case kind == KindConfig && in.Bridge == b.t.id && in.Port == p.portID:
		cause = CauseLoopback
	}
	if cause != CauseNone {
		*p.counters.Bad.field(cause)++
		if b.debugging() {
			b.t.log.Debug("stp: frame dropped", "port", p.name, "cause", cause.String())
		}
		return
	}
	switch kind {
	case KindConfig:
		p.counters.RxConfig++
	case KindRST:
		p.counters.RxRST++
	case KindTCN:
		p.counters.RxTCN++
	}
	p.rx = messageOf(kind, &in)
	p.rcvdBpdu = true
	b.t.run()
}

// Tick steps the timers once for every whole second since they last
// stepped, running the machines after each step. Call it often (every
// 100 ms is plenty); a late Tick delays actions without distorting the
// timers, up to a gap of a minute, beyond which (a suspended host) the
// timers restart from now. Tick allocates nothing in steady state.
func (b *Bridge) Tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t.advance(b.t.clk.Now())
}

// Gate returns the data path's view of port id's state, or nil for an
// unknown port. The bridge keeps it and reads it per frame.
func (b *Bridge) Gate(id int) *Gate {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.find(id); p != nil {
		return p.gate
	}
	return nil
}

// find returns port id, or nil.
func (b *Bridge) find(id int) *port {
	for _, p := range b.t.ports {
		if p.id == id {
			return p
		}
	}
	return nil
}

// debugging reports whether debug logs are wanted; callers check it
// before building a record, which allocates.
func (b *Bridge) debugging() bool { return b.t.log.Enabled(context.Background(), slog.LevelDebug) }
