package stp

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Role is a port's role in the spanning tree (802.1D-2004 17.7).
type Role uint8

// Port roles.
const (
	// RoleDisabled: the link is down, or the port takes no part.
	RoleDisabled Role = iota
	// RoleRoot: the port's best path to the root.
	RoleRoot
	// RoleDesignated: the port that connects its segment towards the root.
	RoleDesignated
	// RoleAlternate: a discarding port with another path to the root,
	// through another bridge; it takes over if the root port fails.
	RoleAlternate
	// RoleBackup: a discarding port on a segment where another port of
	// this bridge is designated (a shared segment, a loop to ourselves).
	RoleBackup
)

// roleNames names the roles.
var roleNames = [...]string{"disabled", "root", "designated", "alternate", "backup"}

// String names the role ("root", "designated", ...).
func (r Role) String() string { return nameOf(roleNames[:], r, "role") }

// MarshalText returns String.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// State is a port's state: what the bridge does with its frames.
type State uint8

// Port states (802.1D-2004 17.5). BPDUs the Bridge sends go out whatever
// the state.
const (
	// Discarding: frames from and to the port are dropped, nothing is
	// learned from them.
	Discarding State = iota
	// Learning: frames are dropped, but their source addresses are learned.
	Learning
	// Forwarding: frames are learned from and forwarded.
	Forwarding
)

// stateNames names the states.
var stateNames = [...]string{"discarding", "learning", "forwarding"}

// String names the state ("discarding", "learning", "forwarding").
func (s State) String() string { return nameOf(stateNames[:], s, "state") }

// MarshalText returns String.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Gate is the data path's view of one port: its State, read with one
// atomic load and no lock, for every frame. The Bridge updates it; the
// forwarding path keeps the pointer Bridge.Gate returned.
type Gate struct {
	// state holds a State.
	state atomic.Uint32
}

// State returns the port's state.
func (g *Gate) State() State { return State(g.state.Load()) }

// Learning reports whether source addresses of frames received on the
// port are to be learned (learning or forwarding).
func (g *Gate) Learning() bool { return g.state.Load() != uint32(Discarding) }

// Forwarding reports whether frames may be received from and sent to the
// port.
func (g *Gate) Forwarding() bool { return g.state.Load() == uint32(Forwarding) }

// set stores s.
func (g *Gate) set(s State) { g.state.Store(uint32(s)) }

// nameOf returns names[v], or what and the number of a value without a
// name.
func nameOf[T ~uint8](names []string, v T, what string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s %d", what, uint8(v))
}

// BadCounts counts dropped frames by cause.
type BadCounts struct {
	// NotBPDU counts frames that were not 802.3/LLC frames to GroupMAC.
	NotBPDU uint64 `json:"not_bpdu"`
	// Truncated counts frames too short for their headers or BPDU.
	Truncated uint64 `json:"truncated"`
	// Protocol counts BPDUs with a protocol identifier other than 0.
	Protocol uint64 `json:"protocol"`
	// Type counts BPDUs of an unknown type.
	Type uint64 `json:"type"`
	// Version counts RST BPDUs of version 0 or 1.
	Version uint64 `json:"version"`
	// MessageAge counts Configuration BPDUs whose message age is not
	// below their max age.
	MessageAge uint64 `json:"message_age"`
	// Loopback counts our own Configuration BPDUs received back.
	Loopback uint64 `json:"loopback"`
	// PortDown counts BPDUs received while the link was down or the port
	// took no part.
	PortDown uint64 `json:"port_down"`
}

// field returns the counter of cause c, or nil for CauseNone.
func (b *BadCounts) field(c Cause) *uint64 {
	switch c {
	case CauseNotBPDU:
		return &b.NotBPDU
	case CauseTruncated:
		return &b.Truncated
	case CauseProtocol:
		return &b.Protocol
	case CauseType:
		return &b.Type
	case CauseVersion:
		return &b.Version
	case CauseMessageAge:
		return &b.MessageAge
	case CauseLoopback:
		return &b.Loopback
	case CausePortDown:
		return &b.PortDown
	}
	return nil
}

// Of returns the count for cause c.
func (b BadCounts) Of(c Cause) uint64 {
	if f := b.field(c); f != nil {
		return *f
	}
	return 0
}

// Total returns the sum over all causes.
func (b BadCounts) Total() uint64 {
	return b.NotBPDU + b.Truncated + b.Protocol + b.Type + b.Version + b.MessageAge + b.Loopback + b.PortDown
}

