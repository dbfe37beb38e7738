//go:build !linux

package daemon

import (
	"fmt"
	"log/slog"
	"runtime"

	"github.com/swctl/swctl/promisc"
)

func newSystem(*promisc.Journal, *slog.Logger) (system, error) {
	return nil, fmt.Errorf("swctl daemon: not implemented on %s yet (the bpf backend comes with the BSD work)", runtime.GOOS)
}
