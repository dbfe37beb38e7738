package selftest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
	"github.com/swctl/swctl/promisc"
)

// testWait bounds the waits of a check under test: long enough for a
// goroutine on a busy machine, short enough for the checks that must
// give up.
const testWait = 500 * time.Millisecond

// fakePort is a memport end with a promiscuous membership the fake OS
// counts, and a way to change frames on their way out.
type fakePort struct {
	*memport.Port
	// members counts the memberships held, what promiscuity reads.
	members atomic.Int32
	// inert makes SetPromisc succeed without counting.
	inert bool
	// mangle, when set, changes each frame WriteBatch sends (nil: the
	// frame is dropped).
	mangle func(f []byte) []byte
}

func (p *fakePort) SetPromisc(on bool) error {
	if p.inert {
		return nil
	}
	if on {
		p.members.Add(1)
	} else {
		p.members.Add(-1)
	}
	return nil
}

func (p *fakePort) Promisc() bool { return p.members.Load() > 0 }

func (p *fakePort) WriteBatch(b platform.Batch) (int, error) {
	if p.mangle == nil {
		return p.Port.WriteBatch(b)
	}
	var out [][]byte
	for _, f := range b.Frames {
		if g := p.mangle(append([]byte(nil), f...)); g != nil {
			out = append(out, g)
		}
	}
	if _, err := p.Port.WriteBatch(platform.Plain(out...)); err != nil {
		return 0, err
	}
	return len(b.Frames), nil
}

// fakeSession is a session over a memport cable, ports open and read,
// with a fake OS whose promiscuity is the ports' membership count.
func fakeSession(t *testing.T) (*session, *fakePort, *fakePort) {
	t.Helper()
	ma, mb := memport.Pair("fa", net.HardwareAddr(macA[:]), "fb", net.HardwareAddr(macB[:]))
	pa, pb := &fakePort{Port: ma}, &fakePort{Port: mb}
	ports := map[string]*fakePort{"fa": pa, "fb": pb}
	s := &session{
		sys: system{
			promiscuity: func(name string) (int, error) {
				return int(ports[name].members.Load()), nil
			},
			countsPromisc: true,
			promiscSource: "fake count",
		},
		wait:  testWait,
		run:   77,
		reg:   promisc.NewRegistry(),
		tmp:   t.TempDir(),
		links: &pair{a: "fa", b: "fb", in: here},
	}
	s.pa, s.pb = pa, pb
	keep := func(f []byte) bool { tf, ok := decodeTest(f); return ok && tf.run == s.run }
	s.ra, s.rb = receive(pa, keep), receive(pb, keep)
	t.Cleanup(s.close)
	return s, pa, pb
}

// wantOutcome checks an outcome's result and that its reason says want.
func wantOutcome(t *testing.T, o Outcome, r Result, want string) {
	t.Helper()
	if o.Result != r || !strings.Contains(o.Reason, want) {
		t.Errorf("%s: %s %q, want %s with a reason containing %q", o.Check, o.Result, o.Reason, r, want)
	}
}

func TestCheckFrames(t *testing.T) {
	cases := []struct {
		name   string
		mangle func(f []byte) []byte
		result Result
		want   string
	}{
		{"cable", nil, Pass, "fa -> fb and back, 60 bytes each way, unchanged"},
		{"frames lost", func([]byte) []byte { return nil }, Fail, "fa -> fb: nothing arrived within 500ms"},
		{"frames changed", func(f []byte) []byte { f[len(f)-1] ^= 0xff; return f }, Fail, "fa -> fb: arrived changed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, pa, _ := fakeSession(t)
			pa.mangle = c.mangle
			wantOutcome(t, checkFrames(context.Background(), s), c.result, c.want)
		})
	}
}

func TestCheckVLAN(t *testing.T) {
	untag := func(f []byte) []byte {
		if frame.Ethernet(f).IsTagged() {
			f = append(f[:12], f[16:]...)
		}
		return f
	}
	retag := func(f []byte) []byte {
		if frame.Ethernet(f).IsTagged() {
			f[12], f[13] = 0x81, 0x00
		}
		return f
	}
	cases := []struct {
		name   string
		mangle func(f []byte) []byte
		result Result
		want   string
	}{
		{"tags kept", nil, Pass, "802.1Q VID 42 and 802.1ad VID 43 arrived tagged, fa -> fb"},
		{"tag lost", untag, Fail, "0x8100 VID 42, fa -> fb: arrived without its tag"},
		{"802.1ad arrives as 802.1Q", retag, Fail, "0x88a8 VID 43, fa -> fb: arrived tagged 0x8100 VID 43"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, pa, pb := fakeSession(t)
			pa.mangle = c.mangle
			wantOutcome(t, checkVLAN(context.Background(), s), c.result, c.want)
			if n := pb.members.Load(); n != 0 {
				t.Errorf("fb holds %d promiscuous memberships after the check, want 0", n)
			}
		})
	}
}

