package bridge

import "github.com/swctl/swctl/platform"

// Gate is a member's port state as a spanning tree decides it (stp.Gate
// is one): whether the source addresses of frames received on the member
// are learned, and whether frames may come in from it and go out to it.
// Each method is called once per frame (Forwarding first; Learning only
// for a member that does not forward), so each must be cheap, lock-free
// and safe for concurrent use: one atomic load.
type Gate interface {
	// Learning reports whether source addresses of frames received on
	// the member are learned (the learning and forwarding states).
	Learning() bool
	// Forwarding reports whether frames received on the member are
	// forwarded and frames may be sent to it (the forwarding state).
	Forwarding() bool
}

// gateRef holds a member's Gate, so that it can sit behind an atomic
// pointer.
type gateRef struct {
	// g is the gate; never nil.
	g Gate
}

// SetPortGate makes g the gate of the member called name; nil (the
// default) means the member always forwards and learns as its flags say,
// as when no spanning tree runs. Pass a nil interface, not a typed nil
// pointer. Frames already being forwarded may still see the old gate.
//
// A member whose gate does not forward receives nothing from the bridge
// and forwards nothing into it: its frames are dropped (counted in
// DroppedDiscarding) after their source address is learned if the gate
// learns and the member's Learning flag is set. Link-local frames (BPDUs)
// still reach its link-local handler, and whatever the spanning tree
// sends through the member's Port itself still goes out.
func (b *Bridge) SetPortGate(name string, g Gate) error {
	m, err := b.member("set gate of", name)
	if err != nil {
		return err
	}
	if g == nil {
		m.gate.Store(nil)
	} else {
		m.gate.Store(&gateRef{g: g})
	}
	return nil
}

// AddGatedPort is AddPort with the member's gate g (see SetPortGate) and
// link-local handler h (see SetLinkLocalHandler; nil for none) in place
// before its reader starts: no frame crosses the member before the
// spanning tree lets it, and no BPDU it receives first is missed.
func (b *Bridge) AddGatedPort(p platform.Port, f PortFlags, g Gate, h func(frame []byte)) error {
	return b.add(p, f, false, func(m *Member) {
		if g != nil {
			m.gate.Store(&gateRef{g: g})
		}
		if h != nil {
			m.linkLocal.Store(&h)
		}
	})
}

// forwarding reports whether copies may be sent to m: its BPDU guard has
// not disabled it, and it has no gate or its gate forwards.
func (m *Member) forwarding() bool {
	if m.disabled.Load() {
		return false
	}
	r := m.gate.Load()
	return r == nil || r.g.Forwarding()
}
