package linkwatch

import "golang.org/x/sys/unix"

// hostLayout is the running system's routing message layout.
var hostLayout = openbsdLayout

// routeMsgFilter is ROUTE_MSGFILTER (sys/net/route.h), a socket option at
// level AF_ROUTE: a bitmask, bit ROUTE_FILTER(type) = 1 << type, of the
// message types the socket receives. x/sys/unix does not define it.
const routeMsgFilter = 1

// tuneSocket asks the kernel for interface messages only, so that a
// routing table busy with routes does not fill the socket's buffer.
func tuneSocket(fd int) error {
	mask := 1<<unix.RTM_IFINFO | 1<<unix.RTM_IFANNOUNCE | 1<<unix.RTM_DESYNC
	return unix.SetsockoptInt(fd, unix.AF_ROUTE, routeMsgFilter, mask)
}
