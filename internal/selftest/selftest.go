package selftest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/promisc"
)

// DefaultWait bounds how long a check waits for one frame, event or
// interface change.
const DefaultWait = 5 * time.Second

// resendEvery is how often a check sends its frame again while it waits:
// a link that has just come up may drop the first ones.
const resendEvery = 100 * time.Millisecond

// Options says what to test.
type Options struct {
	// Ifaces are two interfaces cabled to each other to test (--ifaces);
	// empty: a pair the selftest makes, where the OS can.
	Ifaces []string
	// StateDir is the daemon's state directory: with Ifaces, the lladdr
	// check journals its change there, so that `swctl recover` undoes
	// it if the selftest dies half-way.
	StateDir string
	// Wait bounds each wait for a frame or an event; 0 means DefaultWait.
	Wait time.Duration
}

// packetPort is a port of the OS's packet backend: AF_PACKET on Linux,
// bpf on the BSDs.
type packetPort interface {
	platform.Port
	platform.LinkSetter
	platform.Promiscuous
}

// pair is two interfaces cabled to each other, and where to run code
// that reaches them (their network namespace on Linux).
type pair struct {
	// a and b are the interface names.
	a, b string
	// desc says what the pair is, for the report.
	desc string
	// in runs fn where a and b are.
	in func(fn func() error) error
	// close removes the pair when the selftest made it; nil otherwise.
	close func() error
}

// here runs fn in the calling goroutine: for interfaces of the
// selftest's own namespace.
func here(fn func() error) error { return fn() }

// system is what the checks need of the operating system, one per OS
// (system_linux.go, system_bsd.go, system_other.go); tests fake parts.
type system struct {
	// backend names the packet backend, for the report.
	backend string
	// events names the kernel's link events, for the report.
	events string
	// newPair makes two interfaces cabled to each other, both up.
	newPair func() (*pair, error)
	// openPort opens a packet port on name; run it in the pair's in.
	openPort func(name string) (packetPort, error)
	// promiscuity reads name's promiscuous mode as the OS reports it:
	// the kernel's count where countsPromisc, else 1 for IFF_PROMISC
	// set and 0 for clear. Run it in the pair's in.
	promiscuity func(name string) (int, error)
	// countsPromisc says promiscuity is a count of memberships.
	countsPromisc bool
	// promiscSource names where promiscuity comes from, for the report.
	promiscSource string
	// newTAP makes a TAP called name (or what the OS calls it), up; run
	// it where the TAP should be.
	newTAP func(name string) (platform.Port, error)
	// setLink sets name administratively up or down; run it in the
	// pair's in.
	setLink func(name string, up bool) error
	// stack is the stack-isolation check on the selftest's own pair;
	// nil where there is no stack guard.
	stack func(ctx context.Context, s *session) Outcome
	// noStack says why there is no stack check, when stack is nil.
	noStack string
}

// session is one Run: the interfaces, the ports opened on them, and what
// must be undone at the end.
type session struct {
	// opts are the Options of the Run.
	opts Options
	// sys is the OS.
	sys system
	// wait bounds every wait.
	wait time.Duration
	// run is the random ID every test frame of this Run carries.
	run uint64
	// tmp is a temporary directory: the control socket, and the lladdr
	// journal of the selftest's own pair.
	tmp string
	// links are the interfaces under test (own, or given), nil when
	// there are none; linksErr says why.
	links    *pair
	linksErr error
	// own is the pair the selftest made, nil when it could not; ownErr
	// says why.
	own    *pair
	ownErr error
	// pa and pb are the packet ports on links.a and links.b, nil until
	// the open check has opened them.
	pa, pb packetPort
	// ra and rb read pa and pb.
	ra, rb *receiver
	// reg counts the promiscuous memberships, as the daemon does.
	reg *promisc.Registry
}

// check is one named check.
type check struct {
	// name is one of Checks.
	name string
	// run runs it.
	run func(ctx context.Context, s *session) Outcome
}

// checks are every check, in the order of Checks.
var checks = []check{
	{CheckOpen, checkOpen},
	{CheckPromisc, checkPromisc},
	{CheckFrames, checkFrames},
	{CheckVLAN, checkVLAN},
	{CheckTAP, checkTAP},
	{CheckLLAddr, checkLLAddr},
	{CheckLink, checkLink},
	{CheckStack, checkStack},
	{CheckControl, checkControl},
}

