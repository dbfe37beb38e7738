package lacp

import (
	"encoding/json"
	"fmt"
	"net"
)

// RxState is the state of a port's receive machine.
type RxState uint8

// Receive machine states (802.1AX 6.4.12, without INITIALIZE and
// LACP_DISABLED, which we never rest in).
const (
	// RxPortDisabled: the link is down.
	RxPortDisabled RxState = iota
	// RxExpired: no LACPDU within the timeout (or the link just came up);
	// we ask the partner for fast LACPDUs and wait ShortTimeoutTime.
	RxExpired
	// RxDefaulted: no LACPDU in EXPIRED either; the partner is the default
	// (nobody) and the port is not aggregated.
	RxDefaulted
	// RxCurrent: the partner information is fresh.
	RxCurrent
)

// rxNames names the receive states.
var rxNames = [...]string{"port-disabled", "expired", "defaulted", "current"}

// String names the state ("current", "expired", ...).
func (s RxState) String() string {
	if int(s) < len(rxNames) {
		return rxNames[s]
	}
	return fmt.Sprintf("rx-state-%d", uint8(s))
}

// MarshalText returns String.
func (s RxState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MuxState is the state of a port's mux machine.
type MuxState uint8

// Mux machine states (802.1AX 6.4.15, independent control).
const (
	// MuxDetached: not attached to the aggregator.
	MuxDetached MuxState = iota
	// MuxWaiting: selected, waiting AggregateWaitTime before attaching.
	MuxWaiting
	// MuxAttached: attached and in sync, waiting for the partner's sync.
	MuxAttached
	// MuxCollecting: frames from the port are accepted; waiting for the
	// partner to collect.
	MuxCollecting
	// MuxDistributing: collecting and distributing.
	MuxDistributing
)

// muxNames names the mux states.
var muxNames = [...]string{"detached", "waiting", "attached", "collecting", "distributing"}

// String names the state ("detached", "distributing", ...).
func (s MuxState) String() string {
	if int(s) < len(muxNames) {
		return muxNames[s]
	}
	return fmt.Sprintf("mux-state-%d", uint8(s))
}

// MarshalText returns String.
func (s MuxState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalJSON gives {"system", "system_priority", "key", "port",
// "port_priority", "state" (hex), "flags" (state words)}.
func (in PortInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		System         string   `json:"system"`
		SystemPriority uint16   `json:"system_priority"`
		Key            uint16   `json:"key"`
		Port           uint16   `json:"port"`
		PortPriority   uint16   `json:"port_priority"`
		State          string   `json:"state"`
		Flags          []string `json:"flags"`
	}{
		System:         net.HardwareAddr(in.System[:]).String(),
		SystemPriority: in.SystemPriority,
		Key:            in.Key,
		Port:           in.Port,
		PortPriority:   in.PortPriority,
		State:          fmt.Sprintf("%#02x", uint8(in.State)),
		Flags:          in.State.Words(),
	})
}

// BadCounts counts dropped slow-protocols frames by cause.
type BadCounts struct {
	// NotSlow counts frames that were not untagged 0x8809 frames.
	NotSlow uint64 `json:"not_slow"`
	// Subtype counts slow protocols other than LACP and marker.
	Subtype uint64 `json:"subtype"`
	// Truncated counts PDUs shorter than 110 octets.
	Truncated uint64 `json:"truncated"`
	// Version counts PDUs of version 0.
	Version uint64 `json:"version"`
	// TLVType counts PDUs with a TLV of the wrong type.
	TLVType uint64 `json:"tlv_type"`
	// TLVLength counts PDUs with a TLV of the wrong length.
	TLVLength uint64 `json:"tlv_length"`
	// PortDown counts PDUs received while the link was down.
	PortDown uint64 `json:"port_down"`
}

// field returns the counter of cause c, or nil for CauseNone.
func (b *BadCounts) field(c Cause) *uint64 {
	switch c {
	case CauseNotSlow:
		return &b.NotSlow
	case CauseSubtype:
		return &b.Subtype
	case CauseTruncated:
		return &b.Truncated
	case CauseVersion:
		return &b.Version
	case CauseTLVType:
		return &b.TLVType
	case CauseTLVLength:
		return &b.TLVLength
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
	return b.NotSlow + b.Subtype + b.Truncated + b.Version + b.TLVType + b.TLVLength + b.PortDown
}

// Counters are a port's slow-protocols counters.
type Counters struct {
	// RxLACPDU counts LACPDUs accepted.
	RxLACPDU uint64 `json:"rx_lacpdu"`
	// TxLACPDU counts LACPDUs sent.
	TxLACPDU uint64 `json:"tx_lacpdu"`
	// RxMarker counts Marker Information PDUs (requests) accepted.
	RxMarker uint64 `json:"rx_marker"`
	// TxMarkerResponse counts Marker Responses sent.
	TxMarkerResponse uint64 `json:"tx_marker_response"`
	// RxMarkerResponse counts Marker Responses received (we send no
	// requests, so they are counted and ignored).
	RxMarkerResponse uint64 `json:"rx_marker_response"`
	// Bad counts frames dropped, by cause.
	Bad BadCounts `json:"bad"`
}

// PortState is a snapshot of one port, for `trunk show`.
type PortState struct {
	// ID is the port's identifier given to AddPort.
	ID int `json:"id"`
	// Name is the port's name given to AddPort.
	Name string `json:"name"`
	// LinkUp is the link state last given.
	LinkUp bool `json:"link_up"`
	// Actor is what we advertise for this port (or would, when it is
	// silent).
	Actor PortInfo `json:"actor"`
	// Partner is what we know of the partner port (zero when defaulted).
	Partner PortInfo `json:"partner"`
	// Receive is the receive machine state.
	Receive RxState `json:"receive"`
	// Mux is the mux machine state.
	Mux MuxState `json:"mux"`
	// Selected reports whether the port belongs to the active aggregator.
	Selected bool `json:"selected"`
	// Reason says why the port is not selected ("" when it is).
	Reason string `json:"reason,omitempty"`
	// Counters are the port's counters.
	Counters Counters `json:"counters"`
}

// Collecting reports whether the port collects (Mux collecting or
// distributing).
func (s PortState) Collecting() bool { return s.Mux >= MuxCollecting }

// Distributing reports whether the port distributes.
func (s PortState) Distributing() bool { return s.Mux == MuxDistributing }

// Aggregator identifies the active aggregator by the partner it faces.
type Aggregator struct {
	// PartnerSystemPriority is the partner's system priority.
	PartnerSystemPriority uint16 `json:"partner_system_priority"`
	// PartnerSystem is the partner's system MAC.
	PartnerSystem [6]byte `json:"partner_system"`
	// PartnerKey is the partner's key.
	PartnerKey uint16 `json:"partner_key"`
	// Ports is how many ports are up with a current partner in it.
	Ports int `json:"ports"`
}

// MarshalJSON gives the partner system as a MAC string.
func (g Aggregator) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		PartnerSystemPriority uint16 `json:"partner_system_priority"`
		PartnerSystem         string `json:"partner_system"`
		PartnerKey            uint16 `json:"partner_key"`
		Ports                 int    `json:"ports"`
	}{g.PartnerSystemPriority, net.HardwareAddr(g.PartnerSystem[:]).String(), g.PartnerKey, g.Ports})
}

// String formats the aggregator as "32768,aa:bb:cc:dd:ee:ff key 1".
func (g Aggregator) String() string {
	return fmt.Sprintf("%d,%s key %d", g.PartnerSystemPriority,
		net.HardwareAddr(g.PartnerSystem[:]), g.PartnerKey)
}
