package daemon

import (
	"io"
	"net"
	"net/netip"

	"github.com/swctl/swctl/platform"
)

// system is what the engine needs from the operating system: opening a
// member's packet port, creating a host TAP, keeping a member's own stack
// off bridged frames, and knowing which interfaces exist. The Linux one
// uses AF_PACKET, /dev/net/tun, tcx and netlink; tests use in-memory ports.
type system interface {
	// OpenPort opens the frame port of an existing interface and gives
	// its capability set (platform.Caps); with offload, GSO and checksum
	// metadata (virtio_net_hdr) travel with its frames (platform.Port).
	// sendBuffer, when not 0, is its socket's send buffer in bytes (a
	// trunk's send-buffer); a system without one refuses it.
	OpenPort(name string, offload bool, sendBuffer int) (platform.Port, platform.Caps, error)
	// CreateTap makes a non-persistent TAP interface, up, with the given
	// MAC and MTU, and gives its capability set.
	CreateTap(name string, mac net.HardwareAddr, mtu int) (platform.Port, platform.Caps, error)
	// SetTapMTU changes a TAP's MTU.
	SetTapMTU(name string, mtu int) error
	// GuardStack keeps the interface's own IP stack off the frames it
	// receives until the returned closer is closed.
	GuardStack(name string) (io.Closer, error)
	// LinkState reports whether the interface exists and its carrier.
	LinkState(name string) platform.LinkState
	// HardwareAddr reads an interface's MAC.
	HardwareAddr(name string) (net.HardwareAddr, error)
	// HostAddrs counts the IP addresses the host has on an interface.
	HostAddrs(name string) int
	// HostIPs lists the IP addresses the host can announce on the host
	// TAP made for the object name (link-local ones included; IPv6 ones
	// still tentative left out).
	HostIPs(name string) ([]netip.Addr, error)
	// LinkSpeed reads an interface's speed in Mb/s (0 when unknown) and
	// whether it is half duplex, for the spanning tree's path costs.
	LinkSpeed(name string) (mbps uint64, halfDuplex bool)
	// SetLLAddr changes an interface's MAC, journalled first so that a
	// crash leaves a record for the next start or `swctl recover`.
	SetLLAddr(name string, mac net.HardwareAddr, owner string) error
	// RestoreLLAddr puts back the MAC SetLLAddr recorded, if the
	// interface still carries the one swctl set.
	RestoreLLAddr(name string) error
	// DefaultRouteIfaces names the interfaces the host's default routes
	// (IPv4 and IPv6, main table) leave by.
	DefaultRouteIfaces() ([]string, error)
	// Watch delivers link changes to fn until the system is closed.
	Watch(fn func(linkEvent)) error
	// Close stops watching.
	Close() error
}

// linkEvent is one change of an interface, as the engine follows it.
type linkEvent struct {
	// name is the interface's name.
	name string
	// state is its state: LinkAbsent when it was deleted, or renamed.
	state platform.LinkState
	// mtu is its MTU; 0 when not known, and the open port's is kept.
	mtu int
	// renamed is set on the LinkAbsent event of a rename: the
	// interface's new name. The interface still exists.
	renamed string
}
