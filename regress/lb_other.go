//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// lbBed is the Linux load-balancing testbed; on other systems it is
// never built.
type lbBed struct {
	// pin is never set.
	pin lbPinning
}

func newLBBed(context.Context, LBConfig, string, *Commands) (*lbBed, error) {
	return nil, fmt.Errorf("regress: load-balancing testbed not implemented on %s", runtime.GOOS)
}

func (b *lbBed) start(context.Context, LBInstance, string) error { return nil }

func (b *lbBed) measure(context.Context, LBInstance, string) (LBSample, error) {
	return LBSample{}, nil
}

func (b *lbBed) stop() error { return nil }

func (b *lbBed) close() {}

func lbTools(context.Context) map[string]string { return nil }
