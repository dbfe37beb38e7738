//go:build !linux && !openbsd && !freebsd

package linkwatch

import (
	"fmt"
	"runtime"
)

// source is empty off Linux.
type source struct{}

func openSource() (*source, []Event, error) {
	return nil, nil, fmt.Errorf("linkwatch: not implemented on %s", runtime.GOOS)
}

func (s *source) close() {}

func (w *Watcher) run() error { return nil }
