package lacp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
)

// Data-path flags of a port, read with atomics.
const (
	flagCollecting   = 1
	flagDistributing = 2
)

// Actor runs LACP for the member ports of one trunk. It does no I/O: the
// trunk feeds it received slow-protocols frames (Receive), link changes
// (LinkChanged) and clock ticks (Tick), and it hands the frames to send to
// the send function given to New. Its methods are safe for concurrent use.
type Actor struct {
	// clk is the time source of every timer.
	clk clock.Clock
	// send writes a frame out of a member port; called with mu held.
	send func(port int, frame []byte)
	// log receives one line per state change.
	log *slog.Logger
	// byID is an immutable snapshot of the ports by ID for the data path
	// (Collecting, Distributing); replaced, under mu, when ports change.
	byID atomic.Pointer[map[int]*port]

	// mu guards every field below and every port's fields except flags.
	mu sync.Mutex
	// cfg is the configuration with defaults applied.
	cfg Config
	// ports are the member ports, sorted by ID.
	ports []*port
	// agg is the partner of the active aggregator, valid when hasAgg.
	agg group
	// hasAgg reports whether an aggregator is active.
	hasAgg bool
	// buf holds the frame being sent; send must not keep it.
	buf [FrameLen]byte
}

// group identifies a partner aggregator: the partner's system and key.
type group struct {
	// prio is the partner's system priority.
	prio uint16
	// system is the partner's system MAC.
	system [6]byte
	// key is the partner's key.
	key uint16
}

// port is one member port and its state machines.
type port struct {
	// id is the caller's identifier, given back to send.
	id int
	// name names the port in logs and Ports.
	name string
	// mac is the port's MAC, the source of the frames it sends.
	mac [6]byte
	// number is the LACP port number (1-based, unique in the Actor).
	number uint16
	// priority is the LACP port priority.
	priority uint16
	// linkUp is the link state last given.
	linkUp bool

	// rx is the receive machine state.
	rx RxState
	// currentWhile is when the receive machine's current_while timer
	// expires (zero when stopped).
	currentWhile time.Time
	// partner is the partner information recorded (Partner_Oper): its
	// Synchronization bit is set only if the partner also agrees on us.
	partner PortInfo
	// viewOfUs is what the partner's last LACPDU said about us.
	viewOfUs PortInfo

	// candidate reports whether the port may aggregate: link up, partner
	// current and aggregatable.
	candidate bool
	// group is the partner's aggregator, meaningful when candidate.
	group group
	// selected reports whether the port is in the active aggregator.
	selected bool
	// reason says why the port is not selected.
	reason string

	// mux is the mux machine state.
	mux MuxState
	// muxGroup is the aggregator the mux waits for or is attached to.
	muxGroup group
	// waitWhile is when the wait_while timer expires in MuxWaiting.
	waitWhile time.Time

	// periodicAt is when the periodic machine next sets ntt (zero when
	// there is no periodic transmission).
	periodicAt time.Time
	// ntt is "need to transmit".
	ntt bool
	// advertised is the actor information of the last LACPDU sent.
	advertised PortInfo
	// txTimes are the times of the last txLimit LACPDUs, a ring.
	txTimes [txLimit]time.Time
	// txNext is the next slot of txTimes to write (the oldest).
	txNext int

	// counters are the port's counters.
	counters Counters
	// flags holds flagCollecting and flagDistributing for the data path;
	// the only field read without mu.
	flags atomic.Uint32
}

// New returns an Actor for one trunk, with no ports.
//
// send writes a control frame (a LACPDU or a Marker Response, FrameLen
// bytes) out of member port. The Actor calls it synchronously, with its
// lock held, from Receive, Tick, AddPort, LinkChanged and the Set
// methods: send must not call back into the Actor (queue the frame if the
// receiver may be this Actor, as tests wiring two Actors back to back
// do), and it must not keep the slice after it returns (copy it).
//
// log may be nil; give it the trunk's name (log.With("trunk", name)),
// since the Actor names only ports.
func New(cfg Config, clk clock.Clock, send func(port int, frame []byte), log *slog.Logger) *Actor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Actor{
		clk:  clk,
		send: send,
		log:  log,
		cfg:  cfg.withDefaults(),
	}
	a.byID.Store(&map[int]*port{})
	return a
}

