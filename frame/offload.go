package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The software side of Offload: what a forwarder does to a frame before
// it writes it to a port that carries no offload metadata. Both functions
// work on caller-owned buffers and allocate nothing.

// Offload is the checksum and segmentation metadata of one frame: the
// fields of Linux's struct virtio_net_hdr (include/uapi/linux/virtio_net.h),
// in host byte order. Offsets count from the first byte of the frame as
// the port returns or takes it (the destination MAC), tags included. The
// zero Offload is a plain frame: its checksums are complete and it is no
// larger than one segment.
type Offload struct {
	// Flags are OffloadNeedsCsum and OffloadDataValid.
	Flags uint8
	// GSOType is GSONone or the kind of super-frame (GSOTCPv4, GSOTCPv6,
	// GSOUDPL4), maybe with GSOECN.
	GSOType uint8
	// HdrLen is the sender's hint of the header length (Linux puts the
	// length of the skb's linear part here); informative only.
	HdrLen uint16
	// GSOSize is the payload of one segment of a super-frame (the MSS
	// for TCP); 0 when GSOType is GSONone.
	GSOSize uint16
	// CsumStart is where the checksummed range starts (the L4 header)
	// when OffloadNeedsCsum is set.
	CsumStart uint16
	// CsumOffset is where, from CsumStart, the checksum is stored (16 for
	// TCP, 6 for UDP) when OffloadNeedsCsum is set.
	CsumOffset uint16
}

// Offload flags and GSO types (VIRTIO_NET_HDR_F_*, VIRTIO_NET_HDR_GSO_*,
// include/uapi/linux/virtio_net.h).
const (
	// OffloadNeedsCsum: the L4 checksum holds only the pseudo-header sum;
	// the sum over [CsumStart, end) must be stored at
	// CsumStart+CsumOffset before the frame reaches a receiver.
	OffloadNeedsCsum = 1
	// OffloadDataValid: the receiving kernel already verified the
	// checksums. A hint; the frame is complete.
	OffloadDataValid = 2

	// GSONone: not a super-frame.
	GSONone = 0
	// GSOTCPv4: a TCP over IPv4 super-frame, cut at GSOSize.
	GSOTCPv4 = 1
	// GSOUDP: UDP fragmentation offload (UFO); never produced by a
	// current kernel, refused by the software fallback.
	GSOUDP = 3
	// GSOTCPv6: a TCP over IPv6 super-frame, cut at GSOSize.
	GSOTCPv6 = 4
	// GSOUDPL4: a UDP super-frame (UDP_SEGMENT): one datagram per GSOSize.
	GSOUDPL4 = 5
	// GSOECN: the TCP super-frame has CWR set (on the first segment only).
	GSOECN = 0x80
)

// IsPlain reports whether the frame needs nothing done to it before a
// port that does no offloads sends it: no checksum to finish, no
// segmentation. OffloadDataValid alone is plain.
func (o Offload) IsPlain() bool { return o.Flags&OffloadNeedsCsum == 0 && o.GSOType == GSONone }

