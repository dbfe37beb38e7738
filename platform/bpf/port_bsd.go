//go:build openbsd || freebsd

package bpf

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// maxDevices bounds the search of /dev/bpfN when the cloning /dev/bpf is
// missing or busy.
const maxDevices = 256

// openPort is Open on OpenBSD and FreeBSD.
func openPort(name string, opts Options) (*Port, error) {
	opts, err := opts.withDefaults(name)
	if err != nil {
		return nil, err
	}
	p := &Port{promiscFD: -1, device: device{log: opts.Logger, fd: -1, wake: [2]int{-1, -1}}}
	if _, err := p.Lookup("bpf", name, opts.BatchSize); err != nil {
		return nil, err
	}
	if err := p.open(opts); err != nil {
		p.closeFDs()
		return nil, fmt.Errorf("bpf %s: %w", name, err)
	}
	if opts.Promisc {
		if err := p.SetPromisc(true); err != nil {
			p.closeFDs()
			return nil, err
		}
	}
	return p, nil
}

// open makes the descriptor and the wake-up pipe. Everything is set
// before BIOCSETIF: the buffer size can only be set before it, and no
// frame is captured before the direction filter is in place.
func (p *Port) open(opts Options) error {
	fd, err := openDevice()
	if err != nil {
		return err
	}
	p.fd = fd // closed by closeFDs if anything fails
	if _, err := ioctlUint(fd, unix.BIOCSBLEN, uint32(opts.BufferSize)); err != nil {
		return fmt.Errorf("BIOCSBLEN %d: %w", opts.BufferSize, err)
	}
	if _, err := ioctlUint(fd, unix.BIOCIMMEDIATE, 1); err != nil {
		return fmt.Errorf("BIOCIMMEDIATE: %w", err)
	}
	if _, err := ioctlUint(fd, unix.BIOCSHDRCMPLT, 1); err != nil {
		return fmt.Errorf("BIOCSHDRCMPLT: %w", err)
	}
	if err := ignoreOutgoing(fd); err != nil {
		return fmt.Errorf("%s: %w", directionIoctl, err)
	}
	if err := setInterface(fd, p.Name()); err != nil {
		return fmt.Errorf("BIOCSETIF: %w", err)
	}
	dlt, err := ioctlUint(fd, unix.BIOCGDLT, 0)
	if err != nil {
		return fmt.Errorf("BIOCGDLT: %w", err)
	}
	if dlt != unix.DLT_EN10MB {
		return fmt.Errorf("not an Ethernet interface (data link type %d)", dlt)
	}
	blen, err := ioctlUint(fd, unix.BIOCGBLEN, 0)
	if err != nil {
		return fmt.Errorf("BIOCGBLEN: %w", err)
	}
	if blen < minBufferSize || blen > 1<<30 {
		return fmt.Errorf("BIOCGBLEN: implausible buffer size %d", blen)
	}
	p.bufSize = int(blen)
	// Non-blocking reads: F_SETFL sets O_NONBLOCK, which FreeBSD's
	// bpfread looks at, and makes the kernel send the device FIONBIO,
	// which is what OpenBSD's looks at. (The descriptor was opened
	// blocking, or SetNonblock would see O_NONBLOCK and do nothing.)
	if err := unix.SetNonblock(fd, true); err != nil {
		return fmt.Errorf("non-blocking: %w", err)
	}
	return p.init(fd, hostLayout(), int(blen))
}

// openDevice opens a free bpf device, close-on-exec: the cloning /dev/bpf
// (OpenBSD since 5.7, FreeBSD), else the first free /dev/bpfN.
func openDevice() (int, error) {
	const flags = unix.O_RDWR | unix.O_CLOEXEC
	fd, err := unix.Open("/dev/bpf", flags, 0)
	if err == nil {
		return fd, nil
	}
	if err != unix.ENOENT && err != unix.EBUSY {
		return -1, fmt.Errorf("open /dev/bpf: %w", err)
	}
	first := err
	for i := range maxDevices {
		dev := "/dev/bpf" + strconv.Itoa(i)
		fd, err := unix.Open(dev, flags, 0)
		if err == nil {
			return fd, nil
		}
		if err == unix.ENOENT {
			break
		}
		if err != unix.EBUSY {
			return -1, fmt.Errorf("open %s: %w", dev, err)
		}
	}
	return -1, fmt.Errorf("open /dev/bpf: %w (and no free /dev/bpfN)", first)
}

// openPromisc opens a second descriptor on the interface that only holds
// a promiscuous membership: a filter that keeps nothing, the smallest
// buffer, then BIOCSETIF and BIOCPROMISC. The kernel drops the membership
// when the descriptor closes (there is no ioctl to leave promiscuous
// mode), even if the process is killed.
func openPromisc(name string) (int, error) {
	fd, err := openDevice()
	if err != nil {
		return -1, err
	}
	fail := func(what string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", what, err)
	}
	if _, err := ioctlUint(fd, unix.BIOCSBLEN, minBufferSize); err != nil {
		return fail("BIOCSBLEN", err)
	}
	if err := setDropAll(fd); err != nil {
		return fail("BIOCSETF", err)
	}
	if err := setInterface(fd, name); err != nil {
		return fail("BIOCSETIF", err)
	}
	if err := ioctl(fd, unix.BIOCPROMISC, nil); err != nil {
		return fail("BIOCPROMISC", err)
	}
	return fd, nil
}

// closeFDs closes the descriptors that are open.
func (p *Port) closeFDs() error {
	err := p.closeDevice()
	if p.promiscFD >= 0 {
		if e := unix.Close(p.promiscFD); e != nil {
			err = errors.Join(err, fmt.Errorf("close: %w", e))
		}
		p.promiscFD = -1
	}
	return err
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

// readStats stores the kernel's drop count. ctlmu is held and fd open.
func (p *Port) readStats() {
	s, err := stats(p.fd)
	if err != nil {
		p.counters.AddError()
		return
	}
	p.counters.SetRingDropped(uint64(s.Drop))
}

// setPromisc is SetPromisc.
func (p *Port) setPromisc(on bool) error {
	p.ctlmu.Lock()
	defer p.ctlmu.Unlock()
	if p.closed.Load() {
		if !on {
			return nil
		}
		return fmt.Errorf("bpf %s: promiscuous on: %w", p.Name(), platform.ErrClosed)
	}
	if p.promisc.Load() == on {
		return nil
	}
	if on {
		fd, err := openPromisc(p.Name())
		if err != nil {
			p.counters.AddError()
			return fmt.Errorf("bpf %s: promiscuous on: %w", p.Name(), err)
		}
		p.promiscFD = fd
		p.promisc.Store(true)
		return nil
	}
	err := unix.Close(p.promiscFD)
	p.promiscFD = -1
	p.promisc.Store(false)
	if err != nil {
		p.counters.AddError()
		return fmt.Errorf("bpf %s: promiscuous off: %w", p.Name(), err)
	}
	return nil
}

// close is Close.
func (p *Port) close() error {
	var err error
	p.closeOnce.Do(func() {
		err = p.shutdown()
		defer p.unlock()
		p.ctlmu.Lock()
		defer p.ctlmu.Unlock()
		p.readStats()
		err = errors.Join(err, p.closeFDs())
		p.promisc.Store(false)
		if err != nil {
			err = fmt.Errorf("bpf %s: close: %w", p.Name(), err)
		}
	})
	return err
}
