package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/health"
	"github.com/swctl/swctl/platform"
)

// DefaultResolveInterval is how often a resolved backend's MAC is asked
// again, to follow a change.
const DefaultResolveInterval = 10 * time.Second

// MaxVIPs bounds a service's virtual addresses.
const MaxVIPs = 16

// Config configures a Service.
type Config struct {
	// Name names the service in errors and logs.
	Name string
	// VIPs are the virtual addresses, IPv4 and IPv6, at least one.
	VIPs []netip.Addr
	// Source is the IPv4 address the service asks IPv4 backends' MACs
	// from; needed when there is an IPv4 backend.
	Source netip.Addr
	// Source6 is the IPv6 address it asks IPv6 backends' MACs from;
	// needed when there is an IPv6 backend.
	Source6 netip.Addr
	// Balancer configures selection (method, table sizes).
	Balancer lb.BalancerConfig
	// Check is the health check; the zero value checks nothing.
	Check Check
	// ResolveInterval is how often a resolved MAC is asked again (0
	// means DefaultResolveInterval).
	ResolveInterval time.Duration
	// AskAnonymously asks backends' MACs from the unspecified address
	// (an RFC 5227 ARP probe; an NS from ::, answered to all nodes),
	// for a service whose MAC is not the one its sources resolve to (on
	// a bridge, beside the host's TAP): asking from Source would teach
	// the backends the service's MAC for the host's address. Source and
	// Source6 are still required: the health checks come from them.
	AskAnonymously bool
}

// Backend is one backend as configured.
type Backend struct {
	// Addr is the backend's real address, on the port's segment.
	Addr netip.Addr
	// Weight is its share of new flows (lb.Backend.Weight; 0 means 1).
	Weight int
	// Drain keeps its established flows and gives it no new one.
	Drain bool
}

// Service is one running load balancer. Its methods are safe for
// concurrent use.
type Service struct {
	// name, port, mac, clk, log and bal are set by New; immutable.
	name string
	port platform.Port
	mac  frame.MAC
	clk  clock.Clock
	log  *slog.Logger
	bal  *lb.Balancer
	// vip4 and vip6 are the VIPs by family; immutable.
	vip4 [][4]byte
	vip6 [][16]byte
	// source and source6 are Config's; immutable.
	source, source6 netip.Addr
	// check is the health check, defaults applied; immutable.
	check Check
	// resolveEvery is Config.ResolveInterval with its default; immutable.
	resolveEvery time.Duration
	// anonymous is Config.AskAnonymously; immutable.
	anonymous bool
	// probe checks one backend once; New sets it from check, tests
	// replace it before Start.
	probe func(ctx context.Context, b *backend) error

	// mu serialises changes of the backend set and of its states.
	mu sync.Mutex
	// backends is the current set in configuration order; replaced
	// whole under mu, read by the data path through the atomic.
	backends atomic.Pointer[[]*backend]
	// byID indexes backends by their lb ID; replaced with backends.
	byID atomic.Pointer[[]*backend]

	// c are the service's counters.
	c counters
	// ctx is done once Close is called; stop cancels it. The resolver
	// and the prober run until then.
	ctx  context.Context
	stop context.CancelFunc
	// wg counts the goroutines Start started; Close waits for them.
	wg sync.WaitGroup
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
}

// counters are a service's atomics, read by Status.
type counters struct {
	// frames and bytes count what was forwarded to backends.
	frames, bytes atomic.Uint64
	// noBackend and unresolved count frames to a VIP dropped for want
	// of a backend, or of its MAC.
	noBackend, unresolved atomic.Uint64
	// badARP, badND and badIP count malformed frames of each kind.
	badARP, badND, badIP atomic.Uint64
	// arpReplies and naReplies count answers for VIPs; sendErrors the
	// frames the port refused.
	arpReplies, naReplies, sendErrors atomic.Uint64
}

// backend is one backend of a running service.
type backend struct {
	// id is its lb ID, addr its address; immutable.
	id   int
	addr netip.Addr
	// weight and drain are its configuration; guarded by Service.mu.
	weight int
	drain  bool
	// mac is the backend's MAC key (frame.MAC.Key) with bit 63 set once
	// known, 0 before.
	mac atomic.Uint64
	// seen is when it last answered or announced its MAC (UnixNano).
	seen atomic.Int64
	// asked is when it was last asked (UnixNano); resolver only.
	asked int64
	// answered gets a value (without blocking) whenever the backend
	// tells its MAC, for the arp check.
	answered chan struct{}
	// health is its state machine; nil without a check.
	health *health.Machine
	// frames and bytes count what was forwarded to it.
	frames, bytes atomic.Uint64
}

const macKnown = 1 << 63

// MAC returns the backend's MAC and whether it is known.
func (b *backend) MAC() (frame.MAC, bool) {
	v := b.mac.Load()
	return frame.MACFromKey(v &^ macKnown), v&macKnown != 0
}