// Errors of the software offload functions and of CheckOffload. The
// specific ones wrap one of the first two, and name the check that
// failed.
var (
	// ErrOffloadUnsupported: the frame's offload is one the software
	// fallback does not handle (UFO, a GSO frame that is not TCP or UDP
	// over IPv4 or IPv6 behind at most two tags).
	ErrOffloadUnsupported = errors.New("offload: unsupported frame")
	// ErrOffloadBadFrame: the metadata points outside the frame.
	ErrOffloadBadFrame = errors.New("offload: metadata does not match the frame")

	// ErrOffloadNotIP: a partial checksum or a super-frame that is not
	// IPv4 or IPv6 behind at most two tags.
	ErrOffloadNotIP = fmt.Errorf("%w: not IPv4 or IPv6 behind at most two tags", ErrOffloadUnsupported)
	// ErrOffloadIPHeader: the IP header is truncated, or its version or
	// header length field is wrong.
	ErrOffloadIPHeader = fmt.Errorf("%w: IP header truncated or malformed", ErrOffloadBadFrame)
	// ErrOffloadIPLength: the IP total (or payload) length does not
	// match the frame.
	ErrOffloadIPLength = fmt.Errorf("%w: IP length does not match the frame", ErrOffloadBadFrame)
	// ErrOffloadCsumStart: csum_start lies before the end of the IP
	// header, or too near the end of the frame for the L4 header it
	// names.
	ErrOffloadCsumStart = fmt.Errorf("%w: csum_start inside the IP header or past the frame", ErrOffloadBadFrame)
	// ErrOffloadCsumOffset: csum_offset is not the checksum field of
	// TCP (16) or UDP (6).
	ErrOffloadCsumOffset = fmt.Errorf("%w: csum_offset is not a TCP or UDP checksum field", ErrOffloadBadFrame)
	// ErrOffloadCsumProto: csum_offset names another L4 protocol than
	// the IP header does.
	ErrOffloadCsumProto = fmt.Errorf("%w: csum_offset names another protocol than the IP header", ErrOffloadBadFrame)
	// ErrOffloadL4Header: the TCP or UDP header is truncated, or the
	// TCP data offset is below 5 or past the frame.
	ErrOffloadL4Header = fmt.Errorf("%w: TCP or UDP header truncated or malformed", ErrOffloadBadFrame)
	// ErrOffloadGSOType: a GSO type other than TCPv4, TCPv6 and UDP_L4
	// (with ECN only on TCP).
	ErrOffloadGSOType = fmt.Errorf("%w: GSO type", ErrOffloadUnsupported)
	// ErrOffloadGSOMismatch: the GSO type does not match the frame's IP
	// version or L4 protocol, or the L4 header is not the IP header's
	// own (an encapsulated one).
	ErrOffloadGSOMismatch = fmt.Errorf("%w: GSO type does not match the frame", ErrOffloadBadFrame)
	// ErrOffloadGSOSize: gso_size is 0, or the frame would become more
	// than MaxSegments segments.
	ErrOffloadGSOSize = fmt.Errorf("%w: gso_size 0 or too many segments", ErrOffloadBadFrame)
)

// MaxSegments is the most segments CheckOffload lets one super-frame
// become. A 64 KiB TCP super-frame at the smallest MSS a Linux stack
// sends (tcp_min_snd_mss, 48 bytes) is 1,366 segments; the bound keeps
// what a crafted gso_size of 1 makes one frame cost in software.
const MaxSegments = 2048

// layout is where a checked frame's headers are.
type layout struct {
	// l3 is the offset of the IP header, l4 of the TCP or UDP header,
	// end of the first payload byte.
	l3, l4, end int
	// v6 is set for IPv6.
	v6 bool
	// proto is ProtoTCP or ProtoUDP.
	proto uint8
	// own is set when the L4 header at l4 is the IP header's own (not
	// one inside an encapsulation).
	own bool
}

// CheckOffload reports whether o describes f: the check every frame that
// crossed a virtio_net_hdr (a packet socket with PACKET_VNET_HDR, a TAP
// with IFF_VNET_HDR) passes before anything reads its offload fields,
// since a TAP hands userspace whatever its writer (a VM guest) claimed.
// A plain offload is always valid. A partial checksum needs an IP frame
// whose csum_start is at or after the end of the IP header with a whole
// TCP or UDP header there, csum_offset at that header's checksum field,
// and the protocol the IP header names when the L4 header is its own. A
// super-frame also needs a GSO type matching the IP version and protocol,
// the L4 header to be the IP header's own, IP lengths equal to the
// frame's, gso_size > 0 and at most MaxSegments segments. The error
// names the first check that failed; it wraps ErrOffloadBadFrame or
// ErrOffloadUnsupported. It allocates nothing.
func CheckOffload(f []byte, o Offload) error {
	if o.IsPlain() {
		return nil
	}
	_, err := check(f, o)
	return err
}

