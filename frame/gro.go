package frame

import "encoding/binary"

// Receive coalescing (GRO in software): a writer that hands frames to a
// receiver taking super-frames (a TAP with IFF_VNET_HDR) merges the TCP
// segments of one flow into one frame with a TCP GSO offload, so the host
// stack takes them as one skb, as its own GRO would have, and the writer
// makes one system call where it made one per segment.
//
// The rules are Linux's tcp_gro_receive and inet_gro_receive, made strict
// enough that Segment gives back the segments that went in, byte for byte
// but for their checksums and the ECN-free PSH bit of all but the last:
//  1. The Ethernet header and tags are equal; the IP version, addresses,
//     TOS or traffic class, IPv6 flow label, TTL or hop limit, IPv4 flags
//     and options are equal; IPv4 is not a fragment and IPv6 carries no
//     extension header; the IP length ends the frame.
//  2. IPv4 IDs go up by one from segment to segment (what Segment
//     writes); the IPv4 header checksum is valid.
//  3. The TCP ports, ack number, window, urgent pointer and options
//     (data offset) are equal; the sequence number follows on: the next
//     segment's is the previous one's plus its payload length.
//  4. TCP flags are ACK, maybe with ECE (equal in every segment); PSH may
//     be set on the last segment only; SYN, FIN, RST, URG and CWR are
//     never merged.
//  5. Every segment carries payload; all have the first one's payload
//     length but the last, which may be shorter; the merged IP packet is
//     at most 65,535 bytes.
//  6. A segment's TCP checksum is valid, or trusted because its offload
//     says so (OffloadDataValid, or a partial checksum the sending stack
//     will finish: OffloadNeedsCsum at the TCP checksum); a segment with
//     a GSO offload is already a super-frame and is left alone.
// The merged frame carries the first segment's headers with the lengths
// set, the IPv4 header checksum recomputed, the last segment's PSH, the
// pseudo-header sum in the TCP checksum and the offload {OffloadNeedsCsum
// at the TCP checksum, GSOTCPv4 or GSOTCPv6, GSOSize the first segment's
// payload length}.

// MaxGROFrame is the longest frame GRO builds: a 64 KiB IP packet behind
// an Ethernet header and two tags.
const MaxGROFrame = 65535 + HeaderLen + MaxTags*TagLen

// GRO plans and builds the merged frames of one batch. The zero GRO is
// ready; it allocates on its first Plan and when a batch is longer than
// any before, never per frame. One goroutine at a time uses a GRO.
//
// Order: frames of one flow leave in their order. A frame that merges
// into a group leaves where the group's first frame was, so it may pass
// frames of other flows (and frames that do not merge) that came between.
type GRO struct {
	// items are Plan's output in order: a group of frames of one flow
	// (maybe of one frame), or a frame that does not merge.
	items []groItem
	// next[i] is the frame that follows frame i in its group, -1 at the
	// group's tail.
	next []int32
	// buf holds the frame Item built last.
	buf []byte
}

// groItem is one frame Item returns: a group of frames of one flow.
type groItem struct {
	// first and last are the group's first and last frames (indices
	// into the batch); n is how many it has.
	first, last, n int32
	// open is set while the group may take another frame.
	open bool
	// v6 is set for TCP/IPv6.
	v6 bool
	// l3, l4 and hdrLen are the offsets of the IP and TCP headers and of
	// the payload, the same in every frame of the group.
	l3, l4, hdrLen int32
	// key hashes the flow's addresses and ports, to skip groups of
	// other flows fast.
	key uint32
	// segSize is the first frame's payload length; payload is the sum
	// over the group.
	segSize, payload int32
	// nextSeq is the TCP sequence number the next frame must have, and
	// nextID its IPv4 ID.
	nextSeq uint32
	nextID  uint16
}

// TCP flags GRO looks at.
const (
	tcpFIN = 0x01
	tcpPSH = 0x08
	tcpACK = 0x10
	tcpECE = 0x40
)

