package bridge

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// testPort is a cheap Port for driving Forward directly: ReadBatch blocks
// until Close or feed (so the bridge's reader idles), WriteBatch records copies of what
// it is given (or only counts them, when record is off, for benchmarks and
// allocation tests).
type testPort struct {
	// name is reported by Name; immutable.
	name string
	// record makes WriteBatch keep copies; immutable.
	record bool
	// batch is reported by BatchSize; immutable.
	batch int
	// mtu is reported by MTU. Atomic.
	mtu atomic.Int64
	// link is reported by Link. Atomic.
	link atomic.Uint32
	// count is the number of frames WriteBatch was given. Atomic.
	count atomic.Uint64
	// in carries batches for ReadBatch to return (see feed).
	in chan [][]byte
	// closed is closed by Close.
	closed chan struct{}
	// closeOnce guards closing closed.
	closeOnce sync.Once
	// mu guards got.
	mu sync.Mutex
	// got holds copies of the frames written, when record is set.
	got [][]byte
}

func newTestPort(name string, record bool) *testPort {
	p := &testPort{name: name, record: record, batch: platform.DefaultBatchSize, in: make(chan [][]byte, 16), closed: make(chan struct{})}
	p.mtu.Store(1500)
	p.link.Store(uint32(platform.LinkUp))
	return p
}

func (p *testPort) Name() string                   { return p.name }
func (p *testPort) HardwareAddr() net.HardwareAddr { return nil }
func (p *testPort) MTU() int                       { return int(p.mtu.Load()) }
func (p *testPort) Headroom() int                  { return 0 }
func (p *testPort) BatchSize() int                 { return p.batch }
func (p *testPort) Link() platform.LinkState       { return platform.LinkState(p.link.Load()) }
func (p *testPort) SetLink(s platform.LinkState)   { p.link.Store(uint32(s)) }
func (p *testPort) Counters() platform.Counters    { return platform.Counters{} }

// ReadBatch returns the next batch given to feed (as many frames as fit),
// or ErrClosed once the port is closed.
func (p *testPort) ReadBatch(b platform.Batch) (int, error) {
	return platform.ReadPlain(b, func(frames [][]byte) (int, error) {
		select {
		case <-p.closed:
			return 0, platform.ErrClosed
		case in := <-p.in:
			return copy(frames, in), nil
		}
	})
}

// Offloads implements platform.Port: a test port carries plain frames.
func (p *testPort) Offloads() bool { return false }

// feed queues a batch for the bridge's reader of this port.
func (p *testPort) feed(frames ...[]byte) { p.in <- frames }

func (p *testPort) WriteBatch(b platform.Batch) (int, error) {
	frames := b.Frames
	select {
	case <-p.closed:
		return 0, platform.ErrClosed
	default:
	}
	p.count.Add(uint64(len(frames)))
	if p.record {
		p.mu.Lock()
		for _, f := range frames {
			p.got = append(p.got, bytes.Clone(f))
		}
		p.mu.Unlock()
	}
	return len(frames), nil
}

func (p *testPort) Close() error {
	p.closeOnce.Do(func() { close(p.closed) })
	return nil
}

// take returns and forgets the frames recorded so far.
func (p *testPort) take() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = nil
	return got
}

func (p *testPort) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// fixture is a bridge whose members are testPorts, driven through Forward
// on the test's goroutine with a fake clock.
type fixture struct {
	// t is the test the fixture fails.
	t testing.TB
	// b is the bridge under test.
	b *Bridge
	// clk is b's clock.
	clk *clock.Fake
	// w is the Worker send uses.
	w *Worker
	// ports are b's members by name (span ports are not here).
	ports map[string]*testPort
}

// quietLogger discards everything.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newFixture returns a bridge with 240 s ageing and members named names,
// all with DefaultPortFlags, recording what they are sent.
func newFixture(t testing.TB, names ...string) *fixture {
	t.Helper()
	return newFixtureOpts(t, Options{Timeout: DefaultTimeout, MaxAddr: DefaultMaxAddr}, true, names...)
}

