package stp

import (
	"cmp"
	"time"
)

// vector is a spanning tree priority vector (802.1D-2004 17.6) without
// its last component, the receiving port's identifier, which only role
// selection compares. Lower is better, component by component.
type vector struct {
	// root is the root bridge identifier.
	root BridgeID
	// cost is the root path cost.
	cost uint32
	// bridge is the designated bridge identifier.
	bridge BridgeID
	// port is the designated port identifier.
	port PortID
}

// compare returns a negative number when v is better than w, 0 when they
// are the same, a positive one when v is worse.
func (v vector) compare(w vector) int {
	if c := cmp.Compare(v.root, w.root); c != 0 {
		return c
	}
	if c := cmp.Compare(v.cost, w.cost); c != 0 {
		return c
	}
	if c := cmp.Compare(v.bridge, w.bridge); c != 0 {
		return c
	}
	return cmp.Compare(v.port, w.port)
}

// sameSender reports whether v and w were sent by the same designated
// port: the same bridge address and port number, whatever the priorities.
// A message from the port that sent the port's information replaces it
// even when it is worse (802.1D-2004 17.6).
func (v vector) sameSender(w vector) bool {
	return v.bridge.address() == w.bridge.address() && v.port.Number() == w.port.Number()
}

// times are the timer values carried in BPDUs, in whole seconds
// (802.1D-2004 17.19.21).
type times struct {
	// messageAge is the age of the information.
	messageAge uint16
	// maxAge is the age at which it is discarded.
	maxAge uint16
	// helloTime is the interval between BPDUs.
	helloTime uint16
	// forwardDelay is the duration of the discarding and learning waits.
	forwardDelay uint16
}

// seconds rounds a received timer value to the nearest whole second.
func seconds(d time.Duration) uint16 {
	return uint16((d + time.Second/2) / time.Second)
}

// timesOf returns the times of a received BPDU.
func timesOf(f *Fields) times {
	return times{
		messageAge:   seconds(f.MessageAge),
		maxAge:       seconds(f.MaxAge),
		helloTime:    seconds(f.HelloTime),
		forwardDelay: seconds(f.ForwardDelay),
	}
}

// addCost returns cost a + b, saturated.
func addCost(a, b uint32) uint32 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint32(0)
}

// durationOf returns s seconds as a duration.
func durationOf(s uint16) time.Duration { return time.Duration(s) * time.Second }
