package tap

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform/ifreq"
)

// tapGIFNAME is TAPGIFNAME (sys/net/if_tap.h), _IOR('t', 93, struct
// ifreq): IOC_OUT (0x40000000) | sizeof(struct ifreq) << 16 | 't' << 8 |
// 93 (sys/sys/ioccom.h). It writes the interface's name into ifr_name.
// x/sys/unix does not define it.
const tapGIFNAME = 0x4020745d

// The size tapGIFNAME encodes must be ifreq's struct ifreq, and its group
// and number 't' and 93: each pair fails to compile when one differs.
var (
	_ [(tapGIFNAME>>16)&0x1fff - ifreq.Size]byte
	_ [ifreq.Size - (tapGIFNAME>>16)&0x1fff]byte
	_ [tapGIFNAME&0xffff - ('t'<<8 | 93)]byte
	_ [('t'<<8 | 93) - tapGIFNAME&0xffff]byte
	_ [tapGIFNAME>>29 - 2]byte // IOC_OUT
	_ [2 - tapGIFNAME>>29]byte
)

// openTap opens the cloning /dev/tap, which creates a tapN, learns N
// (TAPGIFNAME) and renames the interface to name (SIOCSIFNAME). Where the
// kernel refuses the name (a jail without the privilege, or a name in
// use by an interface that is not such a TAP) the TAP keeps the name the
// kernel gave it: the Port's Name says which. A tap(4) interface outlives its descriptor (closing it only takes
// it down and purges its addresses), so release destroys it; after a crash
// it is left, renamed, and the next Create of that name takes it back
// (adopt) instead of making another.
func (p *Port) openTap(name string) error {
	if name != "" && interfaceExists(name) {
		if p.adopt(name) == nil {
			return nil
		}
		// The name is another interface's (an if_bridge called bridge0,
		// say): a new TAP keeps the kernel's name, as when the rename is
		// refused.
		name = ""
	}
	fd, err := unix.Open("/dev/tap", openFlags, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("open /dev/tap: %w (load if_tuntap, and keep net.link.tap.devfs_cloning at 1)", err)
		}
		return fmt.Errorf("open /dev/tap: %w", err)
	}
	p.fd = fd
	kname, err := ifreq.ReadName(fd, tapGIFNAME)
	if err != nil {
		return fmt.Errorf("TAPGIFNAME: %w", err)
	}
	if _, ok := tapUnit(kname); !ok {
		return fmt.Errorf("TAPGIFNAME: %q is not the name of a TAP the kernel made", kname)
	}
	p.name = kname
	if name == "" || name == kname {
		return nil
	}
	if err := ifreq.Rename(kname, name); err == nil {
		p.name = name
	}
	return nil
}

// adopt takes back the TAP called name that a daemon which did not close
// it left behind: FreeBSD made /dev/name an alias of its /dev/tapN when it
// was renamed. Anything else called name (an interface, or a device node
// that is not that TAP's, or one open elsewhere: EBUSY) is refused.
func (p *Port) adopt(name string) error {
	taken := fmt.Errorf("an interface called %s exists and is not a TAP left by swctl", name)
	dev := aliasDevice(name)
	var st unix.Stat_t
	if dev == "" || unix.Stat(dev, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return taken
	}
	fd, err := unix.Open(dev, openFlags|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("%w (open %s: %v)", taken, dev, err)
	}
	if got, err := ifreq.ReadName(fd, tapGIFNAME); err != nil || got != name {
		unix.Close(fd)
		return taken
	}
	p.fd, p.name = fd, name
	return nil
}

// release destroys the interface (SIOCIFDESTROY): closing the descriptor
// did not.
func (p *Port) release() error {
	if p.name == "" {
		return nil
	}
	return ifreq.Destroy(p.name)
}
