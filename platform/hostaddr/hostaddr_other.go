//go:build !linux

package hostaddr

import (
	"fmt"
	"net"
	"net/netip"
)

func list(ifname string) ([]Addr, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ifname, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, fmt.Errorf("%s: addresses: %w", ifname, err)
	}
	out := make([]Addr, 0, len(addrs))
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
			out = append(out, Addr{IP: ip.Unmap()})
		}
	}
	return out, nil
}
