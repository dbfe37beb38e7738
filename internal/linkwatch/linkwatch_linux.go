package linkwatch

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform"
)

// rcvBuf is the receive buffer asked for the subscription socket (capped
// by net.core.rmem_max): room for a burst of link changes.
const rcvBuf = 1 << 20

// dumpRetries is how often a listing interrupted by a concurrent change
// (NLM_F_DUMP_INTR) is retried before its result is used as it is; the
// subscription then corrects it.
const dumpRetries = 5

// source is an rtnetlink link subscription plus a handle for listings,
// both in the namespace the Watcher was made in.
type source struct {
	// ns is the network namespace, held open so that a re-subscription
	// from any thread happens there.
	ns netns.NsHandle
	// h lists links; its socket lives in ns.
	h *netlink.Handle

	// mu guards updates, stopSub and subErr.
	mu sync.Mutex
	// updates receives the subscription's messages; the subscription
	// closes it when its socket fails or is closed.
	updates chan netlink.LinkUpdate
	// stopSub closes the current subscription's socket (once; later calls
	// do nothing).
	stopSub func()
	// subErr is the last error the subscription reported.
	subErr error
}

func openSource() (_ *source, _ []Event, err error) {
	ns, err := netns.Get()
	if err != nil {
		return nil, nil, fmt.Errorf("linkwatch: open current network namespace: %w", err)
	}
	s := &source{ns: ns}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.h, err = netlink.NewHandleAt(ns, unix.NETLINK_ROUTE); err != nil {
		return nil, nil, fmt.Errorf("linkwatch: rtnetlink socket: %w", err)
	}
	links, err := s.resubscribe()
	if err != nil {
		return nil, nil, err
	}
	return s, links, nil
}

// resubscribe subscribes to link events, then lists the links: a change
// made between the two is in the listing or in the subscription, or both.
func (s *source) resubscribe() ([]Event, error) {
	updates := make(chan netlink.LinkUpdate, 256)
	done := make(chan struct{})
	ns := s.ns
	err := netlink.LinkSubscribeWithOptions(updates, done, netlink.LinkSubscribeOptions{
		Namespace:         &ns,
		ReceiveBufferSize: rcvBuf,
		ErrorCallback: func(err error) {
			s.mu.Lock()
			s.subErr = err
			s.mu.Unlock()
		},
	})
	if err != nil {
		close(done)
		return nil, fmt.Errorf("linkwatch: subscribe to link events: %w", err)
	}
	s.mu.Lock()
	if s.stopSub != nil {
		s.stopSub() // the failed one: release its socket and goroutine
	}
	s.updates, s.stopSub = updates, sync.OnceFunc(func() { close(done) })
	s.mu.Unlock()
	var links []netlink.Link
	for try := 0; ; try++ {
		links, err = s.h.LinkList()
		if err == nil || (errors.Is(err, netlink.ErrDumpInterrupted) && try >= dumpRetries) {
			break
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			return nil, fmt.Errorf("linkwatch: list links: %w", err)
		}
	}
	out := make([]Event, 0, len(links))
	for _, l := range links {
		out = append(out, eventOf(l.Attrs(), false))
	}
	return out, nil
}

// current returns the current subscription's channel and stop function.
func (s *source) current() (chan netlink.LinkUpdate, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates, s.stopSub
}

// dropSubscription closes the subscription socket, as a socket error
// would; the Watcher then re-subscribes. Tests use it.
func (s *source) dropSubscription() {
	_, stop := s.current()
	stop()
}

func (s *source) close() {
	if updates, stop := s.current(); stop != nil {
		stop()
		// Let the subscription's goroutine finish: it may be blocked
		// sending to updates; it closes updates once its socket is shut.
		for range updates {
		}
	}
	if s.h != nil {
		s.h.Close()
	}
	s.ns.Close()
}

// run applies subscription messages until Close; when the subscription
// fails it re-subscribes and applies what changed meanwhile.
func (w *Watcher) run() error {
	for {
		updates, _ := w.src.current()
		select {
		case <-w.stop:
			return nil
		case u, ok := <-updates:
			if ok {
				w.handle(u)
				continue
			}
		}
		// The subscription ended (ENOBUFS after a burst, or its socket
		// was shut): subscribe again and catch up.
		select {
		case <-w.stop:
			return nil
		default:
		}
		links, err := w.src.resubscribe()
		if err != nil {
			w.src.mu.Lock()
			last := w.src.subErr
			w.src.mu.Unlock()
			return fmt.Errorf("%w (after the subscription failed: %v)", err, last)
		}
		w.replace(links)
	}
}

func (w *Watcher) handle(u netlink.LinkUpdate) {
	if u.IfInfomsg.Family == unix.AF_BRIDGE {
		// Bridge-port notifications from a kernel bridge: partial
		// state, and the full RTM_NEWLINK comes too.
		return
	}
	switch u.Header.Type {
	case unix.RTM_NEWLINK:
		w.apply(eventOf(u.Attrs(), false))
	case unix.RTM_DELLINK:
		w.apply(eventOf(u.Attrs(), true))
	}
}

// eventOf turns netlink's view of a link into an Event.
func eventOf(a *netlink.LinkAttrs, deleted bool) Event {
	e := Event{
		Name:    a.Name,
		Index:   a.Index,
		AdminUp: a.RawFlags&unix.IFF_UP != 0,
		Carrier: a.RawFlags&unix.IFF_LOWER_UP != 0,
		MTU:     a.MTU,
	}
	if len(a.HardwareAddr) > 0 {
		e.MAC = append(net.HardwareAddr(nil), a.HardwareAddr...)
	}
	switch {
	case deleted:
		e.State = platform.LinkAbsent
	case e.AdminUp && e.Carrier && (a.OperState == netlink.OperUp || a.OperState == netlink.OperUnknown):
		e.State = platform.LinkUp
	default:
		e.State = platform.LinkDown
	}
	return e
}
