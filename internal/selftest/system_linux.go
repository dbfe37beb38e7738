package selftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/nsenter"
	"github.com/swctl/swctl/internal/stackguard"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
)

// The selftest's own pair on Linux: a veth pair in a network namespace
// that has no name, so that nothing else sees it and it goes with the
// process however the process ends.
const (
	ownA = "selftest0"
	ownB = "selftest1"
)

// portBlocks is the ring size of a selftest port in blocks: a few frames
// at a time need no more.
const portBlocks = 2

func hostSystem() system {
	return system{
		backend:       "AF_PACKET",
		events:        "netlink events (RTM_NEWLINK)",
		newPair:       newVethPair,
		openPort:      openAFPacket,
		promiscuity:   promiscuityCount,
		countsPromisc: true,
		promiscSource: "promiscuity count (IFLA_PROMISCUITY)",
		newTAP:        createTAP,
		setLink:       setLinkUp,
		stack:         stackIsolation,
	}
}

func openAFPacket(name string) (packetPort, error) {
	p, err := afpacket.Open(name, afpacket.Options{BlockCount: portBlocks})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// newVethPair makes a namespace and a veth pair in it, both ends up.
func newVethPair() (*pair, error) {
	h, err := nsenter.New()
	if err != nil {
		return nil, err
	}
	in := func(fn func() error) error { return nsenter.In(h, fn) }
	err = in(func() error {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: ownA}, PeerName: ownB}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("veth %s-%s: %w", ownA, ownB, err)
		}
		for _, name := range []string{ownA, ownB} {
			if err := setLinkUp(name, true); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		h.Close()
		return nil, err
	}
	return &pair{
		a: ownA, b: ownB, in: in,
		desc: "a veth pair of its own, in a temporary network namespace",
		close: func() error {
			err := in(func() error {
				l, err := netlink.LinkByName(ownA)
				if err != nil {
					return err
				}
				return netlink.LinkDel(l)
			})
			return errors.Join(err, h.Close())
		},
	}, nil
}

// promiscuityCount reads the interface's promiscuity count: one per
// membership, kept by the kernel (a PACKET_MR_PROMISC membership does not
// show as IFF_PROMISC in the flags netlink and SIOCGIFFLAGS report).
func promiscuityCount(name string) (int, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("netlink get link: %w", err)
	}
	return l.Attrs().Promisc, nil
}

func setLinkUp(name string, up bool) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("%s: netlink get link: %w", name, err)
	}
	set, word := netlink.LinkSetDown, "down"
	if up {
		set, word = netlink.LinkSetUp, "up"
	}
	if err := set(l); err != nil {
		return fmt.Errorf("%s: set %s: %w", name, word, err)
	}
	return nil
}

// Addresses of the stack check, in TEST-NET-1, inside the selftest's own
// namespace only.
var (
	stackSrc = netip.MustParsePrefix("192.0.2.1/24")
	stackDst = netip.MustParsePrefix("192.0.2.2/24")
)

// stackIsolation gives the second interface of the selftest's own pair
// an address and a UDP socket, attaches a stack guard to it and sends a
// datagram from the first: the interface's packet socket must see it and
// its stack must not. Then it removes the guard and sends the next one,
// which the stack must get, first: proof that it would have got the
// first one had it not been dropped.
func stackIsolation(ctx context.Context, s *session) Outcome {
	a, b := s.own.a, s.own.b
	subject := []string{b}
	err := s.own.in(func() error {
		l, err := netlink.LinkByName(b)
		if err != nil {
			return err
		}
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: stackDst.Addr().AsSlice(), Mask: net.CIDRMask(stackDst.Bits(), 32)}}
		if err := netlink.AddrAdd(l, addr); err != nil {
			return fmt.Errorf("address %s: %w", stackDst, err)
		}
		defer netlink.AddrDel(l, addr)
		uc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: stackDst.Addr().AsSlice()})
		if err != nil {
			return err
		}
		defer uc.Close()
		got := make(chan []byte, 4)
		go func() {
			defer close(got)
			buf := make([]byte, 2048)
			for {
				n, err := uc.Read(buf)
				if err != nil {
					return
				}
				got <- slices.Clone(buf[:n])
			}
		}()
		pa, err := openAFPacket(a)
		if err != nil {
			return err
		}
		defer pa.Close()
		pb, err := openAFPacket(b)
		if err != nil {
			return err
		}
		defer pb.Close()
		for _, p := range []packetPort{pa, pb} {
			if err := gen.WaitLinkUp(p, s.wait); err != nil {
				return err
			}
		}
		run := uint32(s.run)
		stream := gen.Stream{
			Src: frame.MACOf(pa.HardwareAddr()), Dst: frame.MACOf(pb.HardwareAddr()),
			SrcIP: stackSrc.Addr(), DstIP: stackDst.Addr(), DstPort: uint16(uc.LocalAddr().(*net.UDPAddr).Port),
			RunID: run,
		}
		rb := receive(pb, func(f []byte) bool {
			m, ok := gen.Decode(f)
			return ok && m.RunID == run
		})
		defer func() {
			pb.Close()
			<-rb.done
		}()
		bySeq := func(seq uint64) func([]byte) bool {
			return func(f []byte) bool {
				m, ok := gen.Decode(f)
				return ok && m.Seq == seq
			}
		}

		g, err := stackguard.Attach(0, b)
		if err != nil {
			return err
		}
		guarded, err := stream.Frame(1, 0)
		if err != nil {
			g.Close()
			return err
		}
		if _, err := s.exchange(ctx, pa, rb, guarded, bySeq(1)); err != nil {
			g.Close()
			return fmt.Errorf("with the guard on, %s's packet socket: %w", b, err)
		}
		if err := g.Close(); err != nil {
			return fmt.Errorf("remove the guard: %w", err)
		}
		open, err := stream.Frame(2, 0)
		if err != nil {
			return err
		}
		deadline := time.Now().Add(s.wait)
		for {
			if time.Now().After(deadline) {
				return fmt.Errorf("without the guard, %s's stack got no datagram within %v: the check cannot tell", b, s.wait)
			}
			if _, err := pa.WriteBatch(platform.Plain(open)); err != nil {
				return err
			}
			select {
			case p, ok := <-got:
				if !ok {
					return errors.New("the UDP socket closed")
				}
				if bytes.Equal(p, udpPayload(guarded)) {
					return fmt.Errorf("%s's stack got the datagram sent while the guard was on", b)
				}
				if !bytes.Equal(p, udpPayload(open)) {
					continue // not ours
				}
				return nil
			case <-time.After(resendEvery):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	if err != nil {
		return fail(CheckStack, subject, "%v", err)
	}
	return pass(CheckStack, subject, "tcx drop on %s: its packet socket saw a datagram its stack did not; the stack got the next once the drop was gone", b)
}

// udpPayload is the UDP payload of a frame gen made: behind the
// Ethernet, IPv4 (no options) and UDP headers.
func udpPayload(f []byte) []byte { return f[frame.HeaderLen+20+8:] }
