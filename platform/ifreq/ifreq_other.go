//go:build !openbsd && !freebsd

package ifreq

import (
	"fmt"
	"net"
	"runtime"
)

// errNotImplemented is what every ioctl returns where there is none.
var errNotImplemented = fmt.Errorf("ifreq: not implemented on %s (OpenBSD and FreeBSD only)", runtime.GOOS)

// SetLLAddr is implemented on OpenBSD and FreeBSD only.
func SetLLAddr(string, net.HardwareAddr) error { return errNotImplemented }

// SetMTU is implemented on OpenBSD and FreeBSD only.
func SetMTU(string, int) error { return errNotImplemented }

// SetUp is implemented on OpenBSD and FreeBSD only.
func SetUp(string) error { return errNotImplemented }

// Flags is implemented on OpenBSD and FreeBSD only.
func Flags(string) (uint32, error) { return 0, errNotImplemented }

// SetDown is implemented on OpenBSD and FreeBSD only.
func SetDown(string) error { return errNotImplemented }

// Create is implemented on OpenBSD and FreeBSD only.
func Create(string) (string, error) { return "", errNotImplemented }

// Destroy is implemented on OpenBSD and FreeBSD only.
func Destroy(string) error { return errNotImplemented }

// ReadName is implemented on OpenBSD and FreeBSD only.
func ReadName(int, uint) (string, error) { return "", errNotImplemented }
