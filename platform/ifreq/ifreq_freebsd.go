package ifreq

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Rename renames the interface name to newName (SIOCSIFNAME: ifr_data
// points to the new name, NUL-terminated). The kernel refuses a name in
// use (EEXIST) and, in a jail without the privilege, any (EPERM).
func Rename(name, newName string) error {
	n, err := makeName(name)
	if err != nil {
		return err
	}
	nn, err := makeName(newName)
	if err != nil {
		return err
	}
	r := reqData{name: n, data: &nn[0]}
	return withSocket(func(fd int) error {
		if err := ioctl(fd, unix.SIOCSIFNAME, pointerOf(&r)); err != nil {
			return fmt.Errorf("SIOCSIFNAME %s: %w", newName, err)
		}
		return nil
	})
}

// SIOCSIFNAME takes a struct ifreq.
var _ = [1]struct{}{}[((unix.SIOCSIFNAME>>16)&iocparmMask)^Size]
