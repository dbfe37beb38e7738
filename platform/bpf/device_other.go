//go:build !linux && !openbsd && !freebsd

package bpf

import "github.com/swctl/swctl/platform"

// device is nothing here: no Port is ever made (see Open), so nothing
// below runs; a Port made by hand is as closed.
type device struct{}

func (p *Port) read([][]byte) (int, error) { return 0, platform.ErrClosed }

func (p *Port) write([][]byte) (int, error) { return 0, platform.ErrClosed }
