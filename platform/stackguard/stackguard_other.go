//go:build !linux && !openbsd && !freebsd

package stackguard

import (
	"fmt"
	"runtime"
)

// attachment is empty where there is no guard.
type attachment struct{}

func attach(ifindex int, ifname string) (*Guard, error) {
	return nil, fmt.Errorf("stackguard %s (index %d): not implemented on %s", ifname, ifindex, runtime.GOOS)
}

func (g *Guard) detach() error { return nil }
