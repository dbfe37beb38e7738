package service

import (
	"net/netip"
	"time"

	"github.com/swctl/swctl/lb"
)

// Status is a snapshot of a service, for display.
type Status struct {
	// Name, Port and MAC name the service, its port and the MAC it
	// answers for its VIPs with.
	Name, Port, MAC string
	// Method is the selection method; Check the health check as
	// ParseCheck reads it.
	Method lb.Method
	Check  string
	// Flows is the number of flows in the connection table.
	Flows int
	// Frames and Bytes count frames forwarded to backends.
	Frames, Bytes uint64
	// NoBackend counts frames to a VIP dropped because no backend could
	// take them (all down, or none); Unresolved those whose backend's
	// MAC was not known.
	NoBackend, Unresolved uint64
	// BadARP, BadND and BadIP count malformed frames of each kind.
	BadARP, BadND, BadIP uint64
	// ARPReplies and NAReplies count the answers sent for VIPs.
	ARPReplies, NAReplies uint64
	// SendErrors counts frames the port refused.
	SendErrors uint64
	// Serving is the number of backends taking new flows.
	Serving int
	// Backends are the backends in configuration order.
	Backends []BackendStatus
}

// BackendStatus is one backend in a Status.
type BackendStatus struct {
	// Addr is the backend's address; MAC its MAC, "" while unknown.
	Addr netip.Addr
	MAC  string
	// Weight is its weight; Drain whether it is drained.
	Weight int
	Drain  bool
	// State is what selection makes of it: serving, draining or down.
	State lb.BackendState
	// Health is its health state ("none" without a check), HealthSince
	// when it was entered, LastError the cause of its last failed check.
	Health      string
	HealthSince time.Time
	LastError   string
	// Frames and Bytes count what was forwarded to it.
	Frames, Bytes uint64
}

// Status returns a snapshot of the service.
func (s *Service) Status() Status {
	st := Status{Name: s.name, Port: s.port.Name(), MAC: s.mac.String(), Method: s.bal.Method(), Check: s.check.String(),
		Frames: s.c.frames.Load(), Bytes: s.c.bytes.Load(),
		NoBackend: s.c.noBackend.Load(), Unresolved: s.c.unresolved.Load(),
		BadARP: s.c.badARP.Load(), BadND: s.c.badND.Load(), BadIP: s.c.badIP.Load(),
		ARPReplies: s.c.arpReplies.Load(), NAReplies: s.c.naReplies.Load(), SendErrors: s.c.sendErrors.Load()}
	if ct := s.bal.ConnTable(); ct != nil {
		st.Flows = ct.Len()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range *s.backends.Load() {
		bs := BackendStatus{Addr: b.addr, Weight: b.weight, Drain: b.drain, State: s.stateOf(b), Health: "none",
			Frames: b.frames.Load(), Bytes: b.bytes.Load()}
		if mac, ok := b.MAC(); ok {
			bs.MAC = mac.String()
		}
		if b.health != nil {
			h := b.health.Status()
			bs.Health, bs.HealthSince, bs.LastError = h.State.String(), h.Since, h.LastError
		}
		if bs.State == lb.Serving {
			st.Serving++
		}
		st.Backends = append(st.Backends, bs)
	}
	return st
}