func TestCheckPromisc(t *testing.T) {
	t.Run("count moves and comes back", func(t *testing.T) {
		s, _, _ := fakeSession(t)
		wantOutcome(t, checkPromisc(context.Background(), s), Pass, "fake count: fa 0 -> 1 -> 0, fb 0 -> 1 -> 0")
	})
	t.Run("count does not move", func(t *testing.T) {
		s, _, pb := fakeSession(t)
		pb.inert = true
		wantOutcome(t, checkPromisc(context.Background(), s), Fail, "fb: fake count 0 after the port took promiscuous mode, want 1")
	})
	t.Run("count does not come back", func(t *testing.T) {
		s, _, _ := fakeSession(t)
		read := s.sys.promiscuity
		calls := 0
		s.sys.promiscuity = func(name string) (int, error) {
			calls++
			if name == "fa" && calls >= 3 {
				return 1, nil // from the release on, whatever the wait
			}
			return read(name)
		}
		wantOutcome(t, checkPromisc(context.Background(), s), Fail, "fa: fake count 1 after the port gave promiscuous mode back, want 0 as before")
	})
	t.Run("flag clears a moment after the release", func(t *testing.T) {
		s, _, _ := fakeSession(t)
		s.sys.countsPromisc = false
		read := s.sys.promiscuity
		calls := 0
		s.sys.promiscuity = func(name string) (int, error) {
			calls++
			if name == "fa" && (calls == 3 || calls == 4) {
				return 1, nil // the first two reads after the release
			}
			return read(name)
		}
		wantOutcome(t, checkPromisc(context.Background(), s), Pass, "fa 0 -> 1 -> 0")
	})
	t.Run("counted from where another program left it", func(t *testing.T) {
		s, pa, _ := fakeSession(t)
		pa.members.Store(2)
		wantOutcome(t, checkPromisc(context.Background(), s), Pass, "fa 2 -> 3 -> 2")
	})
	t.Run("flag already set", func(t *testing.T) {
		s, pa, _ := fakeSession(t)
		s.sys.countsPromisc = false
		pa.members.Store(1)
		wantOutcome(t, checkPromisc(context.Background(), s), Skip, "fa was promiscuous before the test")
	})
	t.Run("OS cannot tell", func(t *testing.T) {
		s, _, _ := fakeSession(t)
		s.sys.promiscuity = func(string) (int, error) { return 0, errors.New("no such device") }
		wantOutcome(t, checkPromisc(context.Background(), s), Fail, "fa: no such device")
	})
}

func TestCheckControl(t *testing.T) {
	s := &session{wait: testWait, tmp: t.TempDir()}
	wantOutcome(t, checkControl(context.Background(), s), Pass, "mode 0600: version request answered, peer credentials uid")
	s.tmp = filepath.Join(t.TempDir(), "file")
	if err := writeFile(s.tmp); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, checkControl(context.Background(), s), Fail, "listen:")
}

// Without interfaces to test, the checks that need them say why, and the
// others still run.
func TestRunWithoutInterfaces(t *testing.T) {
	sys := system{
		newPair: func() (*pair, error) { return nil, errors.New("pairs refused") },
		newTAP:  func(string) (platform.Port, error) { return nil, errors.New("TAPs refused") },
		noStack: "no stack guard here",
	}
	rep, err := run(context.Background(), Options{}, sys)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != len(Checks) || rep.Ifaces == nil || len(rep.Ifaces) != 0 {
		t.Fatalf("report %+v: want every check, an empty list of interfaces", rep)
	}
	for _, o := range rep.Checks {
		if o.Subject == nil {
			t.Errorf("%s: subject nil, want a list (JSON [], not null)", o.Check)
		}
	}
	want := map[string]struct {
		r    Result
		text string
	}{
		CheckOpen:    {Fail, "no interfaces to test: cannot make a pair of its own (pairs refused): give two interfaces cabled to each other with --ifaces A,B"},
		CheckPromisc: {Skip, "needs the packet ports"},
		CheckFrames:  {Skip, "needs the packet ports"},
		CheckVLAN:    {Skip, "needs the packet ports"},
		CheckLLAddr:  {Skip, "no interfaces to test"},
		CheckLink:    {Skip, "pairs refused"},
		CheckTAP:     {Fail, "TAPs refused"},
		CheckStack:   {Skip, "no stack guard here"},
		CheckControl: {Pass, "version request answered"},
	}
	for _, o := range rep.Checks {
		if w, ok := want[o.Check]; ok {
			wantOutcome(t, o, w.r, w.text)
		}
	}
	if got := rep.Failed(); len(got) == 0 || got[0] != CheckOpen {
		t.Errorf("Failed() = %q, want %q first", got, CheckOpen)
	}
}

// Without the privilege to make a pair, the report says to run as root.
func TestRunWithoutPrivilege(t *testing.T) {
	sys := system{
		newPair: func() (*pair, error) { return nil, fmt.Errorf("new network namespace: %w", syscall.EPERM) },
		newTAP:  func(string) (platform.Port, error) { return nil, syscall.EPERM },
	}
	rep, err := run(context.Background(), Options{}, sys)
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, rep.Checks[0], Fail, "cannot make a pair of its own (new network namespace: operation not permitted): run as root")
}

// A cancelled run stops checking and says so for each check left.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := run(ctx, Options{}, system{newPair: func() (*pair, error) { return nil, errors.New("none") }})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Checks {
		wantOutcome(t, o, Fail, "not run: context canceled")
	}
}

func TestRunRefusesOptions(t *testing.T) {
	cases := []struct {
		opts Options
		want string
	}{
		{Options{Ifaces: []string{"eth1"}, StateDir: "/s"}, "want two, cabled to each other"},
		{Options{Ifaces: []string{"eth1", "eth2", "eth3"}, StateDir: "/s"}, "want two"},
		{Options{Ifaces: []string{"eth1", ""}, StateDir: "/s"}, "empty name"},
		{Options{Ifaces: []string{"eth1", "eth1"}, StateDir: "/s"}, "want two different interfaces"},
		{Options{Ifaces: []string{"eth1", "eth2"}}, "state directory: empty path"},
	}
	for _, c := range cases {
		_, err := run(context.Background(), c.opts, system{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Options %+v: error %v, want one containing %q", c.opts, err, c.want)
		}
	}
}

// writeFile makes an empty file at path: a directory that is not one.
func writeFile(path string) error { return os.WriteFile(path, nil, 0o600) }
