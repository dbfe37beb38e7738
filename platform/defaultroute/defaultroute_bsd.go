//go:build openbsd || freebsd

package defaultroute

import (
	"fmt"
	"net"
	"slices"

	"golang.org/x/net/route"
	"golang.org/x/sys/unix"
)

func ifaces() ([]string, error) {
	rib, err := route.FetchRIB(unix.AF_UNSPEC, route.RIBTypeRoute, 0)
	if err != nil {
		return nil, fmt.Errorf("route dump: %w", err)
	}
	msgs, err := route.ParseRIB(route.RIBTypeRoute, rib)
	if err != nil {
		return nil, fmt.Errorf("route dump: %w", err)
	}
	var names []string
	for _, m := range msgs {
		rm, ok := m.(*route.RouteMessage)
		if !ok || rm.Flags&unix.RTF_UP == 0 || rm.Flags&unix.RTF_GATEWAY == 0 || len(rm.Addrs) <= unix.RTAX_DST {
			continue
		}
		switch dst := rm.Addrs[unix.RTAX_DST].(type) {
		case *route.Inet4Addr:
			if dst.IP != [4]byte{} {
				continue
			}
		case *route.Inet6Addr:
			if dst.IP != [16]byte{} {
				continue
			}
		default:
			continue
		}
		if ifi, err := net.InterfaceByIndex(rm.Index); err == nil && !slices.Contains(names, ifi.Name) {
			names = append(names, ifi.Name)
		}
	}
	return names, nil
}
