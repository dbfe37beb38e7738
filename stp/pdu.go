package stp

import (
	"encoding/binary"
	"time"

	"github.com/swctl/swctl/frame"
)

// Wire constants of IEEE 802.1D-2004 clause 9 (BPDU formats) and the
// IEEE 802.2 LLC header BPDUs travel in.
const (
	// HeaderLen is the length of the headers before a BPDU: the Ethernet
	// header, whose type field is an IEEE 802.3 length, and the LLC header
	// (DSAP 0x42, SSAP 0x42, control 0x03 UI).
	HeaderLen = frame.HeaderLen + llcLen
	// FrameLen is the length of every frame we encode: headers and BPDU,
	// zero-padded to the Ethernet minimum (no FCS).
	FrameLen = 60

	// ConfigLen, TCNLen and RSTLen are the lengths of a Configuration
	// BPDU, a Topology Change Notification BPDU and an RST BPDU
	// (802.1D-2004 9.3.1–9.3.3).
	ConfigLen = 35
	TCNLen    = 4
	RSTLen    = 36

	// BPDU types.
	TypeConfig = 0x00
	TypeRST    = 0x02
	TypeTCN    = 0x80

	// VersionSTP is the protocol version of Configuration and TCN BPDUs
	// we send; VersionRSTP that of RST BPDUs. RST BPDUs of a later
	// version (MSTP's 3) are read as version 2.
	VersionSTP  = 0
	VersionRSTP = 2

	llcLen = 3
	llcSAP = 0x42
	llcUI  = 0x03
	// maxLength is the largest IEEE 802.3 length; larger values are
	// ethertypes.
	maxLength = 1500

	// Offsets in a BPDU.
	offVersion      = 2
	offType         = 3
	offFlags        = 4
	offRoot         = 5
	offRootPathCost = 13
	offBridge       = 17
	offPort         = 25
	offMessageAge   = 27
	offMaxAge       = 29
	offHelloTime    = 31
	offForwardDelay = 33
	offVersion1Len  = 35
)

// GroupMAC is the destination of every BPDU (01:80:c2:00:00:00, the
// Bridge Group Address).
var GroupMAC = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}

// Flags of a Configuration or RST BPDU (802.1D-2004 9.3.1, 9.3.3). A
// Configuration BPDU uses only FlagTC and FlagTCAck.
const (
	FlagTC         = 0x01
	FlagProposal   = 0x02
	FlagLearning   = 0x10
	FlagForwarding = 0x20
	FlagAgreement  = 0x40
	FlagTCAck      = 0x80

	// flagRoleMask and flagRoleShift place the port role (RoleBits) in
	// the flags of an RST BPDU.
	flagRoleMask  = 0x0c
	flagRoleShift = 2
)

// RoleBits is the port role an RST BPDU carries in its flags
// (802.1D-2004 9.2.9).
type RoleBits uint8

// Encoded port roles.
const (
	// RoleBitsUnknown is never sent; received, the BPDU is read as a
	// Configuration BPDU (a designated port's).
	RoleBitsUnknown RoleBits = iota
	// RoleBitsAlternateBackup is an alternate or backup port.
	RoleBitsAlternateBackup
	// RoleBitsRoot is a root port.
	RoleBitsRoot
	// RoleBitsDesignated is a designated port.
	RoleBitsDesignated
)

// Kind says what a valid BPDU is.
type Kind uint8

// Kinds of valid BPDUs.
const (
	// KindNone is returned with a Cause for a frame to drop.
	KindNone Kind = iota
	// KindConfig is an 802.1D Configuration BPDU.
	KindConfig
	// KindTCN is an 802.1D Topology Change Notification BPDU.
	KindTCN
	// KindRST is an RST BPDU (version 2, or later read as 2).
	KindRST
)

// kindNames names the kinds.
var kindNames = [...]string{"none", "config", "tcn", "rst"}

// String names the kind ("config", "tcn", "rst").
func (k Kind) String() string { return nameOf(kindNames[:], k, "kind") }

// Cause says why a received frame was dropped.
type Cause uint8

// Causes, each counted separately (see BadCounts).
const (
	// CauseNone: the BPDU is valid.
	CauseNone Cause = iota
	// CauseNotBPDU: not addressed to GroupMAC, or not an IEEE 802.3
	// frame with the LLC header 42 42 03 (an Ethernet II or tagged frame).
	CauseNotBPDU
	// CauseTruncated: shorter than its headers, than its 802.3 length
	// says, or than its BPDU type needs (4, 35 or 36 octets).
	CauseTruncated
	// CauseProtocol: a protocol identifier other than 0.
	CauseProtocol
	// CauseType: a BPDU type other than 0x00, 0x02 and 0x80.
	CauseType
	// CauseVersion: an RST BPDU of version 0 or 1.
	CauseVersion
	// CauseMessageAge: a Configuration BPDU whose message age is not
	// below its max age (802.1D-2004 9.3.4 a).
	CauseMessageAge
	// CauseLoopback: a Configuration BPDU carrying the bridge and port
	// identifiers of the port that received it: its own BPDU, looped back
	// (802.1D-2004 9.3.4 a).
	CauseLoopback
	// CausePortDown: received on a port whose link is down or that takes
	// no part in the spanning tree.
	CausePortDown
	numCauses
)