// AddPort adds member port id. mac is the port's MAC (the source of its
// frames); portPriority is sent as given, 0 (the highest) included
// (DefaultPortPriority is the usual one). The port gets the
// lowest LACP port number not in use. A port whose link is up starts
// EXPIRED, as in 802.1AX: it asks for fast LACPDUs and goes DEFAULTED if
// none comes within ShortTimeoutTime.
func (a *Actor) AddPort(id int, name string, mac [6]byte, portPriority uint16, linkUp bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.find(id) != nil {
		return fmt.Errorf("lacp: add port %s (id %d): already a member", name, id)
	}
	if a.cfg.SystemMAC == [6]byte{} {
		a.cfg.SystemMAC = mac
	}
	number := uint16(1)
	for ; slices.ContainsFunc(a.ports, func(p *port) bool { return p.number == number }); number++ {
		if number == 0xffff {
			return fmt.Errorf("lacp: add port %s (id %d): no free LACP port number", name, id)
		}
	}
	p := &port{id: id, name: name, mac: mac, number: number, priority: portPriority, rx: RxPortDisabled}
	i, _ := slices.BinarySearchFunc(a.ports, id, func(p *port, id int) int { return p.id - id })
	a.ports = slices.Insert(a.ports, i, p)
	a.publish()
	now := a.clk.Now()
	if linkUp {
		a.linkUp(p, now)
	}
	a.update(now)
	return nil
}

// RemovePort removes member port id; it stops collecting and distributing
// at once. An unknown id is ignored.
func (a *Actor) RemovePort(id int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.ports, func(p *port) bool { return p.id == id })
	if i < 0 {
		return
	}
	p := a.ports[i]
	a.ports = slices.Delete(a.ports, i, i+1)
	a.publish()
	p.flags.Store(0)
	a.update(a.clk.Now())
}

// LinkChanged tells the Actor that port id's link went up or down. Down:
// the port stops collecting and distributing at once (PORT_DISABLED).
// Up: the port goes EXPIRED and asks its partner for fast LACPDUs.
func (a *Actor) LinkChanged(id int, up bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.find(id)
	if p == nil || p.linkUp == up {
		return
	}
	now := a.clk.Now()
	if up {
		a.linkUp(p, now)
	} else {
		p.linkUp = false
		a.setRx(p, RxPortDisabled, "link down")
		p.partner.State &^= StateSynchronization
		p.currentWhile = time.Time{}
		p.periodicAt = time.Time{}
	}
	a.update(now)
}

// Receive processes a slow-protocols frame (the whole Ethernet frame, as
// received) from port id: a LACPDU is recorded, a Marker Information PDU
// is answered with a Marker Response out of the same port; anything else
// is counted by cause and dropped. frame is only read, and not kept.
// Receive allocates nothing in steady state.
func (a *Actor) Receive(id int, f []byte) {
	kind, cause := Decode(f)
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.find(id)
	if p == nil {
		a.debug("lacp: frame dropped", "port_id", id, "cause", "not a member")
		return
	}
	if cause == CauseNone && !p.linkUp {
		cause = CausePortDown
	}
	if cause != CauseNone {
		*p.counters.Bad.field(cause)++
		a.debug("lacp: frame dropped", "port", p.name, "cause", cause.String())
		return
	}
	now := a.clk.Now()
	switch kind {
	case KindLACP:
		p.counters.RxLACPDU++
		a.record(p, LACPDU(f[frame.HeaderLen:]), now)
		a.update(now)
	case KindMarkerInfo:
		p.counters.RxMarker++
		m := Marker(f[frame.HeaderLen:])
		resp := MarkerFields{
			Response:        true,
			RequesterPort:   m.RequesterPort(),
			RequesterSystem: m.RequesterSystem(),
			TransactionID:   m.TransactionID(),
		}
		n := EncodeMarker(a.buf[:], p.mac, &resp)
		a.send(p.id, a.buf[:n])
		p.counters.TxMarkerResponse++
	case KindMarkerResponse:
		p.counters.RxMarkerResponse++
	}
}

