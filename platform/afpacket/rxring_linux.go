package afpacket

import (
	"encoding/binary"
	"fmt"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// This file is the receive ring: its geometry, its setup, and collect,
// which turns the slots the kernel filled into frames (receive_linux.go
// says when it runs).

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

// maxSuperFrame is the largest frame a GSO super-frame can be without BIG
// TCP: a 64 KiB IP packet (gso_max_size, GSO_LEGACY_MAX_SIZE) and its
// Ethernet header. Tags are counted apart (maxTags).
const maxSuperFrame = 65536 + frame.HeaderLen

// offloadFrameSize returns the ring slot size of a port with vnet headers:
// header, reserve, vnet header, Ethernet header, two tags, a 64 KiB IP
// packet (or the MTU, if larger).
func offloadFrameSize(mtu, reserve int) int {
	return tpacketAlign(netOffset(reserve) + vnetHdrLen + maxTags + max(maxSuperFrame, frame.HeaderLen+mtu))
}

// smallOffloadFrameSize returns the ring slot size of a port with vnet
// headers and small slots: header, reserve, vnet header, Ethernet header,
// two tags, the MTU. Larger frames (super-frames) reach the socket's
// receive queue as copies (PACKET_COPY_THRESH).
func smallOffloadFrameSize(mtu, reserve int) int {
	return tpacketAlign(netOffset(reserve) + vnetHdrLen + maxTags + mtu)
}

// copyBufSize returns the size of one copy buffer: room in front of the
// frame (the headroom and a restored tag), the vnet header, a 64 KiB
// super-frame or a frame of the MTU, two tags.
func copyBufSize(mtu, reserve int) int {
	return copyOffset(reserve) + vnetHdrLen + maxTags + max(maxSuperFrame, frame.HeaderLen+mtu)
}

// copyOffset is where a copy is read into its buffer: the frame, once its
// tag is restored, still has reserve bytes free in front of it.
func copyOffset(reserve int) int { return reserve + frame.TagLen }

// ring is a TPACKET_V2 receive ring shared with the kernel (layout:
// slots). Only the goroutine in ReadBatch (or Close, once that has
// returned) touches it.
type ring struct {
	slots
	// head is the next slot the kernel fills and the next one collect looks at.
	head int
	// held lists the slots lent out by the last collect, to give back to
	// the kernel before the next one.
	held []int
	// vnet is set when the socket has PACKET_VNET_HDR: a virtio_net_hdr
	// precedes the MAC header in every slot.
	vnet bool
	// fd is the socket, read for the copies of TP_STATUS_COPY slots.
	fd int
	// bufs are the copy buffers (nil without copies): a slot marked
	// TP_STATUS_COPY holds only the head of a frame larger than a slot,
	// and the whole frame waits on the socket's receive queue, in ring
	// order; collect reads it into the next free buffer.
	bufs [][]byte
	// used is how many of bufs the last collect lent out.
	used int
	// copyOff is where a copy starts in its buffer (copyOffset).
	copyOff int
	// truncLen is the length of the last frame refused because it did not
	// fit its slot; collect sets it, ReadBatch reads and clears it.
	truncLen int
	// badOffload counts the frames the last collect refused because
	// their virtio_net_hdr does not describe them
	// (frame.CheckOffload), and badOffloadErr is why the first was;
	// ReadBatch reads and clears both.
	badOffload    int
	badOffloadErr error
	// empty is set when the last collect stopped at a slot the kernel
	// had not filled: the ring had nothing more to give.
	empty bool
}

// Reasons collect refuses a slot.
const (
	slotOK = iota
	// slotRunt is a frame shorter than an Ethernet header.
	slotRunt
	// slotTruncated is a frame larger than the slot (snaplen < len).
	slotTruncated
	// slotSuperFrame is a GSO super-frame read by a caller that takes no
	// offload metadata (ReadBatch on a port with vnet headers).
	slotSuperFrame
	// slotBadOffload is a frame whose virtio_net_hdr does not describe
	// it (frame.CheckOffload): a TAP passes on whatever its writer
	// claimed, and nothing may trust those offsets.
	slotBadOffload
)

// openRing makes the receive ring of socket fd, before the socket is
// bound, and maps it. Its slots hold a frame of the MTU, or with Offload
// either a whole super-frame (OffloadSlots) or a frame of the MTU, the
// larger ones reaching the socket's receive queue as copies
// (PACKET_COPY_THRESH) that collect reads into copy buffers.
func openRing(fd, mtu int, opts Options) (ring, error) {
	page := unix.Getpagesize()
	frameSize := frameSizeFor(mtu, opts.Headroom)
	blockSize := (max(opts.BlockSize, frameSize) + page - 1) / page * page
	blocks := opts.BlockCount
	copies := false
	switch {
	case opts.Offload && opts.OffloadSlots > 0:
		// Slots for whole super-frames: a few per block, the block
		// rounded up to pages.
		frameSize = offloadFrameSize(mtu, opts.Headroom)
		blockSize = (offloadSlotsPerBlock*frameSize + page - 1) / page * page
		blocks = opts.OffloadSlots / offloadSlotsPerBlock
	case opts.Offload:
		// Small slots; a frame that does not fit (a super-frame) gets
		// its head in the slot, marked TP_STATUS_COPY, and a full copy
		// on the socket's receive queue, bounded by the receive buffer.
		frameSize = smallOffloadFrameSize(mtu, opts.Headroom)
		blockSize = (max(opts.BlockSize, frameSize) + page - 1) / page * page
		copies = true
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_COPY_THRESH, 1); err != nil {
			return ring{}, fmt.Errorf("setsockopt PACKET_COPY_THRESH: %w", err)
		}
		// The kernel doubles the value. SO_RCVBUFFORCE needs
		// CAP_NET_ADMIN; without it SO_RCVBUF is capped by
		// net.core.rmem_max.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, opts.CopyQueue/2); err != nil {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, opts.CopyQueue/2); err != nil {
				return ring{}, fmt.Errorf("setsockopt SO_RCVBUF: %w", err)
			}
		}
	}
	perBlock := blockSize / frameSize
	if opts.SendOnly {
		// Nothing ever arrives: the smallest ring a batch fits.
		blocks = (opts.BatchSize + perBlock - 1) / perBlock
	}
	req := unix.TpacketReq{
		Block_size: uint32(blockSize),
		Block_nr:   uint32(blocks),
		Frame_size: uint32(frameSize),
		Frame_nr:   uint32(perBlock * blocks),
	}
	if int(req.Frame_nr) < opts.BatchSize {
		return ring{}, fmt.Errorf("ring of %d slots is smaller than the batch size %d", req.Frame_nr, opts.BatchSize)
	}
	if err := unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return ring{}, fmt.Errorf("setsockopt PACKET_RX_RING (%d blocks of %d bytes, %d-byte slots): %w",
			blocks, blockSize, frameSize, err)
	}
	mem, err := unix.Mmap(fd, 0, blockSize*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return ring{}, fmt.Errorf("mmap ring of %d bytes: %w", blockSize*blocks, err)
	}
	r := ring{
		slots: slots{mem: mem, blockSize: blockSize, frameSize: frameSize,
			framesPerBlock: perBlock, frames: int(req.Frame_nr)},
		held: make([]int, 0, opts.BatchSize),
		vnet: opts.Offload,
		fd:   fd,
	}
	if copies {
		r.copyOff = copyOffset(opts.Headroom)
		r.bufs = make([][]byte, opts.CopyBuffers)
		size := copyBufSize(mtu, opts.Headroom)
		for i := range r.bufs {
			r.bufs[i] = make([]byte, size)
		}
	}
	return r, nil
}

