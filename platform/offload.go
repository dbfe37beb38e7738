package platform

import (
	"encoding/binary"
	"errors"
)

// The software side of Offload: what a forwarder does to a frame before
// it writes it to a port that carries no offload metadata. Both functions
// work on caller-owned buffers and allocate nothing.

// Errors of the software offload functions.
var (
	// ErrOffloadUnsupported: the frame's offload is one the software
	// fallback does not handle (UFO, a GSO frame that is not TCP or UDP
	// over IPv4 or IPv6 behind at most two tags).
	ErrOffloadUnsupported = errors.New("offload: unsupported frame")
	// ErrOffloadBadFrame: the metadata points outside the frame.
	ErrOffloadBadFrame = errors.New("offload: metadata does not match the frame")
)

// Ethertypes and IP protocol numbers the parser needs.
const (
	etherIPv4   = 0x0800
	etherIPv6   = 0x86dd
	etherVLAN   = 0x8100
	etherQinQ   = 0x88a8
	etherQinQv1 = 0x9100
	protoTCP    = 6
	protoUDP    = 17
)

// layout is where a super-frame's headers are.
type layout struct {
	// l3 is the offset of the IP header, l4 of the TCP or UDP header,
	// end of the first payload byte.
	l3, l4, end int
	// v6 is set for IPv6.
	v6 bool
	// proto is protoTCP or protoUDP.
	proto uint8
}

// parse finds the headers of a TCP or UDP frame over IPv4 or IPv6 behind
// at most two tags. The L4 header starts at CsumStart when
// OffloadNeedsCsum is set, else right after the IP header (an IPv6
// extension header is then unsupported).
func parse(f []byte, o Offload) (layout, error) {
	var l layout
	off := 12
	typ := uint16(0)
	for tags := 0; ; tags++ {
		if len(f) < off+2 {
			return l, ErrOffloadBadFrame
		}
		typ = binary.BigEndian.Uint16(f[off:])
		off += 2
		if typ != etherVLAN && typ != etherQinQ && typ != etherQinQv1 {
			break
		}
		if tags == 2 {
			return l, ErrOffloadUnsupported
		}
		off += 2
	}
	l.l3 = off
	switch typ {
	case etherIPv4:
		if len(f) < off+20 || f[off]>>4 != 4 {
			return l, ErrOffloadBadFrame
		}
		l.l4 = off + int(f[off]&0x0f)*4
		l.proto = f[off+9]
	case etherIPv6:
		if len(f) < off+40 || f[off]>>4 != 6 {
			return l, ErrOffloadBadFrame
		}
		l.v6 = true
		l.l4 = off + 40
		l.proto = f[off+6]
	default:
		return l, ErrOffloadUnsupported
	}
	if o.Flags&OffloadNeedsCsum != 0 {
		l.l4 = int(o.CsumStart)
		switch o.CsumOffset {
		case 16:
			l.proto = protoTCP
		case 6:
			l.proto = protoUDP
		}
	}
	switch l.proto {
	case protoTCP:
		if len(f) < l.l4+20 {
			return l, ErrOffloadBadFrame
		}
		l.end = l.l4 + int(f[l.l4+12]>>4)*4
	case protoUDP:
		l.end = l.l4 + 8
	default:
		return l, ErrOffloadUnsupported
	}
	if l.l4 <= l.l3 || l.end > len(f) || l.end < l.l4+8 {
		return l, ErrOffloadBadFrame
	}
	return l, nil
}

// l2Len is the length of f's L2 header as an MTU counts it: the Ethernet
// header and one tag.
func l2Len(f []byte) int {
	if len(f) >= 18 {
		switch binary.BigEndian.Uint16(f[12:]) {
		case etherVLAN, etherQinQ, etherQinQv1:
			return 18
		}
	}
	return 14
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

// segmentable parses f and checks that Segment can cut it.
func segmentable(f []byte, o Offload) (layout, error) {
	if o.GSOSize == 0 {
		return layout{}, ErrOffloadBadFrame
	}
	l, err := parse(f, o)
	if err != nil {
		return l, err
	}
	want := uint8(protoTCP)
	switch o.GSOType &^ GSOECN {
	case GSOTCPv4:
		if l.v6 {
			return l, ErrOffloadBadFrame
		}
	case GSOTCPv6:
		if !l.v6 {
			return l, ErrOffloadBadFrame
		}
	case GSOUDPL4:
		want = protoUDP
	default:
		return l, ErrOffloadUnsupported
	}
	if l.proto != want {
		return l, ErrOffloadBadFrame
	}
	return l, nil
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
	l, _ := parse(f, o)
	hdr, payload := f[:l.end], f[l.end:]
	mss := int(o.GSOSize)
	var id uint16
	var seq uint32
	if !l.v6 {
		id = binary.BigEndian.Uint16(f[l.l3+4:])
	}
	if l.proto == protoTCP {
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
		if l.proto == protoTCP {
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
