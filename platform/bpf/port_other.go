//go:build !openbsd && !freebsd

package bpf

import (
	"fmt"
	"net"
	"runtime"

	"github.com/swctl/swctl/platform"
)

// Port is a bpf(4) port. This backend exists only on OpenBSD and FreeBSD
// (Linux uses AF_PACKET): elsewhere Open always fails and no Port is ever
// made.
type Port struct{}

// Open fails: bpf is implemented on OpenBSD and FreeBSD only.
func Open(name string, opts Options) (*Port, error) {
	return nil, fmt.Errorf("bpf %s: not implemented on %s", name, runtime.GOOS)
}

// Name implements platform.Port.
func (p *Port) Name() string { return "" }

// HardwareAddr implements platform.Port.
func (p *Port) HardwareAddr() net.HardwareAddr { return nil }

// MTU implements platform.Port.
func (p *Port) MTU() int { return 0 }

// SetMTU changes the MTU WriteBatch enforces.
func (p *Port) SetMTU(int) {}

// Headroom implements platform.Port.
func (p *Port) Headroom() int { return 0 }

// BatchSize implements platform.Port.
func (p *Port) BatchSize() int { return 1 }

// BufferSize is the size of the descriptor's buffer.
func (p *Port) BufferSize() int { return 0 }

// Link implements platform.Port.
func (p *Port) Link() platform.LinkState { return platform.LinkAbsent }

// SetLink implements platform.LinkSetter.
func (p *Port) SetLink(platform.LinkState) {}

// ReadBatch implements platform.Port.
func (p *Port) ReadBatch([][]byte) (int, error) { return 0, platform.ErrClosed }

// WriteBatch implements platform.Port.
func (p *Port) WriteBatch([][]byte) (int, error) { return 0, platform.ErrClosed }

// Counters implements platform.Port.
func (p *Port) Counters() platform.Counters { return platform.Counters{} }

// SetPromisc implements platform.Promiscuous.
func (p *Port) SetPromisc(bool) error { return platform.ErrClosed }

// Promisc implements platform.Promiscuous.
func (p *Port) Promisc() bool { return false }

// Close implements platform.Port.
func (p *Port) Close() error { return nil }
