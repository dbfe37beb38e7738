package tap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// pollFD is one entry of the ppoll set.
type pollFD = unix.PollFd

// tunPath is the TUN/TAP clone device.
const tunPath = "/dev/net/tun"

// maxNameLen is IFNAMSIZ - 1 (include/uapi/linux/if.h).
const maxNameLen = unix.IFNAMSIZ - 1

func create(name string, opts Options) (_ *Port, err error) {
	label := name
	if label == "" {
		label = "(kernel-named)"
	}
	if len(name) > maxNameLen {
		return nil, fmt.Errorf("tap %s: name longer than %d bytes", name, maxNameLen)
	}
	if opts.MTU < 0 {
		return nil, fmt.Errorf("tap %s: MTU %d is negative", label, opts.MTU)
	}
	if opts.MAC != nil && len(opts.MAC) != 6 {
		return nil, fmt.Errorf("tap %s: MAC %s is not 6 bytes", label, opts.MAC)
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = platform.DefaultBatchSize
	}

	fd, err := unix.Open(tunPath, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tap %s: open %s: %w", label, tunPath, err)
	}
	p := &Port{fd: fd, wakeFD: -1}
	defer func() {
		if err != nil {
			p.closeFDs()
		}
	}()

	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return nil, fmt.Errorf("tap %s: %w", label, err)
	}
	// IFF_TUN_EXCL: never attach to an existing (for example persistent)
	// TAP of the same name; that one would outlive us.
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_TUN_EXCL)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		hint := ""
		if errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EINVAL) {
			hint = " (an interface with that name exists)"
		}
		return nil, fmt.Errorf("tap %s: TUNSETIFF: %w%s", label, err, hint)
	}
	p.name = ifr.Name()

	p.wakeFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("tap %s: eventfd: %w", p.name, err)
	}

	if err := p.configure(opts); err != nil {
		return nil, err
	}

	p.frameRoom = max(p.MTU()+14+4, minFrameRoom)
	p.bufs = make([][]byte, batch)
	for i := range p.bufs {
		p.bufs[i] = make([]byte, Headroom+p.frameRoom+1)
	}
	p.pollFDs = [2]pollFD{
		{Fd: int32(p.fd), Events: unix.POLLIN},
		{Fd: int32(p.wakeFD), Events: unix.POLLIN},
	}
	if opts.Up {
		p.link.Store(uint32(platform.LinkUp))
	} else {
		p.link.Store(uint32(platform.LinkDown))
	}
	return p, nil
}

// configure sets MAC, MTU and admin state through rtnetlink in the calling
// thread's namespace, then reads back what the interface has.
func (p *Port) configure(opts Options) error {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("tap %s: netlink: %w", p.name, err)
	}
	defer h.Close()
	l, err := h.LinkByName(p.name)
	if err != nil {
		return fmt.Errorf("tap %s: look up new interface: %w", p.name, err)
	}
	if opts.MAC != nil {
		if err := h.LinkSetHardwareAddr(l, opts.MAC); err != nil {
			return fmt.Errorf("tap %s: set MAC %s: %w", p.name, opts.MAC, err)
		}
	}
	if opts.MTU > 0 {
		if err := h.LinkSetMTU(l, opts.MTU); err != nil {
			return fmt.Errorf("tap %s: set MTU %d: %w", p.name, opts.MTU, err)
		}
	}
	qlen := opts.QueueLen
	if qlen == 0 {
		qlen = DefaultQueueLen
	}
	if err := h.LinkSetTxQLen(l, qlen); err != nil {
		return fmt.Errorf("tap %s: set queue length %d: %w", p.name, qlen, err)
	}
	if opts.Up {
		if err := h.LinkSetUp(l); err != nil {
			return fmt.Errorf("tap %s: set up: %w", p.name, err)
		}
	}
	if l, err = h.LinkByIndex(l.Attrs().Index); err != nil {
		return fmt.Errorf("tap %s: read back: %w", p.name, err)
	}
	a := l.Attrs()
	p.index = a.Index
	p.mac = append(net.HardwareAddr(nil), a.HardwareAddr...)
	p.mtu.Store(int64(a.MTU))
	return nil
}

