// Package netbed builds the harnesses' network-namespace testbeds, for
// make bench (cmd/swctl-bench) and make regress (package regress): quiet
// namespaces (lo up, IPv6 off, so no DAD, router or MLD solicitation
// disturbs a frame count), the commands of a veth cable, an address, a
// permanent neighbour and offloads off, and deleting what was made, also
// when a later step fails.
package netbed

import (
	"context"
	"fmt"
)

// Runner runs one setup command (a harness's own, so that it can record
// or bound it) and returns its error, which names the command.
type Runner func(ctx context.Context, args ...string) error

// Namespaces are the namespaces one testbed made; Delete removes them and
// with them every veth end and bridge in them.
type Namespaces struct {
	// run runs the ip and sysctl commands.
	run Runner
	// names are the namespaces made so far, in order.
	names []string
}

// New returns an empty set whose commands run is to run.
func New(run Runner) *Namespaces {
	return &Namespaces{run: run}
}

// Add makes the namespace name, records it for Delete (before anything
// else can fail) and quiets it: lo up, IPv6 off.
func (n *Namespaces) Add(ctx context.Context, name string) error {
	if err := n.run(ctx, "ip", "netns", "add", name); err != nil {
		return err
	}
	n.names = append(n.names, name)
	for _, s := range [][]string{
		{"ip", "-n", name, "link", "set", "lo", "up"},
		{"ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"},
	} {
		if err := n.run(ctx, s...); err != nil {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
	}
	return nil
}

// Names are the namespaces made, in order.
func (n *Namespaces) Names() []string { return n.names }

// Delete removes every namespace made (errors are ignored: it runs when
// tearing down, also after a failure) and forgets them.
func (n *Namespaces) Delete() {
	for _, ns := range n.names {
		n.run(context.Background(), "ip", "netns", "del", ns)
	}
	n.names = nil
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
