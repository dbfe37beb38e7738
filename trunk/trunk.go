package trunk

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// DefaultTickInterval is how often a trunk calls its protocol's Tick
// unless Options says otherwise.
const DefaultTickInterval = 100 * time.Millisecond

// maxNameLen is the kernel's interface-name limit.
const maxNameLen = 15

// defaultMTU is the MTU of a trunk without members.
const defaultMTU = 1500

// Options configures a Trunk. The zero value is usable.
type Options struct {
	// Protocol is the initial protocol; nil means failover.
	Protocol Protocol
	// Hash selects the headers the loadbalance and LACP distribution
	// hash; 0 means lb.AllFields.
	Hash lb.HashFields
	// Seed keys the flow hash and the member selection; 0 means a
	// random seed.
	Seed uint64
	// MAC is the trunk's address; nil means the MAC of the first port
	// added (as trunk(4)). It is copied.
	MAC net.HardwareAddr
	// Clock is the time source of the protocol's timers; nil means
	// clock.System.
	Clock clock.Clock
	// TickInterval is how often the protocol's Tick runs on a goroutine
	// of the trunk's; 0 means DefaultTickInterval, negative means never
	// (tests call Trunk.Tick themselves).
	TickInterval time.Duration
	// Logger receives one line per state change; nil means slog.Default.
	Logger *slog.Logger
	// OnDistributingChange, if set, is called with the names of the
	// members frames leave by, each time that set changes to a set that
	// is not empty (the daemon announces the host's addresses after a
	// failover). Calls are serialised with OnActiveChange's, never made
	// with the trunk's lock held, and may call the trunk's methods.
	OnDistributingChange func(ports []string)
	// Policy is how the trunk treats its members' links (delays,
	// min-links, preemption); the zero Policy uses every link at once,
	// needs one, and preempts.
	Policy Policy
	// TxQueueBytes bounds each member's transmit backlog (see
	// backlog.go): the frames its TX ring has no room for wait there
	// instead of being dropped. 0 means DefaultTxQueueBytes; negative
	// means no backlog. Only members whose port says what its ring takes
	// (an AF_PACKET port with a TX ring) have one.
	TxQueueBytes int
	// TxQueueDelay is how long a frame may wait in a backlog before it
	// is dropped; 0 means DefaultTxQueueDelay.
	TxQueueDelay time.Duration
	// RxQueues is the number of receive queues (RxQueues, ReadQueue):
	// a member's accepted frames go to queue ID mod RxQueues, so a bridge
	// the trunk is a member of forwards each member's frames on a
	// goroutine of its own. 0 means runtime.GOMAXPROCS; at most
	// lb.MaxPorts.
	RxQueues int
	// TxQueueTarget is the sojourn time CoDel's control law keeps a
	// backlog's head below (package txq, SetCoDel, with an interval of
	// TxQueueInterval): 0 means DefaultTxQueueTarget; negative turns the
	// law off, leaving TxQueueDelay's hard bound alone.
	TxQueueTarget time.Duration
	// TxQueueSuperFrames makes a member whose port says what its send
	// buffer takes (TxFit) keep in its backlog the super-frames that
	// buffer has no room for, instead of having them dropped (see
	// backlog.go). Off by default: measured with bench-trunk (2 x 500
	// Mbit/s, 7 interleaved pairs of runs), it halved the members' drops
	// but gave no throughput beyond the noise and raised the RTT under
	// load (loadbalance 18-25 ms against 10-21 without; the single link
	// 12-15).
	TxQueueSuperFrames bool
	// OnActiveChange, if set, is called with the new value of Active each
	// time it changes (the daemon sets the TAP's carrier from it). Calls
	// are serialised, never made with the trunk's lock held, and may call
	// the trunk's methods.
	OnActiveChange func(active bool)
}

