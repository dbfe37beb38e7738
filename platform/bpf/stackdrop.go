package bpf

import (
	"fmt"
	"sync"
)

// Filter-drop modes of OpenBSD's BIOCSFILDROP (sys/net/bpf.h): what the
// kernel does with a packet a descriptor's read filter accepts. A packet
// any descriptor on the interface wants dropped is freed once every
// descriptor has seen it (_bpf_mtap in sys/net/bpf.c), before the
// interface's input routine: other descriptors, swctl's port included,
// still capture it. x/sys/unix defines these for OpenBSD only; the
// portable copies let the tests check them on any OS.
const (
	// bpfFildropPass is BPF_FILDROP_PASS: capture, and let the packet
	// go on to the stack (the default).
	bpfFildropPass = 0
	// bpfFildropCapture is BPF_FILDROP_CAPTURE: capture, then drop.
	bpfFildropCapture = 1
	// bpfFildropDrop is BPF_FILDROP_DROP: drop without capturing.
	bpfFildropDrop = 2
	// biocSFildrop is BIOCSFILDROP, _IOW('B', 121, u_int): set the
	// descriptor's filter-drop mode.
	biocSFildrop = 0x80044279
)

// StackDrop keeps an interface's own network stack off every frame the
// interface receives, for as long as it is open. On OpenBSD it is a bpf
// descriptor of its own on the interface in filter-drop mode
// (BIOCSFILDROP with BPF_FILDROP_DROP): it matches every incoming frame,
// captures none, and makes the kernel free each one after all bpf
// descriptors have seen it and before ether_input, so ARP, IPv4, IPv6,
// vlan(4), pf and every other consumer behind the interface see nothing,
// while swctl's port on the same interface still reads everything. The
// drop belongs to the descriptor: closing it, or the process ending
// however it ends, gives the stack its frames back. Nothing else on the
// host (pf rules, sysctls) is touched. Frames the host sends on the
// interface are not affected. FreeBSD's bpf has no filter-drop, and
// there DropFromStack fails.
type StackDrop struct {
	// name is the interface name.
	name string
	// fd is the descriptor holding the drop; -1 once closed.
	fd int
	// mu guards fd.
	mu sync.Mutex
}

// DropFromStack starts dropping, before the stack, every frame the
// interface name receives (see StackDrop). Where bpf has no filter-drop
// (FreeBSD, and systems without bpf) it fails with "bpf NAME: drop from
// stack: not available on GOOS".
func DropFromStack(name string) (*StackDrop, error) { return dropFromStack(name) }

// Name is the interface the drop is on.
func (d *StackDrop) Name() string { return d.name }

// Close gives the interface's stack its frames back. Later calls return
// nil.
func (d *StackDrop) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return nil
	}
	err := closeFD(d.fd)
	d.fd = -1
	if err != nil {
		return fmt.Errorf("bpf %s: drop from stack: close: %w", d.name, err)
	}
	return nil
}
