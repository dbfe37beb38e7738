package stackguard

import (
	"github.com/swctl/swctl/platform/bpf"
)

// attachment is the bpf descriptor in filter-drop mode that holds the drop.
type attachment struct {
	// drop is the descriptor; closing it ends the drop.
	drop *bpf.StackDrop
}

// attach drops, before the member's own stack, every frame the member
// receives: a bpf descriptor of its own in filter-drop mode
// (bpf.DropFromStack). swctl's port on the member still reads every
// frame; the member's ARP, IP, vlan(4) and pf see none of them, whether
// or not the member has addresses. The drop goes with the descriptor:
// when the guard is closed (the member leaves, or --stack on) or the
// process dies. No firewall rule or sysctl is touched.
func attach(ifindex int, ifname string, spec progSpec) (*Guard, error) {
	if err := spec.check(ifname); err != nil {
		return nil, err
	}
	drop, err := bpf.DropFromStack(ifname)
	if err != nil {
		return nil, err
	}
	return &Guard{name: ifname, index: ifindex, att: attachment{drop: drop}}, nil
}

func (g *Guard) detach() error { return g.att.drop.Close() }