// PortInfo describes a member.
type PortInfo struct {
	// Name is the member port's name.
	Name string
	// Link is its link state as the trunk last saw it.
	Link platform.LinkState
	// Priority is its failover priority.
	Priority int
	// LACPPortPriority is its LACP port priority.
	LACPPortPriority uint16
	// Flags are trunk(4)'s words: "master" (the primary: highest
	// priority, first added), "active" (frames leave by it),
	// "collecting", "distributing".
	Flags []string
	// Counters are the member port's own counters.
	Counters platform.Counters
	// RxRefused counts frames it received while not collecting.
	RxRefused uint64
	// RxControl counts slow-protocol frames it received.
	RxControl uint64
	// Detail is the protocol's PortDetail (LACP actor and partner), or nil.
	Detail any
	// TxQueue describes its transmit backlog.
	TxQueue TxQueueInfo
}

// Stats are the trunk's own counters since New.
type Stats struct {
	// RxPackets and RxBytes count frames ReadBatch returned.
	RxPackets, RxBytes uint64
	// RxRefused counts data frames received on a member that was not
	// collecting (failover's standby ports, none).
	RxRefused uint64
	// RxControl counts slow-protocol frames handed to the protocol.
	RxControl uint64
	// TxPackets and TxBytes count frames WriteBatch reported sent.
	TxPackets, TxBytes uint64
	// TxNoPort counts frames WriteBatch dropped because no member was
	// distributing.
	TxNoPort uint64
	// TxInvalid counts frames WriteBatch dropped as shorter than an
	// Ethernet header or over the trunk's MTU.
	TxInvalid uint64
	// TxMemberDropped counts frames a member's WriteBatch did not send
	// (full ring, link down), for protocols that send a frame by one
	// member; for broadcast the members' own counters tell.
	TxMemberDropped uint64
	// TxQueueOverflow counts frames dropped because a member's backlog
	// held its byte limit, and TxQueueStale frames a backlog dropped
	// for their waiting time: longer than its delay limit, or by CoDel's
	// control law (Options.TxQueueTarget); those were counted in
	// TxPackets when they were queued.
	TxQueueOverflow, TxQueueStale uint64
	// SoftOffload counts frames whose offload (a partial checksum, a
	// super-frame) the trunk did in software: received frames ReadBatch
	// returned plain, frames sent by a member without offloads.
	SoftOffload uint64
	// OffloadDropped counts frames dropped, either way, because their
	// offload cannot be done in software (frame.ErrOffloadUnsupported
	// or frame.ErrOffloadBadFrame).
	OffloadDropped uint64
}

// table is an immutable snapshot of what the data path needs. It is
// replaced whole, under Trunk.mu, never changed.
type table struct {
	// byID maps member IDs to members.
	byID [lb.MaxPorts]*Member
	// members are the members in the order they were added.
	members []*Member
	// primary is the member with the highest priority, first added on
	// ties, or nil.
	primary *Member
	// dist is the protocol's Distribution.
	dist Distribution
	// collecting and distributing are the members in those states.
	collecting, distributing lb.Set
	// hasher hashes frames for DistributeHash.
	hasher lb.Hasher
	// sel picks a distributing member for a hash.
	sel lb.Selector
}

