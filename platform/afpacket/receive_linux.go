package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// The receive side. A frame takes these steps:
//
//  1. The kernel copies it into the next free slot of a receive socket's
//     ring (rxring_linux.go), or, a frame too large for a slot with
//     Offload, copies its head there and the whole frame onto the socket's
//     receive queue; with Workers the fanout group picks the socket by
//     flow hash.
//  2. A reader in ReadBatch (every queue in turn) or ReadQueue (one
//     queue) gives back the slots of its previous call, and pauses for
//     Coalesce if that call emptied the ring with a short batch.
//  3. collect takes the ready slots in order: it puts a stripped tag back
//     in place, checks the offload header, and counts what it refuses.
//  4. With nothing ready, the reader waits in ppoll on the sockets and the
//     eventfd Close signals, or with BusyPoll yields and looks again.
//  5. The frames go back as views into the ring (or a copy buffer), valid
//     until the reader's next call or Close.

// receiver is a port's receive side: its queues and the eventfd that
// wakes their readers.
type receiver struct {
	// st is the port's state; immutable.
	st *portState
	// queues are the receive queues: the first socket and, with Workers,
	// the other sockets of its fanout group. Immutable after Open.
	queues []*rxQueue
	// efd is the eventfd Close signals to wake a blocked reader.
	efd int
	// busyPoll makes an empty ring yield and look again instead of
	// sleeping in ppoll (Options.BusyPoll). Immutable.
	busyPoll bool
	// coalesce is the pause before reading a drained ring
	// (Options.Coalesce); zero for none and with busyPoll. Immutable.
	coalesce unix.Timespec
	// allPfds are the descriptors ReadBatch polls on a port with several
	// queues (every socket, then the eventfd), guarded by every queue's mu.
	allPfds []unix.PollFd
	// next is the queue ReadBatch collects from first on a port with
	// several queues, guarded by every queue's mu.
	next int
	// drained is readAll's drained flag for all queues at once, guarded
	// by every queue's mu.
	drained bool
	// truncLogged is set once a truncated frame has been logged.
	truncLogged atomic.Bool
	// badOffloadLogged is set once a frame with a bad offload header
	// has been logged.
	badOffloadLogged atomic.Bool
}

// rxQueue is one receive socket with its ring.
type rxQueue struct {
	// mu is held by a reader for its whole call, wait included, and by
	// Close while it unmaps the ring: Close waits for the reader to leave.
	mu sync.Mutex
	// fd is the socket (for queue 0 the one that also sends with
	// sendmmsg and holds the memberships).
	fd int
	// ring is the receive ring, guarded by mu.
	ring ring
	// pfds are the descriptors ReadQueue polls (socket, eventfd), guarded
	// by mu.
	pfds [2]unix.PollFd
	// drained is set when the queue's last read emptied its ring with a
	// short batch (Options.Coalesce), guarded by mu.
	drained bool
}

// init makes the receive side of queues, which it then owns, and its
// eventfd.
func (r *receiver) init(st *portState, queues []*rxQueue, opts Options) error {
	r.st, r.queues, r.efd, r.busyPoll = st, queues, -1, opts.BusyPoll
	if opts.Coalesce > 0 && !opts.BusyPoll {
		r.coalesce = unix.NsecToTimespec(int64(opts.Coalesce))
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	r.efd = efd
	for _, q := range queues {
		q.pfds = [2]unix.PollFd{
			{Fd: int32(q.fd), Events: unix.POLLIN},
			{Fd: int32(efd), Events: unix.POLLIN},
		}
		r.allPfds = append(r.allPfds, unix.PollFd{Fd: int32(q.fd), Events: unix.POLLIN})
	}
	r.allPfds = append(r.allPfds, unix.PollFd{Fd: int32(efd), Events: unix.POLLIN})
	return nil
}

// numQueues is RxQueues.
func (r *receiver) numQueues() int { return len(r.queues) }

// readQueue is ReadQueue once i is checked.
func (r *receiver) readQueue(i int, frames [][]byte, offs []platform.Offload) (int, error) {
	return r.readOne(r.queues[i], frames, offs, true)
}

// read is ReadBatch (wait set) or ReadReady: offs nil for plain frames
// only.
func (r *receiver) read(frames [][]byte, offs []platform.Offload, wait bool) (int, error) {
	if len(r.queues) == 1 {
		return r.readOne(r.queues[0], frames, offs, wait)
	}
	return r.readAll(frames, offs, wait)
}

// readOne reads one queue; with wait set it blocks in ppoll while its
// ring is empty, else it returns 0 frames.
func (r *receiver) readOne(q *rxQueue, frames [][]byte, offs []platform.Offload, wait bool) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.st.closed.Load() {
		return 0, platform.ErrClosed
	}
	q.ring.release()
	frames = frames[:min(len(frames), r.st.BatchSize())]
	if len(frames) == 0 {
		return 0, nil
	}
	if q.drained {
		r.pause()
	}
	for {
		if n, bytes := r.collect(q, frames, offs); n > 0 {
			q.drained = short(n, bytes, q.ring.empty)
			return n, nil
		}
		q.drained = false
		if !wait {
			return 0, nil
		}
		if err := r.idle(q.pfds[:]); err != nil {
			return 0, err
		}
	}
}

