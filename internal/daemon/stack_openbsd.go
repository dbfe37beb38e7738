package daemon

import (
	"io"

	"github.com/swctl/swctl/platform/bpf"
)

// GuardStack drops, before the member's own stack, every frame the member
// receives: a bpf descriptor of its own in filter-drop mode
// (bpf.DropFromStack). swctl's port on the member still reads every
// frame; the member's ARP, IP, vlan(4) and pf see none of them, whether
// or not the member has addresses. The drop goes with the descriptor:
// when the guard is closed (the member leaves, or --stack on) or the
// daemon dies. No firewall rule or sysctl is touched.
func (s *bsdSystem) GuardStack(name string) (io.Closer, error) {
	return bpf.DropFromStack(name)
}