// slot returns the bytes of slot i.
func (r *ring) slot(i int) []byte {
	off := r.offset(i)
	return r.mem[off : off+r.frameSize]
}

// collect fills frames with views of ready slots from head on, in arrival
// order, restores stripped VLAN tags in place, gives refused slots straight
// back to the kernel, and records the lent slots in held. With vnet
// headers, offs[i] receives the metadata of frames[i]; a nil offs means the
// caller takes plain frames only: partial checksums are finished in place
// and super-frames refused. A frame whose offload metadata does not
// describe it is refused before anything reads its offsets. It returns the number of frames, their total
// length and the number refused.
func (r *ring) collect(frames [][]byte, offs []platform.Offload) (n, bytes, dropped int) {
	r.empty = false
	for scanned := 0; n < len(frames) && scanned < r.frames; scanned++ {
		i := r.head
		st := r.status(i)
		if st&unix.TP_STATUS_USER == 0 {
			r.empty = true
			break
		}
		if st&unix.TP_STATUS_COPY != 0 && r.used == len(r.bufs) && n > 0 {
			// Every copy buffer is lent: the frame waits for the
			// next call.
			break
		}
		if r.head++; r.head == r.frames {
			r.head = 0
		}
		var f []byte
		var o platform.Offload
		var why int
		copied := st&unix.TP_STATUS_COPY != 0
		if copied {
			f, o, why = r.copy(i)
		} else {
			f, o, why = r.frame(i)
		}
		if why == slotOK && !o.IsPlain() {
			if err := frame.CheckOffload(f, o); err != nil {
				why = slotBadOffload
				if r.badOffload == 0 {
					r.badOffloadErr = err
				}
				r.badOffload++
			}
		}
		if why == slotOK && offs == nil && !o.IsPlain() {
			if o.GSOType != platform.GSONone || frame.FinishChecksum(f, o) != nil {
				why = slotSuperFrame
			}
		}
		if why != slotOK {
			if why == slotTruncated {
				r.truncLen = int(r.hdr(i).Len)
			}
			r.give(i)
			dropped++
			continue
		}
		if copied {
			// The slot holds only the head: give it back now; the
			// frame lives in a copy buffer until the next collect.
			r.give(i)
			r.used++
			frames[n] = f
			if offs != nil {
				offs[n] = o
			}
			n++
			bytes += len(f)
			continue
		}
		if offs != nil {
			offs[n] = o
		}
		frames[n] = f
		n++
		bytes += len(f)
		r.held = append(r.held, i)
	}
	return n, bytes, dropped
}

