package lacp

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/swctl/swctl/frame"
)

// Wire constants of IEEE 802.3 slow protocols and IEEE 802.1AX LACP.
const (
	// SubtypeLACP is the slow-protocols subtype of a LACPDU.
	SubtypeLACP = 1
	// SubtypeMarker is the slow-protocols subtype of a Marker PDU.
	SubtypeMarker = 2
	// Version is the LACPDU and Marker PDU version we send.
	Version = 1

	// PDULen is the length of a LACPDU or Marker PDU after the Ethernet
	// header, reserved octets included (802.1AX 6.4.2.3, 6.5.3.3).
	PDULen = 110
	// FrameLen is the length of an encoded frame: Ethernet header and PDU
	// (no FCS). Received frames may be longer (padding); never shorter.
	FrameLen = frame.HeaderLen + PDULen

	// TLV types and lengths of a LACPDU.
	tlvTerminator   = 0
	tlvActor        = 1
	tlvPartner      = 2
	tlvCollector    = 3
	lenInfo         = 20
	lenCollector    = 16
	lenTerminator   = 0
	offActorTLV     = 2
	offPartnerTLV   = 22
	offCollectorTLV = 42
	offTerminator   = 58

	// TLV types and lengths of a Marker PDU.
	tlvMarkerInfo        = 1
	tlvMarkerResponse    = 2
	lenMarker            = 16
	offMarkerTLV         = 2
	offMarkerTerminator  = 18
	offMarkerRequesterID = 4
)

// SlowProtocolsMAC is the destination of every LACPDU and Marker PDU
// (01:80:c2:00:00:02, the slow-protocols multicast address).
var SlowProtocolsMAC = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}

// State is the one-octet port state of a LACPDU's Actor or Partner
// information (802.1AX 6.4.2.3, items m and u).
type State uint8

// State bits, least significant first.
const (
	// StateActivity is set for an active port (it sends on its own).
	StateActivity State = 1 << iota
	// StateTimeout is set when the port asks for short (fast) timeouts.
	StateTimeout
	// StateAggregation is set when the port is aggregatable.
	StateAggregation
	// StateSynchronization is set when the port is attached to the right
	// aggregator ("in sync").
	StateSynchronization
	// StateCollecting is set while the port collects (accepts) frames.
	StateCollecting
	// StateDistributing is set while the port distributes (sends) frames.
	StateDistributing
	// StateDefaulted is set when the partner information is the default,
	// not received.
	StateDefaulted
	// StateExpired is set while the receive machine is EXPIRED.
	StateExpired
)

// stateWords names the state bits, least significant first, in the words
// `trunk show` prints.
var stateWords = [8]string{
	"activity", "timeout", "aggregation", "synchronization",
	"collecting", "distributing", "defaulted", "expired",
}

// Words returns the names of the bits set, least significant first.
func (s State) Words() []string {
	w := []string{}
	for i, name := range stateWords {
		if s&(1<<i) != 0 {
			w = append(w, name)
		}
	}
	return w
}

// String formats the state as hex and words: "0x3d<activity,...>".
func (s State) String() string {
	return fmt.Sprintf("%#02x<%s>", uint8(s), strings.Join(s.Words(), ","))
}

// PortInfo is the Actor or Partner information of a LACPDU: who a port
// is and what state it is in.
type PortInfo struct {
	// SystemPriority is the system priority (lower wins).
	SystemPriority uint16
	// System is the system MAC address; with SystemPriority it forms the
	// system identifier.
	System [6]byte
	// Key is the operational key: ports of one system with the same key
	// may aggregate.
	Key uint16
	// PortPriority is the port priority (lower wins).
	PortPriority uint16
	// Port is the port number, unique within the system, never 0 when sent.
	Port uint16
	// State is the port state bits.
	State State
}

// sameIdentity reports whether a and b name the same port of the same
// system with the same key (the state is not compared).
func (a PortInfo) sameIdentity(b PortInfo) bool {
	return a.SystemPriority == b.SystemPriority && a.System == b.System &&
		a.Key == b.Key && a.PortPriority == b.PortPriority && a.Port == b.Port
}

// readInfo reads the 18 octets of an Actor or Partner information TLV
// that follow its type and length.
func readInfo(b []byte) PortInfo {
	return PortInfo{
		SystemPriority: binary.BigEndian.Uint16(b[0:2]),
		System:         [6]byte(b[2:8]),
		Key:            binary.BigEndian.Uint16(b[8:10]),
		PortPriority:   binary.BigEndian.Uint16(b[10:12]),
		Port:           binary.BigEndian.Uint16(b[12:14]),
		State:          State(b[14]),
	}
}

// writeInfo writes a whole information TLV (type, length, fields,
// reserved octets zeroed) into b[0:20].
func writeInfo(b []byte, tlv byte, in PortInfo) {
	b[0], b[1] = tlv, lenInfo
	binary.BigEndian.PutUint16(b[2:4], in.SystemPriority)
	copy(b[4:10], in.System[:])
	binary.BigEndian.PutUint16(b[10:12], in.Key)
	binary.BigEndian.PutUint16(b[12:14], in.PortPriority)
	binary.BigEndian.PutUint16(b[14:16], in.Port)
	b[16] = byte(in.State)
	b[17], b[18], b[19] = 0, 0, 0
}

