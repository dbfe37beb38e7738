package platform

import "net"

// Caps is a port's capability set: the controls beyond the Port contract
// that the OS adapter which opened the port gives with it. It is decided
// once, when the port opens, by code that knows the backend's concrete
// type (so the compiler checks it), and never changes; a nil field is a
// control the port does not have. Whoever holds a port keeps its Caps
// beside it and asks them, instead of discovering methods with type
// assertions.
type Caps struct {
	// Promisc takes and releases a socket-owned promiscuous membership
	// (AF_PACKET, bpf).
	Promisc Promiscuous
	// Multicast joins link-layer multicast groups and all-multicast with
	// socket-owned memberships (AF_PACKET).
	Multicast Multicast
	// Link is told the link state a watcher observed (every port on a
	// kernel interface).
	Link LinkSetter
	// MTU is told the interface's MTU after it changed (every port on a
	// kernel interface, TAPs included).
	MTU MTUSetter
	// Carrier turns a TAP's carrier on and off, as the host sees it
	// (Linux TAPs; the BSDs' tap has no ioctl for it).
	Carrier CarrierSetter
}

// Multicast is implemented by ports that can take socket-owned multicast
// memberships on their interface, which the kernel drops when the port's
// descriptor closes.
type Multicast interface {
	// JoinMulticast makes the interface accept frames sent to the
	// link-layer group mac.
	JoinMulticast(mac net.HardwareAddr) error
	// SetAllMulti makes the interface accept every multicast frame (on)
	// or only its groups' (off).
	SetAllMulti(on bool) error
}

// MTUSetter is implemented by ports that enforce their interface's MTU
// and are told when it changes; it does not change the interface.
type MTUSetter interface {
	SetMTU(mtu int)
}

// CarrierSetter is implemented by ports whose interface's carrier swctl
// drives (a trunk's TAP follows the trunk: up while any port is active).
type CarrierSetter interface {
	SetCarrier(up bool) error
}
