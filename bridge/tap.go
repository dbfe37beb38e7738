package bridge

import "time"

// Direction is the way a tapped frame crossed a port.
type Direction uint8

// Directions, as bits: a capture may want both.
const (
	// In is a frame a port received: as its reader read it (VLAN tag
	// put back), before the bridge decided its fate.
	In Direction = 1 << iota
	// Out is a copy the bridge handed to a port (member or span) to
	// send: after the link check, before the MTU check and software
	// offloads.
	Out
)

// Tap sees the frames of a bridge, for packet capture. Capture is called
// on the forwarding path, once per batch and direction and port, by any
// reader goroutine and by several at once. It must copy what it keeps
// before it returns, and must never block: a tap that cannot keep up
// drops. frames are valid only during the call; now is the time the
// batch was read.
type Tap interface {
	Capture(port string, dir Direction, frames [][]byte, now time.Time)
}

// tapRef holds a Tap behind an atomic.Pointer.
type tapRef struct{ t Tap }

// SetTap makes t see every frame the members receive and every copy
// the bridge sends from now on; nil removes the tap. Without a tap the
// forwarding path pays one atomic load per batch.
func (b *Bridge) SetTap(t Tap) {
	if t == nil {
		b.tap.Store(nil)
		return
	}
	b.tap.Store(&tapRef{t})
}
