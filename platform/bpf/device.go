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

// device is the I/O half of a Port: reading records from a descriptor,
// writing frames to it, waking and counting. It does no ioctl, so that it
// also runs on Linux, where the tests drive it over a SOCK_SEQPACKET
// socketpair: one message is one bpf buffer on the way in and one frame
// on the way out, as with a bpf descriptor.
type device struct {
	// name is the interface name.
	name string
	// batch is the most frames one ReadBatch returns.
	batch int
	// log receives the rare warnings; immutable.
	log *slog.Logger
	// corruptLogged is set once an unreadable read buffer has been logged.
	corruptLogged atomic.Bool
	// mtu is the L2 payload limit WriteBatch enforces.
	mtu atomic.Int64
	// link is the platform.LinkState, set at Open and by SetLink.
	link atomic.Uint32
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

	// rxPackets and rxBytes count frames ReadBatch returned.
	rxPackets, rxBytes atomic.Uint64
	// txPackets and txBytes count frames the kernel accepted.
	txPackets, txBytes atomic.Uint64
	// rxDropped counts records ReadBatch refused: runts, and frames the
	// kernel cut because they were larger than the buffer.
	rxDropped atomic.Uint64
	// txDropped counts frames WriteBatch dropped.
	txDropped atomic.Uint64
	// ringDropped is the kernel's bs_drop (BIOCGSTATS) at the last read:
	// frames lost because both buffers were full. The kernel counts it
	// from attach, so it is stored, not added.
	ringDropped atomic.Uint64
	// errs counts failed system calls and unreadable read buffers.
	errs atomic.Uint64
}