// causeNames names the causes in log lines.
var causeNames = [numCauses]string{
	"none", "not a BPDU", "truncated", "unknown protocol identifier", "unknown BPDU type",
	"unknown version", "message age not below max age", "own BPDU looped back", "port down",
}

// String names the cause.
func (c Cause) String() string { return nameOf(causeNames[:], c, "cause") }

// Decode checks a whole received frame (Ethernet header included) and says
// what BPDU it carries, or why it must be dropped (802.1D-2004 9.3.4). It
// reads the frame in place and allocates nothing. Padding after the BPDU
// (beyond the 802.3 length) is ignored; octets of the BPDU beyond what its
// type needs (an MSTP BPDU's MST part) are ignored. A Configuration or TCN
// BPDU of any version is accepted; an RST BPDU needs version 2 or later.
// Whether a Configuration BPDU is our own, looped back, is for the
// receiving Bridge to say (CauseLoopback).
func Decode(f []byte) (Kind, Cause) {
	if len(f) < frame.HeaderLen {
		return KindNone, CauseTruncated
	}
	e := frame.Ethernet(f)
	if e.Destination() != GroupMAC || e.Type() > maxLength {
		return KindNone, CauseNotBPDU
	}
	if len(f) < HeaderLen {
		return KindNone, CauseTruncated
	}
	if f[frame.HeaderLen] != llcSAP || f[frame.HeaderLen+1] != llcSAP || f[frame.HeaderLen+2] != llcUI {
		return KindNone, CauseNotBPDU
	}
	n := int(e.Type())
	if n < llcLen+TCNLen || frame.HeaderLen+n > len(f) {
		return KindNone, CauseTruncated
	}
	p := BPDU(f[HeaderLen : frame.HeaderLen+n])
	if p.ProtocolID() != 0 {
		return KindNone, CauseProtocol
	}
	switch p.Type() {
	case TypeTCN:
		return KindTCN, CauseNone
	case TypeConfig:
		if len(p) < ConfigLen {
			return KindNone, CauseTruncated
		}
		if p.MessageAge() >= p.MaxAge() {
			return KindNone, CauseMessageAge
		}
		return KindConfig, CauseNone
	case TypeRST:
		if p.Version() < VersionRSTP {
			return KindNone, CauseVersion
		}
		if len(p) < RSTLen {
			return KindNone, CauseTruncated
		}
		return KindRST, CauseNone
	default:
		return KindNone, CauseType
	}
}

// Payload returns the BPDU of a frame Decode accepted: the octets after
// the LLC header, up to the 802.3 length.
func Payload(f []byte) BPDU {
	return BPDU(f[HeaderLen : frame.HeaderLen+int(frame.Ethernet(f).Type())])
}

// BPDU is a BPDU as it follows the LLC header (protocol identifier
// first). The accessors assume Decode accepted it; those of the
// Configuration BPDU fields also serve an RST BPDU, which has them at the
// same offsets.
type BPDU []byte

// ProtocolID returns the protocol identifier (0).
func (p BPDU) ProtocolID() uint16 { return binary.BigEndian.Uint16(p[0:2]) }

// Version returns the protocol version identifier.
func (p BPDU) Version() uint8 { return p[offVersion] }

// Type returns the BPDU type.
func (p BPDU) Type() uint8 { return p[offType] }

// Flags returns the flags.
func (p BPDU) Flags() uint8 { return p[offFlags] }

// Role returns the port role in the flags of an RST BPDU.
func (p BPDU) Role() RoleBits { return RoleBits(p[offFlags]&flagRoleMask) >> flagRoleShift }

// Root returns the root bridge identifier.
func (p BPDU) Root() BridgeID { return BridgeID(binary.BigEndian.Uint64(p[offRoot:])) }

// RootPathCost returns the sender's root path cost.
func (p BPDU) RootPathCost() uint32 { return binary.BigEndian.Uint32(p[offRootPathCost:]) }

// Bridge returns the sender's bridge identifier.
func (p BPDU) Bridge() BridgeID { return BridgeID(binary.BigEndian.Uint64(p[offBridge:])) }

// Port returns the sender's port identifier.
func (p BPDU) Port() PortID { return PortID(binary.BigEndian.Uint16(p[offPort:])) }