// Counters are a port's BPDU counters.
type Counters struct {
	// RxConfig, RxRST and RxTCN count valid BPDUs received, by kind.
	RxConfig uint64 `json:"rx_config"`
	RxRST    uint64 `json:"rx_rst"`
	RxTCN    uint64 `json:"rx_tcn"`
	// TxConfig, TxRST and TxTCN count BPDUs sent, by kind.
	TxConfig uint64 `json:"tx_config"`
	TxRST    uint64 `json:"tx_rst"`
	TxTCN    uint64 `json:"tx_tcn"`
	// Bad counts frames dropped, by cause.
	Bad BadCounts `json:"bad"`
}

// Rx returns the valid BPDUs received.
func (c Counters) Rx() uint64 { return c.RxConfig + c.RxRST + c.RxTCN }

// Tx returns the BPDUs sent.
func (c Counters) Tx() uint64 { return c.TxConfig + c.TxRST + c.TxTCN }

// PortStatus is a snapshot of one port, for `bridge show`.
type PortStatus struct {
	// ID and Name are what AddPort was given.
	ID   int    `json:"id"`
	Name string `json:"name"`
	// PortID is the port identifier: priority and port number.
	PortID PortID `json:"port_id"`
	// Enabled says the port takes part (PortConfig.Enabled).
	Enabled bool `json:"enabled"`
	// LinkUp is the link state last given.
	LinkUp bool `json:"link_up"`
	// Role is the port role.
	Role Role `json:"role"`
	// State is the port state the data path applies (Forwarding for a
	// port that takes no part).
	State State `json:"state"`
	// Edge says the port is an edge port now (operEdge).
	Edge bool `json:"edge"`
	// PointToPoint says the link is taken as point-to-point now.
	PointToPoint bool `json:"point_to_point"`
	// PathCost is the path cost in use.
	PathCost uint32 `json:"path_cost"`
	// Protocol is what the port speaks now: RSTP, or STP after hearing
	// an 802.1D neighbour (or when the bridge runs STP).
	Protocol Protocol `json:"protocol"`
	// DesignatedRoot, DesignatedCost, DesignatedBridge and
	// DesignatedPort are the port priority vector: the best information
	// on the port's segment, ours or a neighbour's.
	DesignatedRoot   BridgeID `json:"designated_root"`
	DesignatedCost   uint32   `json:"designated_cost"`
	DesignatedBridge BridgeID `json:"designated_bridge"`
	DesignatedPort   PortID   `json:"designated_port"`
	// TopologyChange says the port is signalling a topology change (its
	// tcWhile timer runs).
	TopologyChange bool `json:"topology_change"`
	// Counters are the port's counters.
	Counters Counters `json:"counters"`
}

// Status is a snapshot of the bridge, for `bridge show`.
type Status struct {
	// BridgeID is our bridge identifier.
	BridgeID BridgeID `json:"bridge_id"`
	// Protocol is what the bridge runs (Config.Protocol).
	Protocol Protocol `json:"protocol"`
	// Root is the designated root: the root bridge we know.
	Root BridgeID `json:"root"`
	// IsRoot says we are the root.
	IsRoot bool `json:"is_root"`
	// RootPathCost is our cost to the root.
	RootPathCost uint32 `json:"root_path_cost"`
	// RootPort and RootPortName name the root port; RootPortName is ""
	// when there is none (we are the root).
	RootPort     int    `json:"root_port"`
	RootPortName string `json:"root_port_name,omitempty"`
	// HelloTime, MaxAge and ForwardDelay are the times in use, in
	// seconds: the root's (ours when we are the root), except hello,
	// always ours.
	HelloTime    int `json:"hello_time"`
	MaxAge       int `json:"max_age"`
	ForwardDelay int `json:"forward_delay"`
	// TopologyChanges counts the topology changes detected or heard; one
	// seen while the last is still being signalled is not counted again.
	TopologyChanges uint64 `json:"topology_changes"`
	// TopologyChange says a topology change is being signalled now.
	TopologyChange bool `json:"topology_change"`
	// LastTopologyChange is when the last one started (zero if never);
	// SinceTopologyChange is the time since, when the snapshot was taken.
	LastTopologyChange  time.Time     `json:"last_topology_change"`
	SinceTopologyChange time.Duration `json:"since_topology_change"`
}
