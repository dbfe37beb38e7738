package trunk

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/swctl/swctl/lacp"

	"github.com/swctl/swctl/platform"
)

// Proto names a trunk protocol, as `--proto` takes it.
type Proto string

// The protocols. Failover is the default.
const (
	ProtoFailover    Proto = "failover"
	ProtoRoundRobin  Proto = "roundrobin"
	ProtoLoadBalance Proto = "loadbalance"
	ProtoBroadcast   Proto = "broadcast"
	ProtoLACP        Proto = "lacp"
	ProtoNone        Proto = "none"
)

// protos lists every name ParseProto accepts, in the order errors list them.
var protos = []Proto{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast, ProtoLACP, ProtoNone}

// ParseProto parses a protocol name (case-insensitive).
func ParseProto(s string) (Proto, error) {
	w := Proto(strings.ToLower(strings.TrimSpace(s)))
	for _, p := range protos {
		if w == p {
			return p, nil
		}
	}
	names := make([]string, len(protos))
	for i, p := range protos {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown trunk protocol %q (want %s)", s, strings.Join(names, ", "))
}

// Distribution is how the trunk spreads frames over the members a
// protocol marks distributing.
type Distribution uint8

const (
	// DistributeHash sends each frame by one member chosen by the lb flow
	// hash (stable rendezvous selection): loadbalance, LACP, and failover
	// (whose distributing set has one member).
	DistributeHash Distribution = iota
	// DistributeRoundRobin sends each frame by the next member in turn.
	DistributeRoundRobin
	// DistributeBroadcast sends each frame by every distributing member.
	DistributeBroadcast
)

// Protocol is a trunk protocol: the state machine that decides, for each
// member, whether frames it receives are passed up (collecting) and
// whether frames may leave by it (distributing). It is the counterpart of
// if_trunk.c's tr_* hooks, minus the per-frame work, which the Trunk does
// from the members' states and the protocol's Distribution: a protocol
// never sees data frames, only slow-protocol frames (Input).
//
// # Calls
//
// The Trunk serialises every call to a Protocol under its own lock, so a
// Protocol needs no lock of its own for state only these methods touch.
// Its methods must not block (no I/O other than Control.Send, no waiting)
// and must not call the Trunk's exported methods (that deadlocks); they
// act through the Control given to Attach. A Protocol has no goroutines:
// Tick is its timer. One Protocol value serves one Trunk once: after
// Detach it is not attached again.
//
// Built-in protocols come from NewProtocol; LACP (package lacp)
// implements this interface and is installed with Trunk.SetProtocol.
type Protocol interface {
	// Name returns the protocol's name; it never changes.
	Name() Proto
	// Distribution returns how frames are spread over the distributing
	// members; it never changes.
	Distribution() Distribution
	// Attach hands the protocol its trunk. PortAdded follows for each
	// existing member, in the order they were added. Every member starts
	// neither collecting nor distributing.
	Attach(c Control)
	// Detach tells the protocol it has been replaced or its trunk closed.
	// Nothing is called after it; Control does nothing after it.
	Detach()
	// PortAdded tells the protocol that m joined the trunk.
	PortAdded(m *Member)
	// PortRemoved tells the protocol that m left the trunk. m is still in
	// Control.Members during the call; it is taken out of collecting and
	// distributing afterwards whatever the protocol does.
	PortRemoved(m *Member)
	// LinkChanged tells the protocol that m's link state may have
	// changed; m.Link has the new state. Failover reacts at once.
	LinkChanged(m *Member)
	// Tick is called periodically (Options.TickInterval, and by
	// Trunk.Tick) with the trunk clock's time. LACP runs its timers here.
	Tick(now time.Time)
	// Input receives a slow-protocols frame (destination
	// 01:80:c2:00:00:02, ethertype 0x8809: LACPDU, marker) that m
	// received. The frame is valid only during the call: copy what you
	// keep. Protocols without a control plane ignore it.
	Input(m *Member, frame []byte)
}

// PortDetailer is implemented by protocols that have more to say about a
// member than its flags (LACP: actor and partner). Trunk.Ports puts the
// value in PortInfo.Detail; it is called under the trunk's lock, like the
// Protocol methods, and should return a fresh value (a struct that
// encodes to JSON).
type PortDetailer interface {
	PortDetail(m *Member) any
}

// Control is what a Protocol uses to act on its trunk. Its methods may be
// called only from within a Protocol method call (the trunk's lock is
// then held); after Detach they do nothing.
type Control interface {
	// TrunkName returns the trunk's name, for logs.
	TrunkName() string
	// HardwareAddr returns the trunk's MAC address (LACP's system ID
	// default).
	HardwareAddr() net.HardwareAddr
	// Now returns the trunk clock's time.
	Now() time.Time
	// Logger returns the trunk's logger.
	Logger() *slog.Logger
	// Preempt reports whether failover returns to a member of higher
	// priority as soon as its link is up (Policy.NoPreempt clear).
	Preempt() bool
	// Members returns the trunk's members in the order they were added.
	// The slice is the caller's.
	Members() []*Member
	// SetState sets whether m is collecting (frames it receives are
	// passed up) and distributing (frames may leave by it). The data
	// path sees the change when the Protocol method returns.
	SetState(m *Member, collecting, distributing bool)
	// Send writes one frame (a LACPDU, a marker response) out of m alone,
	// whatever its state. The frame is copied before Send returns. It
	// fails when m has left, or m's port refused the frame.
	Send(m *Member, frame []byte) error
}

// NewProtocol returns a new instance of a built-in protocol: failover,
// roundrobin, loadbalance, broadcast or none. LACP lives in package lacp.
func NewProtocol(p Proto) (Protocol, error) {
	switch p {
	case ProtoFailover, "":
		return &failover{}, nil
	case ProtoRoundRobin:
		return &linkUp{name: ProtoRoundRobin, dist: DistributeRoundRobin}, nil
	case ProtoLoadBalance:
		return &linkUp{name: ProtoLoadBalance, dist: DistributeHash}, nil
	case ProtoBroadcast:
		return &linkUp{name: ProtoBroadcast, dist: DistributeBroadcast}, nil
	case ProtoNone:
		return none{}, nil
	case ProtoLACP:
		return NewLACP(lacp.Config{}), nil
	}
	if _, err := ParseProto(string(p)); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("protocol %q: not built in", p)
}

// failover sends by the primary member (highest priority, ties: first
// added) while its link is up, else by the next up member in that order,
// and returns to the primary as soon as it is up again (unless the
// trunk's Policy says NoPreempt: then it stays where it is while that
// link is up). Only the member it sends by is collecting.
type failover struct {
	// ctl is the trunk's Control; set by Attach, under the trunk's lock.
	ctl Control
}

func (*failover) Name() Proto                { return ProtoFailover }
func (*failover) Distribution() Distribution { return DistributeHash }
func (f *failover) Attach(c Control)         { f.ctl = c }
func (f *failover) Detach()                  {}
func (f *failover) PortAdded(*Member)        { f.update(nil) }
func (f *failover) PortRemoved(m *Member)    { f.update(m) }
func (f *failover) LinkChanged(*Member)      { f.update(nil) }
func (*failover) Tick(time.Time)             {}
func (*failover) Input(*Member, []byte)      {}

// update makes the best up member (other than leaving) the only active
// one: the highest priority, or, without preemption, the member already
// active while its link is up.
func (f *failover) update(leaving *Member) {
	ms := f.ctl.Members()
	var best *Member
	for _, m := range ms {
		if m == leaving || m.Link() != platform.LinkUp {
			continue
		}
		if !f.ctl.Preempt() && m.Distributing() {
			best = m
			break
		}
		if best == nil || m.Priority() > best.Priority() {
			best = m
		}
	}
	for _, m := range ms {
		f.ctl.SetState(m, m == best, m == best)
	}
}

// linkUp is roundrobin, loadbalance and broadcast: every member whose link
// is up collects and distributes; they differ only in Distribution.
type linkUp struct {
	// name is the protocol's name; immutable.
	name Proto
	// dist is how frames are spread; immutable.
	dist Distribution
	// ctl is the trunk's Control; set by Attach, under the trunk's lock.
	ctl Control
}

func (l *linkUp) Name() Proto                { return l.name }
func (l *linkUp) Distribution() Distribution { return l.dist }
func (l *linkUp) Attach(c Control)           { l.ctl = c }
func (*linkUp) Detach()                      {}
func (l *linkUp) PortAdded(m *Member)        { l.LinkChanged(m) }
func (*linkUp) PortRemoved(*Member)          {}
func (*linkUp) Tick(time.Time)               {}
func (*linkUp) Input(*Member, []byte)        {}

func (l *linkUp) LinkChanged(m *Member) {
	up := m.Link() == platform.LinkUp
	l.ctl.SetState(m, up, up)
}

// none neither sends nor receives.
type none struct{}

func (none) Name() Proto                { return ProtoNone }
func (none) Distribution() Distribution { return DistributeHash }
func (none) Attach(Control)             {}
func (none) Detach()                    {}
func (none) PortAdded(*Member)          {}
func (none) PortRemoved(*Member)        {}
func (none) LinkChanged(*Member)        {}
func (none) Tick(time.Time)             {}
func (none) Input(*Member, []byte)      {}
