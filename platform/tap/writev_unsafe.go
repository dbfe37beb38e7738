//go:build linux

package tap

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// writev2 writes a and then b (neither empty) with one writev(2), without
// allocating (unix.Writev builds its iovecs on the heap).
func writev2(fd int, a, b []byte) error {
	var iov [2]unix.Iovec
	iov[0].Base, iov[1].Base = &a[0], &b[0]
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	_, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if e != 0 {
		return e
	}
	return nil
}