// readAll reads every queue of a port with several, starting with a
// different one each call; with wait set it blocks in ppoll while all are
// empty, else it returns 0 frames.
func (r *receiver) readAll(frames [][]byte, offs []platform.Offload, wait bool) (int, error) {
	r.lockAll()
	defer r.unlockAll()
	if r.st.closed.Load() {
		return 0, platform.ErrClosed
	}
	for _, q := range r.queues {
		q.ring.release()
	}
	frames = frames[:min(len(frames), r.st.BatchSize())]
	if len(frames) == 0 {
		return 0, nil
	}
	if r.drained {
		r.pause()
	}
	for {
		n, bytes, empty := 0, 0, true
		for i := range r.queues {
			var o []platform.Offload
			if offs != nil {
				o = offs[n:]
			}
			q := r.queues[(r.next+i)%len(r.queues)]
			k, b := r.collect(q, frames[n:], o)
			n, bytes, empty = n+k, bytes+b, empty && q.ring.empty
			if n == len(frames) {
				empty = false
				break
			}
		}
		r.next = (r.next + 1) % len(r.queues)
		if n > 0 {
			r.drained = short(n, bytes, empty)
			return n, nil
		}
		r.drained = false
		if !wait {
			return 0, nil
		}
		if err := r.idle(r.allPfds); err != nil {
			return 0, err
		}
	}
}

// lockAll takes every queue's mutex, in order.
func (r *receiver) lockAll() {
	for _, q := range r.queues {
		q.mu.Lock()
	}
}

// unlockAll releases every queue's mutex.
func (r *receiver) unlockAll() {
	for _, q := range r.queues {
		q.mu.Unlock()
	}
}

// collect takes ready frames from q's ring into frames and counts them;
// it returns their number and bytes. q.mu is held.
func (r *receiver) collect(q *rxQueue, frames [][]byte, offs []platform.Offload) (int, int) {
	n, bytes, dropped := q.ring.collect(frames, offs)
	if dropped > 0 {
		r.st.counters.AddRxDropped(dropped)
		if q.ring.truncLen > 0 {
			r.noteTruncated(&q.ring)
		}
		if q.ring.badOffload > 0 {
			r.noteBadOffload(&q.ring)
		}
	}
	if n > 0 {
		r.st.counters.AddRx(n, bytes)
	}
	return n, bytes
}

// noteTruncated logs, once per port, that a frame did not fit its ring
// slot and was dropped. The ring's queue mutex is held.
func (r *receiver) noteTruncated(g *ring) {
	n := g.truncLen
	g.truncLen = 0
	if r.truncLogged.CompareAndSwap(false, true) {
		r.st.log.Warn("afpacket: received frame larger than the ring slot dropped (counted in rx_dropped; logged once per port)",
			"port", r.st.Name(), "len", n, "slot", g.frameSize, "offload", r.st.offload,
			"hint", "a GSO super-frame without offload, BIG TCP (gso_max_size > 65536), an MTU raised after the port opened, or (offload) a full copy queue")
	}
}

// noteBadOffload counts the frames the ring refused for a bad offload
// header and logs, once per port, why the first was. The ring's queue
// mutex is held.
func (r *receiver) noteBadOffload(g *ring) {
	n, err := g.badOffload, g.badOffloadErr
	g.badOffload, g.badOffloadErr = 0, nil
	r.st.counters.AddRxBadOffload(n)
	if r.badOffloadLogged.CompareAndSwap(false, true) {
		r.st.log.Warn("afpacket: received frame whose offload header does not describe it dropped (counted in rx_bad_offload; logged once per port)",
			"port", r.st.Name(), "reason", err,
			"hint", "the interface's writer (a VM's TAP, a crafted packet) sent a bad virtio_net_hdr")
	}
}