// check is CheckOffload returning the layout of a frame that passes.
func check(f []byte, o Offload) (layout, error) {
	var l layout
	var h Headers
	h.Walk(f)
	gso := o.GSOType != GSONone
	if h.L3 < 0 {
		if len(f) >= HeaderLen && (h.EtherType == TypeIPv4 || h.EtherType == TypeIPv6) {
			return l, ErrOffloadIPHeader
		}
		if len(f) < HeaderLen {
			return l, ErrOffloadIPHeader
		}
		return l, ErrOffloadNotIP
	}
	l.l3, l.v6 = h.L3, h.IPv6
	// ipLen is the end of the IP packet its length field gives.
	var ipLen int
	if h.IPv6 {
		ipLen = h.L3End + int(binary.BigEndian.Uint16(f[h.L3+4:]))
	} else {
		ipLen = h.L3 + int(binary.BigEndian.Uint16(f[h.L3+2:]))
		if ipLen < h.L3End {
			return l, ErrOffloadIPLength
		}
	}
	if ipLen > len(f) || (gso && ipLen != len(f)) {
		return l, ErrOffloadIPLength
	}
	l.l4, l.proto, l.own = h.L4, h.Proto, h.L4 >= 0
	if o.Flags&OffloadNeedsCsum != 0 {
		l.l4 = int(o.CsumStart)
		switch o.CsumOffset {
		case 16:
			l.proto = ProtoTCP
		case 6:
			l.proto = ProtoUDP
		default:
			return l, ErrOffloadCsumOffset
		}
		if l.l4 < h.L3End || l.l4 >= len(f) {
			return l, ErrOffloadCsumStart
		}
		l.own = l.l4 == h.L4
		if l.own && h.Proto != l.proto {
			return l, ErrOffloadCsumProto
		}
	}
	if gso && (!l.own || h.Fragment) {
		return l, ErrOffloadGSOMismatch
	}
	switch l.proto {
	case ProtoTCP:
		if len(f) < l.l4+20 || f[l.l4+12]>>4 < 5 || len(f) < l.l4+int(f[l.l4+12]>>4)*4 {
			return l, ErrOffloadL4Header
		}
		l.end = l.l4 + int(f[l.l4+12]>>4)*4
	case ProtoUDP:
		if len(f) < l.l4+8 {
			return l, ErrOffloadL4Header
		}
		l.end = l.l4 + 8
	default:
		if gso {
			return l, ErrOffloadGSOMismatch
		}
		return l, ErrOffloadNotIP
	}
	if !gso {
		return l, nil
	}
	switch o.GSOType &^ GSOECN {
	case GSOTCPv4:
		if l.v6 || l.proto != ProtoTCP {
			return l, ErrOffloadGSOMismatch
		}
	case GSOTCPv6:
		if !l.v6 || l.proto != ProtoTCP {
			return l, ErrOffloadGSOMismatch
		}
	case GSOUDPL4:
		if l.proto != ProtoUDP || o.GSOType&GSOECN != 0 {
			return l, ErrOffloadGSOMismatch
		}
	default:
		return l, ErrOffloadGSOType
	}
	if o.GSOSize == 0 || (len(f)-l.end+int(o.GSOSize)-1)/int(o.GSOSize) > MaxSegments {
		return l, ErrOffloadGSOSize
	}
	return l, nil
}

// l2Len is the length of f's L2 header as an MTU counts it: the Ethernet
// header and one tag.
func l2Len(f []byte) int {
	if len(f) >= 18 {
		if isTag(binary.BigEndian.Uint16(f[12:])) {
			return 18
		}
	}
	return 14
}

// FitsMTU reports whether f, with offload o, may go out on a link of MTU
// mtu: it holds at least an Ethernet header, and its payload (a
// super-frame's: its largest segment's, SegmentPayloadLen) is at most mtu.
// A frame no longer than an untagged header plus mtu fits whatever it
// carries, so only longer ones are walked.
func FitsMTU(f []byte, o Offload, mtu int) bool {
	if len(f) < HeaderLen {
		return false
	}
	return len(f)-HeaderLen <= mtu || SegmentPayloadLen(f, o) <= mtu
}

