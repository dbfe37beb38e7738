package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// sockets are a Port's sockets, their rings and the eventfd, with the
// locks that guard them and the options that say how to read them.
type sockets struct {
	// ifindex is the interface index the socket is bound to.
	ifindex int
	// busyPoll makes an empty ring yield and look again instead of
	// sleeping in ppoll (Options.BusyPoll). Immutable.
	busyPoll bool
	// coalesce is the pause before reading a drained ring
	// (Options.Coalesce); zero for none and with busyPoll. Immutable.
	coalesce unix.Timespec
	// drained is readAll's drained flag for all queues at once, guarded
	// by every rx[i].mu.
	drained bool
	// log receives the rare warnings; immutable.
	log *slog.Logger
	// truncLogged is set once a truncated frame has been logged.
	truncLogged atomic.Bool
	// badOffloadLogged is set once a frame with a bad offload header
	// has been logged.
	badOffloadLogged atomic.Bool
	// fd is the AF_PACKET socket.
	fd int
	// efd is the eventfd Close signals to wake a blocked ReadBatch.
	efd int
	// closed is set first thing by Close; every method checks it under
	// its mutex before it touches fd or the ring.
	closed atomic.Bool
	// closeOnce runs the teardown once.
	closeOnce sync.Once

	// rx are the receive queues: the socket fd and, with Workers, the
	// other sockets of its fanout group. Immutable after Open.
	rx []*rxQueue
	// allPfds are the descriptors ReadBatch polls on a port with several
	// queues (every socket, then the eventfd), guarded by every rx[i].mu.
	allPfds []unix.PollFd
	// next is the queue ReadBatch collects from first on a port with
	// several queues, guarded by every rx[i].mu.
	next int

	// txmu guards msgs and iovs, and keeps Close from closing fd under a
	// sendmmsg.
	txmu sync.Mutex
	// msgs is the preallocated sendmmsg array; msgs[i] points at iovs[i].
	msgs []unix.Mmsghdr
	// iovs is the preallocated iovec array: one per message, or two (the
	// vnet header, the frame) with offload.
	iovs []unix.Iovec
	// vhdrs holds the virtio_net_hdr of each message with offload.
	vhdrs [][vnetHdrLen]byte
	// txr is the TX ring with Options.TXRing (else nil), guarded by
	// txmu; frames too large for its slots go with sendmmsg.
	txr *txRing
	// refusedLogged is set once a frame refused by the TX ring has been
	// logged.
	refusedLogged atomic.Bool

	// ctlmu serialises membership changes and statistics reads, and keeps
	// Close from closing fd under them.
	ctlmu sync.Mutex
}

