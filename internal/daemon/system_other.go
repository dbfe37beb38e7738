//go:build !linux

package daemon

import (
	"fmt"
	"runtime"

	"github.com/swctl/swctl/promisc"
)

func newSystem(*promisc.Journal) (system, error) {
	return nil, fmt.Errorf("swctl daemon: not implemented on %s yet (the bpf backend comes with the BSD work)", runtime.GOOS)
}
