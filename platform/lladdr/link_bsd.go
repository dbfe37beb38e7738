//go:build openbsd || freebsd

package lladdr

import (
	"fmt"
	"net"

	"github.com/swctl/swctl/platform/ifreq"
)

// systemLinks reads interfaces from the routing table's interface list
// (package net, sysctl NET_RT_IFLIST) and changes their address with
// SIOCSIFLLADDR.
type systemLinks struct{}

func (systemLinks) link(name string) (int, net.HardwareAddr, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, nil, fmt.Errorf("list interfaces: %w", err)
	}
	for _, ifi := range ifs {
		if ifi.Name == name {
			return ifi.Index, ifi.HardwareAddr, nil
		}
	}
	return 0, nil, ErrNoSuchInterface
}

func (systemLinks) linkByIndex(index int) (string, net.HardwareAddr, error) {
	ifi, err := net.InterfaceByIndex(index)
	if err != nil {
		// The routing socket's list has no entry for the index.
		if _, lerr := net.Interfaces(); lerr != nil {
			return "", nil, fmt.Errorf("list interfaces: %w", lerr)
		}
		return "", nil, ErrNoSuchInterface
	}
	return ifi.Name, ifi.HardwareAddr, nil
}

// setMAC finds the name the interface has now (SIOCSIFLLADDR takes a
// name) and changes its address.
func (systemLinks) setMAC(index int, mac net.HardwareAddr) error {
	name, _, err := (systemLinks{}).linkByIndex(index)
	if err != nil {
		return err
	}
	return ifreq.SetLLAddr(name, mac)
}