// New returns the service cfg describes on port, which it owns from now
// on (Close closes it), with no backends. Start runs it. Times come from
// clk; a nil log discards.
func New(cfg Config, port platform.Port, clk clock.Clock, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{name: cfg.Name, port: port, mac: frame.MACOf(port.HardwareAddr()), clk: clk, log: log,
		source: cfg.Source, source6: cfg.Source6, resolveEvery: cfg.ResolveInterval, anonymous: cfg.AskAnonymously}
	if s.resolveEvery == 0 {
		s.resolveEvery = DefaultResolveInterval
	}
	if err := s.checkConfig(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	for _, v := range cfg.VIPs {
		if v.Is4() {
			s.vip4 = append(s.vip4, v.As4())
		} else {
			s.vip6 = append(s.vip6, v.As16())
		}
	}
	var err error
	if s.check, err = cfg.Check.withDefaults(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	s.probe = s.prober(s.check)
	if s.bal, err = lb.NewBalancer(cfg.Balancer, clk); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	s.backends.Store(&[]*backend{})
	s.byID.Store(&[]*backend{})
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// checkConfig refuses VIPs and sources that cannot work.
func (s *Service) checkConfig(cfg *Config) error {
	if len(cfg.VIPs) == 0 || len(cfg.VIPs) > MaxVIPs {
		return fmt.Errorf("%d VIPs: want 1 to %d", len(cfg.VIPs), MaxVIPs)
	}
	if len(s.mac) == 0 || s.mac.IsZero() || s.mac.IsMulticast() {
		return fmt.Errorf("port %s: MAC %v cannot own VIPs", s.port.Name(), s.mac)
	}
	for i, v := range cfg.VIPs {
		if err := CheckAddr("VIP", v); err != nil {
			return err
		}
		if slices.Contains(cfg.VIPs[:i], v) {
			return fmt.Errorf("VIP %s: given twice", v)
		}
	}
	if cfg.Source.IsValid() && !cfg.Source.Is4() {
		return fmt.Errorf("source %s: want an IPv4 address (Source6 for IPv6)", cfg.Source)
	}
	if cfg.Source6.IsValid() && !cfg.Source6.Is6() {
		return fmt.Errorf("IPv6 source %s: want an IPv6 address", cfg.Source6)
	}
	return nil
}

// CheckAddr refuses, naming it as what, an address that cannot be a
// VIP, a backend or a source: not unicast, loopback, zoned or
// IPv4-mapped.
func CheckAddr(what string, a netip.Addr) error {
	switch {
	case !a.IsValid():
		return fmt.Errorf("%s: no address", what)
	case a.Zone() != "" || a.Is4In6():
		return fmt.Errorf("%s %s: want a plain IPv4 or IPv6 address", what, a)
	case a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%s %s: not a unicast address a host can own", what, a)
	}
	return nil
}

// SetBackends makes bs the backend set, or returns an error naming the
// first bad backend and changes nothing. A backend kept (same address)
// keeps its ID, MAC, health and counters, so that its flows stay.
func (s *Service) SetBackends(bs []Backend) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.backends.Load()
	byAddr := make(map[netip.Addr]*backend, len(old))
	used := map[int]bool{}
	for _, b := range old {
		byAddr[b.addr] = b
	}
	if len(bs) > lb.MaxBackends {
		return fmt.Errorf("%s: %d backends: want at most %d", s.name, len(bs), lb.MaxBackends)
	}
	for i, c := range bs {
		if err := s.checkBackend(c); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if slices.ContainsFunc(bs[:i], func(o Backend) bool { return o.Addr == c.Addr }) {
			return fmt.Errorf("%s: backend %s: given twice", s.name, c.Addr)
		}
		if b := byAddr[c.Addr]; b != nil {
			used[b.id] = true
		}
	}
	next := make([]*backend, 0, len(bs))
	for _, c := range bs {
		b := byAddr[c.Addr]
		if b == nil {
			b = &backend{id: freeID(used), addr: c.Addr, answered: make(chan struct{}, 1)}
			used[b.id] = true
			if s.check.Kind != CheckNone {
				m, err := health.New(fmt.Sprintf("%s: backend %s", s.name, c.Addr), s.check.Thresholds, s.clk, s.log)
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				b.health = m
			}
		}
		next = append(next, b)
	}
	// Weights and drains change on the new set's backends only after
	// every check passed.
	for i, c := range bs {
		next[i].weight, next[i].drain = max(c.Weight, 1), c.Drain
	}
	return s.publish(next)
}

// checkBackend refuses a backend that clashes with the VIPs or the
// sources, or that the service cannot resolve.
func (s *Service) checkBackend(c Backend) error {
	if err := CheckAddr("backend", c.Addr); err != nil {
		return err
	}
	switch {
	case c.Weight < 0 || c.Weight > lb.MaxWeight:
		return fmt.Errorf("backend %s: weight %d: want 1 to %d", c.Addr, c.Weight, lb.MaxWeight)
	case c.Addr == s.source || c.Addr == s.source6:
		return fmt.Errorf("backend %s: the load balancer's own address", c.Addr)
	case s.isVIPAddr(c.Addr):
		return fmt.Errorf("backend %s: a VIP of the service", c.Addr)
	case c.Addr.Is4() && !s.source.IsValid():
		return fmt.Errorf("backend %s: no IPv4 source address to resolve its MAC from", c.Addr)
	case c.Addr.Is6() && !s.source6.IsValid():
		return fmt.Errorf("backend %s: no IPv6 source address to resolve its MAC from", c.Addr)
	}
	return nil
}

// isVIPAddr reports whether a is one of the VIPs.
func (s *Service) isVIPAddr(a netip.Addr) bool {
	if a.Is4() {
		return slices.Contains(s.vip4, a.As4())
	}
	return slices.Contains(s.vip6, a.As16())
}

// freeID returns the lowest ID not in used.
func freeID(used map[int]bool) int {
	id := 0
	for used[id] {
		id++
	}
	return id
}

// publish hands next to the data path and the Balancer, with each
// backend's state; called with mu held.
func (s *Service) publish(next []*backend) error {
	set := make([]lb.Backend, len(next))
	maxID := -1
	for i, b := range next {
		set[i] = lb.Backend{ID: b.id, Addr: b.addr, Weight: b.weight, State: s.stateOf(b)}
		maxID = max(maxID, b.id)
	}
	byID := make([]*backend, maxID+1)
	for _, b := range next {
		byID[b.id] = b
	}
	// The data path may look an ID up in byID as soon as the Balancer
	// returns it: byID first.
	s.byID.Store(&byID)
	if err := s.bal.SetBackends(set); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.backends.Store(&next)
	return nil
}

// stateOf is the state selection gives b: Down while its MAC is unknown
// or its health is not up, Draining when drained, Serving otherwise.
func (s *Service) stateOf(b *backend) lb.BackendState {
	_, known := b.MAC()
	switch {
	case !known || (b.health != nil && b.health.State() != health.Up):
		return lb.Down
	case b.drain:
		return lb.Draining
	}
	return lb.Serving
}

// republish gives the Balancer the backends' current states, after a
// MAC or a health state changed.
func (s *Service) republish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.publish(*s.backends.Load()); err != nil {
		s.log.Error("lb: cannot update backends", "lb", s.name, "err", err)
	}
}

// Start runs the service until Close: a reader of the port, the
// resolver and, with a health check, the prober.
func (s *Service) Start() {
	s.wg.Add(2)
	supervise.Go("lb "+s.name+" reader", func() { defer s.wg.Done(); s.read() })
	supervise.Go("lb "+s.name+" resolver", func() { defer s.wg.Done(); s.resolveLoop(s.ctx) })
	if s.check.Kind != CheckNone {
		s.wg.Add(1)
		supervise.Go("lb "+s.name+" prober", func() { defer s.wg.Done(); s.probeLoop(s.ctx) })
	}
}

// Close stops the service and closes its port.
func (s *Service) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stop()
		err = s.port.Close()
		s.wg.Wait()
	})
	return err
}

