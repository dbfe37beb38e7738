// Package frame reads and writes Ethernet headers in place. A header is a
// []byte with accessors: nothing is parsed into structs, nothing allocates.
package frame

import (
	"encoding/binary"
	"fmt"
	"net"
)

// Ethertypes swctl looks at.
const (
	TypeIPv4     = 0x0800
	TypeARP      = 0x0806
	TypeRARP     = 0x8035
	TypeVLAN     = 0x8100 // IEEE 802.1Q customer tag
	TypeIPv6     = 0x86dd
	TypeSlow     = 0x8809 // IEEE 802.3 slow protocols (LACP, marker)
	TypeQinQ     = 0x88a8 // IEEE 802.1ad service tag
	TypeQinQOld  = 0x9100
	HeaderLen    = 14 // destination, source, ethertype
	TagLen       = 4  // one 802.1Q/802.1ad tag
	MinFrameLen  = HeaderLen
	maxVLANID    = 4095
	vlanIDMask   = 0x0fff
	broadcastKey = 0xffffffffffff
)

// MAC is a hardware address as a value, usable as a map key.
type MAC [6]byte

// Broadcast is ff:ff:ff:ff:ff:ff.
var Broadcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// Key packs the address into the low 48 bits of a uint64.
func (m MAC) Key() uint64 {
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 |
		uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}

// MACFromKey is the inverse of MAC.Key.
func MACFromKey(k uint64) MAC {
	return MAC{byte(k >> 40), byte(k >> 32), byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}
}

// IsMulticast reports whether the group bit is set (this includes broadcast).
func (m MAC) IsMulticast() bool { return m[0]&1 == 1 }

// IsZero reports whether the address is 00:00:00:00:00:00.
func (m MAC) IsZero() bool { return m == MAC{} }

// IsLinkLocal reports whether the address is one of the IEEE 802.1D reserved
// group addresses 01:80:c2:00:00:00 to 01:80:c2:00:00:0f (STP, slow
// protocols, LLDP, pause), which a bridge never forwards.
func (m MAC) IsLinkLocal() bool {
	return m[0] == 0x01 && m[1] == 0x80 && m[2] == 0xc2 && m[3] == 0 && m[4] == 0 && m[5]&0xf0 == 0
}

// String formats the address as aa:bb:cc:dd:ee:ff. Not for the hot path.
func (m MAC) String() string { return net.HardwareAddr(m[:]).String() }

// ParseMAC parses a 48-bit MAC address in colon, dash or dot notation.
func ParseMAC(s string) (MAC, error) {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return MAC{}, fmt.Errorf("%q is not a MAC address (want aa:bb:cc:dd:ee:ff)", s)
	}
	var m MAC
	copy(m[:], hw)
	return m, nil
}

// MACOf copies a net.HardwareAddr into a MAC; a shorter address is zero-padded.
func MACOf(hw net.HardwareAddr) MAC {
	var m MAC
	copy(m[:], hw)
	return m
}

// Ethernet is an Ethernet II header followed by its payload. Callers check
// Valid before using the accessors.
type Ethernet []byte

// Valid reports whether the frame is long enough to hold an Ethernet header.
func (e Ethernet) Valid() bool { return len(e) >= HeaderLen }

// Destination returns the destination address.
func (e Ethernet) Destination() MAC { return MAC(e[0:6]) }

// Source returns the source address.
func (e Ethernet) Source() MAC { return MAC(e[6:12]) }

// DestinationKey returns the destination address packed as by MAC.Key.
func (e Ethernet) DestinationKey() uint64 {
	return uint64(binary.BigEndian.Uint16(e[0:2]))<<32 | uint64(binary.BigEndian.Uint32(e[2:6]))
}

// SourceKey returns the source address packed as by MAC.Key.
func (e Ethernet) SourceKey() uint64 {
	return uint64(binary.BigEndian.Uint16(e[6:8]))<<32 | uint64(binary.BigEndian.Uint32(e[8:12]))
}

// Type returns the outer ethertype (0x8100 for a tagged frame).
func (e Ethernet) Type() uint16 { return binary.BigEndian.Uint16(e[12:14]) }

// IsTagged reports whether the outer ethertype is an 802.1Q or 802.1ad tag
// and the frame is long enough to hold it.
func (e Ethernet) IsTagged() bool {
	if len(e) < HeaderLen+TagLen {
		return false
	}
	t := e.Type()
	return t == TypeVLAN || t == TypeQinQ || t == TypeQinQOld
}

// VLAN returns the VLAN ID of the outer tag, or 0 for an untagged frame
// (a priority tag, VID 0, also gives 0).
func (e Ethernet) VLAN() uint16 {
	if !e.IsTagged() {
		return 0
	}
	return binary.BigEndian.Uint16(e[14:16]) & vlanIDMask
}

// InnerType returns the ethertype after at most one tag.
func (e Ethernet) InnerType() uint16 {
	if e.IsTagged() {
		return binary.BigEndian.Uint16(e[16:18])
	}
	return e.Type()
}

// PayloadLen returns the length of the L2 payload, allowing one tag: the
// figure checked against an MTU.
func (e Ethernet) PayloadLen() int {
	if e.IsTagged() {
		return len(e) - HeaderLen - TagLen
	}
	return len(e) - HeaderLen
}

// slowProtocolsKey is 01:80:c2:00:00:02 packed as by MAC.Key: the
// destination of LACPDUs and marker PDUs (IEEE 802.3 annex 57A).
const slowProtocolsKey = 0x0180c2000002

// IsSlowProtocol reports whether e is a slow-protocols frame (LACP,
// marker): sent to 01:80:c2:00:00:02 with ethertype 0x8809, untagged.
func (e Ethernet) IsSlowProtocol() bool {
	return e.Valid() && e.Type() == TypeSlow && e.DestinationKey() == slowProtocolsKey
}

// Encode writes a header into b, which must hold at least HeaderLen bytes.
func Encode(b []byte, dst, src MAC, etype uint16) {
	copy(b[0:6], dst[:])
	copy(b[6:12], src[:])
	binary.BigEndian.PutUint16(b[12:14], etype)
}
