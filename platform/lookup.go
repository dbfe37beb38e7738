package platform

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
)

// LookupEthernet finds the interface a backend's Open attaches to and its
// link state: up when the interface is up and running, else down. It
// fails when there is no such interface or it is not an Ethernet one (no
// 6-byte hardware address). The error does not name the interface; the
// backend puts its name in front ("afpacket eth9: no such network
// interface").
func LookupEthernet(name string) (*net.Interface, LinkState, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, LinkAbsent, err
	}
	if len(ifi.HardwareAddr) != 6 {
		return nil, LinkAbsent, fmt.Errorf("not an Ethernet interface (hardware address %q)", ifi.HardwareAddr)
	}
	link := LinkDown
	if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0 {
		link = LinkUp
	}
	return ifi, link, nil
}

// Iface is what a port on a kernel interface reports of it through the
// Port methods of the same names: its name, MAC address, MTU, batch size
// and link state. A backend embeds one and fills it at Open with Lookup.
// Its methods are safe for concurrent use.
type Iface struct {
	// name is the interface name; immutable after Init.
	name string
	// mac is the interface's hardware address at Open; immutable after
	// Init.
	mac net.HardwareAddr
	// batch is the most frames one ReadBatch returns or one system call
	// sends; immutable after Init.
	batch int
	// mtu is the L2 payload limit WriteBatch enforces (one tag allowed).
	mtu atomic.Int64
	// link is the LinkState, set at Init and by SetLink.
	link atomic.Uint32
}

// Lookup finds the Ethernet interface name (LookupEthernet) and fills f
// from it, for a port of kind ("afpacket", "bpf") that moves batch frames
// per call. It returns the interface; its error names kind and name.
func (f *Iface) Lookup(kind, name string, batch int) (*net.Interface, error) {
	ifi, link, err := LookupEthernet(name)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, name, err)
	}
	f.Init(name, ifi.HardwareAddr, ifi.MTU, batch, link)
	return ifi, nil
}

// Init fills f; Lookup calls it, and tests of a backend without an
// interface.
func (f *Iface) Init(name string, mac net.HardwareAddr, mtu, batch int, link LinkState) {
	f.name, f.mac, f.batch = name, mac, batch
	f.mtu.Store(int64(mtu))
	f.link.Store(uint32(link))
}

// Name implements Port.
func (f *Iface) Name() string { return f.name }

// HardwareAddr implements Port. The caller must not modify it.
func (f *Iface) HardwareAddr() net.HardwareAddr { return f.mac }

// MTU implements Port: the interface's MTU at Open, or as last set with
// SetMTU.
func (f *Iface) MTU() int { return int(f.mtu.Load()) }

// SetMTU changes the MTU WriteBatch enforces, for a watcher that sees the
// interface change.
func (f *Iface) SetMTU(mtu int) { f.mtu.Store(int64(mtu)) }

// BatchSize implements Port.
func (f *Iface) BatchSize() int { return f.batch }

// Link implements Port.
func (f *Iface) Link() LinkState { return LinkState(f.link.Load()) }

// SetLink implements LinkSetter.
func (f *Iface) SetLink(s LinkState) { f.link.Store(uint32(s)) }

// MaxBatchSize is the most frames a backend moves per call.
const MaxBatchSize = 1024

// CheckBatchSize returns the batch size a port of kind ("afpacket",
// "bpf") on the interface name asks for: n, or DefaultBatchSize for 0. It
// fails, naming kind and name, when n is outside 1 to MaxBatchSize.
func CheckBatchSize(kind, name string, n int) (int, error) {
	if n == 0 {
		return DefaultBatchSize, nil
	}
	if n < 0 || n > MaxBatchSize {
		return 0, fmt.Errorf("%s %s: batch size %d out of range 1-%d", kind, name, n, MaxBatchSize)
	}
	return n, nil
}
