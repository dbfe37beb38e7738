package afpacket

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
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

// next returns the slot at head if the kernel has given it back
// (TP_STATUS_AVAILABLE), and -1 if the ring is full: the kernel has not
// yet freed the frame sent from there (TP_STATUS_SENDING). Unsent slots
// are never found at head (rewind).
func (t *txRing) next() int {
	// A freed slot may carry timestamp bits (TP_STATUS_TS_SOFTWARE)
	// beside TP_STATUS_AVAILABLE, which is 0.
	const busy = unix.TP_STATUS_SEND_REQUEST | unix.TP_STATUS_SENDING | unix.TP_STATUS_WRONG_FORMAT
	if t.status(t.head)&busy != 0 {
		return -1
	}
	return t.head
}

// room returns how many slots from head on, up to max, the kernel has
// given back: the frames (each fitting a slot) send takes now.
func (t *txRing) room(max int) int {
	const busy = unix.TP_STATUS_SEND_REQUEST | unix.TP_STATUS_SENDING | unix.TP_STATUS_WRONG_FORMAT
	n := 0
	for i := t.head; n < min(max, t.frames) && t.status(i)&busy == 0; n++ {
		if i++; i == t.frames {
			i = 0
		}
	}
	return n
}

// skbCharge estimates what the kernel charges a send buffer for an skb
// that carries an n-byte frame from sendmmsg: the frame in whole pages
// behind a linear head, and the skb's own structures (skb truesize).
func skbCharge(n int) int { return (n+4095)&^4095 + 1024 }

// fit implements transmitter: the frames that fit a slot need a free
// slot each, counted from head as room does; the others go with big,
// whose socket the kernel lets allocate (sock_alloc_send_pskb) while
// what it holds is below its send buffer, so fit admits them while the
// bytes in flight (SIOCOUTQ), plus its estimate for those admitted
// before, stay below it. With no send buffer known it counts slots only.
func (t *txRing) fit(frames [][]byte) int {
	const busy = unix.TP_STATUS_SEND_REQUEST | unix.TP_STATUS_SENDING | unix.TP_STATUS_WRONG_FORMAT
	slot, slots := t.head, 0
	inFlight := -1
	for k, f := range frames {
		if !t.fits(len(f)) {
			if t.bigBuf <= 0 {
				continue
			}
			if inFlight < 0 {
				if inFlight = outq(t.big.fd); inFlight < 0 {
					t.bigBuf = 0 // the kernel will not say: slots only
					continue
				}
			}
			if inFlight >= t.bigBuf {
				return k
			}
			inFlight += skbCharge(len(f))
			continue
		}
		if slots == t.frames || t.status(slot)&busy != 0 {
			return k
		}
		slots++
		if slot++; slot == t.frames {
			slot = 0
		}
	}
	return len(frames)
}

// put copies f, behind o encoded as a virtio_net_hdr, into slot i, marks
// it for sending and moves head on. The header's hdr_len asks the kernel
// to copy the first txLinearLen bytes (at least o.HdrLen), so the whole
// frame.
func (t *txRing) put(i int, f []byte, o platform.Offload) {
	off := t.offset(i)
	data := t.mem[off+txDataOffset : off+t.frameSize]
	o.HdrLen = max(o.HdrLen, uint16(min(len(f), txLinearLen)))
	o.EncodeVirtioHdr(data[:vnetHdrLen])
	n := vnetHdrLen + copy(data[vnetHdrLen:], f)
	t.setLen(i, n)
	t.request(i)
	if t.head++; t.head == t.frames {
		t.head = 0
	}
}

// rewind takes back the slots the kernel left unsent after a kick and
// returns how many frames and bytes they held, and whether the first of
// them was refused (TP_STATUS_WRONG_FORMAT). The kernel sends slots in
// order and stops at the first one it cannot send, which it leaves
// marked TP_STATUS_SEND_REQUEST (a full send buffer, a dropped transmit,
// the interface down) or TP_STATUS_WRONG_FORMAT (a frame it refuses);
// so the unsent slots are the last ones filled, and its own position is
// the first of them. Marking them available and moving head back there
// keeps both positions equal: nothing waits in the ring once WriteBatch
// returns, and a refused slot never blocks the ones behind it.
func (t *txRing) rewind() (frames, bytes int, refused bool) {
	for range t.frames {
		i := t.head - 1
		if i < 0 {
			i = t.frames - 1
		}
		st := t.status(i)
		if st != unix.TP_STATUS_SEND_REQUEST && st != unix.TP_STATUS_WRONG_FORMAT {
			break
		}
		frames++
		bytes += t.dataLen(i) - vnetHdrLen
		t.release(i)
		t.head = i
		if st == unix.TP_STATUS_WRONG_FORMAT {
			// The kernel stopped here: every slot before it was sent.
			refused = true
			break
		}
	}
	return frames, bytes, refused
}

