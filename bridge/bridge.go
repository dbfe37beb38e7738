package bridge

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform"
)

// Defaults of Options, as bridge(4).
const (
	// DefaultTimeout is how long a learned address lives unseen.
	DefaultTimeout = 240 * time.Second
	// DefaultMaxAddr is the size of the address table.
	DefaultMaxAddr = 8192
)

// maxSweepInterval is the longest time between two ageing sweeps.
const maxSweepInterval = time.Second

// minSweepInterval is the shortest time between two ageing sweeps, however
// short the timeout.
const minSweepInterval = 10 * time.Millisecond

// readRetry is how long a reader waits after a failed ReadBatch (other
// than ErrClosed) before it tries again.
const readRetry = 10 * time.Millisecond

// PortFlags are the per-member switches of bridge(4).
type PortFlags struct {
	// Learning: learn the source addresses of frames received on the member.
	Learning bool
	// Discover: send unknown unicast to the member. Broadcast and
	// multicast go to every member regardless.
	Discover bool
	// BlockNonIP: drop frames entering or leaving through the member
	// whose outer ethertype is not IPv4, IPv6, ARP or RARP.
	BlockNonIP bool
}

// DefaultPortFlags returns the flags of a new member in bridge(4):
// Learning and Discover on.
func DefaultPortFlags() PortFlags { return PortFlags{Learning: true, Discover: true} }

// Port flag bits, as Member.flags stores them.
const (
	flagLearning uint32 = 1 << iota
	flagDiscover
	flagBlockNonIP
)

func (f PortFlags) bits() uint32 {
	var b uint32
	if f.Learning {
		b |= flagLearning
	}
	if f.Discover {
		b |= flagDiscover
	}
	if f.BlockNonIP {
		b |= flagBlockNonIP
	}
	return b
}

func flagsOf(b uint32) PortFlags {
	return PortFlags{Learning: b&flagLearning != 0, Discover: b&flagDiscover != 0, BlockNonIP: b&flagBlockNonIP != 0}
}

// Options configures a Bridge.
type Options struct {
	// Timeout is the ageing time of learned addresses; 0 means never.
	Timeout time.Duration
	// MaxAddr is the size of the address table; 0 or less means
	// DefaultMaxAddr.
	MaxAddr int
	// Clock is the time source of ageing; nil means clock.System.
	Clock clock.Clock
	// Logger receives one line per state change; nil means slog.Default.
	Logger *slog.Logger
}

// DefaultOptions returns the options of bridge(4): 240 s ageing, 8192
// addresses, the system clock and the default logger.
func DefaultOptions() Options {
	return Options{Timeout: DefaultTimeout, MaxAddr: DefaultMaxAddr, Clock: clock.System{}, Logger: slog.Default()}
}

// Addr is an entry of the address table.
type Addr struct {
	// MAC is the station's address.
	MAC frame.MAC
	// VLAN is the VLAN ID it was seen in (0: untagged or priority-tagged).
	VLAN uint16
	// Port is the member it is on.
	Port string
	// Age is the time since a frame from it was last seen; 0 for a static
	// entry.
	Age time.Duration
	// Static marks an entry set by AddStatic.
	Static bool
}

// key is the entry's place in the table's order: VLAN, then MAC.
func (a Addr) key() uint64 { return fdbKey(a.VLAN, a.MAC.Key()) }

// PortInfo describes a member or a span port.
type PortInfo struct {
	// Name is the port's name.
	Name string
	// Span is set for a span port, clear for a member.
	Span bool
	// Flags are the member's flags (zero for a span port).
	Flags PortFlags
	// Link is the port's current link state.
	Link platform.LinkState
	// MTU is the port's MTU.
	MTU int
	// StormLimit is the member's storm limit in packets per second, 0
	// for none (SetStormLimit).
	StormLimit int
	// BPDUGuard is set when the member's BPDU guard is armed, and
	// Disabled when it has disabled the member (SetBPDUGuard).
	BPDUGuard, Disabled bool
}

