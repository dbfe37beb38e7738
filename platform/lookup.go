package platform

import (
	"errors"
	"fmt"
	"net"
)

// LookupEthernet finds the interface a backend's Open attaches to and its
// link state: up when the interface is up and running, else down. It
// fails when there is no such interface or it is not an Ethernet one (no
// 6-byte hardware address). The error does not name the interface; the
// backend puts its name in front ("afpacket eth9: no such network
// interface").
func LookupEthernet(name string) (*net.Interface, LinkState, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, LinkAbsent, err
	}
	if len(ifi.HardwareAddr) != 6 {
		return nil, LinkAbsent, fmt.Errorf("not an Ethernet interface (hardware address %q)", ifi.HardwareAddr)
	}
	link := LinkDown
	if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0 {
		link = LinkUp
	}
	return ifi, link, nil
}