// frame returns the frame in user-owned slot i, with the tag the kernel
// stripped put back in front of the ethertype, and its offload metadata
// (zero without vnet headers), offsets adjusted for the restored tag.
func (r *ring) frame(i int) ([]byte, platform.Offload, int) {
	h := r.hdr(i)
	s := r.slot(i)
	mac, snap := int(h.Mac), int(h.Snaplen)
	var o platform.Offload
	switch {
	case snap != int(h.Len) || mac+snap > len(s):
		return nil, o, slotTruncated
	case snap < frame.HeaderLen:
		return nil, o, slotRunt
	}
	if r.vnet {
		// The header sits right in front of the MAC header; read it
		// before a restored tag overwrites it.
		if mac-vnetHdrLen < tpacket2HdrLen {
			return nil, o, slotTruncated
		}
		o = frame.DecodeVirtioHdr(s[mac-vnetHdrLen : mac])
	}
	// The slot's header and sockaddr_ll end at tpacket2HdrLen; the
	// headroom starts there, and at least 14+reserve bytes of it are free.
	return restoreTag(s, mac, mac+snap, tpacket2HdrLen, h, o)
}

// copy reads the whole frame of TP_STATUS_COPY slot i from the socket's
// receive queue into the next free copy buffer: the vnet header, then the
// frame (the kernel puts the header first, as in the slot). The tag the
// kernel stripped, which only the slot's header tells, is put back in
// front of the ethertype. The caller gives the slot back.
func (r *ring) copy(i int) ([]byte, platform.Offload, int) {
	h := r.hdr(i)
	var o platform.Offload
	if r.used == len(r.bufs) {
		// No buffer at all (collect stops at a copy slot while it has
		// frames to return, so this is a ring without copies, where
		// the kernel marks none): consume the queued frame anyway, to
		// keep the queue in step with the ring.
		_, _ = unix.Read(r.fd, nil)
		return nil, o, slotTruncated
	}
	b := r.bufs[r.used]
	k, err := unix.Read(r.fd, b[r.copyOff:])
	switch {
	case err != nil || k < vnetHdrLen:
		// EAGAIN: nothing queued for a slot marked as copied. Cannot
		// happen (the kernel queues the copy before it marks the
		// slot); count it as truncated rather than stall.
		return nil, o, slotTruncated
	case k-vnetHdrLen != int(h.Len):
		// The buffer was too small (read(2) truncates silently).
		return nil, o, slotTruncated
	case k-vnetHdrLen < frame.HeaderLen:
		return nil, o, slotRunt
	}
	o = frame.DecodeVirtioHdr(b[r.copyOff:])
	mac := r.copyOff + vnetHdrLen
	return restoreTag(b, mac, r.copyOff+k, 0, h, o)
}

// restoreTag returns s[mac:end] with the tag the kernel stripped (slot
// header h) put back in front of the ethertype, moving the MAC addresses
// left by 4 bytes (no lower than floor), and o with its offsets moved by
// the tag.
func restoreTag(s []byte, mac, end, floor int, h *unix.Tpacket2Hdr, o platform.Offload) ([]byte, platform.Offload, int) {
	if h.Status&unix.TP_STATUS_VLAN_VALID == 0 {
		return s[mac:end:end], o, slotOK
	}
	// The kernel's offsets count from the untagged MAC header.
	if o.Flags&platform.OffloadNeedsCsum != 0 {
		o.CsumStart += frame.TagLen
	}
	if o.HdrLen != 0 {
		o.HdrLen += frame.TagLen
	}
	tpid := uint16(frame.TypeVLAN)
	if h.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
		tpid = h.Vlan_tpid
	}
	if mac-frame.TagLen < floor {
		return nil, o, slotTruncated
	}
	start := mac - frame.TagLen
	copy(s[start:start+12], s[mac:mac+12])
	binary.BigEndian.PutUint16(s[start+12:], tpid)
	binary.BigEndian.PutUint16(s[start+14:], h.Vlan_tci)
	return s[start:end:end], o, slotOK
}

// release gives the slots lent by the last collect back to the kernel.
func (r *ring) release() {
	for _, i := range r.held {
		r.give(i)
	}
	r.held = r.held[:0]
	r.used = 0
}

// unread counts the slots the kernel filled and no read took (after
// release, the lent ones are given back): the frames a close discards.
func (r *ring) unread() int {
	n := 0
	for i := 0; r.mem != nil && i < r.frames; i++ {
		if r.status(i)&unix.TP_STATUS_USER != 0 {
			n++
		}
	}
	return n
}
