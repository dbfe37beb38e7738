//go:build !linux && !openbsd && !freebsd

package stackguard

import (
	"fmt"
	"net/netip"
	"runtime"
)

// attachment is empty where there is no guard.
type attachment struct{}

// progSpec is the program to attach; nothing off Linux.
type progSpec = any

func dropSpec() progSpec { return nil }

func addrsSpec([]netip.Addr) progSpec { return nil }

func attach(ifindex int, ifname string, _ progSpec) (*Guard, error) {
	return nil, fmt.Errorf("stackguard %s (index %d): not implemented on %s", ifname, ifindex, runtime.GOOS)
}

func (g *Guard) detach() error { return nil }
