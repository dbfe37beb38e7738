package promisc

import (
	"fmt"
	"sync"

	"github.com/swctl/swctl/platform"
)

// Port is what the Registry needs of a port: its interface name and a
// socket-owned promiscuous membership.
type Port interface {
	// Name is the interface name.
	Name() string
	platform.Promiscuous
}

// Registry counts the promiscuous memberships swctl holds, per port and
// per interface. The first Acquire of a port takes the port's membership;
// the last Release of it gives the membership back. It is safe for
// concurrent use.
type Registry struct {
	// mu guards ports and ifaces, and serialises SetPromisc calls so a
	// port's membership and its count always agree.
	mu sync.Mutex
	// ports maps each port that holds a membership to the number of
	// Acquires not yet released.
	ports map[Port]int
	// ifaces maps an interface name to the number of ports that hold a
	// membership on it.
	ifaces map[string]int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{ports: make(map[Port]int), ifaces: make(map[string]int)}
}

// Acquire counts one more user of p's promiscuous membership. The first
// Acquire of p calls p.SetPromisc(true); if that fails nothing is counted.
func (r *Registry) Acquire(p Port) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := r.ports[p]; n > 0 {
		r.ports[p] = n + 1
		return nil
	}
	if err := p.SetPromisc(true); err != nil {
		return fmt.Errorf("promisc %s: acquire: %w", p.Name(), err)
	}
	r.ports[p] = 1
	r.ifaces[p.Name()]++
	return nil
}

// Release counts one user less of p's membership. The last Release calls
// p.SetPromisc(false); if that fails, p stays counted with one user, so
// the caller may retry (Forget drops it for good). Releasing a port that
// holds nothing is an error.
func (r *Registry) Release(p Port) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.ports[p]
	switch {
	case n == 0:
		return fmt.Errorf("promisc %s: release: not held", p.Name())
	case n > 1:
		r.ports[p] = n - 1
		return nil
	}
	if err := p.SetPromisc(false); err != nil {
		return fmt.Errorf("promisc %s: release: %w", p.Name(), err)
	}
	r.forgetLocked(p)
	return nil
}

// Forget drops every count p holds without calling SetPromisc: for a port
// that was closed, whose membership the kernel already dropped with its
// socket.
func (r *Registry) Forget(p Port) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ports[p] > 0 {
		r.forgetLocked(p)
	}
}

func (r *Registry) forgetLocked(p Port) {
	delete(r.ports, p)
	name := p.Name()
	if r.ifaces[name]--; r.ifaces[name] <= 0 {
		delete(r.ifaces, name)
	}
}

// Held reports whether swctl holds at least one promiscuous membership on
// the interface ifname (the "promisc" field of `port show`).
func (r *Registry) Held(ifname string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ifaces[ifname] > 0
}

// Users returns how many Acquires of p are not yet released.
func (r *Registry) Users(p Port) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ports[p]
}