// init readies d to read records laid out as layout, bufSize bytes per
// read, from the descriptor fd (already non-blocking), and makes the
// wake-up pipe. On error the caller closes what is open (closeFDs).
func (d *device) init(fd int, layout hdrLayout, bufSize int) error {
	d.fd = fd
	d.rb = newRecordBuffer(layout, bufSize)
	if err := unix.Pipe2(d.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	d.pfds = [2]unix.PollFd{
		{Fd: int32(fd), Events: unix.POLLIN},
		{Fd: int32(d.wake[0]), Events: unix.POLLIN},
	}
	return nil
}

// MTU implements platform.Port: the interface's MTU at Open, or as last
// set with SetMTU.
func (d *device) MTU() int { return int(d.mtu.Load()) }

// SetMTU changes the MTU WriteBatch enforces (the daemon calls it when
// the interface's MTU changes).
func (d *device) SetMTU(mtu int) { d.mtu.Store(int64(mtu)) }

// BatchSize implements platform.Port.
func (d *device) BatchSize() int { return d.batch }

// Link implements platform.Port.
func (d *device) Link() platform.LinkState { return platform.LinkState(d.link.Load()) }

// SetLink implements platform.LinkSetter.
func (d *device) SetLink(s platform.LinkState) { d.link.Store(uint32(s)) }

// ReadBatch implements platform.Port. It hands out the frames of the last
// read(2) (one bpf buffer, many records) up to len(frames) and
// BatchSize() at a time, and reads again only once they are all taken,
// blocking in poll while nothing has arrived. The frames are views into
// the port's read buffer, valid until the next ReadBatch or Close.
// Records shorter than an Ethernet header, or cut by the kernel (a frame
// larger than the buffer), are dropped and counted in RxDropped.
func (d *device) ReadBatch(frames [][]byte) (int, error) {
	d.rxmu.Lock()
	defer d.rxmu.Unlock()
	if d.closed.Load() {
		return 0, platform.ErrClosed
	}
	frames = frames[:min(len(frames), d.batch)]
	if len(frames) == 0 {
		return 0, nil
	}
	for {
		if n := d.collect(frames); n > 0 {
			return n, nil
		}
		// The buffer is drained: read the next one. A bpf read must ask
		// for exactly the buffer size.
		n, err := unix.Read(d.fd, d.rb.buf)
		switch {
		case err == nil && n > 0:
			d.rb.filled(n)
			continue
		case err == nil, err == unix.EAGAIN, err == unix.EINTR:
			// Nothing yet (EWOULDBLOCK is EAGAIN).
		default:
			d.errs.Add(1)
			return 0, fmt.Errorf("bpf %s: read: %w", d.name, err)
		}
		if err := d.wait(); err != nil {
			return 0, err
		}
	}
}

// collect takes frames from the read buffer and counts them. rxmu is held.
func (d *device) collect(frames [][]byte) int {
	n, bytes, skipped, err := d.rb.collect(frames)
	if skipped > 0 {
		d.rxDropped.Add(uint64(skipped))
	}
	if err != nil {
		d.errs.Add(1)
		if d.corruptLogged.CompareAndSwap(false, true) {
			d.log.Warn("bpf: unreadable record in the read buffer, rest of the buffer dropped (counted in errors; logged once per port)",
				"port", d.name, "err", err)
		}
	}
	if n > 0 {
		d.rxPackets.Add(uint64(n))
		d.rxBytes.Add(uint64(bytes))
	}
	return n
}

// wait blocks until the descriptor is readable or Close writes to the
// wake-up pipe. rxmu is held.
func (d *device) wait() error {
	d.pfds[0].Revents, d.pfds[1].Revents = 0, 0
	_, err := unix.Poll(d.pfds[:], -1)
	if d.closed.Load() {
		return platform.ErrClosed
	}
	if err != nil && err != unix.EINTR {
		d.errs.Add(1)
		return fmt.Errorf("bpf %s: poll: %w", d.name, err)
	}
	return nil
}

// WriteBatch implements platform.Port. bpf has no batch write: each frame
// is one write(2), which hands it to the interface's send queue and does
// not block. A frame shorter than an Ethernet header, a frame over the
// MTU, and every frame while the link is down are dropped and counted in
// TxDropped, as are frames the kernel refuses because the send queue is
// full (ENOBUFS). On the BSDs a tag gets no allowance: bpf(4) checks the
// frame less its 14-byte Ethernet header against the MTU (bpf_movein on
// FreeBSD, bpfwrite on OpenBSD), so WriteBatch applies the same rule and a
// tagged frame whose payload is the MTU is dropped. The kernel has a copy
// of every sent frame when WriteBatch returns. Safe for concurrent use.
func (d *device) WriteBatch(frames [][]byte) (int, error) {
	d.txmu.RLock()
	defer d.txmu.RUnlock()
	if d.closed.Load() {
		return 0, platform.ErrClosed
	}
	if d.Link() != platform.LinkUp {
		d.txDropped.Add(uint64(len(frames)))
		return 0, nil
	}
	mtu := d.MTU()
	sent, bytes, dropped := 0, 0, 0
	var err error
frames:
	for i, f := range frames {
		if len(f) < frame.HeaderLen || len(f)-frame.HeaderLen > mtu {
			dropped++
			continue
		}
		_, e := unix.Write(d.fd, f)
		for e == unix.EINTR {
			_, e = unix.Write(d.fd, f)
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
			d.errs.Add(1)
			dropped += len(frames) - i
			break frames
		case unix.EMSGSIZE:
			d.errs.Add(1)
			dropped++
		default:
			d.errs.Add(1)
			dropped++
			if err == nil {
				err = fmt.Errorf("bpf %s: write: %w", d.name, e)
			}
		}
	}
	if sent > 0 {
		d.txPackets.Add(uint64(sent))
		d.txBytes.Add(uint64(bytes))
	}
	if dropped > 0 {
		d.txDropped.Add(uint64(dropped))
	}
	return sent, err
}

// counters is the snapshot of the counters.
func (d *device) counters() platform.Counters {
	return platform.Counters{
		RxPackets: d.rxPackets.Load(), RxBytes: d.rxBytes.Load(),
		TxPackets: d.txPackets.Load(), TxBytes: d.txBytes.Load(),
		RxDropped: d.rxDropped.Load(), TxDropped: d.txDropped.Load(),
		RingDropped: d.ringDropped.Load(), Errors: d.errs.Load(),
	}
}

// shutdown starts a Close: it marks d closed, wakes a blocked reader, and
// takes rxmu and txmu, waiting for the reader and the writers to leave.
// The caller closes the descriptors and then calls unlock.
func (d *device) shutdown() error {
	d.closed.Store(true)
	var err error
	if _, e := unix.Write(d.wake[1], []byte{1}); e != nil {
		err = fmt.Errorf("wake reader: %w", e)
	}
	d.rxmu.Lock()
	d.txmu.Lock()
	return err
}

// unlock ends a Close that shutdown began.
func (d *device) unlock() {
	d.txmu.Unlock()
	d.rxmu.Unlock()
}

// closeFDs closes the descriptor and the pipe, those that are open.
func (d *device) closeFDs() error {
	var errs []error
	for _, fd := range []*int{&d.fd, &d.wake[0], &d.wake[1]} {
		if *fd >= 0 {
			if err := unix.Close(*fd); err != nil {
				errs = append(errs, fmt.Errorf("close: %w", err))
			}
			*fd = -1
		}
	}
	return errors.Join(errs...)
}
