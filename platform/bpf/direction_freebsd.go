package bpf

import "golang.org/x/sys/unix"

// BPF_D_IN is the first value of enum bpf_direction (FreeBSD
// sys/net/bpf.h: BPF_D_IN, BPF_D_INOUT, BPF_D_OUT): capture incoming
// packets only. x/sys/unix does not define it.
const bpfDIn = 0

// ignoreOutgoing keeps the frames the interface sends, this descriptor's
// own included, out of the descriptor's buffer: FreeBSD's BIOCSDIRECTION
// takes the direction to capture.
func ignoreOutgoing(fd int) error {
	_, err := ioctlUint(fd, unix.BIOCSDIRECTION, bpfDIn)
	return err
}

// directionIoctl names the ioctl ignoreOutgoing uses, for errors.
const directionIoctl = "BIOCSDIRECTION"
