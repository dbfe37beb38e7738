package stackguard

import (
	"fmt"
	"net/netip"
	"sync"
)

// Guard is an ingress drop attached to one interface. Close removes it.
type Guard struct {
	// name is the interface name, for errors and Name.
	name string
	// index is the interface index the program is attached to.
	index int
	// att holds the attachment's per-system resources (program and link).
	att attachment
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	// closeErr is what the first Close returned.
	closeErr error
}

// Attach drops every frame that interface ifindex (called ifname, used in
// errors and checked against the index when not empty) receives, after
// packet sockets have seen it, until Close or until the process exits.
// An ifindex of 0 means: look ifname up in the calling thread's network
// namespace.
func Attach(ifindex int, ifname string) (*Guard, error) {
	return attach(ifindex, ifname, dropSpec())
}

// AttachAddrs drops, like Attach, the frames interface ifindex receives,
// but only the untagged IPv4 and IPv6 packets addressed to one of addrs:
// a load balancer's virtual addresses, which the engine forwards and the
// host must not forward a second time. Everything else (ARP, the host's
// own traffic, health-check replies) still reaches the stack. addrs must
// hold at least one address and at most MaxAddrs.
func AttachAddrs(ifindex int, ifname string, addrs []netip.Addr) (*Guard, error) {
	if len(addrs) == 0 || len(addrs) > MaxAddrs {
		return nil, fmt.Errorf("stackguard %s: %d addresses: want 1 to %d", ifname, len(addrs), MaxAddrs)
	}
	for _, a := range addrs {
		if !a.IsValid() || a.Is4In6() {
			return nil, fmt.Errorf("stackguard %s: address %v: want an IPv4 or IPv6 address", ifname, a)
		}
	}
	return attach(ifindex, ifname, addrsSpec(addrs))
}

// MaxAddrs bounds the addresses of AttachAddrs: each costs a few
// instructions of the program.
const MaxAddrs = 64

// Name returns the interface name.
func (g *Guard) Name() string { return g.name }

// Index returns the interface index.
func (g *Guard) Index() int { return g.index }

// Close detaches the program: the interface's stack sees its frames again.
// Safe to call more than once.
func (g *Guard) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.detach() })
	return g.closeErr
}