// Stats are the bridge's counters since New. Each frame given to Forward
// is counted in Received and in exactly one of Forwarded, Flooded and the
// ingress drops (DroppedRunt, DroppedLinkLocal, DroppedBadSource,
// DroppedBlockNonIP, DroppedDiscarding, DroppedSamePort, DroppedStorm).
// The egress drops count copies: a flooded frame can be dropped at
// several members.
type Stats struct {
	// Received counts frames members received.
	Received uint64
	// Forwarded counts known-unicast frames sent to their one member.
	Forwarded uint64
	// Flooded counts broadcast, multicast and unknown-unicast frames.
	Flooded uint64
	// DroppedRunt counts frames shorter than an Ethernet header.
	DroppedRunt uint64
	// DroppedLinkLocal counts frames to 01:80:c2:00:00:00-0f, handed to
	// a link-local handler or dropped.
	DroppedLinkLocal uint64
	// DroppedBadSource counts frames from a multicast, broadcast or zero
	// address.
	DroppedBadSource uint64
	// DroppedBlockNonIP counts non-IP frames received by a BlockNonIP member.
	DroppedBlockNonIP uint64
	// DroppedSamePort counts unicast frames whose destination is on the
	// member they came from.
	DroppedSamePort uint64
	// DroppedDiscarding counts frames received on a member whose gate
	// does not forward (a spanning-tree port discarding or learning) or
	// that its BPDU guard disabled.
	DroppedDiscarding uint64
	// DroppedDiscardingOut counts copies not sent to a member whose gate
	// does not forward or that its BPDU guard disabled.
	DroppedDiscardingOut uint64
	// DroppedStorm counts frames to flood that a member's storm limit
	// dropped.
	DroppedStorm uint64
	// DroppedBlockNonIPOut counts copies of non-IP frames not sent to a
	// BlockNonIP member.
	DroppedBlockNonIPOut uint64
	// DroppedOversize counts copies not sent to a member or span port
	// because their L2 payload (one tag allowed) exceeds its MTU.
	DroppedOversize uint64
	// DroppedLinkDown counts copies not sent to a member or span port
	// whose link is not up.
	DroppedLinkDown uint64
	// DroppedOffload counts copies not sent to a port without offloads
	// because their offload could not be done in software (an unknown
	// GSO type, metadata that does not match the frame).
	DroppedOffload uint64
	// SoftwareOffload counts copies whose partial checksum was finished,
	// or that were cut into segments, in software for a port without
	// offloads; Segments counts the frames that made (each also counted
	// in Sent or SpanSent).
	SoftwareOffload, Segments uint64
	// Sent counts copies members' WriteBatch accepted.
	Sent uint64
	// SpanSent counts copies span ports' WriteBatch accepted.
	SpanSent uint64
	// Learned counts addresses added to the table by learning.
	Learned uint64
	// Moved counts learned addresses that moved to another member.
	Moved uint64
	// Exceeded counts frames whose new source address was not learned
	// because the table was full.
	Exceeded uint64
	// Aged counts dynamic entries the ageing sweep removed.
	Aged uint64
}

// counter indexes Bridge.ctrs and Worker.ctrs.
type counter int

const (
	cReceived counter = iota
	cForwarded
	cFlooded
	cRunt
	cLinkLocal
	cBadSource
	cBlockNonIP
	cSamePort
	cDiscarding
	cDiscardingOut
	cStorm
	cBlockNonIPOut
	cOversize
	cLinkDown
	cOffloadDropped
	cSoftOffload
	cSegments
	cSent
	cSpanSent
	cLearned
	cMoved
	cExceeded
	cAged
	numCounters
)

// Member is the bridge's handle on one of its ports, a member or a span
// port. Readers pass it to Forward.
type Member struct {
	// name is the port's name; immutable.
	name string
	// port is the owned Port; immutable.
	port platform.Port
	// span marks a span port; immutable.
	span bool
	// slot indexes the member in every Worker's egress scratch; immutable
	// for the member's life, reused after it is removed.
	slot int
	// flags are the PortFlags bits. Atomic.
	flags atomic.Uint32
	// linkLocal is the link-local handler, or nil. Atomic.
	linkLocal atomic.Pointer[func([]byte)]
	// gate is the member's spanning-tree gate, or nil (always
	// forwarding; see SetPortGate). Atomic.
	gate atomic.Pointer[gateRef]
	// storm is the member's storm limit, nil for none. Atomic.
	storm atomic.Pointer[stormBucket]
	// guard is set while the member's BPDU guard is armed, and disabled
	// once the guard has disabled it. Atomic.
	guard, disabled atomic.Bool
	// link is the platform.LinkState last seen by LinkChanged, for logs.
	// Atomic.
	link atomic.Uint32
	// gone is set when the member leaves the bridge; Forward then ignores
	// it as ingress and as egress. Atomic.
	gone atomic.Bool
	// done is closed when the member's reader goroutines have returned.
	done chan struct{}
}

