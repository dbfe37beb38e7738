package selftest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"

	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/nsenter"
	"github.com/swctl/swctl/platform/stackguard"
)

// The selftest's own pair on Linux: a veth pair in a network namespace
// that has no name, so that nothing else sees it and it goes with the
// process however the process ends.
const (
	ownA = "selftest0"
	ownB = "selftest1"
)

// portBlocks is the ring size of a selftest port in blocks: a few frames
// at a time need no more.
const portBlocks = 2

func hostSystem() system {
	return system{
		backend:       "AF_PACKET",
		events:        "netlink events (RTM_NEWLINK)",
		newPair:       newVethPair,
		openPort:      openAFPacket,
		promiscuity:   promiscuityCount,
		countsPromisc: true,
		promiscSource: "promiscuity count (IFLA_PROMISCUITY)",
		newTAP:        createTAP,
		setLink:       setLinkUp,
		stack:         stackCheck(tcxGuard),
	}
}

func openAFPacket(name string) (packetPort, error) {
	p, err := afpacket.Open(name, afpacket.Options{BlockCount: portBlocks})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// newVethPair makes a namespace and a veth pair in it, both ends up.
func newVethPair() (*pair, error) {
	h, err := nsenter.New()
	if err != nil {
		return nil, err
	}
	in := func(fn func() error) error { return nsenter.In(h, fn) }
	err = in(func() error {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: ownA}, PeerName: ownB}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("veth %s-%s: %w", ownA, ownB, err)
		}
		for _, name := range []string{ownA, ownB} {
			if err := setLinkUp(name, true); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		h.Close()
		return nil, err
	}
	return &pair{
		a: ownA, b: ownB, in: in,
		desc: "a veth pair of its own, in a temporary network namespace",
		close: func() error {
			err := in(func() error {
				l, err := netlink.LinkByName(ownA)
				if err != nil {
					return err
				}
				return netlink.LinkDel(l)
			})
			return errors.Join(err, h.Close())
		},
	}, nil
}

// promiscuityCount reads the interface's promiscuity count: one per
// membership, kept by the kernel (a PACKET_MR_PROMISC membership does not
// show as IFF_PROMISC in the flags netlink and SIOCGIFFLAGS report).
func promiscuityCount(name string) (int, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("netlink get link: %w", err)
	}
	return l.Attrs().Promisc, nil
}

func setLinkUp(name string, up bool) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("%s: netlink get link: %w", name, err)
	}
	set, word := netlink.LinkSetDown, "down"
	if up {
		set, word = netlink.LinkSetUp, "up"
	}
	if err := set(l); err != nil {
		return fmt.Errorf("%s: set %s: %w", name, word, err)
	}
	return nil
}

// tcxGuard is the Linux stack guard, platform/stackguard, for the
// stack-isolation check; it runs in the selftest's own namespace.
var tcxGuard = stackGuard{
	what: "tcx drop",
	addAddr: func(name string, p netip.Prefix) (func() error, error) {
		l, err := netlink.LinkByName(name)
		if err != nil {
			return nil, err
		}
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}}
		if err := netlink.AddrAdd(l, addr); err != nil {
			return nil, fmt.Errorf("address %s: %w", p, err)
		}
		return func() error { return netlink.AddrDel(l, addr) }, nil
	},
	attach: func(name string) (io.Closer, error) { return stackguard.Attach(0, name) },
}
