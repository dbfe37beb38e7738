//go:build linux || openbsd || freebsd

package tap

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// pollFD is one entry of the poll set.
type pollFD = unix.PollFd

// ready allocates each receive queue's slots (for frames up to the MTU
// Create read back, and at least minFrameRoom), sets the poll sets to the
// queues' descriptors and wakeRead (what Close makes readable), and the
// initial link state. p.rxq holds the queues' descriptors.
func (p *Port) ready(opts Options, batch, wakeRead int) {
	p.frameRoom = max(p.MTU()+14+4, minFrameRoom)
	if p.offload {
		// A virtio_net_hdr, then up to a 64 KiB super-frame.
		p.frameRoom = frame.VirtioHdrLen + maxSuperFrame
	}
	wake := pollFD{Fd: int32(wakeRead), Events: unix.POLLIN}
	p.pollAll = make([]pollFD, 0, len(p.rxq)+1)
	for i := range p.rxq {
		q := &p.rxq[i]
		q.bufs = make([][]byte, batch)
		for j := range q.bufs {
			q.bufs[j] = make([]byte, Headroom+p.frameRoom+1)
		}
		q.pollFDs = [2]pollFD{{Fd: int32(q.fd), Events: unix.POLLIN}, wake}
		p.pollAll = append(p.pollAll, q.pollFDs[0])
	}
	p.pollAll = append(p.pollAll, wake)
	if opts.Up {
		p.link.Store(uint32(platform.LinkUp))
	} else {
		p.link.Store(uint32(platform.LinkDown))
	}
}

// readFrom reads frames from queue only, or, with only < 0, from the
// first queue that has some (starting after the one read last): it
// returns how many and the queue they came from. It blocks in poll until
// a frame or Close.
func (p *Port) readFrom(frames [][]byte, only int) (n, q int, err error) {
	if p.closed.Load() {
		return 0, 0, platform.ErrClosed
	}
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	want := min(len(frames), len(p.rxq[0].bufs))
	if want == 0 {
		return 0, 0, nil
	}
	fds := p.pollAll
	if only >= 0 {
		fds = p.rxq[only].pollFDs[:]
	}
	for {
		if p.closed.Load() {
			return 0, 0, platform.ErrClosed
		}
		for i := range len(p.rxq) {
			q = (p.nextQ + i) % len(p.rxq)
			if only >= 0 {
				q = only
			}
			if n, err = p.readReady(&p.rxq[q], frames[:want]); n > 0 || err != nil {
				if only < 0 {
					p.nextQ = q + 1
				}
				return n, q, err
			}
			if only >= 0 {
				break
			}
		}
		// Nothing ready: sleep in poll (a blocking system call, so
		// the scheduler runs other goroutines) until a frame or Close.
		for i := range fds {
			fds[i].Revents = 0
		}
		if err := p.poll(fds); err != nil && err != unix.EINTR {
			p.counters.AddError()
			return 0, 0, fmt.Errorf("tap %s: %s: %w", p.name, pollCall, err)
		}
		if fds[len(fds)-1].Revents != 0 {
			return 0, 0, platform.ErrClosed
		}
		for _, fd := range fds[:len(fds)-1] {
			if fd.Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 && fd.Revents&unix.POLLIN == 0 {
				p.counters.AddError()
				return 0, 0, fmt.Errorf("tap %s: %s: revents %#x on the tap descriptor", p.name, pollCall, fd.Revents)
			}
		}
	}
}

// readReady reads frames that are ready on queue q without blocking, one
// slot each: frames[i] is read into q.bufs[i], behind its virtio_net_hdr
// with Options.Offload (readOffload decodes it there).
func (p *Port) readReady(q *rxQueue, frames [][]byte) (int, error) {
	hdr := 0
	if p.offload {
		hdr = frame.VirtioHdrLen
	}
	n := 0
	for n < len(frames) {
		buf := q.bufs[n]
		r, err := unix.Read(q.fd, buf[Headroom:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return n, nil
		case err != nil:
			p.counters.AddError()
			if n > 0 {
				return n, nil
			}
			return 0, fmt.Errorf("tap %s: read: %w", p.name, err)
		case r > p.frameRoom:
			// Longer than any frame the MTU allows: the host raised
			// the MTU past our buffers and the kernel truncated it.
			p.counters.AddRxDropped(1)
			continue
		case r < hdr+frame.HeaderLen:
			p.counters.AddRxDropped(1)
			continue
		}
		frames[n] = buf[Headroom+hdr : Headroom+r]
		p.counters.AddRx(1, r-hdr)
		n++
	}
	return n, nil
}

// rlockOpen takes fdMu shared and reports true unless the port is closed
// (then it holds nothing): the caller may use fd until it releases fdMu.
func (p *Port) rlockOpen() bool {
	if p.closed.Load() {
		return false
	}
	p.fdMu.RLock()
	if p.closed.Load() {
		p.fdMu.RUnlock()
		return false
	}
	return true
}

func (p *Port) writeBatch(frames [][]byte) (int, error) {
	if !p.rlockOpen() {
		return 0, platform.ErrClosed
	}
	defer p.fdMu.RUnlock()
	sent, mtu := 0, p.MTU()
	for _, f := range frames {
		if len(f) < frame.HeaderLen || frame.Ethernet(f).PayloadLen() > mtu {
			p.counters.AddTxDropped(1)
			continue
		}
		var err error = unix.EINTR
		for err == unix.EINTR {
			_, err = unix.Write(p.txFD(f), f)
		}
		if p.countWrite(err, len(f)) {
			sent++
		}
	}
	return sent, nil
}

// countWrite counts the outcome of writing one frame of n bytes (err from
// write or writev, never EINTR) and reports whether it was sent. A full
// queue, an interface that is down (EIO) or a frame the kernel will not
// take is dropped, as a full ring drops; any other error is counted too.
func (p *Port) countWrite(err error, n int) bool {
	switch err {
	case nil:
		p.counters.AddTx(1, n)
		return true
	case unix.EAGAIN, unix.ENOBUFS, unix.ENOMEM, unix.EIO, unix.EINVAL, unix.EMSGSIZE:
		p.counters.AddTxDropped(1)
	default:
		p.counters.AddError()
		p.counters.AddTxDropped(1)
	}
	return false
}

func (p *Port) close() error {
	p.closed.Store(true)
	// Wake a ReadBatch sleeping in poll; what wakes it stays readable, so
	// any later poll returns at once too.
	p.fdMu.RLock()
	p.wake()
	p.fdMu.RUnlock()
	p.fdMu.Lock()
	defer p.fdMu.Unlock()
	return p.closeFDs()
}

// closeFDs closes the descriptors and makes sure the interface is gone:
// closing the descriptor removes it on Linux and OpenBSD, release destroys
// it on FreeBSD.
func (p *Port) closeFDs() error {
	var err error
	for i := range p.rxq[min(1, len(p.rxq)):] {
		// The further queues' descriptors; the first is p.fd.
		q := &p.rxq[1+i]
		if q.fd >= 0 {
			_ = unix.Close(q.fd)
			q.fd = -1
		}
	}
	if p.fd >= 0 {
		if e := unix.Close(p.fd); e != nil {
			err = fmt.Errorf("tap %s: close: %w", p.name, e)
		}
		p.fd = -1
		if e := p.release(); e != nil {
			err = errors.Join(err, fmt.Errorf("tap %s: %w", p.name, e))
		}
	}
	for _, fd := range []*int{&p.wakeFD, &p.wakeReadFD} {
		if *fd >= 0 {
			_ = unix.Close(*fd)
			*fd = -1
		}
	}
	return err
}
