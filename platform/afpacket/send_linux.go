package afpacket

import (
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
//  3. The transmitter Open chose sends the rest: the TX ring
//     (txring_linux.go) copies each frame into a slot behind its
//     virtio_net_hdr and kicks the kernel once; sendmmsg (mmsg_linux.go)
//     hands the kernel one message per frame, pointing at it.
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
	s.frames = make([][]byte, 0, st.batch)
	s.offs = make([]platform.Offload, 0, st.batch)
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
	if platform.LinkState(s.st.link.Load()) != platform.LinkUp {
		s.st.counters.AddTxDropped(len(frames))
		return 0, nil
	}
	sent := 0
	var err error
	for len(frames) > 0 {
		k := min(len(frames), s.st.batch)
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
	mtu := int(s.st.mtu.Load())
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
	return len(f) >= frame.HeaderLen && (offload || o.IsPlain()) &&
		frame.SegmentPayloadLen(f, o) <= mtu
}

// close closes the transmitter, if Open made one. mu is held.
func (s *sender) close() error {
	if s.t == nil {
		return nil
	}
	return s.t.close()
}
