//go:build openbsd || freebsd

package ifreq

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// iocparmMask is IOCPARM_MASK (sys/sys/ioccom.h, both OSes): bits 16-28
// of an ioctl number are the size of its argument.
const iocparmMask = 0x1fff

// ioctl issues an interface ioctl whose argument is a pointer. It goes
// through unix.Syscall with SYS_IOCTL, which the Go runtime routes to
// libc's ioctl on OpenBSD 7.5 and later (golang/go#63900); x/sys/unix has
// no exported ioctl taking an arbitrary pointer on the BSDs.
func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// Every ioctl this package issues takes a struct ifreq: the size its
// number encodes must be Size. Each line indexes a one-element array
// with the two sizes XORed, and a constant index out of range does not
// compile.
var (
	_ = [1]struct{}{}[((unix.SIOCSIFLLADDR>>16)&iocparmMask)^Size]
	_ = [1]struct{}{}[((unix.SIOCSIFMTU>>16)&iocparmMask)^Size]
	_ = [1]struct{}{}[((unix.SIOCGIFFLAGS>>16)&iocparmMask)^Size]
	_ = [1]struct{}{}[((unix.SIOCSIFFLAGS>>16)&iocparmMask)^Size]
	_ = [1]struct{}{}[((unix.SIOCIFCREATE>>16)&iocparmMask)^Size]
	_ = [1]struct{}{}[((unix.SIOCIFDESTROY>>16)&iocparmMask)^Size]
)
