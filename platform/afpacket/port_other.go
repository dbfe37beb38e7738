//go:build !linux

package afpacket

import (
	"fmt"
	"net"
	"runtime"

	"github.com/swctl/swctl/platform"
)

// AF_PACKET is Linux's (the BSDs use the bpf backend): a port has no
// receive side, send side or control path here.
type (
	receiver struct{}
	sender   struct{}
	control  struct{}
)

// openPort fails: see Open.
func openPort(name string, _ Options) (*Port, error) {
	return nil, fmt.Errorf("afpacket %s: not implemented on %s", name, runtime.GOOS)
}

// No Port is ever made here, so nothing below runs; a Port made by hand
// is as closed.

func (*receiver) read([][]byte, []platform.Offload, bool) (int, error) { return 0, platform.ErrClosed }

func (*receiver) numQueues() int { return 0 }

func (*receiver) readQueue(int, [][]byte, []platform.Offload) (int, error) {
	return 0, platform.ErrClosed
}

func (*sender) write([][]byte, []platform.Offload) (int, error) { return 0, platform.ErrClosed }

func (*sender) room(int) int { return -1 }

func (*sender) fit([][]byte) int { return -1 }

func (*control) setPromisc(bool) error { return platform.ErrClosed }

func (*control) setAllMulti(bool) error { return platform.ErrClosed }

func (*control) join(net.HardwareAddr) error { return platform.ErrClosed }

func (p *Port) refreshStats() {}

func (p *Port) close() error { return nil }
