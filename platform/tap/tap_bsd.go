//go:build openbsd || freebsd

package tap

import (
	"errors"
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform/ifreq"
)

// openFlags opens a TAP device: non-blocking (tun(4) and tap(4) read
// FNONBLOCK), close-on-exec.
const openFlags = unix.O_RDWR | unix.O_NONBLOCK | unix.O_CLOEXEC

func create(name string, opts Options) (_ *Port, err error) {
	label, batch, err := check(name, opts)
	if err != nil {
		return nil, err
	}
	p := &Port{fd: -1, wakeFD: -1, wakeReadFD: -1}
	defer func() {
		if err != nil {
			p.closeFDs()
		}
	}()
	// openTap sets p.fd and p.name as soon as there is an interface, so
	// that closeFDs removes it if anything after fails.
	if err := p.openTap(name); err != nil {
		return nil, fmt.Errorf("tap %s: %w", label, err)
	}
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, fmt.Errorf("tap %s: pipe: %w", p.name, err)
	}
	p.wakeReadFD, p.wakeFD = pipe[0], pipe[1]
	if err := p.configure(opts); err != nil {
		return nil, err
	}
	p.rxq = []rxQueue{{fd: p.fd}}
	p.ready(opts, batch, p.wakeReadFD)
	return p, nil
}

// configure sets MAC, MTU and admin state with interface ioctls, then
// reads back what the interface has. The BSDs have no per-interface
// queue length to set: Options.QueueLen is ignored (the kernel's
// net.link.ifqmaxlen applies).
func (p *Port) configure(opts Options) error {
	if opts.MAC != nil {
		if err := ifreq.SetLLAddr(p.name, opts.MAC); err != nil {
			return fmt.Errorf("tap %s: set MAC: %w", p.name, err)
		}
	}
	if opts.MTU > 0 {
		if err := ifreq.SetMTU(p.name, opts.MTU); err != nil {
			return fmt.Errorf("tap %s: set MTU: %w", p.name, err)
		}
	}
	if opts.Up {
		if err := ifreq.SetUp(p.name); err != nil {
			return fmt.Errorf("tap %s: set up: %w", p.name, err)
		}
	}
	ifi, err := net.InterfaceByName(p.name)
	if err != nil {
		return fmt.Errorf("tap %s: read back: %w", p.name, err)
	}
	p.index = ifi.Index
	p.mac = append(net.HardwareAddr(nil), ifi.HardwareAddr...)
	p.mtu.Store(int64(ifi.MTU))
	return nil
}

// interfaceExists reports whether the system has an interface name.
func interfaceExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// pollCall names the call poll makes, for errors.
const pollCall = "poll"

// poll waits in poll(2) for fds: the TAP descriptor and the wake-up
// pipe.
func (p *Port) poll(fds []pollFD) error {
	_, err := unix.Poll(fds, -1)
	return err
}

// wake makes the pipe readable; nothing reads it, so it stays so.
func (p *Port) wake() {
	_, _ = unix.Write(p.wakeFD, []byte{1})
}

// setCarrier cannot be done: neither OpenBSD's tun(4) nor FreeBSD's
// tap(4) has an ioctl that sets the link state, which is up while the
// descriptor is open. A trunk's TAP on the BSDs therefore stays up while
// the trunk has no active port (the host sees a link that drops frames).
func (p *Port) setCarrier(bool) error {
	return fmt.Errorf("tap %s: set carrier: %w: %s's tap has no ioctl for the link state", p.name, errors.ErrUnsupported, runtime.GOOS)
}

func setInterfaceMTU(ifname string, mtu int) error {
	if err := ifreq.SetMTU(ifname, mtu); err != nil {
		return fmt.Errorf("%s: set mtu %d: %w", ifname, mtu, err)
	}
	return nil
}