// Name returns the member's port name.
func (m *Member) Name() string { return m.name }

// portTable is an immutable snapshot of the bridge's ports. It is replaced
// whole, never changed.
type portTable struct {
	// members are the member ports, in the order they were added.
	members []*Member
	// spans are the span ports, in the order they were added.
	spans []*Member
}

// find returns the member or span port called name, or nil.
func (t *portTable) find(name string) *Member {
	for _, m := range t.members {
		if m.name == name {
			return m
		}
	}
	for _, m := range t.spans {
		if m.name == name {
			return m
		}
	}
	return nil
}

// without returns a copy of t without m.
func (t *portTable) without(m *Member) *portTable {
	del := func(s []*Member) []*Member {
		return slices.DeleteFunc(slices.Clone(s), func(x *Member) bool { return x == m })
	}
	return &portTable{members: del(t.members), spans: del(t.spans)}
}

// Bridge is a learning bridge. Its methods are safe for concurrent use.
type Bridge struct {
	// name is the bridge's name, used in errors and logs; immutable.
	name string
	// clock is the time source of ageing; immutable.
	clock clock.Clock
	// log receives state changes; immutable.
	log *slog.Logger
	// epoch is the instant the address table's times count from; immutable.
	epoch time.Time
	// fdb is the address table; it has its own locks.
	fdb *fdb
	// table is the current port snapshot. Atomic: read without a lock,
	// stored only with mu held.
	table atomic.Pointer[portTable]
	// full is set when the table filled up and the event was logged, and
	// cleared (and logged) when it drains. Atomic.
	full atomic.Bool
	// linkLocalFwd has bit n set when frames to 01:80:c2:00:00:0n are
	// forwarded like other multicast: the user's mask (SetForwardMask)
	// and, while no spanning tree runs, bit 0 (BPDUs). Atomic.
	linkLocalFwd atomic.Uint32
	// fwdMask is the user's mask; stp is set while a spanning tree runs.
	// Guarded by mu.
	fwdMask uint16
	stp     bool
	// offloadLogged is set once a copy dropped for its offload has been
	// logged. Atomic.
	offloadLogged atomic.Bool
	// ctrs are the Stats counters, indexed by counter. Atomic.
	ctrs [numCounters]atomic.Uint64
	// tap sees frames for packet capture, nil without one (SetTap).
	// Atomic: Forward loads it once per batch.
	tap atomic.Pointer[tapRef]

	// mu serialises configuration changes; it guards the fields below
	// and the storing of table.
	mu sync.Mutex
	// freeSlots are Worker slots of removed members, ready for reuse.
	// Guarded by mu.
	freeSlots []int
	// nextSlot is the lowest slot never used. Guarded by mu.
	nextSlot int
	// closed is set by Close. Guarded by mu.
	closed bool

	// readers counts the running reader goroutines.
	readers sync.WaitGroup
	// stop is closed by Close to stop the ageing sweep.
	stop chan struct{}
	// sweepDone is closed when the ageing sweep has returned.
	sweepDone chan struct{}
}

// New returns a bridge with no ports and starts its ageing sweep. Close
// stops it.
func New(name string, opts Options) *Bridge {
	if opts.MaxAddr <= 0 {
		opts.MaxAddr = DefaultMaxAddr
	}
	if opts.Timeout < 0 {
		opts.Timeout = 0
	}
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	b := &Bridge{
		name:      name,
		clock:     opts.Clock,
		log:       opts.Logger.With("bridge", name),
		epoch:     opts.Clock.Now(),
		fdb:       newFDB(opts.MaxAddr, opts.Timeout),
		stop:      make(chan struct{}),
		sweepDone: make(chan struct{}),
	}
	b.table.Store(&portTable{})
	b.linkLocalFwd.Store(1 << groupBPDU)
	supervise.Go(b.name+" address sweep", b.sweep)
	return b
}

// Name returns the bridge's name.
func (b *Bridge) Name() string { return b.name }

