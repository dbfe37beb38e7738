//go:build openbsd || freebsd

package linkwatch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/net/route"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform"
)

// rcvBuf is the receive buffer asked for the routing socket: room for a
// burst of interface changes.
const rcvBuf = 1 << 20

// readSize is the buffer one read of the routing socket gets: a routing
// message is far shorter (one message per read).
const readSize = 1 << 16

// source is a routing socket (AF_ROUTE) that reads RTM_IFINFO and
// RTM_IFANNOUNCE, plus the names and hardware addresses of the interfaces
// it has seen (RTM_IFINFO from the socket carries only an index).
type source struct {
	// f is the routing socket, non-blocking and in Go's poller, so that
	// close wakes a read in progress.
	f *os.File
	// layout is this OS's routing message layout.
	layout *rtLayout
	// names maps an index to the interface's name and hardware address;
	// only the reading goroutine touches it after openSource.
	names map[int]ifName
}

// ifName is what the watcher remembers of an interface between messages.
type ifName struct {
	// name is the interface name.
	name string
	// mac is its hardware address (nil when it has none).
	mac net.HardwareAddr
}

func openSource() (_ *source, _ []Event, err error) {
	fd, err := unix.Socket(unix.AF_ROUTE, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.AF_UNSPEC)
	if err != nil {
		return nil, nil, fmt.Errorf("linkwatch: routing socket: %w", err)
	}
	// Best effort: a bigger buffer only makes an overflow rarer.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf)
	if err := tuneSocket(fd); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("linkwatch: routing socket: %w", err)
	}
	s := &source{f: os.NewFile(uintptr(fd), "route"), layout: &hostLayout, names: make(map[int]ifName)}
	// Subscribed first, listed second: a change between the two is in
	// the listing, or in the socket, or both.
	links, err := s.list(0)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, links, nil
}

// list reads the state of the interface index (0: of every interface)
// from sysctl NET_RT_IFLIST, and remembers names and hardware addresses.
func (s *source) list(index int) ([]Event, error) {
	rib, err := route.FetchRIB(unix.AF_UNSPEC, route.RIBTypeInterface, index)
	if err != nil {
		return nil, fmt.Errorf("linkwatch: list interfaces: %w", err)
	}
	msgs, err := route.ParseRIB(route.RIBTypeInterface, rib)
	if err != nil {
		return nil, fmt.Errorf("linkwatch: list interfaces: %w", err)
	}
	seen := make(map[int]ifName)
	for _, m := range msgs {
		im, ok := m.(*route.InterfaceMessage)
		if !ok {
			continue
		}
		n := ifName{name: im.Name}
		if la, ok := im.Addrs[unix.RTAX_IFP].(*route.LinkAddr); ok && len(la.Addr) > 0 {
			n.mac = append(net.HardwareAddr(nil), la.Addr...)
		}
		seen[im.Index] = n
	}
	infos, err := parseRouteMessages(s.layout, rib)
	if err != nil {
		return nil, fmt.Errorf("linkwatch: list interfaces: %w", err)
	}
	var out []Event
	for _, m := range infos {
		n, ok := seen[m.index]
		if m.kind != rtInfo || !ok {
			continue
		}
		s.names[m.index] = n
		out = append(out, infoEvent(s.layout, m, n.name, n.mac))
	}
	return out, nil
}

func (s *source) close() { s.f.Close() }

// run applies routing messages until Close. When the kernel dropped some
// (its socket buffer overflowed), it lists every interface again and
// applies what changed meanwhile.
func (w *Watcher) run() error {
	s := w.src
	buf := make([]byte, readSize)
	for {
		n, err := s.f.Read(buf)
		switch {
		case errors.Is(err, os.ErrClosed):
			return nil
		case errors.Is(err, syscall.ENOBUFS):
			if err := w.resync(); err != nil {
				return err
			}
			continue
		case err != nil:
			select {
			case <-w.stop:
				return nil
			default:
			}
			return fmt.Errorf("linkwatch: read routing socket: %w", err)
		}
		msgs, err := parseRouteMessages(s.layout, buf[:n])
		for _, m := range msgs {
			if err := w.handleRoute(m); err != nil {
				return err
			}
		}
		if err != nil {
			// One bad message: what came before it was applied; list
			// again rather than trust the rest.
			if err := w.resync(); err != nil {
				return err
			}
		}
	}
}

// resync lists every interface and applies the difference.
func (w *Watcher) resync() error {
	links, err := w.src.list(0)
	if err != nil {
		return err
	}
	w.replace(links)
	return nil
}

// handleRoute applies one routing message.
func (w *Watcher) handleRoute(m rtMsg) error {
	s := w.src
	switch m.kind {
	case rtDesync:
		return w.resync()
	case rtDeparture:
		delete(s.names, m.index)
		w.apply(Event{Name: m.name, Index: m.index, State: platform.LinkAbsent})
	case rtArrival, rtInfo:
		// The listing of this one interface gives its name, hardware
		// address and state; after a departure it gives nothing.
		links, err := s.list(m.index)
		if err != nil {
			// Gone again, or the sysctl failed: the message's own
			// fields, under the name last seen.
			n, ok := s.names[m.index]
			if m.kind == rtArrival {
				n.name, ok = m.name, true
			}
			if m.kind != rtInfo || !ok {
				return nil
			}
			w.apply(infoEvent(s.layout, m, n.name, n.mac))
			return nil
		}
		for _, e := range links {
			if e.Index == m.index {
				w.apply(e)
			}
		}
	}
	return nil
}
