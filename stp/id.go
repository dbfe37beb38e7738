package stp

import (
	"fmt"
	"net"
)

// BridgeID is a bridge identifier (802.1D-2004 9.2.5): a 16-bit priority
// (its low 12 bits, the system ID extension, are 0 here) and the bridge's
// 48-bit address. Lower wins, compared as one unsigned number.
type BridgeID uint64

// NewBridgeID returns the identifier of priority and mac.
func NewBridgeID(priority uint16, mac [6]byte) BridgeID {
	id := uint64(priority) << 48
	for i, b := range mac {
		id |= uint64(b) << (8 * (5 - i))
	}
	return BridgeID(id)
}

// Priority returns the priority component.
func (id BridgeID) Priority() uint16 { return uint16(id >> 48) }

// MAC returns the address component.
func (id BridgeID) MAC() [6]byte {
	var m [6]byte
	for i := range m {
		m[i] = byte(id >> (8 * (5 - i)))
	}
	return m
}

// address returns the address component as a number, for comparisons
// that ignore the priority.
func (id BridgeID) address() uint64 { return uint64(id) & (1<<48 - 1) }

// String formats the identifier as the Linux bridge does:
// "8000.02aa00000001" (priority in hex, a dot, the address in hex).
func (id BridgeID) String() string {
	m := id.MAC()
	return fmt.Sprintf("%04x.%x", id.Priority(), m[:])
}

// MarshalText returns String.
func (id BridgeID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// macString formats the address component, for logs.
func (id BridgeID) macString() string {
	m := id.MAC()
	return net.HardwareAddr(m[:]).String()
}

// PortID is a port identifier (802.1D-2004 9.2.7): a 4-bit priority (the
// port priority divided by 16) and a 12-bit port number. Lower wins.
type PortID uint16

// NewPortID returns the identifier of a port with priority (0–240, a
// multiple of 16) and number (1–4095).
func NewPortID(priority uint8, number uint16) PortID {
	return PortID(uint16(priority>>4)<<12 | number&0x0fff)
}

// Priority returns the port priority (0–240).
func (p PortID) Priority() uint8 { return uint8(p>>12) << 4 }

// Number returns the port number.
func (p PortID) Number() uint16 { return uint16(p) & 0x0fff }

// String formats the identifier as the Linux bridge does: "8001"
// (priority and number as one hex number).
func (p PortID) String() string { return fmt.Sprintf("%04x", uint16(p)) }

// MarshalText returns String.
func (p PortID) MarshalText() ([]byte, error) { return []byte(p.String()), nil }
