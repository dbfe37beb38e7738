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

// holdPromisc makes ifname in namespace ns promiscuous until release
// is called: a promiscuous membership (PACKET_MR_PROMISC) held by an
// AF_PACKET socket bound to no protocol. The socket receives no frames,
// so what is measured is the interface being promiscuous, not a packet
// tap. The kernel drops the membership when the socket closes, also if
// the harness dies.
func holdPromisc(ns, ifname string) (release func() error, err error) {
	name, fd := ifname+" in "+ns, -1
	err = nsenter.Run(ns, func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		if fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			unix.Close(fd)
			return fmt.Errorf("PACKET_ADD_MEMBERSHIP: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("promisc %s: %w", name, err)
	}
	return func() error {
		if err := unix.Close(fd); err != nil {
			return fmt.Errorf("promisc %s: close: %w", name, err)
		}
		return nil
	}, nil
}