func newFixtureOpts(t testing.TB, opts Options, record bool, names ...string) *fixture {
	t.Helper()
	clk := clock.NewFake()
	opts.Clock = clk
	opts.Logger = quietLogger()
	fx := &fixture{t: t, b: New("bridge0", opts), clk: clk, w: NewWorker(), ports: map[string]*testPort{}}
	t.Cleanup(func() { fx.b.Close() })
	for _, n := range names {
		fx.add(n, DefaultPortFlags(), record)
	}
	return fx
}

func (fx *fixture) add(name string, f PortFlags, record bool) *testPort {
	fx.t.Helper()
	p := newTestPort(name, record)
	if err := fx.b.AddPort(p, f); err != nil {
		fx.t.Fatalf("AddPort(%s) = %v, want nil", name, err)
	}
	fx.ports[name] = p
	return p
}

// send forwards frames received on the member in, at the fake clock's time.
func (fx *fixture) send(in string, frames ...[]byte) {
	fx.t.Helper()
	m := fx.b.Member(in)
	if m == nil {
		fx.t.Fatalf("no member %s", in)
	}
	fx.b.Forward(fx.w, m, platform.Batch{Frames: frames}, fx.clk.Now())
}

// receivers empties every port's record and returns, sorted, the names of
// the ports that got exactly the frame f, and fails on any port that got
// anything else or more than one copy.
func (fx *fixture) receivers(f []byte) []string {
	fx.t.Helper()
	var who []string
	for name, p := range fx.ports {
		got := p.take()
		switch {
		case len(got) == 0:
		case len(got) == 1 && bytes.Equal(got[0], f):
			who = append(who, name)
		default:
			fx.t.Errorf("%s got %d frames %x, want at most one copy of %x", name, len(got), got, f)
		}
	}
	slices.Sort(who)
	return who
}

// reset forgets what the ports recorded.
func (fx *fixture) reset() {
	for _, p := range fx.ports {
		p.take()
	}
}

// mac returns a locally administered unicast address ending in i.
func mac(i int) frame.MAC { return frame.MAC{0x02, 0, 0, 0, byte(i >> 8), byte(i)} }

// eth returns an untagged frame of size bytes (at least a header).
func eth(dst, src frame.MAC, etype uint16, size int) []byte {
	f := make([]byte, max(size, frame.HeaderLen))
	frame.Encode(f, dst, src, etype)
	for i := frame.HeaderLen; i < len(f); i++ {
		f[i] = byte(i)
	}
	return f
}

// ip4 returns a 60-byte IPv4 frame from src to dst.
func ip4(dst, src frame.MAC) []byte { return eth(dst, src, frame.TypeIPv4, 60) }

// tagged returns a frame of size bytes with one tag (TPID tpid, VID vid)
// and inner ethertype inner.
func tagged(dst, src frame.MAC, tpid, vid, inner uint16, size int) []byte {
	f := eth(dst, src, tpid, max(size, frame.HeaderLen+frame.TagLen))
	binary.BigEndian.PutUint16(f[14:16], vid)
	binary.BigEndian.PutUint16(f[16:18], inner)
	return f
}

// statsDelta returns the Stats fields that changed from a to b, by name.
func statsDelta(a, b Stats) map[string]uint64 {
	d := map[string]uint64{}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if x, y := va.Field(i).Uint(), vb.Field(i).Uint(); x != y {
			d[va.Type().Field(i).Name] = y - x
		}
	}
	return d
}

// wantDelta fails unless each counter in want changed by the given amount
// between a and b; counters not named are not checked.
func wantDelta(t testing.TB, what string, a, b Stats, want map[string]uint64) {
	t.Helper()
	d := statsDelta(a, b)
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s: %s went up by %d, want %d (all changes: %v)", what, k, d[k], v, d)
		}
	}
}

// addrsString formats a table for failure messages.
func addrsString(as []Addr) string {
	var s bytes.Buffer
	for _, a := range as {
		fmt.Fprintf(&s, "[%s vlan %d on %s static=%v age=%v] ", a.MAC, a.VLAN, a.Port, a.Static, a.Age)
	}
	return s.String()
}

// eventually polls cond until it holds or a few seconds pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
