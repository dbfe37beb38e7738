// Package hostaddr reads the IP addresses the host has on an interface:
// with rtnetlink on Linux, which says which IPv6 addresses are still in
// duplicate address detection, and with getifaddrs (net.Interface.Addrs)
// elsewhere, which does not. The daemon reads them to warn before it
// removes a TAP that carries addresses, to refuse a FreeBSD member whose
// stack it cannot guard, and to announce a trunk's addresses after a
// failover.
package hostaddr

import "net/netip"

// Addr is one of the host's addresses on an interface.
type Addr struct {
	// IP is the address; an IPv4 one is never 4-in-6 mapped.
	IP netip.Addr
	// Tentative is set for an address still in duplicate address
	// detection, or whose detection failed (RFC 4862 section 5.4): not
	// the host's yet. Only Linux says so; elsewhere it is never set.
	Tentative bool
}

// List returns the host's addresses on the interface ifname, in the
// network namespace of the calling thread on Linux. The error names the
// interface.
func List(ifname string) ([]Addr, error) { return list(ifname) }

// Routable counts the addresses of List that are not link-local; 0 when
// they cannot be read (the interface is gone).
func Routable(ifname string) int {
	addrs, err := List(ifname)
	if err != nil {
		return 0
	}
	n := 0
	for _, a := range addrs {
		if !a.IP.IsLinkLocalUnicast() {
			n++
		}
	}
	return n
}
