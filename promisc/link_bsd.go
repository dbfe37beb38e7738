//go:build openbsd || freebsd

package promisc

import (
	"fmt"
	"net"

	"github.com/swctl/swctl/internal/ifreq"
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

func (systemLinks) setMAC(name string, mac net.HardwareAddr) error {
	if _, _, err := (systemLinks{}).link(name); err != nil {
		return err
	}
	return ifreq.SetLLAddr(name, mac)
}
