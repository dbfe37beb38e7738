package afpacket

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// The send side. A batch of frames takes these steps through WriteBatch:
//
//  1. The sender takes its mutex (several readers may send to one port at
//     once); while the link is down it drops the whole batch.
//  2. It cuts the batch into parts of at most BatchSize frames and drops,
//     from each part, the frames that may not be sent (sendable): shorter
//     than an Ethernet header, over the MTU, or offloaded on a port
//     without Offload.
//  3. The transmitter Open chose sends the rest: the TX ring (txRing.send;
//     its layout and setup are in txring_linux.go) copies each frame into
//     a slot behind its virtio_net_hdr and kicks the kernel once; sendmmsg
//     (mmsg.send) hands the kernel one message per frame, pointing at it.
//  4. The transmitter counts what the kernel took, and drops what it could
//     not: a full queue or ring, a header the kernel refuses.

// transmitter sends a port's frames: a TX ring or sendmmsg, chosen once
// at Open (Options.TXRing). The sender's mutex is held for every call.
type transmitter interface {
	// send sends at most BatchSize frames, every one sendable, with their
	// offloads when offs is not nil, and counts what it sends and what it
	// drops. It never blocks, and keeps no reference to frames.
	send(frames [][]byte, offs []platform.Offload) (int, error)
	// room returns how many frames, up to max, send would take now
	// without dropping one for a full queue; -1 when it cannot tell.
	room(max int) int
	// fit returns how many of frames, from the first, send would take
	// now without dropping one for a full ring or a full send buffer;
	// -1 when it cannot tell.
	fit(frames [][]byte) int
	// close releases what the transmitter owns.
	close() error
}

// openTransmitter makes the transmitter opts ask for: a TX ring on a
// socket of its own, or sendmmsg on fd, the first receive socket; fd's
// send buffer, which both use for sendmmsg, gets opts.SendBuffer if set.
func openTransmitter(st *portState, fd, ifindex, mtu int, opts Options) (transmitter, error) {
	if opts.SendBuffer > 0 {
		setSendBuffer(fd, opts.SendBuffer)
	}
	if opts.TXRing {
		return openTXRing(st, fd, ifindex, mtu, opts)
	}
	return newMmsg(st, fd, opts.BatchSize), nil
}

// setSendBuffer makes fd's send buffer n bytes as the kernel counts them
// (it doubles what it is given, for its bookkeeping): forced with
// CAP_NET_ADMIN, else as far as net.core.wmem_max allows.
func setSendBuffer(fd, n int) {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, n/2); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, n/2)
	}
}

// sender is a port's send side: the checks every frame passes, then the
// transmitter.
type sender struct {
	// st is the port's state; immutable.
	st *portState
	// mu serialises senders, and keeps Close from closing a socket under
	// a send.
	mu sync.Mutex
	// t is the transmitter, guarded by mu.
	t transmitter
	// frames and offs hold, for one call of t.send, the sendable frames
	// of a batch with some that are not, and their offloads; guarded by
	// mu.
	frames [][]byte
	offs   []platform.Offload
}

// init makes the send side, sending through t, which it then owns.
func (s *sender) init(st *portState, t transmitter) {
	s.st, s.t = st, t
	s.frames = make([][]byte, 0, st.BatchSize())
	s.offs = make([]platform.Offload, 0, st.BatchSize())
}

// room is TxRoom.
func (s *sender) room(max int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed.Load() {
		return 0 // the ring may be unmapped
	}
	return s.t.room(max)
}

// fit is TxFit.
func (s *sender) fit(frames [][]byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed.Load() {
		return 0 // the ring may be unmapped
	}
	return s.t.fit(frames)
}

// write is WriteBatch: offs nil for plain frames.
func (s *sender) write(frames [][]byte, offs []platform.Offload) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.closed.Load() {
		return 0, platform.ErrClosed
	}
	if s.st.Link() != platform.LinkUp {
		s.st.counters.AddTxDropped(len(frames))
		return 0, nil
	}
	sent := 0
	var err error
	for len(frames) > 0 {
		k := min(len(frames), s.st.BatchSize())
		var o []platform.Offload
		if offs != nil {
			o, offs = offs[:k], offs[k:]
		}
		f, o := s.admit(frames[:k], o)
		n, e := s.t.send(f, o)
		if len(f) < k {
			clear(f) // admit's copies: keep no caller memory alive
		}
		sent += n
		if err == nil {
			err = e
		}
		frames = frames[k:]
	}
	return sent, err
}

// admit returns frames and offs without the frames that may not be sent,
// which it counts as dropped: frames and offs themselves when every frame
// may, else copies in s.frames and s.offs. mu is held.
func (s *sender) admit(frames [][]byte, offs []platform.Offload) ([][]byte, []platform.Offload) {
	mtu := s.st.MTU()
	for i, f := range frames {
		var o platform.Offload
		if offs != nil {
			o = offs[i]
		}
		if !sendable(f, o, mtu, s.st.offload) {
			return s.admitFrom(i, frames, offs, mtu)
		}
	}
	return frames, offs
}

// admitFrom is admit once frame bad has been found unsendable: it copies
// the frames before it and the sendable ones after it.
func (s *sender) admitFrom(bad int, frames [][]byte, offs []platform.Offload, mtu int) ([][]byte, []platform.Offload) {
	kf := append(s.frames[:0], frames[:bad]...)
	var ko []platform.Offload
	if offs != nil {
		ko = append(s.offs[:0], offs[:bad]...)
	}
	dropped := 1
	for i := bad + 1; i < len(frames); i++ {
		var o platform.Offload
		if offs != nil {
			o = offs[i]
		}
		if !sendable(frames[i], o, mtu, s.st.offload) {
			dropped++
			continue
		}
		kf = append(kf, frames[i])
		if offs != nil {
			ko = append(ko, o)
		}
	}
	s.st.counters.AddTxDropped(dropped)
	return kf, ko
}

