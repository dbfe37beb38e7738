//go:build openbsd || freebsd

package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/bpf"
	"github.com/swctl/swctl/promisc"
)

// linkPollInterval is how often the BSD system looks at the interfaces
// for link changes.
const linkPollInterval = time.Second

// bsdSystem opens members over bpf(4) and follows links by polling the
// interface flags. Host TAPs (bridge --local, trunks) and lladdr changes
// are not implemented on the BSDs yet.
type bsdSystem struct {
	// journal records every MAC change before it is made.
	journal *promisc.Journal
	// log receives the ports' rare warnings.
	log *slog.Logger
	// stop is closed by Close to end the watch goroutine.
	stop chan struct{}
	// done is closed when the watch goroutine has returned; nil until
	// Watch starts it.
	done chan struct{}
	// closeOnce runs Close's teardown once.
	closeOnce sync.Once
}

// newSystem makes the BSD system. Of opts' port settings only the
// defaults exist here: /dev/bpf has no receive workers, TX ring or busy
// polling.
func newSystem(journal *promisc.Journal, log *slog.Logger, opts Options) (system, error) {
	if opts.BusyPoll {
		return nil, fmt.Errorf("daemon: busy polling (--busy-poll) needs AF_PACKET rings: not available on %s", runtime.GOOS)
	}
	if opts.QdiscBypass {
		return nil, fmt.Errorf("daemon: qdisc bypass (--qdisc-bypass) is an AF_PACKET option: not available on %s", runtime.GOOS)
	}
	return &bsdSystem{journal: journal, log: log, stop: make(chan struct{})}, nil
}

// errNotYet says what the BSD system cannot do yet.
func errNotYet(what string) error {
	return fmt.Errorf("%s: not implemented on %s yet", what, runtime.GOOS)
}

// OpenPort opens a bpf port. bpf carries no offload metadata: the port is
// a plain one whatever offload asks, and the bridge finishes checksums
// and segments super-frames before it writes to it.
func (s *bsdSystem) OpenPort(name string, offload bool) (platform.Port, error) {
	p, err := bpf.Open(name, bpf.Options{Logger: s.log})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (s *bsdSystem) CreateTap(name string, mac net.HardwareAddr, mtu int) (platform.Port, error) {
	return nil, errNotYet("tap " + name + ": host TAP (bridge --local, trunks)")
}

func (s *bsdSystem) SetTapMTU(name string, mtu int) error {
	return errNotYet("tap " + name + ": set mtu")
}

// GuardStack has no ingress drop to install on the BSDs: the member's own
// stack still receives what bpf copies. That is harmless for a member
// without IP addresses (the kernel drops frames for other MACs after bpf,
// and answers ARP only for the receiving interface's own addresses), so
// the guard is a no-op for it; a member with addresses is refused, unless
// the port is added with --stack on.
func (s *bsdSystem) GuardStack(name string) (io.Closer, error) {
	if n := s.HostAddrs(name); n > 0 {
		return nil, fmt.Errorf("%s: has %d IP addresses and its stack cannot be kept off bridged frames on %s: remove them, or add the port with --stack on", name, n, runtime.GOOS)
	}
	return nopCloser{}, nil
}

// nopCloser is the guard of a member that needs none.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func (s *bsdSystem) LinkState(name string) platform.LinkState {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return platform.LinkAbsent
	}
	return linkOf(ifi)
}

// linkOf is an interface's link state from its flags: up when it is up
// and running.
func linkOf(ifi *net.Interface) platform.LinkState {
	if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0 {
		return platform.LinkUp
	}
	return platform.LinkDown
}

func (s *bsdSystem) HardwareAddr(name string) (net.HardwareAddr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ifi.HardwareAddr, nil
}

func (s *bsdSystem) HostAddrs(name string) int {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return 0
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return 0
	}
	n := 0
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLinkLocalUnicast() {
			n++
		}
	}
	return n
}

// SetLLAddr goes through the journal, which reports that changing an
// lladdr is not implemented on this OS.
func (s *bsdSystem) SetLLAddr(name string, mac net.HardwareAddr, owner string) error {
	return s.journal.SetLLAddr(name, mac, owner)
}

func (s *bsdSystem) RestoreLLAddr(name string) error {
	return s.journal.RestoreLLAddr(name)
}

// Watch polls the interfaces every linkPollInterval and calls fn for each
// one whose state changed (LinkAbsent when it went away) until Close. The
// routing socket (RTM_IFINFO, ifi_link_state) would be exact and
// immediate; the flags are what package net offers.
func (s *bsdSystem) Watch(fn func(name string, state platform.LinkState)) error {
	if s.done != nil {
		return errors.New("link watch: already started")
	}
	last, err := linkStates()
	if err != nil {
		return fmt.Errorf("link watch: %w", err)
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(linkPollInterval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			now, err := linkStates()
			if err != nil {
				s.log.Warn("link watch: cannot list interfaces", "err", err)
				continue
			}
			for name, st := range now {
				if old, ok := last[name]; !ok || old != st {
					fn(name, st)
				}
			}
			for name := range last {
				if _, ok := now[name]; !ok {
					fn(name, platform.LinkAbsent)
				}
			}
			last = now
		}
	}()
	return nil
}

// linkStates returns the link state of every interface.
func linkStates() (map[string]platform.LinkState, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	m := make(map[string]platform.LinkState, len(ifs))
	for i := range ifs {
		m[ifs[i].Name] = linkOf(&ifs[i])
	}
	return m, nil
}

func (s *bsdSystem) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		if s.done != nil {
			<-s.done
		}
	})
	return nil
}