// rxQueue is one receive socket with its ring.
type rxQueue struct {
	// mu is held by a reader for its whole call, wait included, and by
	// Close while it unmaps the ring: Close waits for the reader to leave.
	mu sync.Mutex
	// fd is the socket (for queue 0 the port's fd, which also sends).
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

// openPort is Open on Linux.
func openPort(name string, opts Options) (*Port, error) {
	opts, err := opts.withDefaults(name)
	if err != nil {
		return nil, err
	}
	ifi, link, err := platform.LookupEthernet(name)
	if err != nil {
		return nil, fmt.Errorf("afpacket %s: %w", name, err)
	}
	iovPerMsg := 1
	if opts.Offload {
		iovPerMsg = 2
	}
	p := &Port{
		name:     name,
		mac:      ifi.HardwareAddr,
		headroom: opts.Headroom,
		batch:    opts.BatchSize,
		offload:  opts.Offload,
		sockets: sockets{
			ifindex:  ifi.Index,
			busyPoll: opts.BusyPoll,
			log:      opts.Logger,
			fd:       -1,
			efd:      -1,
			msgs:     make([]unix.Mmsghdr, opts.BatchSize),
			iovs:     make([]unix.Iovec, iovPerMsg*opts.BatchSize),
		},
	}
	if opts.Offload {
		p.vhdrs = make([][vnetHdrLen]byte, opts.BatchSize)
	}
	if opts.Coalesce > 0 && !opts.BusyPoll {
		p.coalesce = unix.NsecToTimespec(int64(opts.Coalesce))
	}
	p.mtu.Store(int64(ifi.MTU))
	p.link.Store(uint32(link))
	for i := range p.msgs {
		p.msgs[i].Hdr.Iov = &p.iovs[iovPerMsg*i]
		p.msgs[i].Hdr.SetIovlen(iovPerMsg)
		if opts.Offload {
			p.iovs[2*i].Base = &p.vhdrs[i][0]
			p.iovs[2*i].SetLen(vnetHdrLen)
		}
	}
	if err := p.open(ifi.MTU, opts); err != nil {
		p.closeFDs()
		return nil, fmt.Errorf("afpacket %s: %w", name, err)
	}
	if opts.TXRing {
		t, err := openTXRing(p.ifindex, ifi.MTU, opts)
		if err != nil {
			p.closeFDs()
			return nil, fmt.Errorf("afpacket %s: %w", name, err)
		}
		p.txr = t
	}
	return p, nil
}

// open makes the sockets, their rings and the eventfd. Each socket is
// created for no protocol, so nothing queues on it until bind, after its
// ring exists. With Workers, every socket binds behind a filter that drops
// everything, joins the fanout group, and only then loses the filter: no
// socket ever sees a frame that another one of the group also gets.
func (p *Port) open(mtu int, opts Options) error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	p.efd = efd
	n := max(opts.Workers, 1)
	for i := range n {
		q := &rxQueue{fd: -1}
		p.rx = append(p.rx, q)
		if err := p.openQueue(q, mtu, opts); err != nil {
			return err
		}
		if i == 0 {
			p.fd = q.fd
		}
		if n > 1 {
			if err := attachDropAll(q.fd); err != nil {
				return fmt.Errorf("setsockopt SO_ATTACH_FILTER: %w", err)
			}
		}
		sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: p.ifindex}
		if opts.SendOnly {
			// Protocol 0: the socket joins no receive path at all.
			sa.Protocol = 0
		}
		if err := unix.Bind(q.fd, sa); err != nil {
			return fmt.Errorf("bind: %w", err)
		}
		q.pfds = [2]unix.PollFd{
			{Fd: int32(q.fd), Events: unix.POLLIN},
			{Fd: int32(efd), Events: unix.POLLIN},
		}
		p.allPfds = append(p.allPfds, unix.PollFd{Fd: int32(q.fd), Events: unix.POLLIN})
	}
	p.allPfds = append(p.allPfds, unix.PollFd{Fd: int32(efd), Events: unix.POLLIN})
	if opts.QdiscBypass {
		// The socket that sends with sendmmsg.
		if err := unix.SetsockoptInt(p.fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
			return fmt.Errorf("setsockopt PACKET_QDISC_BYPASS: %w", err)
		}
	}
	if n == 1 {
		return nil
	}
	// Hash mode keeps a flow on one socket, so in order; DEFRAG hashes
	// the fragments of a datagram as a whole; the group, not each
	// socket, ignores outgoing frames (PACKET_IGNORE_OUTGOING does not
	// apply to a fanout member); the kernel picks an unused group id.
	flags := unix.PACKET_FANOUT_FLAG_DEFRAG | unix.PACKET_FANOUT_FLAG_IGNORE_OUTGOING
	if err := unix.SetsockoptInt(p.rx[0].fd, unix.SOL_PACKET, unix.PACKET_FANOUT,
		(unix.PACKET_FANOUT_HASH|flags|unix.PACKET_FANOUT_FLAG_UNIQUEID)<<16); err != nil {
		return fmt.Errorf("setsockopt PACKET_FANOUT: %w", err)
	}
	arg, err := unix.GetsockoptInt(p.rx[0].fd, unix.SOL_PACKET, unix.PACKET_FANOUT)
	if err != nil {
		return fmt.Errorf("getsockopt PACKET_FANOUT: %w", err)
	}
	for _, q := range p.rx[1:] {
		if err := unix.SetsockoptInt(q.fd, unix.SOL_PACKET, unix.PACKET_FANOUT,
			arg&0xffff|(unix.PACKET_FANOUT_HASH|flags)<<16); err != nil {
			return fmt.Errorf("setsockopt PACKET_FANOUT (join group %d): %w", arg&0xffff, err)
		}
	}
	for _, q := range p.rx {
		if err := unix.SetsockoptInt(q.fd, unix.SOL_SOCKET, unix.SO_DETACH_FILTER, 0); err != nil {
			return fmt.Errorf("setsockopt SO_DETACH_FILTER: %w", err)
		}
	}
	return nil
}

