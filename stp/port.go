package stp

// States of the per-port machines that rest in more than one state.
// Transient states of 802.1D-2004 (whose actions are followed by an
// unconditional transition) are not represented: their actions run
// inline, followed by the actions of the state they lead to.
type (
	// rxState is the Port Receive machine's state (17.23).
	rxState uint8
	// ppmState is the Port Protocol Migration machine's state (17.24).
	ppmState uint8
	// pimState is the Port Information machine's state (17.27).
	pimState uint8
	// prtState is the Port Role Transitions machine's state (17.29).
	prtState uint8
	// tcState is the Topology Change machine's state (17.31).
	tcState uint8
	// infoIs says where a port's port priority vector came from (17.19.10).
	infoIs uint8
)

const (
	rxDiscard rxState = iota
	rxReceive
)

const (
	ppmCheckingRSTP ppmState = iota
	ppmSelectingSTP
	ppmSensing
)

const (
	pimDisabled pimState = iota
	pimAged
	pimCurrent
)

const (
	prtDisablePort prtState = iota
	prtDisabledPort
	prtRootPort
	prtDesignatedPort
	prtAlternatePort
	prtBlockPort
)

const (
	tcInactive tcState = iota
	tcLearning
	tcActive
)

const (
	infoDisabled infoIs = iota
	infoAged
	infoMine
	infoReceived
)

// message is a received BPDU, as the machines read it.
type message struct {
	// kind is the BPDU's kind.
	kind Kind
	// flags are its flags (0 for a TCN BPDU).
	flags uint8
	// designated says it conveys a designated port role: a Configuration
	// BPDU, or an RST BPDU with the designated or unknown role.
	designated bool
	// prio is its message priority vector.
	prio vector
	// times are its timer values.
	times times
}

// port is one port of the Bridge: its configuration, the variables of
// 802.1D-2004 17.19 (named as there), and the states of its machines.
// Timers count whole seconds down to 0, one step per second (17.22).
type port struct {
	// id is the caller's identifier, given back to send and flush.
	id int
	// name names the port in logs and status.
	name string
	// mac is the source of the BPDUs the port sends.
	mac [6]byte
	// number is the port number (1–4095, unique in the Bridge).
	number uint16
	// cfg is the port's configuration.
	cfg PortConfig
	// link is the link state last given.
	link Link
	// gate is the data path's view of the port state.
	gate *Gate

	// portEnabled is set while the link is up and the port takes part.
	portEnabled bool
	// portID is the port identifier (priority and number).
	portID PortID
	// pathCost is the path cost in use.
	pathCost uint32
	// operP2P is operPointToPointMAC.
	operP2P bool

	// The timers of 17.17, in seconds.
	edgeDelayWhile, fdWhile, helloWhen, mdelayWhile uint16
	rbWhile, rcvdInfoWhile, rrWhile, tcWhile        uint16
	// txCount counts BPDUs sent in the last seconds; it drops by one a
	// second, and no BPDU goes out while it is at the hold count.
	txCount uint16

	// The booleans of 17.19.
	agree, agreed, disputed, fdbFlush, forward, learn, mcheck bool
	newInfo, operEdge, proposed, proposing, rcvdBpdu          bool
	rcvdRSTP, rcvdSTP, rcvdMsg, rcvdTc, rcvdTcAck, rcvdTcn    bool
	reRoot, reselect, selected, sendRSTP, sync, synced        bool
	tcAck, tcProp, updtInfo                                   bool

	// infoIs says where portPriority came from.
	infoIs infoIs
	// role and selectedRole are the port's role and the one role
	// selection gave it.
	role, selectedRole Role
	// The priority vectors of 17.19: the port's, the last received
	// message's, and the one it would send as designated port.
	portPriority, msgPriority, designatedPriority vector
	// The times that go with them.
	portTimes, msgTimes, designatedTimes times
	// rx is the BPDU being processed.
	rx message

	// The machines' states.
	prx   rxState
	ppm   ppmState
	edge  bool // Bridge Detection: EDGE (true) or NOT_EDGE
	pim   pimState
	prt   prtState
	state State // Port State Transition
	tcm   tcState

	// counters are the port's counters.
	counters Counters
}

// Link is a port's link state, as the daemon reads it.
type Link struct {
	// Up says the link has carrier.
	Up bool
	// SpeedMbps is the speed in megabits a second; 0 if unknown.
	SpeedMbps uint64
	// HalfDuplex says the link is half duplex (a hub). Unknown duplex is
	// taken as full.
	HalfDuplex bool
}

// learning reports whether the port state is learning or forwarding.
func (p *port) learning() bool { return p.state != Discarding }

// forwarding reports whether the port state is forwarding.
func (p *port) forwarding() bool { return p.state == Forwarding }

// helloTime, fwdDelay and maxAge are the components of designatedTimes
// the machines use (17.20.6, 17.20.7, 17.20.8).
func (p *port) helloTime() uint16 { return p.designatedTimes.helloTime }
func (p *port) fwdDelay() uint16  { return p.designatedTimes.forwardDelay }
func (p *port) maxAge() uint16    { return p.designatedTimes.maxAge }

// forwardDelay is how long a designated or root port waits in discarding
// and in learning without an agreement: HelloTime when it speaks RSTP,
// FwdDelay when STP (17.20.5).
func (p *port) forwardDelay() uint16 {
	if p.sendRSTP {
		return p.helloTime()
	}
	return p.fwdDelay()
}

// edgeDelay is how long a proposing designated port waits for a BPDU
// before autoedge makes it an edge port (17.20.4).
func (p *port) edgeDelay() uint16 {
	if p.operP2P {
		return MigrateTime
	}
	return p.maxAge()
}

// tick is the Port Timers machine (17.22): one second has passed.
func (p *port) tick() {
	for _, t := range [...]*uint16{&p.edgeDelayWhile, &p.fdWhile, &p.helloWhen, &p.mdelayWhile,
		&p.rbWhile, &p.rcvdInfoWhile, &p.rrWhile, &p.tcWhile, &p.txCount} {
		if *t > 0 {
			*t--
		}
	}
}

// applyLink recomputes what follows from the link and the configuration:
// portEnabled, the path cost and operPointToPointMAC. It reports whether
// the path cost changed.
func (p *port) applyLink() bool {
	p.portEnabled = p.link.Up && p.cfg.Enabled
	switch p.cfg.PointToPoint {
	case PTPOn:
		p.operP2P = true
	case PTPOff:
		p.operP2P = false
	default:
		p.operP2P = !p.link.HalfDuplex
	}
	cost := p.cfg.PathCost
	if cost == 0 {
		cost = PathCostForSpeed(p.link.SpeedMbps)
	}
	changed := cost != p.pathCost
	p.pathCost = cost
	return changed
}

// publish shows the port state to the data path: a port that takes no
// part forwards.
func (p *port) publish() {
	if !p.cfg.Enabled {
		p.gate.set(Forwarding)
		return
	}
	p.gate.set(p.state)
}
