//go:build openbsd || freebsd

package bpf

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl issues a bpf(4) ioctl whose argument is a pointer. It goes through
// unix.Syscall with SYS_IOCTL, which the Go runtime routes to libc's
// ioctl on OpenBSD 7.5 and later, where indirect system calls are gone
// (golang/go#63900); x/sys/unix has no exported ioctl taking an
// arbitrary pointer on the BSDs.
func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// ioctlUint passes a u_int to the kernel (BIOCIMMEDIATE, BIOCSHDRCMPLT,
// BIOCSBLEN, ...) and returns what it left there (BIOCSBLEN writes back
// the size it granted; BIOCGBLEN and BIOCGDLT only write).
func ioctlUint(fd int, req uint, v uint32) (uint32, error) {
	err := ioctl(fd, req, unsafe.Pointer(&v))
	return v, err
}

// ifreqName is struct ifreq (sys/net/if.h) as BIOCSETIF reads it: the
// interface name, then a union the ioctl ignores. 32 bytes on both OSes'
// 64-bit architectures, the size encoded in BIOCSETIF (0x8020426c).
type ifreqName struct {
	// name is ifr_name, NUL-terminated.
	name [unix.IFNAMSIZ]byte
	// _ is the ifr_ifru union.
	_ [16]byte
}

// setInterface attaches the descriptor to the interface name (BIOCSETIF).
func setInterface(fd int, name string) error {
	var ifr ifreqName
	if len(name) >= len(ifr.name) {
		return fmt.Errorf("interface name longer than %d bytes", len(ifr.name)-1)
	}
	copy(ifr.name[:], name)
	return ioctl(fd, unix.BIOCSETIF, unsafe.Pointer(&ifr))
}

// stats reads the descriptor's counters (BIOCGSTATS, struct bpf_stat):
// the packets its filter saw and those it dropped for want of buffer
// space, both since the descriptor was attached.
func stats(fd int) (unix.BpfStat, error) {
	var s unix.BpfStat
	err := ioctl(fd, unix.BIOCGSTATS, unsafe.Pointer(&s))
	return s, err
}

// setDropAll installs a read filter that accepts nothing (one
// instruction, BPF_RET|BPF_K with k = 0: keep 0 bytes), for a descriptor
// that only holds a promiscuous membership.
func setDropAll(fd int) error {
	insns := []unix.BpfInsn{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	prog := unix.BpfProgram{Len: uint32(len(insns)), Insns: &insns[0]}
	return ioctl(fd, unix.BIOCSETF, unsafe.Pointer(&prog))
}

// hostLayout is the record header geometry of the running system, from
// x/sys/unix's BpfHdr (generated from the system's sys/net/bpf.h) and
// BPF_ALIGNMENT.
func hostLayout() hdrLayout {
	var h unix.BpfHdr
	return hdrLayout{
		caplen:  int(unsafe.Offsetof(h.Caplen)),
		datalen: int(unsafe.Offsetof(h.Datalen)),
		hdrlen:  int(unsafe.Offsetof(h.Hdrlen)),
		align:   unix.BPF_ALIGNMENT,
	}
}

// The structs above must have the size the ioctl numbers encode
// (IOCPARM_LEN: bits 16-28 of the request, sys/sys/ioccom.h on both OSes);
// each pair of array types fails to compile when one differs.
var (
	_ [int(unsafe.Sizeof(ifreqName{})) - (unix.BIOCSETIF>>16)&0x1fff]byte
	_ [(unix.BIOCSETIF>>16)&0x1fff - int(unsafe.Sizeof(ifreqName{}))]byte
	_ [int(unsafe.Sizeof(unix.BpfStat{})) - (unix.BIOCGSTATS>>16)&0x1fff]byte
	_ [(unix.BIOCGSTATS>>16)&0x1fff - int(unsafe.Sizeof(unix.BpfStat{}))]byte
	_ [int(unsafe.Sizeof(unix.BpfProgram{})) - (unix.BIOCSETF>>16)&0x1fff]byte
	_ [(unix.BIOCSETF>>16)&0x1fff - int(unsafe.Sizeof(unix.BpfProgram{}))]byte
)