// SegmentPayloadLen returns the L2 payload (one tag allowed, as an MTU
// counts it) of the largest frame f becomes on the wire: its own for a
// frame that is not a super-frame, else the headers plus GSOSize. It
// returns the frame's own payload length for a super-frame Segment would
// refuse, so that an MTU check refuses it too.
func SegmentPayloadLen(f []byte, o Offload) int {
	own := len(f) - l2Len(f)
	if o.GSOType == GSONone || len(f) < 14 {
		return own
	}
	l, err := segmentable(f, o)
	if err != nil {
		return own
	}
	return min(own, l.end-l2Len(f)+int(o.GSOSize))
}

// FinishChecksum completes a partial checksum in place: when o has
// OffloadNeedsCsum it stores the Internet checksum (RFC 1071) of
// f[CsumStart:] at CsumStart+CsumOffset, as the kernel's
// skb_checksum_help does (the field already holds the pseudo-header sum).
// It does nothing to a frame without OffloadNeedsCsum.
func FinishChecksum(f []byte, o Offload) error {
	if o.Flags&OffloadNeedsCsum == 0 {
		return nil
	}
	start, at := int(o.CsumStart), int(o.CsumStart)+int(o.CsumOffset)
	if at+2 > len(f) || start > len(f) {
		return ErrOffloadBadFrame
	}
	binary.BigEndian.PutUint16(f[at:], finish(sum(f[start:], 0)))
	return nil
}

// SegmentedLen returns the number of bytes Segment writes for f: every
// segment's headers and payload. For a frame that is not a super-frame it
// is len(f).
func SegmentedLen(f []byte, o Offload) (int, error) {
	if o.GSOType == GSONone {
		return len(f), nil
	}
	l, err := segmentable(f, o)
	if err != nil {
		return 0, err
	}
	payload := len(f) - l.end
	n := max((payload+int(o.GSOSize)-1)/int(o.GSOSize), 1)
	return n*l.end + payload, nil
}

// segmentable checks that Segment can cut f (CheckOffload) and returns
// its layout.
func segmentable(f []byte, o Offload) (layout, error) {
	if o.GSOType == GSONone {
		return layout{}, ErrOffloadGSOType
	}
	return check(f, o)
}

// Segment cuts the super-frame f into the frames the kernel's GSO would
// send: every segment carries a copy of f's headers and up to GSOSize
// bytes of its payload; the IPv4 total length, ID (incremented per
// segment) and header checksum, the IPv6 payload length, the TCP sequence
// number and flags (FIN and PSH on the last segment only, CWR on the first
// only) or the UDP length, and the L4 checksum are set for each. It writes
// the segments one after another into buf, which must hold SegmentedLen
// bytes, appends views of them to segs and returns segs. A frame that is
// not a super-frame is copied with its checksum finished. f is not
// changed.
func Segment(f []byte, o Offload, buf []byte, segs [][]byte) ([][]byte, error) {
	if o.GSOType == GSONone {
		if len(buf) < len(f) {
			return segs, ErrOffloadBadFrame
		}
		c := buf[:len(f):len(f)]
		copy(c, f)
		if err := FinishChecksum(c, o); err != nil {
			return segs, err
		}
		return append(segs, c), nil
	}
	need, err := SegmentedLen(f, o)
	if err != nil {
		return segs, err
	}
	if len(buf) < need {
		return segs, ErrOffloadBadFrame
	}
	l, _ := check(f, o)
	hdr, payload := f[:l.end], f[l.end:]
	mss := int(o.GSOSize)
	var id uint16
	var seq uint32
	if !l.v6 {
		id = binary.BigEndian.Uint16(f[l.l3+4:])
	}
	if l.proto == ProtoTCP {
		seq = binary.BigEndian.Uint32(f[l.l4+4:])
	}
	for i := 0; i == 0 || len(payload) > 0; i++ {
		chunk := payload[:min(mss, len(payload))]
		payload = payload[len(chunk):]
		n := len(hdr) + len(chunk)
		s := buf[:n:n]
		buf = buf[n:]
		copy(s, hdr)
		copy(s[len(hdr):], chunk)
		l4len := n - l.l4
		if l.v6 {
			binary.BigEndian.PutUint16(s[l.l3+4:], uint16(n-l.l3-40))
		} else {
			binary.BigEndian.PutUint16(s[l.l3+2:], uint16(n-l.l3))
			binary.BigEndian.PutUint16(s[l.l3+4:], id+uint16(i))
			binary.BigEndian.PutUint16(s[l.l3+10:], 0)
			binary.BigEndian.PutUint16(s[l.l3+10:], finish(sum(s[l.l3:l.l4], 0)))
		}
		var csumAt int
		if l.proto == ProtoTCP {
			binary.BigEndian.PutUint32(s[l.l4+4:], seq+uint32(i*mss))
			if len(payload) > 0 {
				s[l.l4+13] &^= 0x01 | 0x08 // FIN, PSH
			}
			if i > 0 {
				s[l.l4+13] &^= 0x80 // CWR
			}
			csumAt = l.l4 + 16
		} else {
			binary.BigEndian.PutUint16(s[l.l4+4:], uint16(l4len))
			csumAt = l.l4 + 6
		}
		binary.BigEndian.PutUint16(s[csumAt:], 0)
		binary.BigEndian.PutUint16(s[csumAt:], finish(sum(s[l.l4:], pseudo(s, l, l4len))))
		segs = append(segs, s)
	}
	return segs, nil
}

