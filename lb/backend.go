package lb

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Limits of a backend set.
const (
	// MaxBackends bounds the backends of one set; backend IDs are 0 to
	// MaxBackends-1.
	MaxBackends = 4096
	// MaxWeight is the largest backend weight.
	MaxWeight = 1000
)

// BackendState says which flows a backend may take.
type BackendState uint8

// Backend states.
const (
	// Serving backends take new flows and keep their established ones
	// (the zero value).
	Serving BackendState = iota
	// Draining backends keep the flows the connection table has on them
	// but take no new flow.
	Draining
	// Down backends take nothing: their health checks fail. Their
	// flows move to serving backends.
	Down
)

// backendStateNames are the words of String and ParseBackendState.
var backendStateNames = [...]string{Serving: "serving", Draining: "draining", Down: "down"}

// String returns "serving", "draining" or "down".
func (s BackendState) String() string {
	if int(s) < len(backendStateNames) {
		return backendStateNames[s]
	}
	return fmt.Sprintf("BackendState(%d)", uint8(s))
}

// ParseBackendState parses "serving", "draining" or "down".
func ParseBackendState(s string) (BackendState, error) {
	for i, n := range backendStateNames {
		if s == n {
			return BackendState(i), nil
		}
	}
	return 0, fmt.Errorf("backend state %q: want %s", s, strings.Join(backendStateNames[:], ", "))
}

// Backend is one real server as selection sees it.
type Backend struct {
	// ID is the caller's name for the backend, 0 to MaxBackends-1,
	// unique in a set and stable while the backend exists: it is what
	// selection returns and what the connection table stores. It never
	// influences which flows the backend gets, so hosts that number
	// their backends differently still agree. Giving a removed
	// backend's ID to another backend hands it whatever flows the
	// connection table still holds for the old one.
	ID int
	// Addr is the backend's real address, unique in a set. It alone
	// places the backend in a Maglev table, so tables built on several
	// hosts from the same addresses and weights are identical.
	Addr netip.Addr
	// Weight is the backend's share of new flows relative to the other
	// serving backends (Maglev only), 1 to MaxWeight.
	Weight int
	// State says which flows the backend may take.
	State BackendState
}

// String names the backend in errors and logs: "backend 3 (192.0.2.7)".
func (b *Backend) String() string { return fmt.Sprintf("backend %d (%s)", b.ID, b.Addr) }

// checkBackends returns an error naming the first backend of bs that is
// out of range or clashes with an earlier one.
func checkBackends(bs []Backend) error {
	if len(bs) > MaxBackends {
		return fmt.Errorf("%d backends: want at most %d", len(bs), MaxBackends)
	}
	byID := make(map[int]netip.Addr, len(bs))
	byAddr := make(map[netip.Addr]int, len(bs))
	for i := range bs {
		b := &bs[i]
		switch {
		case b.ID < 0 || b.ID >= MaxBackends:
			return fmt.Errorf("%v: ID out of range: want 0 to %d", b, MaxBackends-1)
		case !b.Addr.IsValid():
			return fmt.Errorf("backend %d: no address", b.ID)
		case b.Addr.Zone() != "":
			return fmt.Errorf("%v: zoned address: want one without a zone", b)
		case b.Weight < 1 || b.Weight > MaxWeight:
			return fmt.Errorf("%v: weight %d: want 1 to %d", b, b.Weight, MaxWeight)
		case b.State > Down:
			return fmt.Errorf("%v: unknown state %d", b, b.State)
		}
		if a, dup := byID[b.ID]; dup {
			return fmt.Errorf("%v: ID already used by %s", b, a)
		}
		if id, dup := byAddr[b.Addr]; dup {
			return fmt.Errorf("%v: address already used by backend %d", b, id)
		}
		byID[b.ID], byAddr[b.Addr] = b.Addr, b.ID
	}
	return nil
}

// servingByAddr returns the serving backends of bs in address order: the
// canonical order that makes selection independent of the order and the
// IDs the caller gave.
func servingByAddr(bs []Backend) []*Backend {
	var out []*Backend
	for i := range bs {
		if bs[i].State == Serving {
			out = append(out, &bs[i])
		}
	}
	slices.SortFunc(out, func(a, b *Backend) int { return a.Addr.Compare(b.Addr) })
	return out
}

// maxID returns the highest ID in bs, or -1 when bs is empty.
func maxID(bs []Backend) int {
	m := -1
	for i := range bs {
		m = max(m, bs[i].ID)
	}
	return m
}