// sendable reports whether f with offload o may be sent: at least an
// Ethernet header, segments within the MTU, offloads only on a port that
// has them (offload).
func sendable(f []byte, o platform.Offload, mtu int, offload bool) bool {
	return (offload || o.IsPlain()) && frame.FitsMTU(f, o, mtu)
}

// close closes the transmitter, if Open made one. mu is held.
func (s *sender) close() error {
	if s.t == nil {
		return nil
	}
	return s.t.close()
}

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
				"port", t.st.Name(), "err", errno.Error(), "hint", "a virtio_net_hdr the kernel refuses (an unknown GSO type, a checksum outside the frame)")
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
		err = fmt.Errorf("afpacket %s: send (TX ring): %w", t.st.Name(), errno)
	}
	return sent, bytes, dropped, err
}

// mmsg is the transmitter that sends with sendmmsg(2) on the port's first
// receive socket: one message per frame, its iovec pointing at the
// caller's frame (behind one for the virtio_net_hdr with Offload), so the
// kernel copies each frame once, into its socket buffer. The TX ring
// sends its frames too large for a slot with one too.
type mmsg struct {
	// st is the port's state; immutable.
	st *portState
	// fd is the sending socket, which the receive side owns.
	fd int
	// msgs is the preallocated sendmmsg array; msgs[i] points at the
	// iovecs of message i.
	msgs []unix.Mmsghdr
	// iovs is the preallocated iovec array: one per message, or two (the
	// vnet header, the frame) with Offload.
	iovs []unix.Iovec
	// vhdrs holds the virtio_net_hdr of each message with Offload.
	vhdrs [][vnetHdrLen]byte
}

// newMmsg makes a sendmmsg transmitter on fd for up to n frames a call.
func newMmsg(st *portState, fd, n int) *mmsg {
	iovPerMsg := 1
	if st.offload {
		iovPerMsg = 2
	}
	m := &mmsg{
		st:   st,
		fd:   fd,
		msgs: make([]unix.Mmsghdr, n),
		iovs: make([]unix.Iovec, iovPerMsg*n),
	}
	if st.offload {
		m.vhdrs = make([][vnetHdrLen]byte, n)
	}
	for i := range m.msgs {
		m.msgs[i].Hdr.Iov = &m.iovs[iovPerMsg*i]
		m.msgs[i].Hdr.SetIovlen(iovPerMsg)
		if st.offload {
			m.iovs[2*i].Base = &m.vhdrs[i][0]
			m.iovs[2*i].SetLen(vnetHdrLen)
		}
	}
	return m
}

// send implements transmitter with one sendmmsg, or more when the kernel
// takes part of the batch.
func (m *mmsg) send(frames [][]byte, offs []platform.Offload) (int, error) {
	// fi is the index of the frame's iovec: behind the vnet header's
	// with Offload.
	stride, fi := 1, 0
	if m.st.offload {
		stride, fi = 2, 1
	}
	k := len(frames)
	for i, f := range frames {
		if m.st.offload {
			var o platform.Offload
			if offs != nil {
				o = offs[i]
			}
			o.EncodeVirtioHdr(m.vhdrs[i][:])
		}
		m.iovs[stride*i+fi].Base = &f[0]
		m.iovs[stride*i+fi].SetLen(len(f))
	}
	sent, bytes, dropped := 0, 0, 0
	var err error
	for i := 0; i < k; {
		n, errno := sendmmsg(m.fd, m.msgs[i:k], unix.MSG_DONTWAIT)
		if errno == 0 && n > 0 {
			for j := i; j < i+n; j++ {
				bytes += int(m.iovs[stride*j+fi].Len)
			}
			sent += n
			i += n
			continue
		}
		switch errno {
		case unix.EINTR:
			continue
		case 0, unix.EAGAIN, unix.ENOBUFS:
			// Queue full: the rest waits for no one.
			dropped += k - i
			i = k
		case unix.ENETDOWN, unix.ENXIO, unix.ENODEV:
			// The link went away under us: drop the rest.
			m.st.counters.AddError()
			dropped += k - i
			i = k
		case unix.EMSGSIZE, unix.EINVAL:
			// Too large for the kernel's rule (a full-size frame with an
			// 802.1ad tag gets no allowance), or a virtio_net_hdr the
			// kernel refuses: drop this one, go on.
			m.st.counters.AddError()
			dropped++
			i++
		default:
			m.st.counters.AddError()
			if err == nil {
				err = fmt.Errorf("afpacket %s: sendmmsg: %w", m.st.Name(), errno)
			}
			dropped++
			i++
		}
	}
	for j := 0; j < k; j++ {
		m.iovs[stride*j+fi].Base = nil // keep no caller memory alive
	}
	if sent > 0 {
		m.st.counters.AddTx(sent, bytes)
	}
	if dropped > 0 {
		m.st.counters.AddTxDropped(dropped)
	}
	return sent, err
}

// room returns -1: the kernel's queue says it is full only by refusing.
func (m *mmsg) room(int) int { return -1 }

// fit implements transmitter: -1, as room.
func (m *mmsg) fit([][]byte) int { return -1 }

// close implements transmitter: the socket belongs to the receive side.
func (m *mmsg) close() error { return nil }