// Trunk aggregates member Ports into one platform.Port. See the package
// documentation. Its methods are safe for concurrent use, but for
// ReadBatch (one caller at a time, as for every Port).
type Trunk struct {
	// name is the trunk's name; immutable.
	name string
	// clock is the protocol's time source; immutable.
	clock clock.Clock
	// log receives state changes; immutable.
	log *slog.Logger
	// onActive is Options.OnActiveChange and onDist
	// Options.OnDistributingChange; immutable.
	onActive func(bool)
	onDist   func([]string)
	// seed keys the hasher and the selector; immutable.
	seed uint64
	// mac is the trunk's address. Atomic: stored under mu.
	mac atomic.Pointer[net.HardwareAddr]
	// table is the data path's snapshot. Atomic: stored under mu.
	table atomic.Pointer[table]
	// closed is set by Close. Atomic.
	closed atomic.Bool
	// closing is closed by Close: it wakes readers and ReadBatch.
	closing chan struct{}
	// rx is the receive side's consumer state (ReadBatch's, and each
	// receive queue's) and counters (rx.go).
	rx rxSide
	// tx is the send side (tx.go, backlog.go); its pointer is immutable.
	tx *txSide
	// offloadLogged is set once a frame dropped for its offload has been
	// logged. Atomic.
	offloadLogged atomic.Bool

	// mu serialises configuration, link events, protocol calls and
	// control frames. It guards the fields below and the storing of
	// table and mac.
	mu sync.Mutex
	// proto is the current protocol. Guarded by mu.
	proto Protocol
	// ctl is proto's Control. Guarded by mu.
	ctl *control
	// members are the members in the order they were added. Guarded by mu.
	members []*Member
	// ids is the set of member IDs in use. Guarded by mu.
	ids lb.Set
	// hash is the hashed headers. Guarded by mu.
	hash lb.HashFields
	// isClosed is set by Close. Guarded by mu.
	isClosed bool
	// policy is the link policy. Guarded by mu.
	policy Policy
	// minActive is policy.minActive(), for Active. Atomic: stored under mu.
	minActive atomic.Int32
	// dirty is set when a member's state changed since table was last
	// published. Guarded by mu.
	dirty bool
	// sendBuf is the one-frame batch Control.Send writes. Guarded by mu.
	sendBuf [1][]byte

	// notifyMu serialises OnActiveChange calls and guards notified.
	notifyMu sync.Mutex
	// notified is the value of Active last passed to OnActiveChange,
	// and notifiedDist the distributing set last passed to
	// OnDistributingChange. Guarded by notifyMu.
	notified     bool
	notifiedDist lb.Set

	// readers counts the members' reader goroutines.
	readers sync.WaitGroup
	// tickDone is closed when the tick goroutine has returned (at once
	// when there is none).
	tickDone chan struct{}
}

// New returns a trunk without members, running the protocol of opts (by
// default failover). Close stops it.
func New(name string, opts Options) (*Trunk, error) {
	if name == "" || len(name) > maxNameLen {
		return nil, fmt.Errorf("trunk %q: name must be 1 to %d bytes", name, maxNameLen)
	}
	if opts.MAC != nil && len(opts.MAC) != 6 {
		return nil, fmt.Errorf("%s: lladdr %v: not a 6-byte MAC address", name, opts.MAC)
	}
	if err := opts.Policy.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := opts.Protocol
	if p == nil {
		p = &failover{}
	}
	if opts.Hash == 0 {
		opts.Hash = lb.AllFields
	}
	if opts.Seed == 0 {
		opts.Seed = rand.Uint64() | 1
	}
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.TickInterval == 0 {
		opts.TickInterval = DefaultTickInterval
	}
	if opts.TxQueueBytes == 0 {
		opts.TxQueueBytes = DefaultTxQueueBytes
	}
	if opts.TxQueueDelay <= 0 {
		opts.TxQueueDelay = DefaultTxQueueDelay
	}
	switch {
	case opts.TxQueueTarget == 0:
		opts.TxQueueTarget = DefaultTxQueueTarget
	case opts.TxQueueTarget < 0:
		opts.TxQueueTarget = 0
	}
	tr := &Trunk{
		name:     name,
		clock:    opts.Clock,
		log:      opts.Logger.With("trunk", name),
		onActive: opts.OnActiveChange,
		onDist:   opts.OnDistributingChange,
		seed:     opts.Seed,
		closing:  make(chan struct{}),
		hash:     opts.Hash,
		policy:   opts.Policy,
		tickDone: make(chan struct{}),
	}
	tr.tx = newTxSide(opts, tr.noteOffloadDropped)
	tr.minActive.Store(int32(opts.Policy.minActive()))
	tr.rx.init(opts.RxQueues)
	if opts.MAC != nil {
		mac := slices.Clone(opts.MAC)
		tr.mac.Store(&mac)
	}
	tr.mu.Lock()
	tr.attachLocked(p)
	tr.publishLocked()
	tr.mu.Unlock()
	supervise.Go(tr.name+" transmit backlog", func() { tr.tx.flusher(tr.closing, &tr.table) })
	if opts.TickInterval > 0 {
		supervise.Go(tr.name+" ticker", func() { tr.ticker(opts.TickInterval) })
	} else {
		close(tr.tickDone)
	}
	return tr, nil
}

