//go:build !linux

package afpacket

import (
	"fmt"
	"net"
	"runtime"

	"github.com/swctl/swctl/platform"
)

// sockets are none: AF_PACKET is Linux's (the BSDs use the bpf backend).
type sockets struct{}

// openPort fails: see Open.
func openPort(name string, _ Options) (*Port, error) {
	return nil, fmt.Errorf("afpacket %s: not implemented on %s", name, runtime.GOOS)
}

// No Port is ever made here, so nothing below runs; a Port made by hand
// is as closed.

func (p *Port) read([][]byte, []platform.Offload) (int, error) { return 0, platform.ErrClosed }

func (p *Port) queues() int { return 0 }

func (p *Port) readQueueAt(int, [][]byte, []platform.Offload) (int, error) {
	return 0, platform.ErrClosed
}

func (p *Port) write([][]byte, []platform.Offload) (int, error) { return 0, platform.ErrClosed }

func (p *Port) refreshStats() {}

func (p *Port) setPromisc(bool) error { return platform.ErrClosed }

func (p *Port) setAllMulti(bool) error { return platform.ErrClosed }

func (p *Port) joinGroup(net.HardwareAddr) error { return platform.ErrClosed }

func (p *Port) close() error { return nil }
