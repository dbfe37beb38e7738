package tap

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// openTap opens the first free /dev/tapN whose interface does not exist
// yet: opening it creates tapN, and closing it destroys tapN (tun(4): an
// interface made by open is not TUN_STAYUP), so the TAP vanishes with its
// descriptor, as on Linux. A tapN that exists was made with ifconfig and
// would outlive us: it is left alone. OpenBSD cannot rename an interface,
// so the name asked for is not used: the Port's Name is tapN.
func (p *Port) openTap(string) error {
	var busy error
	for n := 0; n <= maxUnit; n++ {
		dev := tapDevice(n)
		name := dev[len("/dev/"):]
		if interfaceExists(name) {
			continue
		}
		fd, err := unix.Open(dev, openFlags, 0)
		switch {
		case err == nil:
			p.fd, p.name = fd, name
			return nil
		case errors.Is(err, unix.ENOENT):
			// No more device nodes (MAKEDEV tapN makes more).
			if busy != nil {
				return fmt.Errorf("no free TAP device up to %s (last: %w)", dev, busy)
			}
			return fmt.Errorf("no free TAP device: %s does not exist (make more with MAKEDEV)", dev)
		case errors.Is(err, unix.EBUSY), errors.Is(err, unix.ENXIO):
			busy = err // taken meanwhile, or being destroyed
		default:
			return fmt.Errorf("open %s: %w", dev, err)
		}
	}
	return fmt.Errorf("no free TAP device up to %s", tapDevice(maxUnit))
}

// release has nothing to do: closing the descriptor destroyed tapN.
func (p *Port) release() error { return nil }
