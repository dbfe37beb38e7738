//go:build !linux && !openbsd && !freebsd

package lladdr

import (
	"fmt"
	"net"
	"runtime"
)

// errNotImplemented is returned for every interface operation: changing
// an lladdr is implemented on Linux, OpenBSD and FreeBSD only. The journal
// itself works.
var errNotImplemented = fmt.Errorf("lladdr: not implemented on %s (Linux, OpenBSD and FreeBSD only)", runtime.GOOS)

// systemLinks is the stub for OSes without an lladdr implementation.
type systemLinks struct{}

func (systemLinks) link(string) (int, net.HardwareAddr, error) {
	return 0, nil, errNotImplemented
}

func (systemLinks) linkByIndex(int) (string, net.HardwareAddr, error) {
	return "", nil, errNotImplemented
}

func (systemLinks) setMAC(int, net.HardwareAddr) error { return errNotImplemented }
