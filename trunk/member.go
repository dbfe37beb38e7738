package trunk

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/platform"
)

// DefaultLACPPortPriority is the LACP port priority of a member whose
// PortConfig leaves it 0.
const DefaultLACPPortPriority = 32768

// PortConfig is the per-member configuration given to AddPort.
type PortConfig struct {
	// Priority orders members for failover: the highest is the primary;
	// ties go to the member added first.
	Priority int
	// LACPPortPriority is the LACP port priority (lower wins); 0 means
	// DefaultLACPPortPriority unless ExactLACPPortPriority is set.
	LACPPortPriority uint16
	// ExactLACPPortPriority makes LACPPortPriority count as given, 0 (the
	// highest priority) included: for a caller that always has one.
	ExactLACPPortPriority bool
}

// readerState is where a member's reader goroutine is; see Member.mu.
type readerState uint8

const (
	// stateBusy: between ReadBatch calls, looking at frames it read.
	stateBusy readerState = iota
	// stateRead: blocked in the member's ReadBatch, holding no frames.
	stateRead
	// stateLent: its batch is offered to, or held by, the trunk's
	// consumer, which may read the port itself (readOn), until the
	// consumer gives the port back.
	stateLent
)

// Member is a trunk's handle on one of its ports. Protocols receive it in
// their hooks; its accessors are safe for concurrent use.
type Member struct {
	// name is the port's name; immutable.
	name string
	// port is the owned Port; immutable.
	port platform.Port
	// id is the member's index in lb.Set masks and TX scratch (0 to
	// lb.MaxPorts-1); immutable for the member's life, reused after it.
	id int
	// cfg is the member's configuration. Guarded by the trunk's mu.
	cfg PortConfig
	// link is the trunk's view of the member's link: the state AddPort
	// read, then what Trunk.LinkChanged read, once it has held for the
	// Policy's delay. Atomic: stored under the trunk's mu.
	link atomic.Uint32
	// pending is set while a link change waits for its delay: to
	// pendingLink at pendingAt. Guarded by the trunk's mu.
	pending     bool
	pendingLink platform.LinkState
	pendingAt   time.Time
	// collecting and distributing are the state the protocol set.
	// Atomic: written under the trunk's mu, read anywhere.
	collecting, distributing atomic.Bool
	// gone is set when the member leaves the trunk. Atomic.
	gone atomic.Bool
	// tx is the member's transmit backlog, nil when its port cannot say
	// what its ring takes; set before the member is published.
	tx *memberTx
	// rxRefused counts frames received while not collecting; rxControl
	// counts slow-protocol frames handed to the protocol. Atomic.
	rxRefused, rxControl atomic.Uint64

	// ready is port as a platform.ReadyReader, or nil; immutable.
	ready platform.ReadyReader
	// buf is what the port is read into; rx is the batch of accepted
	// frames offered to the consumer. Both are written by whoever holds
	// the port (the reader, or the consumer it lent its batch to, in
	// readOn), never at once: the channel send and the ack order them.
	buf platform.Batch
	rx  rxBatch
	// lane is held by a consumer while it reads the port (readOn), and
	// by closePort, so the port never closes under that read.
	lane sync.Mutex
	// stop is closed when the member leaves or the trunk closes.
	stop chan struct{}
	// done is closed when the reader goroutine has returned.
	done chan struct{}

	// mu guards state and leaving: the handshake that lets RemovePort
	// and Close close the port at once only while the reader is in
	// ReadBatch (holding no frames anyone looks at), and otherwise leave
	// the closing to the reader when it is done with its frames.
	mu sync.Mutex
	// state is where the reader is. Guarded by mu.
	state readerState
	// leaving is set by release. Guarded by mu.
	leaving bool

	// closeOnce makes closePort close the port once.
	closeOnce sync.Once
	// closeErr is what the port's Close returned; written inside
	// closeOnce, read after done is closed or closeOnce has run.
	closeErr error
}

// rxBatch is one batch of accepted frames a member's reader offers to the
// trunk's consumer.
type rxBatch struct {
	// m is the member the frames came from; immutable.
	m *Member
	// frames are views into m's port, valid until ack is signalled or
	// the consumer reads m again (readOn).
	frames [][]byte
	// offs are the offloads of frames, parallel to it, when m carries
	// offloads (else empty).
	offs []platform.Offload
	// soft is set when some frame's offload is not plain.
	soft bool
	// ack is signalled (capacity 1) by the consumer when it gives m's
	// port back to the reader (rxConsumer.release).
	ack chan struct{}
}

// newMember returns a member for p with ID id, its reader not started.
func newMember(p platform.Port, id int, cfg PortConfig) *Member {
	if cfg.LACPPortPriority == 0 && !cfg.ExactLACPPortPriority {
		cfg.LACPPortPriority = DefaultLACPPortPriority
	}
	m := &Member{name: p.Name(), port: p, id: id, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{}), state: stateBusy}
	m.rx = rxBatch{m: m, ack: make(chan struct{}, 1)}
	m.ready, _ = p.(platform.ReadyReader)
	m.link.Store(uint32(p.Link()))
	return m
}

// Name returns the member port's name.
func (m *Member) Name() string { return m.name }

// ID returns the member's index, 0 to lb.MaxPorts-1, unique among the
// trunk's current members (LACP may use it as a port number base).
func (m *Member) ID() int { return m.id }

// HardwareAddr returns the member port's own MAC address.
func (m *Member) HardwareAddr() net.HardwareAddr { return m.port.HardwareAddr() }

// Link returns the member's link state as the trunk last saw it.
func (m *Member) Link() platform.LinkState { return platform.LinkState(m.link.Load()) }

// Priority returns the member's failover priority.
func (m *Member) Priority() int { return m.cfg.Priority }

// LACPPortPriority returns the member's LACP port priority.
func (m *Member) LACPPortPriority() uint16 { return m.cfg.LACPPortPriority }

// Collecting reports whether frames the member receives are passed up.
func (m *Member) Collecting() bool { return m.collecting.Load() }

// Distributing reports whether frames may leave by the member.
func (m *Member) Distributing() bool { return m.distributing.Load() }

// enter moves the reader to state s, unless the member is leaving.
func (m *Member) enter(s readerState) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leaving {
		return false
	}
	m.state = s
	return true
}

// release marks the member leaving and stops its reader: it closes the
// port at once when the reader is in ReadBatch; else the reader closes
// it when it is done with its frames. It returns the reader's state.
func (m *Member) release() readerState {
	m.mu.Lock()
	s, was := m.state, m.leaving
	if !was {
		m.leaving = true
		close(m.stop)
	}
	m.mu.Unlock()
	if s == stateRead {
		m.closePort()
	}
	return s
}

// isLeaving reports whether release was called.
func (m *Member) isLeaving() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaving
}

// closePort closes the member's port once, waiting for a consumer's read
// of it (readOn) to end.
func (m *Member) closePort() {
	m.closeOnce.Do(func() {
		m.lane.Lock()
		defer m.lane.Unlock()
		m.closeErr = m.port.Close()
	})
}