// Kind says what a valid slow-protocols frame carries.
type Kind uint8

// Kinds of valid frames.
const (
	// KindNone is returned with a Cause for a frame to drop.
	KindNone Kind = iota
	// KindLACP is a LACPDU; read it with LACPDU(frame[frame.HeaderLen:]).
	KindLACP
	// KindMarkerInfo is a Marker PDU carrying a Marker Information TLV (a
	// request to answer); read it with Marker(frame[frame.HeaderLen:]).
	KindMarkerInfo
	// KindMarkerResponse is a Marker PDU carrying a Marker Response TLV.
	KindMarkerResponse
)

// Cause says why a received frame was dropped.
type Cause uint8

// Causes, each counted separately (see BadCounts).
const (
	// CauseNone: the frame is valid.
	CauseNone Cause = iota
	// CauseNotSlow: not an untagged frame of ethertype 0x8809.
	CauseNotSlow
	// CauseSubtype: a slow protocol other than LACP and marker (e.g. OAM).
	CauseSubtype
	// CauseTruncated: shorter than a whole PDU (110 octets after the
	// Ethernet header).
	CauseTruncated
	// CauseVersion: version 0.
	CauseVersion
	// CauseTLVType: a TLV where another (or a terminator) was expected.
	CauseTLVType
	// CauseTLVLength: a TLV of the right type with a wrong length.
	CauseTLVLength
	// CausePortDown: received on a port whose link is down, or on a port
	// the Actor does not know.
	CausePortDown
	numCauses
)

// causeNames names the causes in log lines and JSON.
var causeNames = [numCauses]string{
	"none", "not slow protocols", "unknown subtype", "truncated",
	"version 0", "wrong TLV type", "wrong TLV length", "port down",
}

// String names the cause.
func (c Cause) String() string {
	if c < numCauses {
		return causeNames[c]
	}
	return fmt.Sprintf("cause %d", uint8(c))
}

// Decode checks a whole received Ethernet frame (header included) and says
// what it carries, or why it must be dropped. It reads the frame in place
// and allocates nothing.
//
// A LACPDU of any version ≥ 1 is accepted and read by its version-1 fields:
// the Actor, Partner and Collector TLVs must be where version 1 puts them,
// with their version-1 types and lengths; a version-1 LACPDU must also have
// its Terminator TLV in place, while in a later version whatever follows
// the Collector TLV (new TLVs) is ignored. A Marker PDU must have version
// ≥ 1, a Marker Information or Response TLV of length 16 and a Terminator.
func Decode(f []byte) (Kind, Cause) {
	e := frame.Ethernet(f)
	if !e.Valid() || e.Type() != frame.TypeSlow {
		return KindNone, CauseNotSlow
	}
	p := f[frame.HeaderLen:]
	if len(p) < 1 {
		return KindNone, CauseTruncated
	}
	switch p[0] {
	case SubtypeLACP:
		if c := LACPDU(p).check(); c != CauseNone {
			return KindNone, c
		}
		return KindLACP, CauseNone
	case SubtypeMarker:
		return Marker(p).check()
	default:
		return KindNone, CauseSubtype
	}
}

// LACPDU is a LACPDU as it follows the Ethernet header (subtype first).
// The accessors assume Decode accepted it.
type LACPDU []byte

// check validates the PDU as Decode documents.
func (p LACPDU) check() Cause {
	if len(p) < PDULen {
		return CauseTruncated
	}
	if p[1] == 0 {
		return CauseVersion
	}
	for _, t := range [...]struct{ off, typ, len int }{
		{offActorTLV, tlvActor, lenInfo},
		{offPartnerTLV, tlvPartner, lenInfo},
		{offCollectorTLV, tlvCollector, lenCollector},
		{offTerminator, tlvTerminator, lenTerminator},
	} {
		if t.off == offTerminator && p[1] > Version {
			break // a later version puts new TLVs here
		}
		if int(p[t.off]) != t.typ {
			return CauseTLVType
		}
		if int(p[t.off+1]) != t.len {
			return CauseTLVLength
		}
	}
	return CauseNone
}

// Subtype returns the slow-protocols subtype (1).
func (p LACPDU) Subtype() uint8 { return p[0] }

// Version returns the LACP version.
func (p LACPDU) Version() uint8 { return p[1] }

// Actor returns the sender's information about itself.
func (p LACPDU) Actor() PortInfo { return readInfo(p[offActorTLV+2:]) }

// Partner returns the sender's information about its partner (us).
func (p LACPDU) Partner() PortInfo { return readInfo(p[offPartnerTLV+2:]) }

// CollectorMaxDelay returns the collector's maximum delay, in tens of
// microseconds.
func (p LACPDU) CollectorMaxDelay() uint16 {
	return binary.BigEndian.Uint16(p[offCollectorTLV+2:])
}