// Tick runs every timer against the clock: partner expiry, the wait
// before attaching, periodic and pending transmissions. Call it often
// (every 100 ms is plenty; transitions are computed from deadlines, so a
// late Tick delays actions but does not distort timeouts). Tick allocates
// nothing in steady state.
func (a *Actor) Tick() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.update(a.clk.Now())
}

// Collecting reports whether frames received on port id are to be
// accepted. It takes no lock (data path).
func (a *Actor) Collecting(id int) bool {
	p := (*a.byID.Load())[id]
	return p != nil && p.flags.Load()&flagCollecting != 0
}

// Distributing reports whether frames may be sent on port id. It takes no
// lock (data path).
func (a *Actor) Distributing(id int) bool {
	p := (*a.byID.Load())[id]
	return p != nil && p.flags.Load()&flagDistributing != 0
}

// SetConfig replaces the configuration (zero fields take their defaults;
// an all-zero SystemMAC keeps the current one). A new system priority,
// MAC or key changes who we are: every port drops its partner's
// synchronization until the partner has heard the new identity.
func (a *Actor) SetConfig(cfg Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cfg = cfg.withDefaults()
	if cfg.SystemMAC == [6]byte{} {
		cfg.SystemMAC = a.cfg.SystemMAC
	}
	old := a.cfg
	a.cfg = cfg
	if old == cfg {
		return
	}
	a.log.Info("lacp: configuration changed", "mode", cfg.Mode.String(), "timeout", cfg.Timeout.String(),
		"system_priority", cfg.SystemPriority, "system", net6(cfg.SystemMAC), "key", cfg.Key)
	if old.SystemPriority != cfg.SystemPriority || old.SystemMAC != cfg.SystemMAC || old.Key != cfg.Key {
		for _, p := range a.ports {
			p.partner.State &^= StateSynchronization
		}
	}
	a.update(a.clk.Now())
}

// Config returns the configuration in force (defaults applied).
func (a *Actor) Config() Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// SetPortPriority sets port id's LACP port priority, 0 (the highest)
// included. We have no limit on the number of ports in an
// aggregator, so the priority only informs the partner.
func (a *Actor) SetPortPriority(id int, prio uint16) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.find(id)
	if p == nil {
		return fmt.Errorf("lacp: set port priority of port id %d: not a member", id)
	}
	if p.priority == prio {
		return nil
	}
	p.priority = prio
	// The partner must hear our new identity before it is in sync again.
	p.partner.State &^= StateSynchronization
	a.update(a.clk.Now())
	return nil
}

// Ports returns a snapshot of every port, sorted by ID.
func (a *Actor) Ports() []PortState {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]PortState, 0, len(a.ports))
	for _, p := range a.ports {
		out = append(out, PortState{
			ID:       p.id,
			Name:     p.name,
			LinkUp:   p.linkUp,
			Actor:    a.actorInfo(p),
			Partner:  p.partner,
			Receive:  p.rx,
			Mux:      p.mux,
			Selected: p.selected,
			Reason:   p.reason,
			Counters: p.counters,
		})
	}
	return out
}

// Aggregator returns the active aggregator, if any.
func (a *Actor) Aggregator() (Aggregator, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.hasAgg {
		return Aggregator{}, false
	}
	return Aggregator{
		PartnerSystemPriority: a.agg.prio,
		PartnerSystem:         a.agg.system,
		PartnerKey:            a.agg.key,
		Ports:                 a.count(a.agg),
	}, true
}

// find returns port id, or nil.
func (a *Actor) find(id int) *port {
	for _, p := range a.ports {
		if p.id == id {
			return p
		}
	}
	return nil
}

// publish replaces the data path's snapshot of the ports.
func (a *Actor) publish() {
	m := make(map[int]*port, len(a.ports))
	for _, p := range a.ports {
		m[p.id] = p
	}
	a.byID.Store(&m)
}

// debug logs at debug level, building the record only when enabled.
func (a *Actor) debug(msg string, args ...any) {
	if a.log.Enabled(context.Background(), slog.LevelDebug) {
		a.log.Debug(msg, args...)
	}
}

// net6 formats a MAC for logs.
func net6(m [6]byte) string { return frame.MAC(m).String() }