// attachDropAll gives the socket a classic BPF filter that accepts
// nothing (a single "ret #0").
func attachDropAll(fd int) error {
	filter := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
}

// openQueue makes one receive socket and its ring, not bound yet.
func (p *Port) openQueue(q *rxQueue, mtu int, opts Options) error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	q.fd = fd
	sockopts := []struct {
		name     string
		opt, val int
	}{
		{"PACKET_VERSION", unix.PACKET_VERSION, unix.TPACKET_V2},
		{"PACKET_RESERVE", unix.PACKET_RESERVE, opts.Headroom},
		{"PACKET_IGNORE_OUTGOING", unix.PACKET_IGNORE_OUTGOING, 1},
	}
	if opts.Offload {
		// Before the ring: the kernel refuses it (EBUSY) once a ring
		// exists.
		sockopts = append(sockopts, struct {
			name     string
			opt, val int
		}{"PACKET_VNET_HDR", unix.PACKET_VNET_HDR, 1})
	}
	for _, o := range sockopts {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, o.opt, o.val); err != nil {
			return fmt.Errorf("setsockopt %s: %w", o.name, err)
		}
	}

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
			return fmt.Errorf("setsockopt PACKET_COPY_THRESH: %w", err)
		}
		// The kernel doubles the value. SO_RCVBUFFORCE needs
		// CAP_NET_ADMIN; without it SO_RCVBUF is capped by
		// net.core.rmem_max.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, opts.CopyQueue/2); err != nil {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, opts.CopyQueue/2); err != nil {
				return fmt.Errorf("setsockopt SO_RCVBUF: %w", err)
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
		return fmt.Errorf("ring of %d slots is smaller than the batch size %d", req.Frame_nr, opts.BatchSize)
	}
	if err := unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return fmt.Errorf("setsockopt PACKET_RX_RING (%d blocks of %d bytes, %d-byte slots): %w",
			blocks, blockSize, frameSize, err)
	}
	mem, err := unix.Mmap(fd, 0, blockSize*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap ring of %d bytes: %w", blockSize*blocks, err)
	}
	q.ring = ring{
		slots: slots{mem: mem, blockSize: blockSize, frameSize: frameSize,
			framesPerBlock: perBlock, frames: int(req.Frame_nr)},
		held: make([]int, 0, opts.BatchSize),
		vnet: opts.Offload,
		fd:   fd,
	}
	if copies {
		q.ring.copyOff = copyOffset(opts.Headroom)
		q.ring.bufs = make([][]byte, opts.CopyBuffers)
		size := copyBufSize(mtu, opts.Headroom)
		for i := range q.ring.bufs {
			q.ring.bufs[i] = make([]byte, size)
		}
	}

	return nil
}

// htons converts a protocol number to network byte order.
func htons(v uint16) uint16 { return v<<8 | v>>8 }

// closeFDs unmaps the ring and closes the descriptors that are open.
func (p *Port) closeFDs() error {
	var errs []error
	for _, q := range p.rx {
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
	}
	p.fd = -1 // rx[0]'s
	if p.txr != nil {
		if err := p.txr.close(); err != nil {
			errs = append(errs, err)
		}
		p.txr = nil
	}
	for _, fd := range []*int{&p.efd} {
		if *fd >= 0 {
			if err := unix.Close(*fd); err != nil {
				errs = append(errs, fmt.Errorf("close: %w", err))
			}
			*fd = -1
		}
	}
	return errors.Join(errs...)
}

// queues is RxQueues.
func (p *Port) queues() int { return len(p.rx) }

// readQueueAt is ReadQueue once q is checked.
func (p *Port) readQueueAt(q int, frames [][]byte, offs []platform.Offload) (int, error) {
	return p.readQueue(p.rx[q], frames, offs)
}

// read is ReadBatch: offs nil for plain frames only.
func (p *Port) read(frames [][]byte, offs []platform.Offload) (int, error) {
	if len(p.rx) == 1 {
		return p.readQueue(p.rx[0], frames, offs)
	}
	return p.readAll(frames, offs)
}

