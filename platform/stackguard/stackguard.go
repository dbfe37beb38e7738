package stackguard

import "sync"

// Guard is an ingress drop attached to one interface. Close removes it.
type Guard struct {
	// name is the interface name, for errors and Name.
	name string
	// index is the interface index the program is attached to.
	index int
	// att holds the attachment's per-system resources (program and link).
	att attachment
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	// closeErr is what the first Close returned.
	closeErr error
}

// Attach drops every frame that interface ifindex (called ifname, used in
// errors and checked against the index when not empty) receives, after
// packet sockets have seen it, until Close or until the process exits.
// An ifindex of 0 means: look ifname up in the calling thread's network
// namespace.
func Attach(ifindex int, ifname string) (*Guard, error) {
	return attach(ifindex, ifname)
}

// Name returns the interface name.
func (g *Guard) Name() string { return g.name }

// Index returns the interface index.
func (g *Guard) Index() int { return g.index }

// Close detaches the program: the interface's stack sees its frames again.
// Safe to call more than once.
func (g *Guard) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.detach() })
	return g.closeErr
}