// read is the reader: batches from the port through handle, forwarded
// frames back out in one WriteBatch per batch.
func (s *Service) read() {
	in := platform.NewBatch(s.port.BatchSize())
	out := platform.NewBatch(s.port.BatchSize())
	for {
		n, err := s.port.ReadBatch(in)
		if err != nil {
			if !errors.Is(err, platform.ErrClosed) {
				s.log.Error("lb: read", "lb", s.name, "port", s.port.Name(), "err", err)
			}
			return
		}
		s.forwardBatch(in.Slice(0, n), out)
	}
}

// forwardBatch handles the frames of in and writes those it forwards,
// using out's room.
func (s *Service) forwardBatch(in, out platform.Batch) {
	now := s.clk.Now()
	k := 0
	for i, f := range in.Frames {
		if s.handle(f, now) {
			out.Frames[k], out.Offs[k] = f, in.Offload(i)
			k++
		}
	}
	if k > 0 {
		if _, err := s.port.WriteBatch(out.Slice(0, k)); err != nil {
			s.c.sendErrors.Add(1)
		}
	}
}

// send writes one frame the service built, counting a failure.
func (s *Service) send(f []byte, err error) bool {
	if err == nil {
		_, err = s.port.WriteBatch(platform.Plain(f))
	}
	if err != nil {
		s.c.sendErrors.Add(1)
		return false
	}
	return true
}

// SetLink passes a carrier change to the service's port, when the port
// takes its link state from outside (platform.LinkSetter).
func (s *Service) SetLink(state platform.LinkState) {
	if ls, ok := s.port.(platform.LinkSetter); ok {
		ls.SetLink(state)
	}
}
