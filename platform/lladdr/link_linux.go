package lladdr

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
	l, err := linkGot(netlink.LinkByName(name))
	if err != nil {
		return 0, nil, err
	}
	a := l.Attrs()
	return a.Index, a.HardwareAddr, nil
}

func (systemLinks) linkByIndex(index int) (string, net.HardwareAddr, error) {
	l, err := linkGot(netlink.LinkByIndex(index))
	if err != nil {
		return "", nil, err
	}
	a := l.Attrs()
	return a.Name, a.HardwareAddr, nil
}

// setMAC changes the address of the interface with that index: by index,
// so a rename in between changes nothing.
func (systemLinks) setMAC(index int, mac net.HardwareAddr) error {
	l, err := linkGot(netlink.LinkByIndex(index))
	if err != nil {
		return err
	}
	if err := netlink.LinkSetHardwareAddr(l, mac); err != nil {
		return fmt.Errorf("netlink set address: %w", err)
	}
	return nil
}

// linkGot turns a netlink lookup's error into ErrNoSuchInterface when the
// link does not exist.
func linkGot(l netlink.Link, err error) (netlink.Link, error) {
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil, ErrNoSuchInterface
		}
		return nil, fmt.Errorf("netlink get link: %w", err)
	}
	return l, nil
}
