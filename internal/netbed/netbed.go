// Package netbed holds the commands that build the harnesses'
// network-namespace testbeds, for make bench (cmd/swctl-bench) and make
// regress (package regress, whose testbed runs them and records how to
// put each back): a quiet namespace (lo up, IPv6 off, so no DAD, router
// or MLD solicitation disturbs a frame count), a veth cable, an address,
// a permanent neighbour and offloads off.
package netbed

// Namespace returns the commands that make the namespace name and quiet
// it: lo up, IPv6 off. The first makes it; `ip netns del name` removes
// it, and with it every veth end and bridge in it.
func Namespace(name string) [][]string {
	return [][]string{
		{"ip", "netns", "add", name},
		{"ip", "-n", name, "link", "set", "lo", "up"},
		{"ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"},
	}
}

// Veth returns the commands of a veth cable from aEnd (MAC aMAC, or one
// the kernel picks when "") in namespace a to bEnd (bMAC) in namespace b,
// both ends up; a and b may be the same namespace.
func Veth(a, aEnd, aMAC, b, bEnd, bMAC string) [][]string {
	add := []string{"ip", "-n", a, "link", "add", aEnd}
	if aMAC != "" {
		add = append(add, "address", aMAC)
	}
	return [][]string{
		append(add, "type", "veth", "peer", "name", bEnd, "address", bMAC, "netns", b),
		{"ip", "-n", a, "link", "set", aEnd, "up"},
		{"ip", "-n", b, "link", "set", bEnd, "up"},
	}
}

// Addr is the command that gives dev in namespace ns the address cidr.
func Addr(ns, cidr, dev string) []string {
	return []string{"ip", "-n", ns, "addr", "add", cidr, "dev", dev}
}

// Neigh is the command that makes mac ip's permanent neighbour entry on
// dev in namespace ns, so no ARP frame disturbs a count.
func Neigh(ns, ip, mac, dev string) []string {
	return []string{"ip", "-n", ns, "neigh", "replace", ip, "lladdr", mac, "nud", "permanent", "dev", dev}
}

// NoOffload is the command that turns off dev's TX checksum and
// segmentation offloads in namespace ns, so iperf3 sends frames of the
// wire's size through a userspace forwarder.
func NoOffload(ns, dev string) []string {
	return []string{"ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off", "gso", "off"}
}
