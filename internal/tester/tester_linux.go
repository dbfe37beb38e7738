package tester

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/nsenter"
)

// End is an interface in a named network namespace (as `ip netns add`
// made it).
type End struct {
	// NS is the namespace's name.
	NS string
	// Interface is the interface's name there.
	Interface string
}

func (e End) String() string { return e.NS + ":" + e.Interface }

// Counter counts the frames that arrived at an End: its rx_packets, read
// through a netlink socket in the End's namespace. It implements
// gen.Counter; Count is for one goroutine at a time.
type Counter struct {
	// end is the interface counted.
	end End
	// h is a netlink handle in end's namespace.
	h *netlink.Handle
}

// NewCounter opens a counter of e's arrivals and reads it once, so that
// a missing interface is an error now rather than in the first run.
func NewCounter(e End) (*Counter, error) {
	ns, err := netns.GetFromName(e.NS)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", e.NS, err)
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	ns.Close()
	if err != nil {
		return nil, fmt.Errorf("netlink in %s: %w", e.NS, err)
	}
	c := &Counter{end: e, h: h}
	if _, err := c.Count(); err != nil {
		h.Close()
		return nil, err
	}
	return c, nil
}

// Count returns the interface's rx_packets.
func (c *Counter) Count() (uint64, error) {
	l, err := c.h.LinkByName(c.end.Interface)
	if err != nil {
		return 0, fmt.Errorf("%s: rx_packets: %w", c.end, err)
	}
	st := l.Attrs().Statistics
	if st == nil {
		return 0, fmt.Errorf("%s: rx_packets: the kernel sent no statistics", c.end)
	}
	return st.RxPackets, nil
}

// Close closes the netlink socket.
func (c *Counter) Close() { c.h.Close() }

// Open opens the tester's ports and returns a bench of s's frames from
// tx to rx. With a counter c it counts arrivals (see gen.NewBench):
// tx sends from a TX ring and receives nothing; rx receives nothing
// either (its socket only sends the bench's learning frames, and gives
// the default destination address); c stays the caller's. With c nil
// the bench's receiver reads every frame at rx, from a
// ring four times the default size. The bench owns both ports.
func Open(tx, rx End, s gen.Stream, c gen.Counter) (*gen.Bench, error) {
	txo, rxo := afpacket.Options{SendOnly: true, TXRing: true}, afpacket.Options{SendOnly: true}
	if c == nil {
		txo, rxo = afpacket.Options{}, afpacket.Options{BlockCount: 4 * afpacket.DefaultBlockCount}
	}
	txp, err := OpenEnd(tx, txo)
	if err != nil {
		return nil, err
	}
	rxp, err := OpenEnd(rx, rxo)
	if err != nil {
		txp.Close()
		return nil, err
	}
	b, err := gen.NewBench(txp, rxp, s, c)
	if err != nil {
		txp.Close()
		rxp.Close()
		return nil, fmt.Errorf("tester %s -> %s: %w", tx, rx, err)
	}
	return b, nil
}

// OpenEnd opens a tester port on e with opts and waits up to 5 s for
// its link.
func OpenEnd(e End, opts afpacket.Options) (*afpacket.Port, error) {
	var p *afpacket.Port
	err := nsenter.Run(e.NS, func() error {
		q, err := afpacket.Open(e.Interface, opts)
		if err != nil {
			return fmt.Errorf("tester port %s: %w", e, err)
		}
		if err := gen.WaitLinkUp(q, 5*time.Second); err != nil {
			q.Close()
			return fmt.Errorf("tester port in %s: %w", e.NS, err)
		}
		p = q
		return nil
	})
	return p, err
}