// coalesceBytes is the most a batch may hold for the next read to pause
// (Options.Coalesce): a batch that empties the ring with less than this
// is a short one. A bigger batch, such as one TSO super-frame of up to
// 64 KiB, already spreads its wakeup over many segments. Pausing after
// super-frames also delayed TCP with the hosts' default offloads: make
// bench QUICK measured 6.1 against 6.6–6.8 Gb/s without coalescing.
const coalesceBytes = 32 << 10

// short reports whether a batch of n frames and bytes that did (empty)
// or did not empty its ring makes the next read pause: it emptied the
// ring with at least two frames and less than coalesceBytes. A lone frame
// is not coalesced: frames that come one per wakeup (a TCP flow's ACKs,
// a ping) arrive further apart than a wakeup takes, so pausing only
// delays them. When frames come faster than the reader wakes, its reads
// find several.
func short(n, bytes int, empty bool) bool {
	return empty && n >= 2 && bytes < coalesceBytes
}

// pause sleeps Options.Coalesce before a reader looks at a ring its
// last read drained, so that the frames arriving meanwhile come in one
// batch. nanosleep goes through Syscall: the Go scheduler runs other
// goroutines meanwhile.
func (r *receiver) pause() {
	if r.coalesce.Sec != 0 || r.coalesce.Nsec != 0 {
		_ = unix.Nanosleep(&r.coalesce, nil)
	}
}

// idle is what a reader does when its rings are empty: with BusyPoll it
// yields to other goroutines and returns, to look again; otherwise it
// waits in ppoll.
func (r *receiver) idle(pfds []unix.PollFd) error {
	if !r.busyPoll {
		return r.wait(pfds)
	}
	if r.st.closed.Load() {
		return platform.ErrClosed
	}
	runtime.Gosched()
	return nil
}

// wait blocks until one of the sockets in pfds (every entry but the last)
// is readable or Close signals the eventfd (the last entry).
func (r *receiver) wait(pfds []unix.PollFd) error {
	for i := range pfds {
		pfds[i].Revents = 0
	}
	_, errno := ppoll(pfds)
	if r.st.closed.Load() {
		return platform.ErrClosed
	}
	switch errno {
	case 0, unix.EINTR:
	default:
		r.st.counters.AddError()
		return fmt.Errorf("afpacket %s: ppoll: %w", r.st.Name(), errno)
	}
	for _, pfd := range pfds[:len(pfds)-1] {
		if pfd.Revents&unix.POLLERR != 0 {
			// The interface went down (ENETDOWN): reading SO_ERROR
			// clears the error, or ppoll would return at once forever.
			_, _ = unix.GetsockoptInt(int(pfd.Fd), unix.SOL_SOCKET, unix.SO_ERROR)
			r.st.counters.AddError()
		}
	}
	return nil
}

// readStats adds the kernel's ring drops since the last read. The control
// path's mutex is held and the sockets are open.
func (r *receiver) readStats() {
	for _, q := range r.queues {
		st, err := unix.GetsockoptTpacketStats(q.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		if err != nil {
			r.st.counters.AddError()
			continue
		}
		r.st.counters.AddRingDropped(uint64(st.Drops))
	}
}

// wake signals the eventfd, so that a reader blocked in ppoll returns.
func (r *receiver) wake() error {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := unix.Write(r.efd, one[:]); err != nil {
		return fmt.Errorf("wake reader: %w", err)
	}
	return nil
}

// close gives the lent slots back, counts the frames still unread in the
// rings as ring drops (the frames in flight a close loses, as when the
// daemon reopens a port for a new MTU), unmaps the rings and closes the
// sockets and the eventfd. Every queue's mutex is held, or no reader
// exists yet.
func (r *receiver) close() error {
	var errs []error
	for _, q := range r.queues {
		q.ring.release()
		r.st.counters.AddRingDropped(uint64(q.ring.unread()))
		errs = append(errs, q.close())
	}
	if r.efd >= 0 {
		if err := unix.Close(r.efd); err != nil {
			errs = append(errs, fmt.Errorf("close: %w", err))
		}
		r.efd = -1
	}
	return errors.Join(errs...)
}

// close unmaps the queue's ring and closes its socket.
func (q *rxQueue) close() error {
	var errs []error
	if q.ring.mem != nil {
		if err := unix.Munmap(q.ring.mem); err != nil {
			errs = append(errs, fmt.Errorf("munmap: %w", err))
		}
		q.ring.mem = nil
	}
	if q.fd >= 0 {
		if err := unix.Close(q.fd); err != nil {
			errs = append(errs, fmt.Errorf("close: %w", err))
		}
		q.fd = -1
	}
	return errors.Join(errs...)
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
