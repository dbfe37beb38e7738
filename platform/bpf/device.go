//go:build linux || openbsd || freebsd

package bpf

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// device is the descriptor of a Port and what reads and sends through
// it: the I/O half of a Port, whose methods are in this file. It does no
// ioctl, so that it also runs on Linux, where the tests drive it over a
// SOCK_SEQPACKET socketpair: one message is one bpf buffer on the way in
// and one frame on the way out, as with a bpf descriptor.
type device struct {
	// log receives the rare warnings; immutable.
	log *slog.Logger
	// corruptLogged is set once an unreadable read buffer has been logged.
	corruptLogged atomic.Bool
	// fd is the descriptor: it reads and sends.
	fd int
	// wake is the pipe Close writes to (wake[1]) to wake a ReadBatch
	// blocked in poll on wake[0].
	wake [2]int
	// closed is set first thing by Close; every method checks it under
	// its mutex before it touches a descriptor.
	closed atomic.Bool

	// rxmu is held by ReadBatch for its whole call, poll included, and by
	// Close: Close waits for the reader to leave.
	rxmu sync.Mutex
	// rb holds the last read's records, guarded by rxmu.
	rb *recordBuffer
	// pfds are the descriptors ReadBatch polls (fd, wake[0]), guarded by
	// rxmu.
	pfds [2]unix.PollFd

	// txmu is held shared by WriteBatch and exclusively by Close, so the
	// descriptor is not closed under a write; writes run concurrently
	// (the kernel takes each write(2) whole).
	txmu sync.RWMutex
}

// init readies p to read records laid out as layout, bufSize bytes per
// read, from the descriptor fd (already non-blocking), and makes the
// wake-up pipe. On error the caller closes what is open (closeDevice).
func (p *Port) init(fd int, layout hdrLayout, bufSize int) error {
	p.fd = fd
	p.rb = newRecordBuffer(layout, bufSize)
	if err := unix.Pipe2(p.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	p.pfds = [2]unix.PollFd{
		{Fd: int32(fd), Events: unix.POLLIN},
		{Fd: int32(p.wake[0]), Events: unix.POLLIN},
	}
	return nil
}

// readWait is ReadBatch, readNow ReadReady.
func (p *Port) readWait(frames [][]byte) (int, error) { return p.read(frames, true) }
func (p *Port) readNow(frames [][]byte) (int, error)  { return p.read(frames, false) }

// read takes frames from the read buffer, reading the next buffer when it
// is drained; with wait set it blocks in poll until one comes, else it
// returns 0 frames.
func (p *Port) read(frames [][]byte, wait bool) (int, error) {
	p.rxmu.Lock()
	defer p.rxmu.Unlock()
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	frames = frames[:min(len(frames), p.BatchSize())]
	if len(frames) == 0 {
		return 0, nil
	}
	for {
		if n := p.collect(frames); n > 0 {
			return n, nil
		}
		// The buffer is drained: read the next one. A bpf read must ask
		// for exactly the buffer size.
		n, err := unix.Read(p.fd, p.rb.buf)
		switch {
		case err == nil && n > 0:
			p.rb.filled(n)
			continue
		case err == nil, err == unix.EAGAIN, err == unix.EINTR:
			// Nothing yet (EWOULDBLOCK is EAGAIN).
		default:
			p.counters.AddError()
			return 0, fmt.Errorf("bpf %s: read: %w", p.Name(), err)
		}
		if !wait {
			return 0, nil
		}
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
}

// collect takes frames from the read buffer and counts them. rxmu is held.
func (p *Port) collect(frames [][]byte) int {
	n, bytes, skipped, err := p.rb.collect(frames)
	if skipped > 0 {
		p.counters.AddRxDropped(skipped)
	}
	if err != nil {
		p.counters.AddError()
		if p.corruptLogged.CompareAndSwap(false, true) {
			p.log.Warn("bpf: unreadable record in the read buffer, rest of the buffer dropped (counted in errors; logged once per port)",
				"port", p.Name(), "err", err)
		}
	}
	if n > 0 {
		p.counters.AddRx(n, bytes)
	}
	return n
}

// wait blocks until the descriptor is readable or Close writes to the
// wake-up pipe. rxmu is held.
func (p *Port) wait() error {
	p.pfds[0].Revents, p.pfds[1].Revents = 0, 0
	_, err := unix.Poll(p.pfds[:], -1)
	if p.closed.Load() {
		return platform.ErrClosed
	}
	if err != nil && err != unix.EINTR {
		p.counters.AddError()
		return fmt.Errorf("bpf %s: poll: %w", p.Name(), err)
	}
	return nil
}

// write is WriteBatch.
func (p *Port) write(frames [][]byte) (int, error) {
	p.txmu.RLock()
	defer p.txmu.RUnlock()
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	if p.Link() != platform.LinkUp {
		p.counters.AddTxDropped(len(frames))
		return 0, nil
	}
	mtu := p.MTU()
	sent, bytes, dropped := 0, 0, 0
	var err error
frames:
	for i, f := range frames {
		if len(f) < frame.HeaderLen || len(f)-frame.HeaderLen > mtu {
			dropped++
			continue
		}
		_, e := unix.Write(p.fd, f)
		for e == unix.EINTR {
			_, e = unix.Write(p.fd, f)
		}
		switch e {
		case nil:
			sent++
			bytes += len(f)
		case unix.ENOBUFS, unix.EAGAIN:
			// The send queue is full.
			dropped++
		case unix.ENETDOWN, unix.ENXIO, unix.EIO:
			// The interface is down or gone: drop the rest.
			p.counters.AddError()
			dropped += len(frames) - i
			break frames
		case unix.EMSGSIZE:
			p.counters.AddError()
			dropped++
		default:
			p.counters.AddError()
			dropped++
			if err == nil {
				err = fmt.Errorf("bpf %s: write: %w", p.Name(), e)
			}
		}
	}
	if sent > 0 {
		p.counters.AddTx(sent, bytes)
	}
	if dropped > 0 {
		p.counters.AddTxDropped(dropped)
	}
	return sent, err
}

// shutdown starts a Close: it marks p closed, wakes a blocked reader, and
// takes rxmu and txmu, waiting for the reader and the writers to leave.
// The caller closes the descriptors and then calls unlock.
func (p *Port) shutdown() error {
	p.closed.Store(true)
	var err error
	if _, e := unix.Write(p.wake[1], []byte{1}); e != nil {
		err = fmt.Errorf("wake reader: %w", e)
	}
	p.rxmu.Lock()
	p.txmu.Lock()
	return err
}

// unlock ends a Close that shutdown began.
func (p *Port) unlock() {
	p.txmu.Unlock()
	p.rxmu.Unlock()
}

// closeDevice closes the descriptor and the pipe, those that are open.
func (p *Port) closeDevice() error {
	var errs []error
	for _, fd := range []*int{&p.fd, &p.wake[0], &p.wake[1]} {
		if *fd >= 0 {
			if err := unix.Close(*fd); err != nil {
				errs = append(errs, fmt.Errorf("close: %w", err))
			}
			*fd = -1
		}
	}
	return errors.Join(errs...)
}
