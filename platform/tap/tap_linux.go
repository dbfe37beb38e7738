package tap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// tunPath is the TUN/TAP clone device.
const tunPath = "/dev/net/tun"

func create(name string, opts Options) (_ *Port, err error) {
	label, batch, err := check(name, opts)
	if err != nil {
		return nil, err
	}

	fd, err := unix.Open(tunPath, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tap %s: open %s: %w", label, tunPath, err)
	}
	p := &Port{fd: fd, wakeFD: -1, wakeReadFD: -1}
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
	flags := uint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if opts.Offload {
		flags |= unix.IFF_VNET_HDR
	}
	if opts.Queues > 1 {
		flags |= unix.IFF_MULTI_QUEUE
	}
	ifr.SetUint16(flags | unix.IFF_TUN_EXCL)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		hint := ""
		if errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EINVAL) {
			hint = " (an interface with that name exists)"
		}
		return nil, fmt.Errorf("tap %s: TUNSETIFF: %w%s", label, err, hint)
	}
	p.name = ifr.Name()
	p.rxq = []rxQueue{{fd: fd}}
	p.flows = lb.NewHasher(1, lb.L3|lb.L4) // any seed: the spread is what counts
	for range opts.Queues - 1 {
		q, err := attachQueue(p.name, flags)
		if err != nil {
			return nil, fmt.Errorf("tap %s: queue %d of %d: %w", p.name, len(p.rxq), opts.Queues, err)
		}
		p.rxq = append(p.rxq, rxQueue{fd: q})
	}
	if opts.Offload {
		p.offload = true
		if err := p.setOffload(); err != nil {
			return nil, fmt.Errorf("tap %s: TUNSETOFFLOAD: %w", p.name, err)
		}
	}

	p.wakeFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("tap %s: eventfd: %w", p.name, err)
	}

	if err := p.configure(opts); err != nil {
		return nil, err
	}

	p.ready(opts, batch, p.wakeFD)
	return p, nil
}

// attachQueue opens one more queue of the multi-queue TAP name, ours
// (so without IFF_TUN_EXCL, which refuses an existing interface), with
// the flags of its first.
func attachQueue(name string, flags uint16) (int, error) {
	fd, err := unix.Open(tunPath, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", tunPath, err)
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(flags)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF: %w", err)
	}
	return fd, nil
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
	if opts.Offload {
		mtu := opts.MTU
		if mtu == 0 {
			mtu = l.Attrs().MTU
		}
		if err := setSuperFrameSegments(h, l, mtu); err != nil {
			return fmt.Errorf("tap %s: %w", p.name, err)
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

// pollCall names the call poll makes, for errors.
const pollCall = "ppoll"

// poll waits in ppoll (through Syscall6) for fds: queue descriptors and
// the eventfd.
func (p *Port) poll(fds []pollFD) error {
	_, err := unix.Ppoll(fds, nil, nil)
	return err
}

// wake makes the eventfd readable. It cannot fail short of a counter
// overflow; Close's wait is bounded by the wake-up.
func (p *Port) wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(p.wakeFD, one[:])
}

func (p *Port) setCarrier(up bool) error {
	if !p.rlockOpen() {
		return platform.ErrClosed
	}
	defer p.fdMu.RUnlock()
	v := 0
	if up {
		v = 1
	}
	if err := unix.IoctlSetPointerInt(p.fd, unix.TUNSETCARRIER, v); err != nil {
		return fmt.Errorf("tap %s: TUNSETCARRIER %d: %w", p.name, v, err)
	}
	return nil
}

// release has nothing to do: closing the descriptor removed the interface.
func (p *Port) release() error { return nil }

func setInterfaceMTU(ifname string, mtu int) error {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("%s: netlink: %w", ifname, err)
	}
	defer h.Close()
	l, err := h.LinkByName(ifname)
	if err != nil {
		return fmt.Errorf("%s: %w", ifname, err)
	}
	if err := h.LinkSetMTU(l, mtu); err != nil {
		return fmt.Errorf("%s: set mtu %d: %w", ifname, mtu, err)
	}
	if err := setSuperFrameSegments(h, l, mtu); err != nil {
		// Put the MTU back: nothing half-applied.
		if old := l.Attrs().MTU; old > 0 {
			err = errors.Join(err, h.LinkSetMTU(l, old))
		}
		return fmt.Errorf("%s: %w", ifname, err)
	}
	return nil
}

// setSuperFrameSegments gives the interface the gso_max_segs that keeps
// the host's super-frames within SuperFrameWire at the given MTU.
func setSuperFrameSegments(h *netlink.Handle, l netlink.Link, mtu int) error {
	segs := SuperFrameSegments(mtu)
	if err := h.LinkSetGSOMaxSegs(l, segs); err != nil {
		return fmt.Errorf("set gso_max_segs %d: %w", segs, err)
	}
	return nil
}