// LACPFields are the fields of a LACPDU to encode.
type LACPFields struct {
	// Actor is the sender's information about itself.
	Actor PortInfo
	// Partner is the sender's information about its partner.
	Partner PortInfo
	// CollectorMaxDelay is in tens of microseconds.
	CollectorMaxDelay uint16
}

// EncodeLACP writes a whole version-1 LACPDU frame, FrameLen bytes, into
// b (which must hold at least FrameLen bytes): destination the
// slow-protocols address, source src, reserved octets zeroed. It returns
// FrameLen.
func EncodeLACP(b []byte, src [6]byte, f *LACPFields) int {
	p := encodeSlow(b, src, SubtypeLACP)
	writeInfo(p[offActorTLV:], tlvActor, f.Actor)
	writeInfo(p[offPartnerTLV:], tlvPartner, f.Partner)
	p[offCollectorTLV], p[offCollectorTLV+1] = tlvCollector, lenCollector
	binary.BigEndian.PutUint16(p[offCollectorTLV+2:], f.CollectorMaxDelay)
	p[offTerminator], p[offTerminator+1] = tlvTerminator, lenTerminator
	return FrameLen
}

// encodeSlow writes the envelope of a FrameLen-byte slow-protocols frame
// into b: the Ethernet header from src to the slow-protocols address, the
// PDU zeroed, its subtype and version set. It returns the PDU, after the
// Ethernet header.
func encodeSlow(b []byte, src [6]byte, subtype byte) []byte {
	b = b[:FrameLen]
	frame.Encode(b, SlowProtocolsMAC, src, frame.TypeSlow)
	p := b[frame.HeaderLen:]
	clear(p)
	p[0], p[1] = subtype, Version
	return p
}

// Marker is a Marker PDU as it follows the Ethernet header (subtype
// first). The accessors assume Decode accepted it.
type Marker []byte

// check validates the PDU as Decode documents.
func (m Marker) check() (Kind, Cause) {
	if len(m) < PDULen {
		return KindNone, CauseTruncated
	}
	if m[1] == 0 {
		return KindNone, CauseVersion
	}
	var k Kind
	switch m[offMarkerTLV] {
	case tlvMarkerInfo:
		k = KindMarkerInfo
	case tlvMarkerResponse:
		k = KindMarkerResponse
	default:
		return KindNone, CauseTLVType
	}
	if m[offMarkerTLV+1] != lenMarker {
		return KindNone, CauseTLVLength
	}
	if m[offMarkerTerminator] != tlvTerminator {
		return KindNone, CauseTLVType
	}
	if m[offMarkerTerminator+1] != lenTerminator {
		return KindNone, CauseTLVLength
	}
	return k, CauseNone
}

// Version returns the marker protocol version.
func (m Marker) Version() uint8 { return m[1] }

// Response reports whether the TLV is a Marker Response (else it is a
// Marker Information TLV, a request).
func (m Marker) Response() bool { return m[offMarkerTLV] == tlvMarkerResponse }

// RequesterPort returns the port number of the requester.
func (m Marker) RequesterPort() uint16 {
	return binary.BigEndian.Uint16(m[offMarkerRequesterID:])
}

// RequesterSystem returns the system MAC address of the requester.
func (m Marker) RequesterSystem() [6]byte {
	return [6]byte(m[offMarkerRequesterID+2 : offMarkerRequesterID+8])
}

// TransactionID returns the requester's transaction identifier.
func (m Marker) TransactionID() uint32 {
	return binary.BigEndian.Uint32(m[offMarkerRequesterID+8:])
}

// MarkerFields are the fields of a Marker PDU to encode.
type MarkerFields struct {
	// Response selects a Marker Response TLV; false, a Marker Information
	// TLV.
	Response bool
	// RequesterPort is the port number of the requester.
	RequesterPort uint16
	// RequesterSystem is the system MAC address of the requester.
	RequesterSystem [6]byte
	// TransactionID is the requester's transaction identifier.
	TransactionID uint32
}

// EncodeMarker writes a whole Marker PDU frame, FrameLen bytes, into b
// (which must hold at least FrameLen bytes), as EncodeLACP does. It
// returns FrameLen.
func EncodeMarker(b []byte, src [6]byte, f *MarkerFields) int {
	p := encodeSlow(b, src, SubtypeMarker)
	p[offMarkerTLV], p[offMarkerTLV+1] = tlvMarkerInfo, lenMarker
	if f.Response {
		p[offMarkerTLV] = tlvMarkerResponse
	}
	binary.BigEndian.PutUint16(p[offMarkerRequesterID:], f.RequesterPort)
	copy(p[offMarkerRequesterID+2:], f.RequesterSystem[:])
	binary.BigEndian.PutUint32(p[offMarkerRequesterID+8:], f.TransactionID)
	p[offMarkerTerminator], p[offMarkerTerminator+1] = tlvTerminator, lenTerminator
	return FrameLen
}
