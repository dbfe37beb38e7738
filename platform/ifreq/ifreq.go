package ifreq

import (
	"fmt"
	"net"
)

// makeName is name as ifr_name; an empty name, one with a NUL, or one of
// IFNAMSIZ bytes or more is an error.
func makeName(name string) (ifName, error) {
	var n ifName
	if name == "" || len(name) >= nameSize {
		return n, fmt.Errorf("interface name %q: want 1 to %d bytes", name, nameSize-1)
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return n, fmt.Errorf("interface name %q: has a NUL byte", name)
		}
	}
	copy(n[:], name)
	return n, nil
}

// String is the name up to its first NUL.
func (n *ifName) String() string {
	for i, c := range n {
		if c == 0 {
			return string(n[:i])
		}
	}
	return string(n[:])
}

// lladdrRequest is the SIOCSIFLLADDR request for name: ifr_addr with
// sa_len the address length (both kernels refuse any length but the
// interface's, ETHER_ADDR_LEN for Ethernet), sa_family AF_LINK (afLink, as
// ifconfig sets it), and the address in sa_data.
func lladdrRequest(name string, mac net.HardwareAddr, afLink uint8) (reqAddr, error) {
	var r reqAddr
	n, err := makeName(name)
	if err != nil {
		return r, err
	}
	if len(mac) != 6 {
		return r, fmt.Errorf("hardware address %s: want 6 bytes, not %d", mac, len(mac))
	}
	if mac[0]&1 != 0 {
		return r, fmt.Errorf("hardware address %s is a multicast address", mac)
	}
	r.name = n
	r.addr = sockaddr{len: uint8(len(mac)), family: afLink}
	copy(r.addr.data[:], mac)
	return r, nil
}

// all is the interface flags a SIOCGIFFLAGS request read: ifr_flags, and
// FreeBSD's ifr_flagshigh above them (zero on OpenBSD, which does not
// write it).
func (r *reqFlags) all() uint32 { return uint32(r.flagsHigh)<<16 | uint32(r.flags) }
