package linkwatch

import "golang.org/x/sys/unix"

// hostLayout is the running system's routing message layout.
var hostLayout = freebsdLayout

// tuneSocket asks that an overflow of the socket's buffer be reported as
// ENOBUFS on the next read (SO_RERROR, FreeBSD 13 and later), so that the
// watcher lists the interfaces again instead of missing a change. Older
// kernels refuse the option; they drop messages silently, as before it.
func tuneSocket(fd int) error {
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RERROR, 1)
	return nil
}
