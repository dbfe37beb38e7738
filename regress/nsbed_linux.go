package regress

import (
	"fmt"
	"net"

	"github.com/swctl/swctl/platform/nsenter"
	"golang.org/x/sys/unix"
)

// inNS prefixes args with ip netns exec ns.
func inNS(ns string, args ...string) []string {
	return append([]string{"ip", "netns", "exec", ns}, args...)
}

// promiscHold is a promiscuous membership (PACKET_MR_PROMISC) on one
// interface, held by an AF_PACKET socket bound to no protocol: the socket
// receives no frames, so what is measured is the interface being
// promiscuous, not a packet tap. The kernel drops the membership when the
// socket closes, also if the harness dies.
type promiscHold struct {
	// fd is the AF_PACKET socket holding the membership.
	fd int
	// name is "interface in namespace", for errors.
	name string
}

// holdPromisc makes ifname in namespace ns promiscuous until Close.
func holdPromisc(ns, ifname string) (*promiscHold, error) {
	h := &promiscHold{fd: -1, name: ifname + " in " + ns}
	err := nsenter.Run(ns, func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		if h.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(h.fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			unix.Close(h.fd)
			return fmt.Errorf("PACKET_ADD_MEMBERSHIP: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("promisc %s: %w", h.name, err)
	}
	return h, nil
}

// Close drops the membership.
func (h *promiscHold) Close() error {
	if h == nil || h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	if err != nil {
		return fmt.Errorf("promisc %s: close: %w", h.name, err)
	}
	return nil
}
