package bpf

import "golang.org/x/sys/unix"

// ignoreOutgoing keeps the frames the interface sends, this descriptor's
// own included, out of the descriptor's buffer: OpenBSD's BIOCSDIRFILT
// takes the set of directions to filter out (sys/net/bpf.h).
func ignoreOutgoing(fd int) error {
	_, err := ioctlUint(fd, unix.BIOCSDIRFILT, unix.BPF_DIRECTION_OUT)
	return err
}

// directionIoctl names the ioctl ignoreOutgoing uses, for errors.
const directionIoctl = "BIOCSDIRFILT"
