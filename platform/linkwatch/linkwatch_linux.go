package linkwatch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// rcvBuf is the receive buffer asked for the subscription socket (capped
// by net.core.rmem_max): room for a burst of link changes.
const rcvBuf = 1 << 20

// dumpRetries is how often a listing interrupted by a concurrent change
// (NLM_F_DUMP_INTR) is retried before its result is used as it is; the
// subscription then corrects it.
const dumpRetries = 5

// source is an rtnetlink link subscription, and listings, in the
// namespace the Watcher was made in. Both decode the kernel's messages
// with decodeLink.
type source struct {
	// ns is the network namespace, held open so that a re-subscription
	// from any thread happens there.
	ns netns.NsHandle

	// mu guards updates, stopSub and subErr.
	mu sync.Mutex
	// updates receives the subscription's events; the subscription's
	// reader closes it when its socket fails or is closed.
	updates chan Event
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
	links, err := s.resubscribe()
	if err != nil {
		return nil, nil, err
	}
	return s, links, nil
}

// resubscribe subscribes to link events, then lists the links: a change
// made between the two is in the listing or in the subscription, or both.
func (s *source) resubscribe() ([]Event, error) {
	sock, err := nl.SubscribeAt(s.ns, netns.None(), unix.NETLINK_ROUTE, unix.RTNLGRP_LINK)
	if err != nil {
		return nil, fmt.Errorf("linkwatch: subscribe to link events: %w", err)
	}
	if err := sock.SetReceiveBufferSize(rcvBuf, false); err != nil {
		sock.Close()
		return nil, fmt.Errorf("linkwatch: subscription receive buffer: %w", err)
	}
	updates := make(chan Event, 256)
	go s.read(sock, updates)
	s.mu.Lock()
	if s.stopSub != nil {
		s.stopSub() // the failed one: release its socket and goroutine
	}
	s.updates, s.stopSub = updates, sync.OnceFunc(sock.Close)
	s.mu.Unlock()
	return s.list()
}

// read sends the events of the subscription on sock to updates until the
// socket fails (ENOBUFS after a burst) or is closed; then it closes
// updates. A message that does not decode is skipped and noted in subErr.
func (s *source) read(sock *nl.NetlinkSocket, updates chan<- Event) {
	defer close(updates)
	for {
		msgs, from, err := sock.Receive()
		if err != nil {
			s.noteErr(err)
			return
		}
		if from.Pid != nl.PidKernel {
			continue
		}
		for _, m := range msgs {
			if m.Header.Type != unix.RTM_NEWLINK && m.Header.Type != unix.RTM_DELLINK {
				continue
			}
			e, ok, err := decodeLink(m.Header.Type, m.Data)
			if err != nil {
				s.noteErr(err)
				continue
			}
			if ok {
				updates <- e
			}
		}
	}
}

func (s *source) noteErr(err error) {
	s.mu.Lock()
	s.subErr = err
	s.mu.Unlock()
}

// list returns the state of every link, from a dump taken again while a
// concurrent change interrupts it (NLM_F_DUMP_INTR), dumpRetries times at
// most.
func (s *source) list() ([]Event, error) {
	sock, err := nl.GetNetlinkSocketAt(s.ns, netns.None(), unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("linkwatch: rtnetlink socket: %w", err)
	}
	defer sock.Close()
	for try := 0; ; try++ {
		req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
		req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
		req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: sock}}
		msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
		interrupted := errors.Is(err, nl.ErrDumpInterrupted)
		if err != nil && !interrupted {
			return nil, fmt.Errorf("linkwatch: list links: %w", err)
		}
		if interrupted && try < dumpRetries {
			continue
		}
		links := make([]Event, 0, len(msgs))
		for _, m := range msgs {
			e, ok, err := decodeLink(unix.RTM_NEWLINK, m)
			if err != nil {
				return nil, fmt.Errorf("linkwatch: list links: %w", err)
			}
			if ok {
				links = append(links, e)
			}
		}
		return links, nil
	}
}

// current returns the current subscription's channel and stop function.
func (s *source) current() (chan Event, func()) {
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
		// Let the subscription's reader finish: it may be blocked
		// sending to updates; it closes updates once its socket is shut.
		for range updates {
		}
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
		case e, ok := <-updates:
			if ok {
				w.apply(e)
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
