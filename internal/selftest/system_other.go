//go:build !linux && !openbsd && !freebsd

package selftest

import (
	"fmt"
	"runtime"
)

// errNotImplemented is every OS operation's error where swctl has no
// packet I/O.
var errNotImplemented = fmt.Errorf("not implemented on %s (Linux, OpenBSD and FreeBSD only)", runtime.GOOS)

func hostSystem() system {
	return system{
		backend:       "none",
		events:        "none",
		newPair:       func() (*pair, error) { return nil, errNotImplemented },
		openPort:      func(string) (packetPort, error) { return nil, errNotImplemented },
		promiscuity:   func(string) (int, error) { return 0, errNotImplemented },
		promiscSource: "none",
		newTAP:        createTAP,
		setLink:       func(string, bool) error { return errNotImplemented },
		noStack:       errNotImplemented.Error(),
	}
}
