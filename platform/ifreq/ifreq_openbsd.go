package ifreq

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Patch connects the pair(4) interface name to the pair interface whose
// index is peer (SIOCSIFPAIR with ifr_index, what `ifconfig name patch
// peer` does): frames sent on one are received on the other.
func Patch(name string, peer int) error {
	n, err := makeName(name)
	if err != nil {
		return err
	}
	if peer <= 0 {
		return fmt.Errorf("pair peer index %d: want a positive interface index", peer)
	}
	r := reqInt{name: n, value: int32(peer)}
	return withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCSIFPAIR, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCSIFPAIR %d: %w", peer, err)
		}
		return nil
	})
}

// SIOCSIFPAIR takes a struct ifreq.
var _ = [1]struct{}{}[((unix.SIOCSIFPAIR>>16)&iocparmMask)^Size]
