package daemon

import (
	"fmt"
	"io"
)

// GuardStack has no drop to install on FreeBSD: its bpf has no
// filter-drop mode, and the places that could drop after the tap (ipfw
// layer-2 rules with net.link.ether.ipfw=1, pf ether rules since 14.0)
// are the host's firewall, which swctl does not change unasked. So the
// member's own stack still receives every frame bpf copies. That is
// harmless for a member without IP addresses (ether_input drops unicast
// for other MACs, and ARP is answered only for the receiving interface's
// own addresses), so the guard is a no-op for it; a member with addresses
// is refused, unless the port is added with --stack on.
func (s *bsdSystem) GuardStack(name string) (io.Closer, error) {
	if n := s.HostAddrs(name); n > 0 {
		return nil, fmt.Errorf("%s: has %d IP addresses and its stack cannot be kept off bridged frames on freebsd: remove them, or add the port with --stack on", name, n)
	}
	return nopCloser{}, nil
}

// nopCloser is the guard of a member that needs none.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }
