package daemon

import (
	"io"
	"net/netip"

	"github.com/swctl/swctl/platform/stackguard"
)

// guardVIPs keeps the host's stack on iface off packets to vips; tests
// replace it.
var guardVIPs = func(iface string, vips []netip.Addr) (io.Closer, error) {
	return stackguard.AttachAddrs(0, iface, vips)
}
