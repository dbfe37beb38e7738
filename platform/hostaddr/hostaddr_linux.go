package hostaddr

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func list(ifname string) ([]Addr, error) {
	l, err := netlink.LinkByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ifname, err)
	}
	addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("%s: addresses: %w", ifname, err)
	}
	out := make([]Addr, 0, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		out = append(out, Addr{IP: ip.Unmap(), Tentative: a.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) != 0})
	}
	return out, nil
}