// Run runs every check and reports each. The error is for Options that
// make no sense; whatever goes wrong on the host is a check's FAIL. Run
// undoes all it changed before it returns, also when ctx ends early (the
// remaining checks then fail with the context's error).
func Run(ctx context.Context, opts Options) (Report, error) {
	return run(ctx, opts, hostSystem())
}

func run(ctx context.Context, opts Options, sys system) (Report, error) {
	rep := Report{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if err := checkOptions(opts); err != nil {
		return rep, err
	}
	s := &session{opts: opts, sys: sys, wait: opts.Wait, run: rand.Uint64(), reg: promisc.NewRegistry()}
	if s.wait <= 0 {
		s.wait = DefaultWait
	}
	defer s.close()
	if err := s.setup(); err != nil {
		return rep, err
	}
	if s.links != nil {
		rep.Ifaces, rep.Bed = []string{s.links.a, s.links.b}, s.links.desc
	}
	for _, c := range checks {
		if err := ctx.Err(); err != nil {
			rep.Checks = append(rep.Checks, fail(c.name, nil, "not run: %v", err))
			continue
		}
		o := c.run(ctx, s)
		o.Check = c.name
		rep.Checks = append(rep.Checks, o)
	}
	// JSON has lists, never null.
	for i := range rep.Checks {
		if rep.Checks[i].Subject == nil {
			rep.Checks[i].Subject = []string{}
		}
	}
	if rep.Ifaces == nil {
		rep.Ifaces = []string{}
	}
	return rep, nil
}

// checkOptions refuses Options that make no sense.
func checkOptions(opts Options) error {
	switch {
	case len(opts.Ifaces) == 0:
		return nil
	case len(opts.Ifaces) != 2:
		return fmt.Errorf("interfaces %q: want two, cabled to each other", opts.Ifaces)
	case opts.Ifaces[0] == "" || opts.Ifaces[1] == "":
		return fmt.Errorf("interfaces %q: empty name", opts.Ifaces)
	case opts.Ifaces[0] == opts.Ifaces[1]:
		return fmt.Errorf("interfaces %q: want two different interfaces", opts.Ifaces)
	case opts.StateDir == "":
		return errors.New("state directory: empty path (the lladdr check journals its change there)")
	}
	return nil
}

// setup makes the temporary directory and the selftest's own pair, and
// picks the interfaces under test.
func (s *session) setup() error {
	dir, err := os.MkdirTemp("", "swctl-selftest-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	s.tmp = dir
	s.own, s.ownErr = s.sys.newPair()
	switch {
	case len(s.opts.Ifaces) == 2:
		s.links = &pair{a: s.opts.Ifaces[0], b: s.opts.Ifaces[1], desc: "given with --ifaces", in: here}
	case s.own != nil:
		s.links = s.own
	case errors.Is(s.ownErr, fs.ErrPermission):
		s.linksErr = fmt.Errorf("cannot make a pair of its own (%v): run as root", s.ownErr)
	default:
		s.linksErr = fmt.Errorf("cannot make a pair of its own (%v): give two interfaces cabled to each other with --ifaces A,B", s.ownErr)
	}
	return nil
}

// close closes the ports, removes the selftest's own pair and the
// temporary directory.
func (s *session) close() {
	for _, p := range []packetPort{s.pa, s.pb} {
		if p != nil {
			p.Close()
		}
	}
	for _, r := range []*receiver{s.ra, s.rb} {
		if r != nil {
			<-r.done
		}
	}
	if s.own != nil && s.own.close != nil {
		s.own.close()
	}
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

// ifaces is the subject of the checks on both interfaces under test.
func (s *session) ifaces() []string {
	if s.links == nil {
		return nil
	}
	return []string{s.links.a, s.links.b}
}

// needPorts returns a SKIP outcome of check c when the open check has not
// opened both ports.
func (s *session) needPorts(c string) (Outcome, bool) {
	if s.pa == nil || s.pb == nil {
		return skip(c, s.ifaces(), "needs the packet ports, which %q could not open", CheckOpen), false
	}
	return Outcome{}, true
}