// Plan groups the frames of a batch (offs parallel to frames, or nil for
// plain frames) and returns the number of frames Item gives for them. It
// reads the frames only; Item reads them again, so they must not change
// in between.
func (g *GRO) Plan(frames [][]byte, offs []Offload) int {
	if cap(g.next) < len(frames) {
		g.next = make([]int32, len(frames))
		g.items = make([]groItem, 0, len(frames))
	}
	if g.buf == nil {
		g.buf = make([]byte, MaxGROFrame)
	}
	g.items = g.items[:0]
	g.next = g.next[:len(frames)]
	for i, f := range frames {
		g.next[i] = -1
		var o Offload
		if offs != nil {
			o = offs[i]
		}
		it, ok := groSegment(f, o)
		it.first, it.last, it.n = int32(i), int32(i), 1
		if !ok {
			g.items = append(g.items, it)
			continue
		}
		if k := g.openGroup(frames, f, it); k >= 0 {
			grp := &g.items[k]
			if grp.follows(frames[grp.first], f, it) {
				g.next[grp.last] = int32(i)
				grp.last, grp.n = int32(i), grp.n+1
				grp.payload += it.payload
				grp.nextSeq += uint32(it.payload)
				grp.nextID++
				grp.open = it.payload == grp.segSize && f[it.l4+13]&tcpPSH == 0
				continue
			}
			grp.open = false
		}
		it.open = f[it.l4+13]&tcpPSH == 0
		g.items = append(g.items, it)
	}
	return len(g.items)
}

// openGroup returns the index of the open group of f's flow, or -1.
func (g *GRO) openGroup(frames [][]byte, f []byte, it groItem) int {
	for k := len(g.items) - 1; k >= 0; k-- {
		grp := &g.items[k]
		if grp.open && grp.key == it.key && grp.v6 == it.v6 && grp.l3 == it.l3 && grp.l4 == it.l4 &&
			sameFlow(frames[grp.first], f, it) {
			return k
		}
	}
	return -1
}

// sameFlow reports whether a and b, TCP segments with the layout of it,
// have the same addresses and ports.
func sameFlow(a, b []byte, it groItem) bool {
	addr := it.l3 + 12
	if it.v6 {
		addr = it.l3 + 8
	}
	return string(a[addr:it.l3+groAddrEnd(it.v6)]) == string(b[addr:it.l3+groAddrEnd(it.v6)]) &&
		string(a[it.l4:it.l4+4]) == string(b[it.l4:it.l4+4])
}

// groAddrEnd is where the addresses end in an IPv4 or IPv6 header.
func groAddrEnd(v6 bool) int32 {
	if v6 {
		return 40
	}
	return 20
}

// follows reports whether f (laid out as it) may join the group whose
// first frame is first: rules 1 to 5 against the group.
func (grp *groItem) follows(first, f []byte, it groItem) bool {
	l3, l4, h := grp.l3, grp.l4, grp.hdrLen
	if it.hdrLen != h || it.payload > grp.segSize || int(h-l3)+int(grp.payload+it.payload) > 65535 ||
		binary.BigEndian.Uint32(f[l4+4:]) != grp.nextSeq {
		return false
	}
	if grp.v6 {
		// Ethernet, version, traffic class, flow label; next header,
		// hop limit, addresses, ports, as the first frame's.
		if string(first[:l3+4]) != string(f[:l3+4]) || string(first[l3+6:l4+4]) != string(f[l3+6:l4+4]) {
			return false
		}
	} else {
		// Ethernet, version, TOS; flags, TTL, protocol; addresses,
		// options, ports.
		if string(first[:l3+2]) != string(f[:l3+2]) || string(first[l3+6:l3+10]) != string(f[l3+6:l3+10]) ||
			string(first[l3+12:l4+4]) != string(f[l3+12:l4+4]) ||
			binary.BigEndian.Uint16(f[l3+4:]) != grp.nextID {
			return false
		}
	}
	// Ack number, data offset; flags but PSH; window; urgent pointer and
	// options.
	return string(first[l4+8:l4+13]) == string(f[l4+8:l4+13]) &&
		first[l4+13]&^tcpPSH == f[l4+13]&^tcpPSH &&
		string(first[l4+14:l4+16]) == string(f[l4+14:l4+16]) &&
		string(first[l4+18:h]) == string(f[l4+18:h])
}

