package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"

	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/defaultroute"
	"github.com/swctl/swctl/platform/hostaddr"
	"github.com/swctl/swctl/platform/linkwatch"
	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/stackguard"
	"github.com/swctl/swctl/platform/tap"
)

// linuxSystem opens members over AF_PACKET, host TAPs over /dev/net/tun,
// guards members' stacks with tcx, and follows links over netlink.
type linuxSystem struct {
	// watcher follows every link of the daemon's network namespace.
	watcher *linkwatch.Watcher
	// cancel stops the delivery goroutine Watch starts.
	cancel context.CancelFunc
	// done is closed when the delivery goroutine has returned.
	done chan struct{}
	// journal records every MAC change before it is made.
	journal *lladdr.Journal
	// log receives the ports' rare warnings.
	log *slog.Logger
	// ports are the options of every AF_PACKET port, from the daemon's
	// Options; Workers applies to ports opened with offloads only.
	ports afpacket.Options
}

// newSystem makes the Linux system; opts (checked by Run) gives its
// ports' workers, TX mode, receive ring and polling.
func newSystem(journal *lladdr.Journal, log *slog.Logger, opts Options) (system, error) {
	w, err := linkwatch.New()
	if err != nil {
		return nil, fmt.Errorf("link events: %w", err)
	}
	ports := afpacket.Options{
		Workers:     opts.Workers,
		TXRing:      opts.TXMode != TXMmsg,
		BusyPoll:    opts.BusyPoll,
		QdiscBypass: opts.QdiscBypass,
		Coalesce:    opts.Coalesce,
		Logger:      log,
	}
	if opts.RXRingMiB > 0 {
		ports.BlockCount = opts.RXRingMiB << 20 / afpacket.DefaultBlockSize
	}
	return &linuxSystem{watcher: w, done: make(chan struct{}), journal: journal, log: log, ports: ports}, nil
}

func (s *linuxSystem) HardwareAddr(name string) (net.HardwareAddr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ifi.HardwareAddr, nil
}

func (s *linuxSystem) HostAddrs(name string) int { return hostaddr.Routable(name) }

// HostIPs reads the TAP's addresses with rtnetlink (platform/hostaddr),
// which says which IPv6 ones are still tentative: those are left out.
func (s *linuxSystem) HostIPs(name string) ([]netip.Addr, error) {
	addrs, err := hostaddr.List(name)
	if err != nil {
		return nil, err
	}
	return announceable(addrs), nil
}

func (s *linuxSystem) SetLLAddr(name string, mac net.HardwareAddr, owner string) error {
	return s.journal.SetLLAddr(name, mac, owner)
}

func (s *linuxSystem) RestoreLLAddr(name string) error {
	return s.journal.RestoreLLAddr(name)
}

func (s *linuxSystem) OpenPort(name string, offload bool, sendBuffer int) (platform.Port, platform.Caps, error) {
	opts := s.ports
	opts.Offload = offload
	opts.SendBuffer = sendBuffer
	if !offload {
		// Only bridge members and trunk links have workers: a bridge
		// runs one reader per queue; a trunk's single reader per link
		// reads all its queues.
		opts.Workers = 0
	}
	p, err := afpacket.Open(name, opts)
	if err != nil {
		return nil, platform.Caps{}, err
	}
	// The port read its link state when it opened; the watcher's view is
	// the one kept current from here on.
	if ev, ok := s.watcher.Lookup(name); ok {
		p.SetLink(ev.State)
	}
	return p, platform.Caps{Promisc: p, Multicast: p, Link: p, MTU: p}, nil
}

// CreateTap makes the host's TAP with offloads (IFF_VNET_HDR): TCP
// super-frames and partial checksums cross between the host stack and
// the members untouched, and are finished in software only for a member
// that carries none. It has one receive queue per worker
// (IFF_MULTI_QUEUE), each read by its own goroutine: the bridge's
// readers of a local TAP, the pump's of a trunk's.
func (s *linuxSystem) CreateTap(name string, mac net.HardwareAddr, mtu int) (platform.Port, platform.Caps, error) {
	tp, err := tap.Create(name, tap.Options{MAC: mac, MTU: mtu, Up: true, Offload: true, Queues: s.ports.Workers})
	if err != nil {
		return nil, platform.Caps{}, err
	}
	return tp, platform.Caps{Link: tp, MTU: tp, Carrier: tp}, nil
}

func (s *linuxSystem) SetTapMTU(name string, mtu int) error {
	return tap.SetInterfaceMTU(name, mtu)
}

func (s *linuxSystem) GuardStack(name string) (io.Closer, error) {
	idx := 0
	if ev, ok := s.watcher.Lookup(name); ok {
		idx = ev.Index
	}
	return stackguard.Attach(idx, name)
}

func (s *linuxSystem) LinkState(name string) platform.LinkState {
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

// DefaultRouteIfaces implements system.
func (s *linuxSystem) DefaultRouteIfaces() ([]string, error) { return defaultroute.Ifaces() }

func (s *linuxSystem) Watch(fn func(linkEvent)) error {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	supervise.Go("link events", func() {
		defer close(s.done)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-s.watcher.Events():
				if !ok {
					return
				}
				fn(linkEventOf(ev))
			}
		}
	})
	return nil
}

func (s *linuxSystem) Close() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return s.watcher.Close()
}
