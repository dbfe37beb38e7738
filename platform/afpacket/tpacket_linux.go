package afpacket

import (
	"github.com/swctl/swctl/frame"
	"golang.org/x/sys/unix"
)

// This file holds what the receive ring (rxring_linux.go), the TX ring
// (txring_linux.go) and sendmmsg (send_linux.go) share with the kernel:
// the TPACKET_V2 slot layout and the virtio_net_hdr.

// TPACKET_ALIGN rounds x up to TPACKET_ALIGNMENT (linux/if_packet.h).
func tpacketAlign(x int) int {
	return (x + unix.TPACKET_ALIGNMENT - 1) &^ (unix.TPACKET_ALIGNMENT - 1)
}

// slots is the layout of a mapped TPACKET_V2 ring, receive or transmit:
// slot i lives in block i/framesPerBlock at offset
// (i%framesPerBlock)*frameSize.
type slots struct {
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
}

// offset returns the byte offset of slot i in mem.
func (s *slots) offset(i int) int {
	return (i/s.framesPerBlock)*s.blockSize + (i%s.framesPerBlock)*s.frameSize
}

// vnetHdrLen is the size of struct virtio_net_hdr
// (include/uapi/linux/virtio_net.h), which the kernel writes right in
// front of the MAC header of every frame in the slot when PACKET_VNET_HDR
// is on (net/packet/af_packet.c, tpacket_rcv: netoff grows by it). Its
// 16-bit fields are in the host's byte order (vio_le(): the legacy virtio
// rule); frame.DecodeVirtioHdr and Offload.EncodeVirtioHdr read and write
// it.
const vnetHdrLen = frame.VirtioHdrLen
