package selftest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/linkwatch"
	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/statedir"
	"github.com/swctl/swctl/platform/tap"
)

// checkOpen opens a packet port on each interface under test, waits for
// both links to be up, and starts reading them.
func checkOpen(_ context.Context, s *session) Outcome {
	if s.links == nil {
		return fail(CheckOpen, nil, "no interfaces to test: %v", s.linksErr)
	}
	var pa, pb packetPort
	err := s.links.in(func() error {
		var err error
		if pa, err = s.sys.openPort(s.links.a); err != nil {
			return err
		}
		if pb, err = s.sys.openPort(s.links.b); err != nil {
			pa.Close()
			return err
		}
		for _, p := range []packetPort{pa, pb} {
			if err := gen.WaitLinkUp(p, s.wait); err != nil {
				pa.Close()
				pb.Close()
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fail(CheckOpen, s.ifaces(), "%v", err)
	}
	s.pa, s.pb = pa, pb
	keep := func(f []byte) bool {
		tf, ok := decodeTest(f)
		return ok && tf.run == s.run
	}
	s.ra, s.rb = receive(pa, keep), receive(pb, keep)
	return pass(CheckOpen, s.ifaces(), "%s on both, links up", s.sys.backend)
}

// checkPromisc takes each port's promiscuous membership through a
// promisc.Registry, as the daemon does, and gives it back, reading the
// interface's promiscuous mode from the OS before, during and after.
func checkPromisc(_ context.Context, s *session) Outcome {
	if o, ok := s.needPorts(CheckPromisc); !ok {
		return o
	}
	var seen []string
	for _, p := range []packetPort{s.pa, s.pb} {
		var before, on, after int
		var aerr, rerr error
		err := s.links.in(func() error {
			var err error
			if before, err = s.sys.promiscuity(p.Name()); err != nil {
				return err
			}
			if aerr = s.reg.Acquire(p); aerr != nil {
				return aerr
			}
			on, err = s.sys.promiscuity(p.Name())
			rerr = s.reg.Release(p)
			if err != nil {
				return err
			}
			if rerr != nil {
				return rerr
			}
			// A BSD may clear the flag a moment after the descriptor
			// that held it closes.
			deadline := time.Now().Add(s.wait)
			for {
				if after, err = s.sys.promiscuity(p.Name()); err != nil || after == before || time.Now().After(deadline) {
					return err
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
		if err != nil {
			return fail(CheckPromisc, s.ifaces(), "%s: %v", p.Name(), err)
		}
		if !s.sys.countsPromisc && before != 0 {
			return skip(CheckPromisc, s.ifaces(), "%s was promiscuous before the test (another program holds it): its flag cannot show the port's membership", p.Name())
		}
		want := 1
		if s.sys.countsPromisc {
			want = before + 1
		}
		switch {
		case on != want:
			return fail(CheckPromisc, s.ifaces(), "%s: %s %d after the port took promiscuous mode, want %d", p.Name(), s.sys.promiscSource, on, want)
		case after != before:
			return fail(CheckPromisc, s.ifaces(), "%s: %s %d after the port gave promiscuous mode back, want %d as before", p.Name(), s.sys.promiscSource, after, before)
		}
		seen = append(seen, fmt.Sprintf("%s %d -> %d -> %d", p.Name(), before, on, after))
	}
	return pass(CheckPromisc, s.ifaces(), "%s: %s", s.sys.promiscSource, strings.Join(seen, ", "))
}

// checkFrames sends a test frame each way and checks it arrives as sent.
func checkFrames(ctx context.Context, s *session) Outcome {
	if o, ok := s.needPorts(CheckFrames); !ok {
		return o
	}
	for i, dir := range []struct {
		tx packetPort
		rx *receiver
		to packetPort
	}{{s.pa, s.rb, s.pb}, {s.pb, s.ra, s.pa}} {
		tf := testFrame{run: s.run, kind: kindData, seq: uint32(i)}
		f := tf.encode(frame.MACOf(dir.to.HardwareAddr()), frame.MACOf(dir.tx.HardwareAddr()), tag{})
		got, err := s.exchange(ctx, dir.tx, dir.rx, f, sameTest(tf))
		if err != nil {
			return fail(CheckFrames, s.ifaces(), "%s -> %s: %v", dir.tx.Name(), dir.to.Name(), err)
		}
		if !bytes.Equal(got, f) {
			return fail(CheckFrames, s.ifaces(), "%s -> %s: arrived changed: sent %x, got %x", dir.tx.Name(), dir.to.Name(), f, got)
		}
	}
	return pass(CheckFrames, s.ifaces(), "%s -> %s and back, %d bytes each way, unchanged", s.links.a, s.links.b, testMinLen)
}

// checkVLAN sends an 802.1Q and an 802.1ad tagged test frame from a to b,
// b promiscuous as a bridge member is, and checks each arrives with its
// tag in place: on Linux the kernel strips it into the ring's metadata
// and the port puts it back.
func checkVLAN(ctx context.Context, s *session) Outcome {
	if o, ok := s.needPorts(CheckVLAN); !ok {
		return o
	}
	if err := s.reg.Acquire(s.pb); err != nil {
		return fail(CheckVLAN, s.ifaces(), "%v", err)
	}
	defer s.reg.Release(s.pb)
	tags := []tag{{frame.TypeVLAN, 42}, {frame.TypeQinQ, 43}}
	for i, t := range tags {
		tf := testFrame{run: s.run, kind: kindVLAN, seq: uint32(i)}
		f := tf.encode(frame.MACOf(s.pb.HardwareAddr()), frame.MACOf(s.pa.HardwareAddr()), t)
		got, err := s.exchange(ctx, s.pa, s.rb, f, sameTest(tf))
		if err != nil {
			return fail(CheckVLAN, s.ifaces(), "%#04x VID %d, %s -> %s: %v", t.tpid, t.vid, s.pa.Name(), s.pb.Name(), err)
		}
		e := frame.Ethernet(got)
		switch {
		case !e.IsTagged():
			return fail(CheckVLAN, s.ifaces(), "%#04x VID %d, %s -> %s: arrived without its tag (%x)", t.tpid, t.vid, s.pa.Name(), s.pb.Name(), got)
		case e.Type() != t.tpid || e.VLAN() != t.vid:
			return fail(CheckVLAN, s.ifaces(), "%#04x VID %d, %s -> %s: arrived tagged %#04x VID %d", t.tpid, t.vid, s.pa.Name(), s.pb.Name(), e.Type(), e.VLAN())
		case !bytes.Equal(got, f):
			return fail(CheckVLAN, s.ifaces(), "%#04x VID %d, %s -> %s: arrived changed: sent %x, got %x", t.tpid, t.vid, s.pa.Name(), s.pb.Name(), f, got)
		}
	}
	return pass(CheckVLAN, s.ifaces(), "802.1Q VID 42 and 802.1ad VID 43 arrived tagged, %s -> %s", s.pa.Name(), s.pb.Name())
}

// sameTest matches a received copy of the test frame tf.
func sameTest(tf testFrame) func(f []byte) bool {
	return func(f []byte) bool {
		got, ok := decodeTest(f)
		return ok && got == tf
	}
}

// exchange sends f on tx every resendEvery until rx has queued a frame
// match accepts, and returns that frame.
func (s *session) exchange(ctx context.Context, tx platform.Port, rx *receiver, f []byte, match func([]byte) bool) ([]byte, error) {
	deadline := time.Now().Add(s.wait)
	sent, refused := 0, 0
	for {
		n, err := tx.WriteBatch(platform.Plain(f))
		if err != nil {
			return nil, fmt.Errorf("send on %s: %w", tx.Name(), err)
		}
		sent += n
		refused += 1 - n
		next := time.Now().Add(resendEvery)
		if next.After(deadline) {
			next = deadline
		}
		got, ok := rx.await(ctx, next, match)
		if ok {
			return got, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			msg := fmt.Sprintf("nothing arrived within %v (%d sent, %d dropped by %s)", s.wait, sent, refused, tx.Name())
			if err := rx.lastErr(); err != nil {
				msg += fmt.Sprintf("; last read error: %v", err)
			}
			return nil, errors.New(msg)
		}
	}
}

// tapName is the name the TAP check asks for: OpenBSD gives tapN
// whatever the name.
func tapName() string { return fmt.Sprintf("swst%d", os.Getpid()%100000) }

// checkTAP makes a TAP, checks the OS lists it up with the port's MAC,
// closes it and waits until the OS no longer lists it. On Linux it does
// so in the selftest's own namespace.
func checkTAP(_ context.Context, s *session) Outcome {
	in := here
	if s.own != nil {
		in = s.own.in
	}
	name := tapName()
	subject := []string{name}
	err := in(func() error {
		p, err := s.sys.newTAP(name)
		if err != nil {
			return err
		}
		name = p.Name()
		subject = []string{name}
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			p.Close()
			return fmt.Errorf("%s: made, but the OS does not list it: %w", name, err)
		}
		if ifi.Flags&net.FlagUp == 0 || !bytes.Equal(ifi.HardwareAddr, p.HardwareAddr()) {
			p.Close()
			return fmt.Errorf("%s: the OS lists it %s with MAC %s, want up with the port's %s", name, ifi.Flags, ifi.HardwareAddr, p.HardwareAddr())
		}
		if err := p.Close(); err != nil {
			return fmt.Errorf("%s: close: %w", name, err)
		}
		return waitFor(s.wait, func() bool {
			_, err := net.InterfaceByName(name)
			return err != nil
		}, name+": still listed after Close")
	})
	if err != nil {
		return fail(CheckTAP, subject, "%v", err)
	}
	return pass(CheckTAP, subject, "%s made up with its MAC, gone after Close", name)
}

// createTAP is system.newTAP on every OS: platform/tap.
func createTAP(name string) (platform.Port, error) {
	p, err := tap.Create(name, tap.Options{Up: true})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// waitFor polls cond until it holds or within has passed; the error is
// what, with the time waited.
func waitFor(within time.Duration, cond func() bool, what string) error {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (waited %v)", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// checkLLAddr changes the first interface's MAC through the lladdr
// journal, checks the OS shows it and the journal file lists the change
// (what `swctl recover` would undo), puts it back and checks again. With
// --ifaces the journal is the daemon's, in the state directory, whose
// lock it holds meanwhile; on the selftest's own pair it is a temporary
// one.
func checkLLAddr(_ context.Context, s *session) Outcome {
	if s.links == nil {
		return skip(CheckLLAddr, nil, "no interfaces to test: %v", s.linksErr)
	}
	a := s.links.a
	subject := []string{a}
	dir := s.tmp
	if s.links != s.own {
		dir = s.opts.StateDir
		unlock, err := statedir.Lock(dir)
		if le := (*statedir.LockedError)(nil); errors.As(err, &le) {
			return skip(CheckLLAddr, subject, "a swctl daemon holds the state directory %s, and with it the journal: stop it, or give another --state-dir", dir)
		}
		if err != nil {
			return fail(CheckLLAddr, subject, "%v", err)
		}
		defer unlock()
	}
	j, err := lladdr.OpenJournal(dir)
	if err != nil {
		return fail(CheckLLAddr, subject, "%v", err)
	}
	var orig, mac net.HardwareAddr
	err = s.links.in(func() error {
		if orig, err = macOf(a); err != nil {
			return err
		}
		mac = randomMAC(orig)
		if err := j.SetLLAddr(a, mac, "swctl selftest"); err != nil {
			return err
		}
		restored := false
		defer func() {
			if !restored {
				j.RestoreLLAddr(a)
			}
		}()
		if got, err := macOf(a); err != nil || !bytes.Equal(got, mac) {
			return fmt.Errorf("set %s, but the OS shows %s (%v)", mac, got, err)
		}
		if err := journalLists(dir, a, orig, mac); err != nil {
			return err
		}
		restored = true
		if err := j.RestoreLLAddr(a); err != nil {
			return err
		}
		if got, err := macOf(a); err != nil || !bytes.Equal(got, orig) {
			return fmt.Errorf("restored, but the OS shows %s, want %s (%v)", got, orig, err)
		}
		return journalLists(dir, a, nil, nil)
	})
	if err != nil {
		return fail(CheckLLAddr, subject, "%v", err)
	}
	journal := "a temporary journal"
	if dir != s.tmp {
		journal = filepath.Join(dir, lladdr.JournalFile)
	}
	return pass(CheckLLAddr, subject, "%s -> %s -> %s, each change in %s first", orig, mac, orig, journal)
}

// journalLists reads the journal file in dir as `swctl recover` would and
// checks its entry for ifname: original orig and set mac, or none when
// orig is nil.
func journalLists(dir, ifname string, orig, mac net.HardwareAddr) error {
	j, err := lladdr.OpenJournal(dir)
	if err != nil {
		return err
	}
	var e *lladdr.Entry
	for _, p := range j.Pending() {
		if p.Interface == ifname {
			e = &p
		}
	}
	switch {
	case orig == nil && e != nil:
		return fmt.Errorf("%s still lists %s after the restore", j.Path(), e)
	case orig != nil && e == nil:
		return fmt.Errorf("%s does not list the change of %s: a crash now would leave it", j.Path(), ifname)
	case orig != nil && (!bytes.Equal(e.Original, orig) || !bytes.Equal(e.Set, mac)):
		return fmt.Errorf("%s lists %s, want %s -> %s", j.Path(), e, orig, mac)
	}
	return nil
}

// macOf returns the interface's MAC as the OS lists it.
func macOf(name string) (net.HardwareAddr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	return ifi.HardwareAddr, nil
}

// randomMAC returns a random locally administered unicast MAC other than
// not.
func randomMAC(not net.HardwareAddr) net.HardwareAddr {
	for {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], rand.Uint64())
		m := net.HardwareAddr(b[:6])
		m[0] = m[0]&0xfc | 0x02
		if !bytes.Equal(m, not) {
			return m
		}
	}
}

// checkLink takes the first interface of the selftest's own pair down
// and up, and waits for each change to come as a link event.
func checkLink(ctx context.Context, s *session) Outcome {
	if s.own == nil {
		return skip(CheckLink, nil, "needs a pair of its own to take down and up, which it could not make: %v", s.ownErr)
	}
	a := s.own.a
	subject := []string{a}
	err := s.own.in(func() error {
		w, err := linkwatch.New()
		if err != nil {
			return err
		}
		defer w.Close()
		if _, ok := w.Lookup(a); !ok {
			return fmt.Errorf("the watcher does not list %s", a)
		}
		for _, step := range []struct {
			up   bool
			want platform.LinkState
		}{{false, platform.LinkDown}, {true, platform.LinkUp}} {
			if err := s.sys.setLink(a, step.up); err != nil {
				return err
			}
			if err := awaitLink(ctx, w, a, step.want, s.wait); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fail(CheckLink, subject, "%s: %v", a, err)
	}
	return pass(CheckLink, subject, "%s set down and up, both seen as %s", a, s.sys.events)
}

// awaitLink waits for an event that shows ifname in state want.
func awaitLink(ctx context.Context, w *linkwatch.Watcher, ifname string, want platform.LinkState, within time.Duration) error {
	t := time.NewTimer(within)
	defer t.Stop()
	var last []string
	for {
		select {
		case e, ok := <-w.Events():
			if !ok {
				return fmt.Errorf("the watcher stopped: %v", w.Err())
			}
			if e.Name != ifname {
				continue
			}
			if e.State == want {
				return nil
			}
			last = append(last, e.State.String())
		case <-t.C:
			return fmt.Errorf("no event showing it %s within %v (events for it: %v)", want, within, last)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// checkStack runs the OS's stack-isolation check on the selftest's own
// pair.
func checkStack(ctx context.Context, s *session) Outcome {
	if s.sys.stack == nil {
		return skip(CheckStack, nil, "%s", s.sys.noStack)
	}
	if s.own == nil {
		return skip(CheckStack, nil, "needs a pair of its own, which it could not make: %v", s.ownErr)
	}
	return s.sys.stack(ctx, s)
}