// since converts a clock reading to the address table's time.
func (b *Bridge) since(now time.Time) int64 { return int64(now.Sub(b.epoch)) }

// Member returns the handle of the member or span port called name, or nil.
// A reader of the port passes it to Forward; after the port is removed,
// Forward ignores it.
func (b *Bridge) Member(name string) *Member { return b.table.Load().find(name) }

// AddPort makes p a member with flags f. On success the bridge owns p: it
// starts a goroutine that reads p and forwards what it reads, and closes p
// when p is removed or the bridge closes. On error the caller keeps p.
func (b *Bridge) AddPort(p platform.Port, f PortFlags) error {
	return b.add(p, f, false, nil)
}

// AddSpan makes p a span port: it receives a copy of every frame the
// bridge forwards; what it receives is read and discarded. Ownership is as
// for AddPort.
func (b *Bridge) AddSpan(p platform.Port) error {
	return b.add(p, PortFlags{}, true, nil)
}

// add adds p as a member or a span port; setup, when not nil, prepares
// the new Member before its reader starts.
func (b *Bridge) add(p platform.Port, f PortFlags, span bool, setup func(m *Member)) error {
	if p == nil {
		return fmt.Errorf("%s: add: no port", b.name)
	}
	name := p.Name()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%s: add %s: bridge closed", b.name, name)
	}
	t := b.table.Load()
	if old := t.find(name); old != nil {
		if old.span {
			return fmt.Errorf("%s: add %s: already a span port", b.name, name)
		}
		return fmt.Errorf("%s: add %s: already a member", b.name, name)
	}
	m := &Member{name: name, port: p, span: span, slot: -1, done: make(chan struct{})}
	m.flags.Store(f.bits())
	m.link.Store(uint32(p.Link()))
	if setup != nil {
		setup(m)
	}
	nt := &portTable{members: t.members, spans: t.spans}
	if span {
		nt.spans = append(slices.Clip(t.spans), m)
	} else {
		m.slot = b.allocSlot()
		nt.members = append(slices.Clip(t.members), m)
	}
	b.table.Store(nt)
	b.startReaders(m)
	if span {
		b.log.Info("span port added", "port", name)
	} else {
		b.log.Info("port added", "port", name, "learning", f.Learning, "discover", f.Discover, "blocknonip", f.BlockNonIP)
	}
	return nil
}

// startReaders starts the member's reader goroutines, one per receive
// queue, and closes m.done when all have returned.
func (b *Bridge) startReaders(m *Member) {
	mq, ok := m.port.(platform.MultiQueuePort)
	if !ok || mq.RxQueues() <= 1 {
		b.readers.Go(func() {
			defer close(m.done)
			supervise.Run(b.name+" reader "+m.name, func() { b.read(m, nil, 0) })
		})
		return
	}
	var wg sync.WaitGroup
	for q := range mq.RxQueues() {
		name := fmt.Sprintf("%s reader %s queue %d", b.name, m.name, q)
		wg.Go(func() { supervise.Run(name, func() { b.read(m, mq, q) }) })
	}
	b.readers.Go(func() {
		wg.Wait()
		close(m.done)
	})
}

// allocSlot returns a free Worker slot. Call with mu held.
func (b *Bridge) allocSlot() int {
	if n := len(b.freeSlots); n > 0 {
		s := b.freeSlots[n-1]
		b.freeSlots = b.freeSlots[:n-1]
		return s
	}
	b.nextSlot++
	return b.nextSlot - 1
}

// RemovePort removes the member called name: forwarding to and from it
// stops, it is closed, its reader has returned, and its learned and static
// addresses are forgotten when RemovePort returns.
func (b *Bridge) RemovePort(name string) error { return b.remove(name, false) }

// RemoveSpan removes the span port called name and closes it.
func (b *Bridge) RemoveSpan(name string) error { return b.remove(name, true) }