// MessageAge returns the message age.
func (p BPDU) MessageAge() time.Duration { return readTime(p[offMessageAge:]) }

// MaxAge returns the max age.
func (p BPDU) MaxAge() time.Duration { return readTime(p[offMaxAge:]) }

// HelloTime returns the hello time.
func (p BPDU) HelloTime() time.Duration { return readTime(p[offHelloTime:]) }

// ForwardDelay returns the forward delay.
func (p BPDU) ForwardDelay() time.Duration { return readTime(p[offForwardDelay:]) }

// Fields returns the fields of a Configuration or RST BPDU.
func (p BPDU) Fields() Fields {
	return Fields{Flags: p.Flags(), Root: p.Root(), RootPathCost: p.RootPathCost(), Bridge: p.Bridge(), Port: p.Port(),
		MessageAge: p.MessageAge(), MaxAge: p.MaxAge(), HelloTime: p.HelloTime(), ForwardDelay: p.ForwardDelay()}
}

// readTime reads a timer value, in units of 1/256 s (802.1D-2004 9.2.8).
func readTime(b []byte) time.Duration {
	return time.Duration(binary.BigEndian.Uint16(b)) * time.Second / 256
}

// writeTime writes d as a timer value, saturated at its 16 bits.
func writeTime(b []byte, d time.Duration) {
	v := max(d*256/time.Second, 0)
	binary.BigEndian.PutUint16(b, uint16(min(v, 0xffff)))
}

// Fields are the fields of a Configuration or RST BPDU to encode.
type Fields struct {
	// Flags are the flags; a Configuration BPDU keeps only FlagTC and
	// FlagTCAck.
	Flags uint8
	// Root is the root bridge identifier.
	Root BridgeID
	// RootPathCost is the sender's cost to the root.
	RootPathCost uint32
	// Bridge is the sender's bridge identifier.
	Bridge BridgeID
	// Port is the sender's port identifier.
	Port PortID
	// MessageAge, MaxAge, HelloTime and ForwardDelay are the timer
	// values, sent in units of 1/256 s.
	MessageAge, MaxAge, HelloTime, ForwardDelay time.Duration
}

// header writes the Ethernet and LLC headers of a frame carrying a BPDU
// of n octets, from src, into b[:FrameLen] (zeroed first), and returns
// the BPDU's part of b.
func header(b []byte, src [6]byte, n int) []byte {
	b = b[:FrameLen]
	clear(b)
	frame.Encode(b, GroupMAC, src, uint16(llcLen+n))
	b[frame.HeaderLen], b[frame.HeaderLen+1], b[frame.HeaderLen+2] = llcSAP, llcSAP, llcUI
	return b[HeaderLen:]
}

// writeFields writes the fields common to Configuration and RST BPDUs.
func writeFields(p []byte, f *Fields) {
	binary.BigEndian.PutUint64(p[offRoot:], uint64(f.Root))
	binary.BigEndian.PutUint32(p[offRootPathCost:], f.RootPathCost)
	binary.BigEndian.PutUint64(p[offBridge:], uint64(f.Bridge))
	binary.BigEndian.PutUint16(p[offPort:], uint16(f.Port))
	writeTime(p[offMessageAge:], f.MessageAge)
	writeTime(p[offMaxAge:], f.MaxAge)
	writeTime(p[offHelloTime:], f.HelloTime)
	writeTime(p[offForwardDelay:], f.ForwardDelay)
}

// EncodeConfig writes a whole Configuration BPDU frame, FrameLen bytes,
// into b (which must hold at least FrameLen bytes), from src. It returns
// FrameLen.
func EncodeConfig(b []byte, src [6]byte, f *Fields) int {
	p := header(b, src, ConfigLen)
	p[offVersion], p[offType] = VersionSTP, TypeConfig
	p[offFlags] = f.Flags & (FlagTC | FlagTCAck)
	writeFields(p, f)
	return FrameLen
}

// EncodeRST writes a whole RST BPDU frame (version 2, version 1 length 0),
// FrameLen bytes, into b, from src. It returns FrameLen.
func EncodeRST(b []byte, src [6]byte, f *Fields) int {
	p := header(b, src, RSTLen)
	p[offVersion], p[offType] = VersionRSTP, TypeRST
	p[offFlags] = f.Flags
	writeFields(p, f)
	p[offVersion1Len] = 0
	return FrameLen
}

// EncodeTCN writes a whole TCN BPDU frame, FrameLen bytes, into b, from
// src. It returns FrameLen.
func EncodeTCN(b []byte, src [6]byte) int {
	p := header(b, src, TCNLen)
	p[offVersion], p[offType] = VersionSTP, TypeTCN
	return FrameLen
}
