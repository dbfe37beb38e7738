//go:build openbsd || freebsd

package stackguard

import (
	"fmt"
	"net/netip"
	"runtime"
)

// progSpec says what a BSD guard drops: every frame (addrs empty) or,
// for AttachAddrs, only the packets to addrs, which the BSDs' guards
// cannot single out.
type progSpec struct{ addrs []netip.Addr }

func dropSpec() progSpec { return progSpec{} }

func addrsSpec(addrs []netip.Addr) progSpec { return progSpec{addrs: addrs} }

// check refuses a spec this OS's guard cannot hold.
func (s progSpec) check(ifname string) error {
	if len(s.addrs) > 0 {
		return fmt.Errorf("stackguard %s: dropping only the packets to given addresses is not implemented on %s", ifname, runtime.GOOS)
	}
	return nil
}
