//go:build !linux

package daemon

import (
	"fmt"
	"io"
	"net/netip"
	"runtime"
)

// guardVIPs would keep the host's stack on iface off packets to vips:
// not implemented on this system, where an lb runs on a bridge only.
var guardVIPs = func(iface string, _ []netip.Addr) (io.Closer, error) {
	return nil, fmt.Errorf("lb on an interface (%s): the VIP stack guard is not implemented on %s; put the lb on a bridge", iface, runtime.GOOS)
}
