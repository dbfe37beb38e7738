package stackguard

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// tcActShot is TC_ACT_SHOT (include/uapi/linux/pkt_cls.h): drop the packet.
const tcActShot = 2

// attachment is the loaded program and the tcx link holding it attached.
type attachment struct {
	// prog is the "return TC_ACT_SHOT" program.
	prog *ebpf.Program
	// link is the BPF link; closing its descriptor detaches prog.
	link link.Link
}

// memlock raises RLIMIT_MEMLOCK once, where the kernel still charges BPF
// memory to it (before 5.11); on newer kernels it does nothing.
var memlock = sync.OnceValue(rlimit.RemoveMemlock)

// dropSpec is the program: r0 = TC_ACT_SHOT; exit.
func dropSpec() *ebpf.ProgramSpec {
	return &ebpf.ProgramSpec{
		Name: "swctl_drop",
		Type: ebpf.SchedCLS,
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R0, tcActShot),
			asm.Return(),
		},
		License: "Dual MIT/GPL",
	}
}

func attach(ifindex int, ifname string, spec *ebpf.ProgramSpec) (*Guard, error) {
	label := fmt.Sprintf("stackguard %s (index %d)", ifname, ifindex)
	if ifname == "" {
		label = fmt.Sprintf("stackguard index %d", ifindex)
	}
	switch {
	case ifindex < 0 || (ifindex == 0 && ifname == ""):
		return nil, fmt.Errorf("%s: no interface given", label)
	case ifindex == 0:
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return nil, fmt.Errorf("stackguard %s: no such interface: %w", ifname, err)
		}
		ifindex = ifi.Index
	default:
		ifi, err := net.InterfaceByIndex(ifindex)
		if err != nil {
			return nil, fmt.Errorf("%s: no such interface: %w", label, err)
		}
		if ifname != "" && ifi.Name != ifname {
			return nil, fmt.Errorf("%s: index %d is %s now", label, ifindex, ifi.Name)
		}
		ifname = ifi.Name
	}
	label = fmt.Sprintf("stackguard %s (index %d)", ifname, ifindex)

	if err := memlock(); err != nil {
		return nil, fmt.Errorf("%s: raise RLIMIT_MEMLOCK: %w", label, err)
	}
	prog, err := ebpf.NewProgram(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: load drop program: %w", label, err)
	}
	l, err := link.AttachTCX(link.TCXOptions{
		Interface: ifindex,
		Program:   prog,
		Attach:    ebpf.AttachTCXIngress,
	})
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("%s: attach tcx ingress: %w", label, err)
	}
	return &Guard{name: ifname, index: ifindex, att: attachment{prog: prog, link: l}}, nil
}

func (g *Guard) detach() error {
	var errs []error
	if err := g.att.link.Close(); err != nil {
		errs = append(errs, fmt.Errorf("stackguard %s: detach: %w", g.name, err))
	}
	if err := g.att.prog.Close(); err != nil {
		errs = append(errs, fmt.Errorf("stackguard %s: close program: %w", g.name, err))
	}
	return errors.Join(errs...)
}