// groSegment checks that f, with offload o, is a TCP segment GRO may
// merge on its own terms (rules 1, 2, 4, 5 and 6 that need no other
// segment) and returns its layout.
func groSegment(f []byte, o Offload) (groItem, bool) {
	var it groItem
	if o.GSOType != GSONone {
		return it, false
	}
	var h Headers
	h.Walk(f)
	if h.L3 < 0 || h.Proto != ProtoTCP || h.Fragment || h.L4 != h.L3End {
		return it, false
	}
	l3, l4 := h.L3, h.L4
	var ipEnd int
	if h.IPv6 {
		ipEnd = h.L3End + int(binary.BigEndian.Uint16(f[l3+4:]))
	} else {
		ipEnd = l3 + int(binary.BigEndian.Uint16(f[l3+2:]))
	}
	if ipEnd != len(f) || len(f) < l4+20 {
		return it, false
	}
	hdrLen := l4 + int(f[l4+12]>>4)*4
	if f[l4+12]>>4 < 5 || hdrLen >= len(f) {
		// A bad data offset, or no payload.
		return it, false
	}
	if fl := f[l4+13]; fl&tcpACK == 0 || fl&^(tcpACK|tcpPSH|tcpECE) != 0 {
		return it, false
	}
	if !h.IPv6 && finish(sum(f[l3:l4], 0)) != 0xffff {
		// The sum over a valid header is 0xffff, whose complement is 0;
		// finish sends that as 0xffff.
		return it, false
	}
	it.v6 = h.IPv6
	it.l3, it.l4, it.hdrLen = int32(l3), int32(l4), int32(hdrLen)
	switch {
	case o.Flags&OffloadNeedsCsum != 0:
		if int(o.CsumStart) != l4 || o.CsumOffset != 16 {
			return it, false
		}
	case o.Flags&OffloadDataValid != 0:
	default:
		lay := layout{l3: l3, l4: l4, v6: h.IPv6, proto: ProtoTCP}
		if finish(sum(f[l4:], pseudo(f, lay, len(f)-l4))) != 0xffff {
			return it, false
		}
	}
	it.segSize = int32(len(f) - hdrLen)
	it.payload = it.segSize
	it.nextSeq = binary.BigEndian.Uint32(f[l4+4:]) + uint32(it.payload)
	if !h.IPv6 {
		it.nextID = binary.BigEndian.Uint16(f[l3+4:]) + 1
	}
	addr := l3 + 12
	if h.IPv6 {
		addr = l3 + 8
	}
	it.key = uint32(sum(f[addr:l3+int(groAddrEnd(h.IPv6))], uint64(binary.BigEndian.Uint32(f[l4:]))))
	return it, true
}

// Frames returns how many frames of the batch item k of the last Plan
// holds.
func (g *GRO) Frames(k int) int { return int(g.items[k].n) }

// Item returns item k of the last Plan, which frames and offs must be the
// batch given to: a frame of the batch as it is with its offload, or, for
// a group of several frames, the merged frame and its GSO offload. A
// merged frame lives in the GRO's buffer until the next Item or Plan.
func (g *GRO) Item(k int, frames [][]byte, offs []Offload) ([]byte, Offload) {
	it := &g.items[k]
	if it.n == 1 {
		var o Offload
		if offs != nil {
			o = offs[it.first]
		}
		return frames[it.first], o
	}
	first := frames[it.first]
	l3, l4, h := int(it.l3), int(it.l4), int(it.hdrLen)
	n := copy(g.buf, first[:h])
	for i := it.first; i >= 0; i = g.next[i] {
		n += copy(g.buf[n:], frames[i][h:])
	}
	m := g.buf[:n:n]
	o := Offload{Flags: OffloadNeedsCsum, GSOType: GSOTCPv4, HdrLen: uint16(h), GSOSize: uint16(it.segSize),
		CsumStart: uint16(l4), CsumOffset: 16}
	if it.v6 {
		o.GSOType = GSOTCPv6
		binary.BigEndian.PutUint16(m[l3+4:], uint16(n-l3-40))
	} else {
		binary.BigEndian.PutUint16(m[l3+2:], uint16(n-l3))
		binary.BigEndian.PutUint16(m[l3+10:], 0)
		binary.BigEndian.PutUint16(m[l3+10:], finish(sum(m[l3:l4], 0)))
	}
	m[l4+13] |= frames[it.last][l4+13] & tcpPSH
	lay := layout{l3: l3, l4: l4, v6: it.v6, proto: ProtoTCP}
	binary.BigEndian.PutUint16(m[l4+16:], fold(pseudo(m, lay, n-l4)))
	return m, o
}

// fold folds acc to 16 bits without complementing it: the pseudo-header
// sum a partial checksum starts from.
func fold(acc uint64) uint16 {
	for acc>>16 != 0 {
		acc = acc&0xffff + acc>>16
	}
	return uint16(acc)
}
