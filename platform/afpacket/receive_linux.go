package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

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
	return r.readOne(r.queues[i], frames, offs)
}

// read is ReadBatch: offs nil for plain frames only.
func (r *receiver) read(frames [][]byte, offs []platform.Offload) (int, error) {
	if len(r.queues) == 1 {
		return r.readOne(r.queues[0], frames, offs)
	}
	return r.readAll(frames, offs)
}

// readOne reads one queue, blocking in ppoll while its ring is empty.
func (r *receiver) readOne(q *rxQueue, frames [][]byte, offs []platform.Offload) (int, error) {
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
		if err := r.idle(q.pfds[:]); err != nil {
			return 0, err
		}
	}
}

// readAll reads every queue of a port with several, starting with a
// different one each call, blocking in ppoll while all are empty.
func (r *receiver) readAll(frames [][]byte, offs []platform.Offload) (int, error) {
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

// close gives the lent slots back, unmaps the rings and closes the
// sockets and the eventfd. Every queue's mutex is held, or no reader
// exists yet.
func (r *receiver) close() error {
	var errs []error
	for _, q := range r.queues {
		q.ring.release()
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
