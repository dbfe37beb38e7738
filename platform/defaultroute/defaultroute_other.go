//go:build !linux && !openbsd && !freebsd

package defaultroute

import (
	"fmt"
	"runtime"
)

func ifaces() ([]string, error) {
	return nil, fmt.Errorf("default routes: not implemented on %s", runtime.GOOS)
}
