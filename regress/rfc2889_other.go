//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// addrBed is the Linux address-caching testbed; on other systems it is
// never built.
type addrBed struct{}

func newAddrBed(context.Context, RFC2889Config, string, *Commands) (*addrBed, error) {
	return nil, fmt.Errorf("regress: address-caching testbed not implemented on %s", runtime.GOOS)
}

func (b *addrBed) start(context.Context, RoleRun, string) error { return nil }

func (b *addrBed) measure(context.Context) (RFC2889Sample, error) { return RFC2889Sample{}, nil }

func (b *addrBed) stop() error { return nil }

func (b *addrBed) close() {}