// accepts reports whether the kernel's TX ring takes f with offload o:
// the checks of tpacket_snd that sendable (send_linux.go) does not make,
// so that a slot is rarely marked TP_STATUS_WRONG_FORMAT: the checksum
// range and the header length must lie within the frame
// (net/packet/af_packet.c, __packet_snd_vnet_parse). With vnet headers
// the kernel applies no MTU rule of its own; sendable's is the one.
func accepts(f []byte, o platform.Offload) bool {
	if o.Flags&platform.OffloadNeedsCsum != 0 && int(o.CsumStart)+int(o.CsumOffset)+2 > len(f) {
		return false
	}
	return int(o.HdrLen) <= len(f)
}

// send implements transmitter: it copies each frame into the next free
// slot and kicks the kernel once at the end. A frame larger than a slot
// goes with sendmmsg (big), after a kick for the frames before it. When
// the slot at head is still in flight, send kicks what it has filled and
// looks again; if the ring is still full, the frame is dropped and
// counted (WriteBatch never waits).
func (t *txRing) send(frames [][]byte, offs []platform.Offload) (int, error) {
	sent, bytes, dropped := 0, 0, 0
	queued, qbytes := 0, 0
	var err error
	flush := func() {
		s, b, d, e := t.sendQueued(queued, qbytes)
		sent, bytes, dropped = sent+s, bytes+b, dropped+d
		queued, qbytes = 0, 0
		if err == nil {
			err = e
		}
	}
	bigSent := 0
	for i, f := range frames {
		var o platform.Offload
		if offs != nil {
			o = offs[i]
		}
		if !accepts(f, o) {
			dropped++
			continue
		}
		if !t.fits(len(f)) {
			flush()
			var e error
			var n int
			if offs != nil {
				n, e = t.big.send(frames[i:i+1], offs[i:i+1])
			} else {
				n, e = t.big.send(frames[i:i+1], nil)
			}
			bigSent += n
			if err == nil {
				err = e
			}
			continue
		}
		slot := t.next()
		if slot < 0 && queued > 0 {
			flush()
			slot = t.next()
		}
		if slot < 0 {
			dropped++
			continue
		}
		t.put(slot, f, o)
		queued++
		qbytes += len(f)
	}
	flush()
	if sent > 0 {
		t.st.counters.AddTx(sent, bytes)
	}
	if dropped > 0 {
		t.st.counters.AddTxDropped(dropped)
	}
	return sent + bigSent, err
}

// sendQueued kicks the kernel to send the queued frames (qbytes bytes)
// filled since the last kick, takes back what it left unsent (rewind),
// and returns how many frames and bytes were sent and how many dropped.
func (t *txRing) sendQueued(queued, qbytes int) (sent, bytes, dropped int, err error) {
	if queued == 0 {
		return 0, 0, 0, nil
	}
	var errno unix.Errno
	for {
		if _, errno = kick(t.fd); errno != unix.EINTR {
			break
		}
	}
	n, b, refused := t.rewind()
	sent, bytes, dropped = queued-n, qbytes-b, n
	if refused {
		t.st.counters.AddError()
		if t.refusedLogged.CompareAndSwap(false, true) {
			t.st.log.Warn("afpacket: TX ring refused a frame (TP_STATUS_WRONG_FORMAT); it and the frames behind it were dropped (counted in tx_dropped; logged once per port)",
				"port", t.st.name, "err", errno.Error(), "hint", "a virtio_net_hdr the kernel refuses (an unknown GSO type, a checksum outside the frame)")
		}
		return sent, bytes, dropped, nil
	}
	switch errno {
	case 0, unix.EAGAIN, unix.ENOBUFS:
		// Sent, or some left unsent for a full send buffer or a
		// dropped transmit: rewind dropped those.
	case unix.ENETDOWN, unix.ENXIO, unix.ENODEV:
		// The link went away under us.
		t.st.counters.AddError()
	default:
		t.st.counters.AddError()
		err = fmt.Errorf("afpacket %s: send (TX ring): %w", t.st.name, errno)
	}
	return sent, bytes, dropped, err
}