// Name implements platform.Port: the trunk's name.
func (tr *Trunk) Name() string { return tr.name }

// HardwareAddr implements platform.Port: Options.MAC, or the first port's
// MAC, or all zeros before any port was added.
func (tr *Trunk) HardwareAddr() net.HardwareAddr {
	if p := tr.mac.Load(); p != nil {
		return *p
	}
	return make(net.HardwareAddr, 6)
}

// MTU implements platform.Port: the smallest member MTU, 1500 without
// members. WriteBatch drops (and counts) frames over it.
func (tr *Trunk) MTU() int { return tr.table.Load().mtu() }

// mtu returns the smallest member MTU, defaultMTU without members.
func (t *table) mtu() int {
	if len(t.members) == 0 {
		return defaultMTU
	}
	mtu := t.members[0].port.MTU()
	for _, m := range t.members[1:] {
		mtu = min(mtu, m.port.MTU())
	}
	return mtu
}

// Headroom implements platform.Port: the smallest member headroom, 0
// without members.
func (tr *Trunk) Headroom() int {
	t := tr.table.Load()
	if len(t.members) == 0 {
		return 0
	}
	h := t.members[0].port.Headroom()
	for _, m := range t.members[1:] {
		h = min(h, m.port.Headroom())
	}
	return max(h, 0)
}

// BatchSize implements platform.Port. ReadBatch returns at most one
// member's batch per call; WriteBatch takes any number of frames.
func (tr *Trunk) BatchSize() int { return platform.DefaultBatchSize }

// Active reports whether enough members are distributing (one, or
// Policy.MinLinks): frames can leave and the host may use the trunk. It
// is false after Close.
func (tr *Trunk) Active() bool {
	return !tr.closed.Load() && tr.table.Load().distributing.Len() >= int(tr.minActive.Load())
}

// Link implements platform.Port: up while the trunk is Active.
func (tr *Trunk) Link() platform.LinkState {
	if tr.Active() {
		return platform.LinkUp
	}
	return platform.LinkDown
}

// Stats returns the trunk's counters.
func (tr *Trunk) Stats() Stats {
	return Stats{
		RxPackets: tr.rx.packets.Load(), RxBytes: tr.rx.bytes.Load(),
		RxRefused: tr.rx.refused.Load(), RxControl: tr.rx.control.Load(),
		TxPackets: tr.tx.packets.Load(), TxBytes: tr.tx.bytes.Load(),
		TxNoPort: tr.tx.noPort.Load(), TxInvalid: tr.tx.invalid.Load(),
		TxMemberDropped: tr.tx.memDropped.Load(),
		TxQueueOverflow: tr.tx.qOverflow.Load(), TxQueueStale: tr.tx.qStale.Load(),
		SoftOffload:    tr.rx.softOffload.Load() + tr.tx.softOffload.Load(),
		OffloadDropped: tr.rx.offloadDropped.Load() + tr.tx.offloadDropped.Load(),
	}
}

// Offloads implements platform.Port. A trunk always carries offloads:
// its members that carry them get them with each frame, and for the
// others the trunk does them in software (see WriteBatch and ReadBatch),
// so the answer does not change as members come and go.
func (tr *Trunk) Offloads() bool { return true }

// noteOffloadDropped logs, once per trunk, a frame dropped on port
// because its offload o cannot be done in software.
func (tr *Trunk) noteOffloadDropped(port string, o platform.Offload, err error) {
	if tr.offloadLogged.CompareAndSwap(false, true) {
		tr.log.Warn("frame dropped: its offload cannot be done in software (counted in offload_dropped; logged once)",
			"port", port, "gso_type", o.GSOType, "flags", o.Flags, "err", err)
	}
}

