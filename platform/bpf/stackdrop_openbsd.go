package bpf

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// The portable copies in stackdrop.go must be OpenBSD's: each pair fails
// to compile when they differ.
var (
	_ [unix.BIOCSFILDROP - biocSFildrop]byte
	_ [biocSFildrop - unix.BIOCSFILDROP]byte
	_ [unix.BPF_FILDROP_DROP - bpfFildropDrop]byte
	_ [bpfFildropDrop - unix.BPF_FILDROP_DROP]byte
	_ [unix.BPF_FILDROP_CAPTURE - bpfFildropCapture]byte
	_ [bpfFildropCapture - unix.BPF_FILDROP_CAPTURE]byte
	_ [unix.BPF_FILDROP_PASS - bpfFildropPass]byte
	_ [bpfFildropPass - unix.BPF_FILDROP_PASS]byte
)

// dropFromStack is DropFromStack on OpenBSD: a descriptor with the
// smallest buffer, no read filter (a descriptor without one accepts
// every packet), outgoing packets filtered out (so only what the
// interface receives is dropped), and BPF_FILDROP_DROP, all set before
// BIOCSETIF, so that the drop starts whole. The small buffer matters on
// older kernels, where BIOCSFILDROP was a boolean and any
// non-zero mode captured as well as dropped: there the buffer fills and
// the rest is counted as the descriptor's drops, at no cost to swctl's
// port.
func dropFromStack(name string) (*StackDrop, error) {
	fd, err := openDevice()
	if err != nil {
		return nil, fmt.Errorf("bpf %s: drop from stack: %w", name, err)
	}
	fail := func(what string, err error) (*StackDrop, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("bpf %s: drop from stack: %s: %w", name, what, err)
	}
	if _, err := ioctlUint(fd, unix.BIOCSBLEN, minBufferSize); err != nil {
		return fail("BIOCSBLEN", err)
	}
	if err := ignoreOutgoing(fd); err != nil {
		return fail(directionIoctl, err)
	}
	if _, err := ioctlUint(fd, biocSFildrop, bpfFildropDrop); err != nil {
		return fail("BIOCSFILDROP", err)
	}
	if err := setInterface(fd, name); err != nil {
		return fail("BIOCSETIF", err)
	}
	return &StackDrop{name: name, fd: fd}, nil
}

// closeFD closes the drop's descriptor.
func closeFD(fd int) error { return unix.Close(fd) }