// readQueue reads one queue, blocking in ppoll while its ring is empty.
func (p *Port) readQueue(q *rxQueue, frames [][]byte, offs []platform.Offload) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	q.ring.release()
	frames = frames[:min(len(frames), p.batch)]
	if len(frames) == 0 {
		return 0, nil
	}
	if q.drained {
		p.pause()
	}
	for {
		if n, bytes := p.collect(q, frames, offs); n > 0 {
			q.drained = short(n, bytes, q.ring.empty)
			return n, nil
		}
		q.drained = false
		if err := p.idle(q.pfds[:]); err != nil {
			return 0, err
		}
	}
}

// readAll reads every queue of a port with several, starting with a
// different one each call, blocking in ppoll while all are empty.
func (p *Port) readAll(frames [][]byte, offs []platform.Offload) (int, error) {
	for _, q := range p.rx {
		q.mu.Lock()
	}
	defer p.unlockAll()
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	for _, q := range p.rx {
		q.ring.release()
	}
	frames = frames[:min(len(frames), p.batch)]
	if len(frames) == 0 {
		return 0, nil
	}
	if p.drained {
		p.pause()
	}
	for {
		n, bytes, empty := 0, 0, true
		for i := range p.rx {
			var o []platform.Offload
			if offs != nil {
				o = offs[n:]
			}
			q := p.rx[(p.next+i)%len(p.rx)]
			k, b := p.collect(q, frames[n:], o)
			n, bytes, empty = n+k, bytes+b, empty && q.ring.empty
			if n == len(frames) {
				empty = false
				break
			}
		}
		p.next = (p.next + 1) % len(p.rx)
		if n > 0 {
			p.drained = short(n, bytes, empty)
			return n, nil
		}
		p.drained = false
		if err := p.idle(p.allPfds); err != nil {
			return 0, err
		}
	}
}

// unlockAll releases every queue's mutex.
func (p *Port) unlockAll() {
	for _, q := range p.rx {
		q.mu.Unlock()
	}
}

// collect takes ready frames from q's ring into frames and counts them;
// it returns their number and bytes. q.mu is held.
func (p *Port) collect(q *rxQueue, frames [][]byte, offs []platform.Offload) (int, int) {
	n, bytes, dropped := q.ring.collect(frames, offs)
	if dropped > 0 {
		p.counters.AddRxDropped(dropped)
		if q.ring.truncLen > 0 {
			p.noteTruncated(&q.ring)
		}
		if q.ring.badOffload > 0 {
			p.noteBadOffload(&q.ring)
		}
	}
	if n > 0 {
		p.counters.AddRx(n, bytes)
	}
	return n, bytes
}

// noteTruncated logs, once per port, that a frame did not fit its ring
// slot and was dropped. The ring's queue mutex is held.
func (p *Port) noteTruncated(r *ring) {
	n := r.truncLen
	r.truncLen = 0
	if p.truncLogged.CompareAndSwap(false, true) {
		p.log.Warn("afpacket: received frame larger than the ring slot dropped (counted in rx_dropped; logged once per port)",
			"port", p.name, "len", n, "slot", r.frameSize, "offload", p.offload,
			"hint", "a GSO super-frame without offload, BIG TCP (gso_max_size > 65536), an MTU raised after the port opened, or (offload) a full copy queue")
	}
}