func (b *Bridge) remove(name string, span bool) error {
	b.mu.Lock()
	t := b.table.Load()
	m := t.find(name)
	switch {
	case m == nil && span:
		b.mu.Unlock()
		return fmt.Errorf("%s: delete span %s: not a span port", b.name, name)
	case m == nil:
		b.mu.Unlock()
		return fmt.Errorf("%s: delete %s: not a member", b.name, name)
	case m.span != span && span:
		b.mu.Unlock()
		return fmt.Errorf("%s: delete span %s: a member, not a span port", b.name, name)
	case m.span != span:
		b.mu.Unlock()
		return fmt.Errorf("%s: delete %s: a span port, not a member", b.name, name)
	}
	m.gone.Store(true)
	b.table.Store(t.without(m))
	b.mu.Unlock()

	// The reader may be calling a link-local handler that calls back into
	// the bridge: wait for it without holding mu.
	err := m.port.Close()
	<-m.done
	n := b.fdb.flush(true, m)
	b.noteDrained()
	if !span {
		b.mu.Lock()
		b.freeSlots = append(b.freeSlots, m.slot)
		b.mu.Unlock()
	}
	b.log.Info("port removed", "port", name, "span", span, "addresses", n)
	if err != nil {
		return fmt.Errorf("%s: delete %s: close: %w", b.name, name, err)
	}
	return nil
}

// member returns the member (not span port) called name, or an error
// naming what was attempted.
func (b *Bridge) member(op, name string) (*Member, error) {
	m := b.table.Load().find(name)
	if m == nil || m.span {
		return nil, fmt.Errorf("%s: %s %s: not a member", b.name, op, name)
	}
	return m, nil
}

// Ports returns the members, in the order they were added, then the span
// ports.
func (b *Bridge) Ports() []PortInfo {
	t := b.table.Load()
	out := make([]PortInfo, 0, len(t.members)+len(t.spans))
	for _, m := range slices.Concat(t.members, t.spans) {
		pi := PortInfo{Name: m.name, Span: m.span, Link: m.port.Link(), MTU: m.port.MTU()}
		if !m.span {
			pi.Flags = flagsOf(m.flags.Load())
			pi.StormLimit = m.storm.Load().limit()
			pi.BPDUGuard, pi.Disabled = m.guard.Load(), m.disabled.Load()
		}
		out = append(out, pi)
	}
	return out
}

// Stats returns the bridge's counters.
func (b *Bridge) Stats() Stats {
	c := func(i counter) uint64 { return b.ctrs[i].Load() }
	return Stats{
		Received: c(cReceived), Forwarded: c(cForwarded), Flooded: c(cFlooded),
		DroppedRunt: c(cRunt), DroppedLinkLocal: c(cLinkLocal), DroppedBadSource: c(cBadSource),
		DroppedBlockNonIP: c(cBlockNonIP), DroppedSamePort: c(cSamePort),
		DroppedDiscarding: c(cDiscarding), DroppedDiscardingOut: c(cDiscardingOut), DroppedStorm: c(cStorm),
		DroppedBlockNonIPOut: c(cBlockNonIPOut), DroppedOversize: c(cOversize), DroppedLinkDown: c(cLinkDown),
		DroppedOffload: c(cOffloadDropped), SoftwareOffload: c(cSoftOffload), Segments: c(cSegments),
		Sent: c(cSent), SpanSent: c(cSpanSent),
		Learned: c(cLearned), Moved: c(cMoved), Exceeded: c(cExceeded), Aged: c(cAged),
	}
}

// Close removes every port, closing each, waits for their readers, stops
// the ageing sweep and empties the address table. It is safe to call more
// than once; later calls do nothing.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	t := b.table.Load()
	for _, m := range slices.Concat(t.members, t.spans) {
		m.gone.Store(true)
	}
	b.table.Store(&portTable{})
	b.mu.Unlock()

	close(b.stop)
	<-b.sweepDone
	var errs []error
	for _, m := range slices.Concat(t.members, t.spans) {
		if err := m.port.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: close %s: %w", b.name, m.name, err))
		}
	}
	b.readers.Wait()
	b.fdb.flush(true, nil)
	b.log.Info("bridge closed")
	return errors.Join(errs...)
}

// noteOffloadDropped logs, once per bridge, that a copy for m was dropped
// because its offload could not be done in software.
func (b *Bridge) noteOffloadDropped(m *Member, o platform.Offload, err error) {
	if b.offloadLogged.CompareAndSwap(false, true) {
		b.log.Warn("frame dropped: its offload cannot be done in software for a port without offloads (counted in dropped_offload; logged once)",
			"port", m.name, "gso_type", o.GSOType, "gso_size", o.GSOSize, "flags", o.Flags, "err", err)
	}
}
