//go:build openbsd || freebsd

package ifreq

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// withSocket runs fn with a datagram socket, the handle interface ioctls
// go through (any socket reaches ifioctl; ifconfig uses one like it).
func withSocket(fn func(fd int) error) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	return fn(fd)
}

// SetLLAddr sets the hardware address of the interface name
// (SIOCSIFLLADDR). The address must be 6 bytes and not multicast, as both
// kernels require.
func SetLLAddr(name string, mac net.HardwareAddr) error {
	r, err := lladdrRequest(name, mac, unix.AF_LINK)
	if err != nil {
		return err
	}
	return withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCSIFLLADDR, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCSIFLLADDR %s: %w", mac, err)
		}
		return nil
	})
}

// SetMTU sets the MTU of the interface name (SIOCSIFMTU).
func SetMTU(name string, mtu int) error {
	n, err := makeName(name)
	if err != nil {
		return err
	}
	if mtu <= 0 || mtu > 1<<20 {
		return fmt.Errorf("MTU %d out of range", mtu)
	}
	r := reqInt{name: n, value: int32(mtu)}
	return withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCSIFMTU, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCSIFMTU %d: %w", mtu, err)
		}
		return nil
	})
}

// SetUp sets IFF_UP on the interface name, keeping its other flags
// (SIOCGIFFLAGS, then SIOCSIFFLAGS).
func SetUp(name string) error { return setUpFlag(name, true) }

// Flags returns the flags of the interface name (SIOCGIFFLAGS): ifr_flags,
// and on FreeBSD ifr_flagshigh as the high 16 bits (OpenBSD leaves them
// zero).
func Flags(name string) (uint32, error) {
	n, err := makeName(name)
	if err != nil {
		return 0, err
	}
	r := reqFlags{name: n}
	err = withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCGIFFLAGS, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCGIFFLAGS: %w", err)
		}
		return nil
	})
	return r.all(), err
}

// SetDown clears IFF_UP on the interface name, keeping its other flags
// (SIOCGIFFLAGS, then SIOCSIFFLAGS).
func SetDown(name string) error { return setUpFlag(name, false) }

// setUpFlag sets (up) or clears IFF_UP on the interface name, unless it
// already is so.
func setUpFlag(name string, up bool) error {
	n, err := makeName(name)
	if err != nil {
		return err
	}
	r := reqFlags{name: n}
	return withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCGIFFLAGS, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCGIFFLAGS: %w", err)
		}
		if (r.flags&unix.IFF_UP != 0) == up {
			return nil
		}
		word := "down"
		r.flags &^= unix.IFF_UP
		if up {
			word = "up"
			r.flags |= unix.IFF_UP
		}
		if err := ioctl(fd, unix.SIOCSIFFLAGS, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCSIFFLAGS %s: %w", word, err)
		}
		return nil
	})
}

// Create creates the cloned interface name (SIOCIFCREATE, what `ifconfig
// name create` does) and returns the name it got: on FreeBSD a name
// without a unit ("epair") gets one, and the kernel writes the new name
// back ("epair0a"); on OpenBSD the name must have its unit, and is the
// name.
func Create(name string) (string, error) {
	n, err := makeName(name)
	if err != nil {
		return "", err
	}
	r := reqInt{name: n}
	err = withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCIFCREATE, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCIFCREATE: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return r.name.String(), nil
}

// Destroy destroys the cloned interface name (SIOCIFDESTROY, what
// `ifconfig name destroy` does).
func Destroy(name string) error {
	n, err := makeName(name)
	if err != nil {
		return err
	}
	r := reqInt{name: n}
	return withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCIFDESTROY, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCIFDESTROY: %w", err)
		}
		return nil
	})
}

// ReadName issues the ioctl req, which fills ifr_name, on the descriptor
// fd and returns the name (FreeBSD's TAPGIFNAME: the interface of a tap
// descriptor). The size req encodes must be struct ifreq's.
func ReadName(fd int, req uint) (string, error) {
	if l := int(req>>16) & iocparmMask; l != Size {
		return "", fmt.Errorf("ioctl %#x takes %d bytes, not a struct ifreq", req, l)
	}
	var r reqInt
	if err := ioctl(fd, req, pointerOf(&r)); err != nil {
		return "", err
	}
	return r.name.String(), nil
}
