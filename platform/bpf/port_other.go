//go:build !openbsd && !freebsd

package bpf

import (
	"fmt"
	"runtime"

	"github.com/swctl/swctl/platform"
)

// openPort fails: see Open. (Linux uses AF_PACKET.)
func openPort(name string, _ Options) (*Port, error) {
	return nil, fmt.Errorf("bpf %s: not implemented on %s", name, runtime.GOOS)
}

// No Port is ever made here, so nothing below runs; a Port made by hand
// is as closed.

func (p *Port) refreshStats() {}

func (p *Port) setPromisc(bool) error { return platform.ErrClosed }

func (p *Port) close() error { return nil }
