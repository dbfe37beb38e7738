package lb

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
)

// Method is how a Balancer picks the backend of a new flow.
type Method uint8

// Methods.
const (
	// MethodMaglev looks the flow hash up in a Maglev table (the
	// default); TCP flows are kept on their backend by the connection
	// table when the backend set changes.
	MethodMaglev Method = iota
	// MethodHash takes the flow hash modulo the serving backends,
	// without a connection table: any change of the set moves most
	// flows.
	MethodHash
	// MethodRoundRobin gives each new flow the next serving backend and
	// keeps it there through the connection table (every flow, TCP or
	// not, fragments and address-only flows included).
	MethodRoundRobin
)

// methodNames are the words of String and ParseMethod.
var methodNames = [...]string{MethodMaglev: "maglev", MethodHash: "hash", MethodRoundRobin: "roundrobin"}

// String returns "maglev", "hash" or "roundrobin".
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod parses "maglev", "hash" or "roundrobin".
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if s == n {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("lb method %q: want maglev, hash or roundrobin", s)
}

// BalancerConfig configures a Balancer. The zero value is valid: Maglev
// with the default table and connection table sizes and idle time.
type BalancerConfig struct {
	// Method picks new flows' backends (default MethodMaglev).
	Method Method
	// TableSize is the Maglev table size (0 means DefaultTableSize).
	TableSize int
	// ConnTableSize is the number of flows the connection table holds
	// (0 means DefaultConnTableSize); MethodHash has none.
	ConnTableSize int
	// ConnIdle is how long an idle flow stays in the connection table
	// (0 means DefaultConnIdle).
	ConnIdle time.Duration
}

// Balancer picks a backend for each flow of one service: the selection
// state of the L2 load balancer, without I/O. Pick is safe for
// concurrent use by forwarding workers and never allocates; it reads the
// backend set through an atomic pointer and takes no lock of the
// Balancer's (only a connection table shard's). SetBackends builds a new
// set aside and swaps it in whole.
type Balancer struct {
	// method is the configured method; immutable.
	method Method
	// tableSize is the Maglev table size; immutable.
	tableSize int
	// conns is the connection table; nil for MethodHash. Immutable
	// pointer; the table locks itself.
	conns *ConnTable
	// set is the current backend set, never nil; replaced whole.
	set atomic.Pointer[backendSet]
	// turn counts new flows for MethodRoundRobin.
	turn atomic.Uint64
	// mu serialises SetBackends, so that the last call's set is the
	// one left in place.
	mu sync.Mutex
}

// backendSet is one immutable generation of a Balancer's backends.
type backendSet struct {
	// backends are the backends as given (a copy).
	backends []Backend
	// state is each ID's state plus one, 0 for an ID not in the set.
	state []uint8
	// serving are the IDs of serving backends in address order, for
	// MethodHash and MethodRoundRobin.
	serving []uint16
	// table is the Maglev table over the serving backends, for
	// MethodMaglev; nil otherwise.
	table *Maglev
}

// NewBalancer returns a Balancer configured by cfg with no backends
// (Pick returns -1 until SetBackends gives it some). Times given to Pick
// must come from clk.
func NewBalancer(cfg BalancerConfig, clk clock.Clock) (*Balancer, error) {
	if cfg.Method > MethodRoundRobin {
		return nil, fmt.Errorf("lb method %d: want maglev, hash or roundrobin", cfg.Method)
	}
	size, err := checkTableSize(cfg.TableSize)
	if err != nil {
		return nil, err
	}
	b := &Balancer{method: cfg.Method, tableSize: size}
	if cfg.Method != MethodHash {
		if b.conns, err = NewConnTable(cfg.ConnTableSize, cfg.ConnIdle, clk); err != nil {
			return nil, err
		}
	}
	if err := b.SetBackends(nil); err != nil {
		return nil, err
	}
	return b, nil
}

// Method returns the Balancer's method.
func (b *Balancer) Method() Method { return b.method }

// ConnTable returns the connection table, or nil for MethodHash: the
// caller sweeps it (Expire) and reports its Len.
func (b *Balancer) ConnTable() *ConnTable { return b.conns }

// SetBackends replaces the backend set with bs (copied), or returns an
// error naming the first invalid backend and changes nothing. Flows in
// the connection table stay on their backend while it is in the set and
// not Down.
func (b *Balancer) SetBackends(bs []Backend) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := checkBackends(bs); err != nil {
		return err
	}
	s := &backendSet{backends: slices.Clone(bs), state: make([]uint8, maxID(bs)+1)}
	for _, be := range s.backends {
		s.state[be.ID] = uint8(be.State) + 1
	}
	for _, be := range servingByAddr(s.backends) {
		s.serving = append(s.serving, uint16(be.ID))
	}
	if b.method == MethodMaglev {
		t, err := NewMaglev(s.backends, b.tableSize)
		if err != nil {
			return err
		}
		s.table = t
	}
	b.set.Store(s)
	return nil
}

// Backends returns a copy of the current backend set.
func (b *Balancer) Backends() []Backend { return slices.Clone(b.set.Load().backends) }

// Pick returns the ID of the backend for the flow k at now, or -1 when no
// backend may take it (none serving, and k not held by a draining one).
// It never allocates.
func (b *Balancer) Pick(k FlowKey, now time.Time) int {
	s := b.set.Load()
	h := k.Hash()
	switch {
	case b.method == MethodHash:
		return s.nth(h)
	case b.method == MethodMaglev && k.Proto != frame.ProtoTCP:
		return s.table.Lookup(h)
	}
	t := b.conns.stamp(now)
	if id, ok := b.conns.lookup(&k, h, t); ok && s.keeps(id) {
		return id
	}
	var id int
	if b.method == MethodMaglev {
		id = s.table.Lookup(h)
	} else {
		id = s.nth(b.turn.Add(1) - 1)
	}
	if id >= 0 {
		b.conns.put(&k, h, id, t)
	}
	return id
}

// keeps reports whether backend id may keep a flow it already has: it is
// in the set and not Down.
func (s *backendSet) keeps(id int) bool {
	return id < len(s.state) && s.state[id] != 0 && BackendState(s.state[id]-1) != Down
}

// nth returns serving backend n modulo their number (n is the flow hash
// for MethodHash, the turn for MethodRoundRobin), or -1 when none serves.
func (s *backendSet) nth(n uint64) int {
	if len(s.serving) == 0 {
		return -1
	}
	return int(s.serving[n%uint64(len(s.serving))])
}
