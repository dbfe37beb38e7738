package stackguard

import (
	"fmt"

	"github.com/swctl/swctl/platform/hostaddr"
)

// attachment is empty on FreeBSD: there is no drop to hold.
type attachment struct{}

// attach has no drop to install on FreeBSD: its bpf has no filter-drop
// mode, and the places that could drop after the tap (ipfw layer-2 rules
// with net.link.ether.ipfw=1, pf ether rules since 14.0) are the host's
// firewall, which swctl does not change unasked. So the member's own
// stack still receives every frame bpf copies. That is harmless for a
// member without IP addresses (ether_input drops unicast for other MACs,
// and ARP is answered only for the receiving interface's own addresses),
// so its guard holds nothing; a member with addresses is refused, unless
// the port is added with --stack on (no guard asked for).
func attach(ifindex int, ifname string, spec progSpec) (*Guard, error) {
	if err := spec.check(ifname); err != nil {
		return nil, err
	}
	if n := hostaddr.Routable(ifname); n > 0 {
		return nil, fmt.Errorf("%s: has %d IP addresses and its stack cannot be kept off bridged frames on freebsd: remove them, or add the port with --stack on", ifname, n)
	}
	return &Guard{name: ifname, index: ifindex}, nil
}

func (g *Guard) detach() error { return nil }
