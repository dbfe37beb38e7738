//go:build !linux

package afpacket

import (
	"fmt"
	"net"
	"runtime"

	"github.com/swctl/swctl/platform"
)

// Port is an AF_PACKET port. AF_PACKET exists only on Linux: elsewhere
// Open always fails and no Port is ever made.
type Port struct{}

// Open fails: AF_PACKET is Linux-only (the BSDs use the bpf backend).
func Open(name string, opts Options) (*Port, error) {
	return nil, fmt.Errorf("afpacket %s: not implemented on %s", name, runtime.GOOS)
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

// ReadBatch implements platform.Port.
func (p *Port) ReadBatch([][]byte) (int, error) { return 0, platform.ErrClosed }

// WriteBatch implements platform.Port.
func (p *Port) WriteBatch([][]byte) (int, error) { return 0, platform.ErrClosed }

// OffloadEnabled implements platform.OffloadPort.
func (p *Port) OffloadEnabled() bool { return false }

// ReadBatchOffload implements platform.OffloadPort.
func (p *Port) ReadBatchOffload([][]byte, []platform.Offload) (int, error) {
	return 0, platform.ErrClosed
}

// WriteBatchOffload implements platform.OffloadPort.
func (p *Port) WriteBatchOffload([][]byte, []platform.Offload) (int, error) {
	return 0, platform.ErrClosed
}

// Link implements platform.Port.
func (p *Port) Link() platform.LinkState { return platform.LinkAbsent }

// SetLink implements platform.LinkSetter.
func (p *Port) SetLink(platform.LinkState) {}

// Counters implements platform.Port.
func (p *Port) Counters() platform.Counters { return platform.Counters{} }

// Close implements platform.Port.
func (p *Port) Close() error { return nil }

// SetPromisc implements platform.Promiscuous.
func (p *Port) SetPromisc(bool) error { return platform.ErrClosed }

// Promisc implements platform.Promiscuous.
func (p *Port) Promisc() bool { return false }

// SetAllMulti takes or releases an all-multicast membership.
func (p *Port) SetAllMulti(bool) error { return platform.ErrClosed }

// AllMulti reports whether the port holds an all-multicast membership.
func (p *Port) AllMulti() bool { return false }

// JoinMulticast joins a multicast group.
func (p *Port) JoinMulticast(net.HardwareAddr) error { return platform.ErrClosed }