func (p *Port) readBatch(frames [][]byte) (int, error) {
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	want := min(len(frames), len(p.bufs))
	if want == 0 {
		return 0, nil
	}
	for {
		if p.closed.Load() {
			return 0, platform.ErrClosed
		}
		n, err := p.readReady(frames[:want])
		if n > 0 || err != nil {
			return n, err
		}
		// Nothing ready: sleep in ppoll (through Syscall6, so the
		// scheduler runs other goroutines) until a frame or Close.
		p.pollFDs[0].Revents, p.pollFDs[1].Revents = 0, 0
		if _, err := unix.Ppoll(p.pollFDs[:], nil, nil); err != nil && err != unix.EINTR {
			p.counters.AddError()
			return 0, fmt.Errorf("tap %s: ppoll: %w", p.name, err)
		}
		if p.pollFDs[1].Revents != 0 {
			return 0, platform.ErrClosed
		}
		if p.pollFDs[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 &&
			p.pollFDs[0].Revents&unix.POLLIN == 0 {
			p.counters.AddError()
			return 0, fmt.Errorf("tap %s: ppoll: revents %#x on the tap descriptor", p.name, p.pollFDs[0].Revents)
		}
	}
}

// readReady reads frames that are ready without blocking, one slot each.
func (p *Port) readReady(frames [][]byte) (int, error) {
	n := 0
	for n < len(frames) {
		buf := p.bufs[n]
		r, err := unix.Read(p.fd, buf[Headroom:])
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
		case r < 14:
			p.counters.AddRxDropped(1)
			continue
		}
		frames[n] = buf[Headroom : Headroom+r]
		p.counters.AddRx(1, r)
		n++
	}
	return n, nil
}

func (p *Port) writeBatch(frames [][]byte) (int, error) {
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	if p.closed.Load() {
		return 0, platform.ErrClosed
	}
	sent, mtu := 0, p.MTU()
	for _, f := range frames {
		if len(f) < frame.HeaderLen || frame.Ethernet(f).PayloadLen() > mtu {
			p.counters.AddTxDropped(1)
			continue
		}
		for {
			_, err := unix.Write(p.fd, f)
			switch err {
			case unix.EINTR:
				continue
			case nil:
				p.counters.AddTx(1, len(f))
				sent++
			case unix.EAGAIN, unix.ENOBUFS, unix.ENOMEM, unix.EIO, unix.EINVAL, unix.EMSGSIZE:
				// Full queue, interface down (EIO) or a frame the
				// kernel will not take: drop it, as a full ring does.
				p.counters.AddTxDropped(1)
			default:
				p.counters.AddError()
				p.counters.AddTxDropped(1)
			}
			break
		}
	}
	return sent, nil
}

func (p *Port) setCarrier(up bool) error {
	if p.closed.Load() {
		return platform.ErrClosed
	}
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	if p.closed.Load() {
		return platform.ErrClosed
	}
	v := 0
	if up {
		v = 1
	}
	if err := unix.IoctlSetPointerInt(p.fd, unix.TUNSETCARRIER, v); err != nil {
		return fmt.Errorf("tap %s: TUNSETCARRIER %d: %w", p.name, v, err)
	}
	return nil
}

func (p *Port) close() error {
	p.closed.Store(true)
	// Wake a ReadBatch sleeping in ppoll. The eventfd stays readable, so
	// any later ppoll returns at once too. It cannot fail short of a
	// counter overflow; the wait below is bounded by the wake-up.
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	p.fdMu.RLock()
	_, _ = unix.Write(p.wakeFD, one[:])
	p.fdMu.RUnlock()
	p.fdMu.Lock()
	defer p.fdMu.Unlock()
	return p.closeFDs()
}

// closeFDs closes the descriptors; closing fd removes the interface.
func (p *Port) closeFDs() error {
	var err error
	if p.fd >= 0 {
		if e := unix.Close(p.fd); e != nil {
			err = fmt.Errorf("tap %s: close: %w", p.name, e)
		}
		p.fd = -1
	}
	if p.wakeFD >= 0 {
		_ = unix.Close(p.wakeFD)
		p.wakeFD = -1
	}
	return err
}
