//go:build !linux && !openbsd && !freebsd

package main

import (
	"fmt"
	"runtime"
)

// openBenchPort fails: swctl has packet I/O on Linux, OpenBSD and FreeBSD
// only.
func openBenchPort(name string, rx bool) (benchPort, error) {
	return nil, fmt.Errorf("%s: packet I/O not implemented on %s", name, runtime.GOOS)
}