// pseudo returns the unfolded sum of the pseudo-header of an L4 packet of
// l4len bytes in s.
func pseudo(s []byte, l layout, l4len int) uint64 {
	var acc uint64
	if l.v6 {
		acc = sum(s[l.l3+8:l.l3+40], 0)
	} else {
		acc = sum(s[l.l3+12:l.l3+20], 0)
	}
	return acc + uint64(l.proto) + uint64(l4len)
}

// sum adds b to acc as big-endian 16-bit words (an odd last byte is
// padded with zero), without folding. Adding 32-bit words gives the same
// folded result, since 2^16 ≡ 1 modulo 0xffff.
func sum(b []byte, acc uint64) uint64 {
	for len(b) >= 8 {
		acc += uint64(binary.BigEndian.Uint32(b)) + uint64(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
	}
	if len(b) >= 4 {
		acc += uint64(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	if len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	return acc
}

// finish folds acc to 16 bits and complements it; a zero result is sent
// as 0xffff (the same value in one's complement, and the only one UDP
// accepts as "computed").
func finish(acc uint64) uint16 {
	for acc>>16 != 0 {
		acc = acc&0xffff + acc>>16
	}
	if c := ^uint16(acc); c != 0 {
		return c
	}
	return 0xffff
}

// VirtioHdrLen is the size of struct virtio_net_hdr (without
// num_buffers): what PACKET_VNET_HDR and IFF_VNET_HDR put in front of
// every frame.
const VirtioHdrLen = 10

// DecodeVirtioHdr reads a struct virtio_net_hdr (host byte order, as
// packet sockets and TAPs use it) from b, which holds at least
// VirtioHdrLen bytes. What it returns is what the writer claimed:
// CheckOffload it against its frame before using it.
func DecodeVirtioHdr(b []byte) Offload {
	_ = b[VirtioHdrLen-1]
	return Offload{
		Flags:      b[0],
		GSOType:    b[1],
		HdrLen:     binary.NativeEndian.Uint16(b[2:]),
		GSOSize:    binary.NativeEndian.Uint16(b[4:]),
		CsumStart:  binary.NativeEndian.Uint16(b[6:]),
		CsumOffset: binary.NativeEndian.Uint16(b[8:]),
	}
}

// EncodeVirtioHdr writes o as a struct virtio_net_hdr into b, which holds
// at least VirtioHdrLen bytes.
func (o Offload) EncodeVirtioHdr(b []byte) {
	_ = b[VirtioHdrLen-1]
	b[0], b[1] = o.Flags, o.GSOType
	binary.NativeEndian.PutUint16(b[2:], o.HdrLen)
	binary.NativeEndian.PutUint16(b[4:], o.GSOSize)
	binary.NativeEndian.PutUint16(b[6:], o.CsumStart)
	binary.NativeEndian.PutUint16(b[8:], o.CsumOffset)
}
