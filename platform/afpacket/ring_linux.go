package afpacket

import (
	"encoding/binary"

	"github.com/swctl/swctl/frame"
	"golang.org/x/sys/unix"
)

// TPACKET_ALIGN rounds x up to TPACKET_ALIGNMENT (linux/if_packet.h).
func tpacketAlign(x int) int {
	return (x + unix.TPACKET_ALIGNMENT - 1) &^ (unix.TPACKET_ALIGNMENT - 1)
}

// TPACKET2_HDRLEN is the aligned tpacket2_hdr followed by a sockaddr_ll
// (linux/if_packet.h).
var tpacket2HdrLen = tpacketAlign(unix.SizeofTpacket2Hdr) + unix.SizeofSockaddrLinklayer

// maxTags is how many tag bytes a received frame may carry in its data
// besides the one the kernel strips: the inner tag of a QinQ frame.
const maxTags = 2 * frame.TagLen

// netOffset is where the kernel puts the network header of an Ethernet
// frame in a TPACKET_V2 slot with the given PACKET_RESERVE
// (net/packet/af_packet.c, tpacket_rcv: the MAC header length is counted
// as at least 16).
func netOffset(reserve int) int { return tpacketAlign(tpacket2HdrLen+16) + reserve }

// frameSizeFor returns the ring slot size for an interface MTU and a
// PACKET_RESERVE: header, reserve, Ethernet header, two tags, payload.
func frameSizeFor(mtu, reserve int) int {
	return tpacketAlign(netOffset(reserve) + maxTags + mtu)
}

// ring is a TPACKET_V2 receive ring shared with the kernel. Slot i lives
// in block i/framesPerBlock at offset (i%framesPerBlock)*frameSize. Only
// the goroutine in ReadBatch (or Close, once that has returned) touches it.
type ring struct {
	// mem is the mapped ring (nil once unmapped).
	mem []byte
	// blockSize is the size of one block in bytes.
	blockSize int
	// frameSize is the size of one slot in bytes.
	frameSize int
	// framesPerBlock is how many slots one block holds.
	framesPerBlock int
	// frames is the number of slots in the ring.
	frames int
	// head is the next slot the kernel fills and the next one collect looks at.
	head int
	// held lists the slots lent out by the last collect, to give back to
	// the kernel before the next one.
	held []int
}

// Reasons collect refuses a slot.
const (
	slotOK = iota
	// slotRunt is a frame shorter than an Ethernet header.
	slotRunt
	// slotTruncated is a frame larger than the slot (snaplen < len).
	slotTruncated
)

// offset returns the byte offset of slot i in mem.
func (r *ring) offset(i int) int {
	return (i/r.framesPerBlock)*r.blockSize + (i%r.framesPerBlock)*r.frameSize
}

// slot returns the bytes of slot i.
func (r *ring) slot(i int) []byte {
	off := r.offset(i)
	return r.mem[off : off+r.frameSize]
}

// collect fills frames with views of ready slots from head on, in arrival
// order, restores stripped VLAN tags in place, gives refused slots straight
// back to the kernel, and records the lent slots in held. It returns the
// number of frames, their total length and the number refused.
func (r *ring) collect(frames [][]byte) (n, bytes, dropped int) {
	for scanned := 0; n < len(frames) && scanned < r.frames; scanned++ {
		i := r.head
		if r.status(i)&unix.TP_STATUS_USER == 0 {
			break
		}
		if r.head++; r.head == r.frames {
			r.head = 0
		}
		f, why := r.frame(i)
		if why != slotOK {
			r.give(i)
			dropped++
			continue
		}
		frames[n] = f
		n++
		bytes += len(f)
		r.held = append(r.held, i)
	}
	return n, bytes, dropped
}

// frame returns the frame in user-owned slot i, with the tag the kernel
// stripped put back in front of the ethertype.
func (r *ring) frame(i int) ([]byte, int) {
	h := r.hdr(i)
	s := r.slot(i)
	mac, snap := int(h.Mac), int(h.Snaplen)
	switch {
	case snap != int(h.Len) || mac+snap > len(s):
		return nil, slotTruncated
	case snap < frame.HeaderLen:
		return nil, slotRunt
	}
	end := mac + snap
	if h.Status&unix.TP_STATUS_VLAN_VALID == 0 {
		return s[mac:end:end], slotOK
	}
	tpid := uint16(frame.TypeVLAN)
	if h.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
		tpid = h.Vlan_tpid
	}
	// The slot's header and sockaddr_ll end at tpacket2HdrLen; the
	// headroom starts there, and at least 14+reserve bytes of it are free.
	if mac-frame.TagLen < tpacket2HdrLen {
		return nil, slotTruncated
	}
	start := mac - frame.TagLen
	copy(s[start:start+12], s[mac:mac+12])
	binary.BigEndian.PutUint16(s[start+12:], tpid)
	binary.BigEndian.PutUint16(s[start+14:], h.Vlan_tci)
	return s[start:end:end], slotOK
}

// release gives the slots lent by the last collect back to the kernel.
func (r *ring) release() {
	for _, i := range r.held {
		r.give(i)
	}
	r.held = r.held[:0]
}
