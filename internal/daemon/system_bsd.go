//go:build openbsd || freebsd

package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"

	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/bpf"
	"github.com/swctl/swctl/platform/defaultroute"
	"github.com/swctl/swctl/platform/hostaddr"
	"github.com/swctl/swctl/platform/linkwatch"
	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/stackguard"
	"github.com/swctl/swctl/platform/tap"
)

// bsdSystem opens members over bpf(4) and follows links on the routing
// socket, changes members' MACs with SIOCSIFLLADDR, and gives bridges
// (--local) and trunks to the host through tap(4) (platform/tap).
type bsdSystem struct {
	// watcher follows every interface from the routing socket.
	watcher *linkwatch.Watcher
	// tapMu guards taps.
	tapMu sync.Mutex
	// taps maps the name a host TAP was made for (its bridge's or
	// trunk's) to the TAP's interface name.
	taps map[string]string
	// journal records every MAC change before it is made.
	journal *lladdr.Journal
	// log receives the ports' rare warnings.
	log *slog.Logger
	// stop is closed by Close to end the delivery goroutine.
	stop chan struct{}
	// done is closed when the delivery goroutine has returned; nil until
	// Watch starts it.
	done chan struct{}
	// closeOnce runs Close's teardown once.
	closeOnce sync.Once
}

// newSystem makes the BSD system. Of opts' port settings only the
// defaults exist here: /dev/bpf has no receive workers, TX ring or busy
// polling.
func newSystem(journal *lladdr.Journal, log *slog.Logger, opts Options) (system, error) {
	if opts.BusyPoll {
		return nil, fmt.Errorf("daemon: busy polling (--busy-poll) needs AF_PACKET rings: not available on %s", runtime.GOOS)
	}
	if opts.QdiscBypass {
		return nil, fmt.Errorf("daemon: qdisc bypass (--qdisc-bypass) is an AF_PACKET option: not available on %s", runtime.GOOS)
	}
	w, err := linkwatch.New()
	if err != nil {
		return nil, fmt.Errorf("link events: %w", err)
	}
	return &bsdSystem{watcher: w, taps: make(map[string]string), journal: journal, log: log, stop: make(chan struct{})}, nil
}

// OpenPort opens a bpf port. bpf carries no offload metadata: the port is
// a plain one whatever offload asks, and the bridge finishes checksums
// and segments super-frames before it writes to it. bpf has promiscuous
// mode (BIOCPROMISC) but no multicast memberships of its own.
func (s *bsdSystem) OpenPort(name string, offload bool, sendBuffer int) (platform.Port, platform.Caps, error) {
	if sendBuffer != 0 {
		return nil, platform.Caps{}, fmt.Errorf("%s: send buffer: not implemented on %s (bpf writes one frame at a time)", name, runtime.GOOS)
	}
	p, err := bpf.Open(name, bpf.Options{Logger: s.log})
	if err != nil {
		return nil, platform.Caps{}, err
	}
	// The port read its link state from the flags when it opened; the
	// watcher's, which has the link state too, is kept current from here.
	if ev, ok := s.watcher.Lookup(name); ok {
		p.SetLink(ev.State)
	}
	return p, platform.Caps{Promisc: p, Link: p, MTU: p}, nil
}

// CreateTap makes the host TAP of a bridge or a trunk (platform/tap). Its
// interface is named after the object where the OS allows it (FreeBSD,
// unless the rename is refused); on OpenBSD it is the kernel's tapN, which
// `bridge show` and `trunk show` name, and SetTapMTU and HostAddrs are
// given the object's name and map it here. Its carrier cannot be set
// (platform/tap): the capability set has none.
func (s *bsdSystem) CreateTap(name string, mac net.HardwareAddr, mtu int) (platform.Port, platform.Caps, error) {
	tp, err := tap.Create(name, tap.Options{MAC: mac, MTU: mtu, Up: true})
	if err != nil {
		return nil, platform.Caps{}, err
	}
	if tp.Name() != name {
		s.log.Info("host TAP named by the kernel", "object", name, "tap", tp.Name())
	}
	s.tapMu.Lock()
	s.taps[name] = tp.Name()
	s.tapMu.Unlock()
	return tp, platform.Caps{Link: tp, MTU: tp}, nil
}

// ifname is the interface of the TAP made for the object name, or name
// itself when no TAP was made for it.
func (s *bsdSystem) ifname(name string) string {
	s.tapMu.Lock()
	defer s.tapMu.Unlock()
	if n, ok := s.taps[name]; ok {
		return n
	}
	return name
}

func (s *bsdSystem) SetTapMTU(name string, mtu int) error {
	return tap.SetInterfaceMTU(s.ifname(name), mtu)
}

func (s *bsdSystem) LinkState(name string) platform.LinkState {
	if ev, ok := s.watcher.Lookup(name); ok {
		return ev.State
	}
	if _, err := net.InterfaceByName(name); err == nil {
		// Created since the watcher's last event was handled: the event
		// is on its way.
		return platform.LinkDown
	}
	return platform.LinkAbsent
}

// GuardStack keeps the member's stack off the frames it receives
// (platform/stackguard): a bpf filter-drop descriptor on OpenBSD; on
// FreeBSD nothing to hold, and a member with IP addresses refused.
func (s *bsdSystem) GuardStack(name string) (io.Closer, error) {
	idx := 0
	if ev, ok := s.watcher.Lookup(name); ok {
		idx = ev.Index
	}
	return stackguard.Attach(idx, name)
}

// DefaultRouteIfaces implements system.
func (s *bsdSystem) DefaultRouteIfaces() ([]string, error) { return defaultroute.Ifaces() }

func (s *bsdSystem) HardwareAddr(name string) (net.HardwareAddr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ifi.HardwareAddr, nil
}

func (s *bsdSystem) HostAddrs(name string) int { return hostaddr.Routable(s.ifname(name)) }

// HostIPs reads the TAP's addresses from getifaddrs (platform/hostaddr),
// which does not say which IPv6 ones are still tentative: they are
// announced too.
func (s *bsdSystem) HostIPs(name string) ([]netip.Addr, error) {
	addrs, err := hostaddr.List(s.ifname(name))
	if err != nil {
		return nil, err
	}
	return announceable(addrs), nil
}

// SetLLAddr goes through the journal (SIOCSIFLLADDR, journalled first, as
// on Linux).
func (s *bsdSystem) SetLLAddr(name string, mac net.HardwareAddr, owner string) error {
	return s.journal.SetLLAddr(name, mac, owner)
}

func (s *bsdSystem) RestoreLLAddr(name string) error {
	return s.journal.RestoreLLAddr(name)
}

// Watch delivers the routing socket's link events (platform/linkwatch) to
// fn until Close.
func (s *bsdSystem) Watch(fn func(linkEvent)) error {
	if s.done != nil {
		return errors.New("link watch: already started")
	}
	s.done = make(chan struct{})
	supervise.Go("link events", func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case ev, ok := <-s.watcher.Events():
				if !ok {
					if err := s.watcher.Err(); err != nil {
						s.log.Error("link watch stopped", "err", err)
					}
					return
				}
				fn(linkEventOf(ev))
			}
		}
	})
	return nil
}

func (s *bsdSystem) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		if s.done != nil {
			<-s.done
		}
		s.watcher.Close()
	})
	return nil
}