// noteBadOffload counts the frames the ring refused for a bad offload
// header and logs, once per port, why the first was. The ring's queue
// mutex is held.
func (p *Port) noteBadOffload(r *ring) {
	n, err := r.badOffload, r.badOffloadErr
	r.badOffload, r.badOffloadErr = 0, nil
	p.counters.AddRxBadOffload(n)
	if p.badOffloadLogged.CompareAndSwap(false, true) {
		p.log.Warn("afpacket: received frame whose offload header does not describe it dropped (counted in rx_bad_offload; logged once per port)",
			"port", p.name, "reason", err,
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
func (p *Port) pause() {
	if p.coalesce.Sec != 0 || p.coalesce.Nsec != 0 {
		_ = unix.Nanosleep(&p.coalesce, nil)
	}
}

// idle is what a reader does when its rings are empty: with BusyPoll it
// yields to other goroutines and returns, to look again; otherwise it
// waits in ppoll.
func (p *Port) idle(pfds []unix.PollFd) error {
	if !p.busyPoll {
		return p.wait(pfds)
	}
	if p.closed.Load() {
		return platform.ErrClosed
	}
	runtime.Gosched()
	return nil
}

// wait blocks until one of the sockets in pfds (every entry but the last)
// is readable or Close signals the eventfd (the last entry).
func (p *Port) wait(pfds []unix.PollFd) error {
	for i := range pfds {
		pfds[i].Revents = 0
	}
	_, errno := ppoll(pfds)
	if p.closed.Load() {
		return platform.ErrClosed
	}
	switch errno {
	case 0, unix.EINTR:
	default:
		p.counters.AddError()
		return fmt.Errorf("afpacket %s: ppoll: %w", p.name, errno)
	}
	for _, pfd := range pfds[:len(pfds)-1] {
		if pfd.Revents&unix.POLLERR != 0 {
			// The interface went down (ENETDOWN): reading SO_ERROR
			// clears the error, or ppoll would return at once forever.
			_, _ = unix.GetsockoptInt(int(pfd.Fd), unix.SOL_SOCKET, unix.SO_ERROR)
			p.counters.AddError()
		}
	}
	return nil
}

// write is WriteBatch: offs nil for plain frames.
func (p *Port) write(frames [][]byte, offs []platform.Offload) (int, error) {
	p.txmu.Lock()
	defer p.txmu.Unlock()
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	if p.Link() != platform.LinkUp {
		p.counters.AddTxDropped(len(frames))
		return 0, nil
	}
	sent := 0
	var err error
	for len(frames) > 0 {
		k := min(len(frames), p.batch)
		var o []platform.Offload
		if offs != nil {
			o, offs = offs[:k], offs[k:]
		}
		n, e := p.send(frames[:k], o)
		sent += n
		if err == nil {
			err = e
		}
		frames = frames[k:]
	}
	return sent, err
}

// send sends at most BatchSize frames, with their offloads when offs is
// not nil, through the TX ring or with sendmmsg. txmu is held.
func (p *Port) send(frames [][]byte, offs []platform.Offload) (int, error) {
	if p.txr != nil {
		return p.sendRing(frames, offs)
	}
	return p.sendMmsg(frames, offs)
}

// sendable reports whether f with offload o may be sent: at least an
// Ethernet header, segments within the MTU, offloads only on a port that
// has them.
func (p *Port) sendable(f []byte, o platform.Offload, mtu int) bool {
	return len(f) >= frame.HeaderLen && (p.offload || o.IsPlain()) &&
		frame.SegmentPayloadLen(f, o) <= mtu
}

// sendMmsg sends at most BatchSize frames, with their offloads when offs
// is not nil, with sendmmsg. txmu is held.
func (p *Port) sendMmsg(frames [][]byte, offs []platform.Offload) (int, error) {
	mtu := p.MTU()
	k, dropped := 0, 0
	// fi is the index of the frame's iovec: behind the vnet header's
	// with offload.
	stride, fi := 1, 0
	if p.offload {
		stride, fi = 2, 1
	}
	for i, f := range frames {
		var o platform.Offload
		if offs != nil {
			o = offs[i]
		}
		if !p.sendable(f, o, mtu) {
			dropped++
			continue
		}
		if p.offload {
			putVnetHdr(p.vhdrs[k][:], o)
		}
		p.iovs[stride*k+fi].Base = &f[0]
		p.iovs[stride*k+fi].SetLen(len(f))
		k++
	}
	sent, bytes := 0, 0
	var err error
	for i := 0; i < k; {
		n, errno := sendmmsg(p.fd, p.msgs[i:k], unix.MSG_DONTWAIT)
		if errno == 0 && n > 0 {
			for j := i; j < i+n; j++ {
				bytes += int(p.iovs[stride*j+fi].Len)
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
			p.counters.AddError()
			dropped += k - i
			i = k
		case unix.EMSGSIZE, unix.EINVAL:
			// Too large for the kernel's rule (a full-size frame with an
			// 802.1ad tag gets no allowance), or a virtio_net_hdr the
			// kernel refuses: drop this one, go on.
			p.counters.AddError()
			dropped++
			i++
		default:
			p.counters.AddError()
			if err == nil {
				err = fmt.Errorf("afpacket %s: sendmmsg: %w", p.name, errno)
			}
			dropped++
			i++
		}
	}
	for j := 0; j < k; j++ {
		p.iovs[stride*j+fi].Base = nil // keep no caller memory alive
	}
	if sent > 0 {
		p.counters.AddTx(sent, bytes)
	}
	if dropped > 0 {
		p.counters.AddTxDropped(dropped)
	}
	return sent, err
}

// refreshStats is readStats for Counters, unless the port is closed
// (Close read them last).
func (p *Port) refreshStats() {
	p.ctlmu.Lock()
	defer p.ctlmu.Unlock()
	if !p.closed.Load() {
		p.readStats()
	}
}

// readStats adds the kernel's ring drops since the last read. ctlmu is
// held and fd open.
func (p *Port) readStats() {
	for _, q := range p.rx {
		st, err := unix.GetsockoptTpacketStats(q.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		if err != nil {
			p.counters.AddError()
			continue
		}
		p.counters.AddRingDropped(uint64(st.Drops))
	}
}

// setPromisc is SetPromisc.
func (p *Port) setPromisc(on bool) error {
	return p.setFlag(&p.promisc, on, unix.PACKET_MR_PROMISC, "promiscuous")
}

// setAllMulti is SetAllMulti.
func (p *Port) setAllMulti(on bool) error {
	return p.setFlag(&p.allmulti, on, unix.PACKET_MR_ALLMULTI, "all-multicast")
}

// setFlag changes a counted, socket-owned membership of type typ.
func (p *Port) setFlag(state *atomic.Bool, on bool, typ uint16, what string) error {
	p.ctlmu.Lock()
	defer p.ctlmu.Unlock()
	if p.closed.Load() {
		if !on {
			return nil
		}
		return fmt.Errorf("afpacket %s: %s on: %w", p.name, what, platform.ErrClosed)
	}
	if state.Load() == on {
		return nil
	}
	if err := p.membership(on, typ, nil); err != nil {
		return fmt.Errorf("afpacket %s: %s %s: %w", p.name, what, onOff(on), err)
	}
	state.Store(on)
	return nil
}

// joinGroup is JoinMulticast.
func (p *Port) joinGroup(mac net.HardwareAddr) error {
	if len(mac) != 6 || mac[0]&1 == 0 {
		return fmt.Errorf("afpacket %s: join multicast %v: not a multicast MAC address", p.name, mac)
	}
	p.ctlmu.Lock()
	defer p.ctlmu.Unlock()
	if p.closed.Load() {
		return fmt.Errorf("afpacket %s: join multicast %v: %w", p.name, mac, platform.ErrClosed)
	}
	if err := p.membership(true, unix.PACKET_MR_MULTICAST, mac); err != nil {
		return fmt.Errorf("afpacket %s: join multicast %v: %w", p.name, mac, err)
	}
	return nil
}

// membership adds or drops a packet_mreq on the socket. ctlmu is held.
func (p *Port) membership(add bool, typ uint16, addr []byte) error {
	mreq := unix.PacketMreq{Ifindex: int32(p.ifindex), Type: typ, Alen: uint16(len(addr))}
	copy(mreq.Address[:], addr)
	opt := unix.PACKET_DROP_MEMBERSHIP
	if add {
		opt = unix.PACKET_ADD_MEMBERSHIP
	}
	if err := unix.SetsockoptPacketMreq(p.fd, unix.SOL_PACKET, opt, &mreq); err != nil {
		p.counters.AddError()
		return err
	}
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// close is Close.
func (p *Port) close() error {
	var err error
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		if _, e := unix.Write(p.efd, one[:]); e != nil {
			err = fmt.Errorf("wake reader: %w", e)
		}
		for _, q := range p.rx {
			q.mu.Lock()
		}
		defer p.unlockAll()
		p.txmu.Lock()
		defer p.txmu.Unlock()
		p.ctlmu.Lock()
		defer p.ctlmu.Unlock()
		p.readStats()
		for _, q := range p.rx {
			q.ring.release()
		}
		err = errors.Join(err, p.closeFDs())
		p.promisc.Store(false)
		p.allmulti.Store(false)
		if err != nil {
			err = fmt.Errorf("afpacket %s: close: %w", p.name, err)
		}
	})
	return err
}
