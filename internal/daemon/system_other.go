//go:build !linux

package daemon

import (
	"fmt"
	"runtime"
)

func newSystem() (system, error) {
	return nil, fmt.Errorf("swctl daemon: not implemented on %s yet (the bpf backend comes with the BSD work)", runtime.GOOS)
}
