package promisc

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// systemLinks reads and changes interfaces with rtnetlink, in the network
// namespace of the calling thread.
type systemLinks struct{}

func (systemLinks) link(name string) (int, net.HardwareAddr, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return 0, nil, ErrNoSuchInterface
		}
		return 0, nil, fmt.Errorf("netlink get link: %w", err)
	}
	a := l.Attrs()
	return a.Index, a.HardwareAddr, nil
}

func (systemLinks) setMAC(name string, mac net.HardwareAddr) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return ErrNoSuchInterface
		}
		return fmt.Errorf("netlink get link: %w", err)
	}
	if err := netlink.LinkSetHardwareAddr(l, mac); err != nil {
		return fmt.Errorf("netlink set address: %w", err)
	}
	return nil
}
