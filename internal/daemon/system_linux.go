package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/swctl/swctl/internal/linkwatch"
	"github.com/swctl/swctl/internal/stackguard"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/tap"
	"github.com/swctl/swctl/promisc"
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
	journal *promisc.Journal
	// log receives the ports' rare warnings.
	log *slog.Logger
	// workers is the number of receive queues of a port opened with
	// offloads (a bridge member); 0 or 1 means one.
	workers int
	// txRing opens every AF_PACKET port with a TX ring (daemon
	// Options.TXMode "ring").
	txRing bool
	// rxBlocks is the number of receive ring blocks of every AF_PACKET
	// receive socket (daemon Options.RXRingMiB); 0 means afpacket's
	// default.
	rxBlocks int
}

// setRXRing sets the receive ring of the ports opened from now on to mib
// MiB (daemon Options.RXRingMiB), in afpacket.DefaultBlockSize blocks.
func (s *linuxSystem) setRXRing(mib int) { s.rxBlocks = mib << 20 / afpacket.DefaultBlockSize }

// setTXMode sets how the ports opened from now on send (daemon
// Options.TXMode, checked by Run).
func (s *linuxSystem) setTXMode(mode string) { s.txRing = mode != TXMmsg }

// setWorkers sets the receive queues of the bridge members opened from
// now on (daemon Options.Workers).
func (s *linuxSystem) setWorkers(n int) { s.workers = n }

func newSystem(journal *promisc.Journal, log *slog.Logger) (system, error) {
	w, err := linkwatch.New()
	if err != nil {
		return nil, fmt.Errorf("link events: %w", err)
	}
	return &linuxSystem{watcher: w, done: make(chan struct{}), journal: journal, log: log}, nil
}

func (s *linuxSystem) HardwareAddr(name string) (net.HardwareAddr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ifi.HardwareAddr, nil
}

func (s *linuxSystem) HostAddrs(name string) int {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return 0
	}
	addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return 0
	}
	n := 0
	for _, a := range addrs {
		if !a.IP.IsLinkLocalUnicast() {
			n++
		}
	}
	return n
}

func (s *linuxSystem) SetLLAddr(name string, mac net.HardwareAddr, owner string) error {
	return s.journal.SetLLAddr(name, mac, owner)
}

func (s *linuxSystem) RestoreLLAddr(name string) error {
	return s.journal.RestoreLLAddr(name)
}

func (s *linuxSystem) OpenPort(name string, offload bool) (platform.Port, error) {
	opts := afpacket.Options{Offload: offload, TXRing: s.txRing, BlockCount: s.rxBlocks, Logger: s.log}
	if offload {
		// Bridge members and trunk links: a bridge runs one reader per
		// queue; a trunk's single reader per link reads all its queues.
		opts.Workers = s.workers
	}
	p, err := afpacket.Open(name, opts)
	if err != nil {
		return nil, err
	}
	// The port read its link state when it opened; the watcher's view is
	// the one kept current from here on.
	if ev, ok := s.watcher.Lookup(name); ok {
		p.SetLink(ev.State)
	}
	return p, nil
}

func (s *linuxSystem) CreateTap(name string, mac net.HardwareAddr, mtu int) (platform.Port, error) {
	return tap.Create(name, tap.Options{MAC: mac, MTU: mtu, Up: true})
}

func (s *linuxSystem) SetTapMTU(name string, mtu int) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := netlink.LinkSetMTU(l, mtu); err != nil {
		return fmt.Errorf("%s: set mtu %d: %w", name, mtu, err)
	}
	return nil
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

func (s *linuxSystem) Watch(fn func(name string, state platform.LinkState)) error {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.done)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-s.watcher.Events():
				if !ok {
					return
				}
				fn(ev.Name, ev.State)
			}
		}
	}()
	return nil
}

func (s *linuxSystem) Close() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return s.watcher.Close()
}
