package selftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/platform"
)

// stackGuard is what the stack-isolation check needs of an OS's guard.
type stackGuard struct {
	// what names the guard, for the report.
	what string
	// addAddr gives the interface name the address p, and returns what
	// takes it away again; run it in the pair's in.
	addAddr func(name string, p netip.Prefix) (func() error, error)
	// attach puts the guard on name; closing it takes it off.
	attach func(name string) (io.Closer, error)
}

// stackCheck is the stack-isolation check with the guard g, nil where
// the OS has none (g.attach nil).
func stackCheck(g stackGuard) func(context.Context, *session) Outcome {
	if g.attach == nil {
		return nil
	}
	return func(ctx context.Context, s *session) Outcome { return stackIsolation(ctx, s, g) }
}

// Addresses of the stack check, in TEST-NET-1, on the selftest's own pair
// only.
var (
	stackSrc = netip.MustParsePrefix("192.0.2.1/24")
	stackDst = netip.MustParsePrefix("192.0.2.2/24")
)

// stackIsolation gives the second interface of the selftest's own pair
// an address and a UDP socket, puts the guard g on it and sends a
// datagram from the first: the interface's packet port must see it and
// its stack must not. Then it takes the guard off and sends the next one,
// which the stack must get, first: proof that it would have got the
// first one had it not been dropped.
func stackIsolation(ctx context.Context, s *session, g stackGuard) Outcome {
	a, b := s.own.a, s.own.b
	subject := []string{b}
	err := s.own.in(func() error {
		undo, err := g.addAddr(b, stackDst)
		if err != nil {
			return err
		}
		defer undo()
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
		pa, err := s.sys.openPort(a)
		if err != nil {
			return err
		}
		defer pa.Close()
		pb, err := s.sys.openPort(b)
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

		guard, err := g.attach(b)
		if err != nil {
			return err
		}
		guarded, err := stream.Frame(1, 0)
		if err != nil {
			guard.Close()
			return err
		}
		if _, err := s.exchange(ctx, pa, rb, guarded, bySeq(1)); err != nil {
			guard.Close()
			return fmt.Errorf("with the guard on, %s's packet port: %w", b, err)
		}
		if err := guard.Close(); err != nil {
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
	return pass(CheckStack, subject, "%s on %s: its packet port saw a datagram its stack did not; the stack got the next once the drop was gone", g.what, b)
}

// udpPayload is the UDP payload of a frame gen made: behind the
// Ethernet, IPv4 (no options) and UDP headers.
func udpPayload(f []byte) []byte { return f[frame.HeaderLen+20+8:] }
