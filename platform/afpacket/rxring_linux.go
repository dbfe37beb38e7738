package afpacket

import (
	"fmt"

	"github.com/swctl/swctl/frame"
	"golang.org/x/sys/unix"
)

// This file is the receive ring's geometry and setup; receive_linux.go
// reads it (ring.collect turns the slots the kernel filled into frames).

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
