package afpacket

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"golang.org/x/sys/unix"
)

// txDataOffset is where tpacket_snd looks for the data of a TPACKET_V2 TX
// slot without PACKET_TX_HAS_OFF: right behind the aligned tpacket2_hdr
// (net/packet/af_packet.c, tpacket_parse_header: tp_hdrlen less the
// sockaddr_ll). With PACKET_VNET_HDR the data starts with the
// virtio_net_hdr, and tp_len counts it.
var txDataOffset = tpacketAlign(unix.SizeofTpacket2Hdr)

// txFrameSizeFor returns the TX slot size for an interface MTU: header,
// vnet header, Ethernet header, two tags, the MTU.
func txFrameSizeFor(mtu int) int {
	return tpacketAlign(txDataOffset + vnetHdrLen + frame.HeaderLen + maxTags + mtu)
}

// txLinearLen is the most bytes of a frame the kernel copies out of a TX
// slot into the socket buffer (the vnet header's hdr_len): every frame a
// slot holds. The kernel would rather leave what it does not copy in the
// ring, attached to the buffer as page fragments (zero copy), and without
// the hint it copies only the 14-byte Ethernet header; but on veth every
// receiver then pulls the headers out of the fragments, which costs more
// than the copy: 1514-byte frames took 654 ns of the sender's CPU each
// with the whole frame copied, 933 ns with 128 bytes copied (medians of
// 4, BenchmarkWriteBatch).
const txLinearLen = 0xffff

// txRing is a TPACKET_V2 TX ring on a socket of its own, bound to the
// interface for no protocol (so nothing is ever queued on it for
// reading), with PACKET_VNET_HDR whether the port has Offload or not: a
// virtio_net_hdr in front of each frame tells the kernel how much of it
// to copy into the socket buffer (txLinearLen), and a plain frame gets a
// header with no offload. It is a transmitter: send fills slots from
// head on and kicks the kernel with one send(2), which sends every slot
// marked TP_STATUS_SEND_REQUEST in ring order; the kernel marks a slot
// TP_STATUS_SENDING while its frame is in flight (the skb points into the
// ring) and TP_STATUS_AVAILABLE again when the skb is freed. The sender's
// mutex guards everything here.
type txRing struct {
	// st is the port's state; immutable.
	st *portState
	// fd is the sending socket.
	fd int
	slots
	// head is the next slot WriteBatch fills. The kernel sends in the
	// same order, so a slot that is not available at head means the
	// ring is full.
	head int
	// maxData is the most bytes of data (vnet header included) a slot
	// holds.
	maxData int
	// big sends the frames too large for a slot (super-frames with
	// Offload), one at a time, with sendmmsg on the first receive socket.
	big *mmsg
	// bigBuf is the send buffer of big's socket as the kernel counts it
	// (SO_SNDBUF), read at open; 0 if unknown.
	bigBuf int
	// refusedLogged is set once a frame refused by the ring has been
	// logged.
	refusedLogged atomic.Bool
}

// openTXRing makes the sending socket of a port with Options.TXRing and
// its ring, bound to ifindex; frames too large for a slot go with
// sendmmsg on bigFD.
func openTXRing(st *portState, bigFD, ifindex, mtu int, opts Options) (*txRing, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("TX ring: socket: %w", err)
	}
	t := &txRing{st: st, fd: fd, big: newMmsg(st, bigFD, 1)}
	if n, err := unix.GetsockoptInt(bigFD, unix.SOL_SOCKET, unix.SO_SNDBUF); err == nil {
		t.bigBuf = n
	}
	if err := t.setup(ifindex, mtu, opts); err != nil {
		t.close()
		return nil, fmt.Errorf("TX ring: %w", err)
	}
	return t, nil
}

// setup sets the socket's options, makes and maps the ring and binds.
func (t *txRing) setup(ifindex, mtu int, opts Options) error {
	if err := setPacketOptions(t.fd, []packetOption{
		{"PACKET_VERSION", unix.PACKET_VERSION, unix.TPACKET_V2, true},
		// Before the ring: the kernel refuses it (EBUSY) once a ring
		// exists.
		{"PACKET_VNET_HDR", unix.PACKET_VNET_HDR, 1, true},
		{"PACKET_QDISC_BYPASS", unix.PACKET_QDISC_BYPASS, 1, opts.QdiscBypass},
	}); err != nil {
		return err
	}
	t.frameSize = txFrameSizeFor(mtu)
	page := unix.Getpagesize()
	t.blockSize = (max(opts.BlockSize, t.frameSize) + page - 1) / page * page
	t.framesPerBlock = t.blockSize / t.frameSize
	blocks := (opts.TXRingFrames + t.framesPerBlock - 1) / t.framesPerBlock
	t.frames = blocks * t.framesPerBlock
	t.maxData = t.frameSize - txDataOffset
	req := unix.TpacketReq{
		Block_size: uint32(t.blockSize),
		Block_nr:   uint32(blocks),
		Frame_size: uint32(t.frameSize),
		Frame_nr:   uint32(t.frames),
	}
	if err := unix.SetsockoptTpacketReq(t.fd, unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
		return fmt.Errorf("setsockopt PACKET_TX_RING (%d blocks of %d bytes, %d-byte slots): %w",
			blocks, t.blockSize, t.frameSize, err)
	}
	// Room in the send buffer for every slot in flight: the kernel
	// charges each skb with its frame (the data stays in the ring) and
	// stops at a full buffer, leaving the rest for the next kick.
	setSendBuffer(t.fd, t.frames*(t.frameSize+1024))
	mem, err := unix.Mmap(t.fd, 0, t.blockSize*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap TX ring of %d bytes: %w", t.blockSize*blocks, err)
	}
	t.mem = mem
	// Protocol 0: the socket sends on ifindex and receives nothing.
	if err := unix.Bind(t.fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}

// close implements transmitter: it unmaps the ring and closes its socket.
func (t *txRing) close() error {
	var errs []error
	if t.mem != nil {
		if err := unix.Munmap(t.mem); err != nil {
			errs = append(errs, fmt.Errorf("munmap TX ring: %w", err))
		}
		t.mem = nil
	}
	if t.fd >= 0 {
		if err := unix.Close(t.fd); err != nil {
			errs = append(errs, fmt.Errorf("close TX socket: %w", err))
		}
		t.fd = -1
	}
	return errors.Join(errs...)
}

// fits reports whether a frame of n bytes fits a slot.
func (t *txRing) fits(n int) bool { return vnetHdrLen+n <= t.maxData }
