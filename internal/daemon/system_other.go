//go:build !linux && !openbsd && !freebsd

package daemon

import (
	"fmt"
	"log/slog"
	"runtime"

	"github.com/swctl/swctl/platform/lladdr"
)

func newSystem(*lladdr.Journal, *slog.Logger, Options) (system, error) {
	return nil, fmt.Errorf("swctl daemon: not implemented on %s (swctl runs on Linux, OpenBSD and FreeBSD)", runtime.GOOS)
}