// Counters implements platform.Port: the trunk's own counters (members
// have theirs, see Ports). RxDropped is Stats.RxRefused; TxDropped is
// TxNoPort + TxInvalid + TxMemberDropped + TxQueueOverflow +
// TxQueueStale.
func (tr *Trunk) Counters() platform.Counters {
	s := tr.Stats()
	return platform.Counters{
		RxPackets: s.RxPackets, RxBytes: s.RxBytes,
		TxPackets: s.TxPackets, TxBytes: s.TxBytes,
		RxDropped: s.RxRefused,
		TxDropped: s.TxNoPort + s.TxInvalid + s.TxMemberDropped + s.TxQueueOverflow + s.TxQueueStale,
	}
}

// Proto returns the name of the current protocol.
func (tr *Trunk) Proto() Proto {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.proto.Name()
}

// HashFields returns the headers the flow hash reads.
func (tr *Trunk) HashFields() lb.HashFields {
	return tr.table.Load().hasher.Fields()
}

// publishLocked stores a new table built from the members and their
// states. Call with mu held.
func (tr *Trunk) publishLocked() {
	tr.dirty = false
	t := &table{
		members: tr.members,
		dist:    tr.proto.Distribution(),
		hasher:  lb.NewHasher(tr.seed, tr.hash),
		sel:     lb.NewSelector(tr.seed),
	}
	for _, m := range tr.members {
		t.byID[m.id] = m
		if m.Collecting() {
			t.collecting = t.collecting.With(m.id)
		}
		if m.Distributing() {
			t.distributing = t.distributing.With(m.id)
		}
		if t.primary == nil || m.cfg.Priority > t.primary.cfg.Priority {
			t.primary = m
		}
	}
	tr.table.Store(t)
}

// publishChangesLocked publishes a new table if a member's state changed
// since the last one. Call with mu held.
func (tr *Trunk) publishChangesLocked() {
	if tr.dirty {
		tr.publishLocked()
	}
}

// notify calls OnDistributingChange if the distributing set changed to
// one that is not empty, and OnActiveChange if Active changed, since the
// last call.
func (tr *Trunk) notify() {
	tr.notifyMu.Lock()
	defer tr.notifyMu.Unlock()
	if t := tr.table.Load(); t.distributing != tr.notifiedDist && !tr.closed.Load() {
		tr.notifiedDist = t.distributing
		if t.distributing != 0 && tr.onDist != nil {
			var names []string
			for u := t.distributing; u != 0; u &= u - 1 {
				names = append(names, t.byID[u.First()].name)
			}
			tr.onDist(names)
		}
	}
	a := tr.Active()
	if a == tr.notified {
		return
	}
	tr.notified = a
	tr.log.Info("active changed", "active", a)
	if tr.onActive != nil {
		tr.onActive(a)
	}
}

// Close implements platform.Port: it detaches the protocol, wakes a
// blocked ReadBatch (which returns ErrClosed), stops the readers and the
// ticker and closes every member. Frames a consumer holds become invalid.
func (tr *Trunk) Close() error {
	tr.mu.Lock()
	if tr.isClosed {
		tr.mu.Unlock()
		return nil
	}
	tr.isClosed = true
	tr.closed.Store(true)
	close(tr.closing)
	tr.proto.Detach()
	tr.ctl.detached = true
	members := tr.members
	tr.mu.Unlock()

	<-tr.tickDone
	<-tr.tx.flushDone
	for _, m := range members {
		m.release()
	}
	tr.readers.Wait()
	var errs []error
	for _, m := range members {
		if m.closeErr != nil {
			errs = append(errs, fmt.Errorf("%s: close %s: %w", tr.name, m.name, m.closeErr))
		}
	}
	tr.notify()
	tr.log.Info("trunk closed")
	return errors.Join(errs...)
}
