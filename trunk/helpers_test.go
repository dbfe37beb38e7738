package trunk

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// waitTimeout bounds every wait for a frame or a goroutine in the tests.
const waitTimeout = 5 * time.Second

var (
	stA = frame.MAC{0x02, 0xaa, 0, 0, 0, 1}
	stB = frame.MAC{0x02, 0xbb, 0, 0, 0, 2}
)

// quiet is a logger that discards everything.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// nearMAC and farMAC are the addresses of cable i's trunk end and far end.
func nearMAC(i int) net.HardwareAddr { return net.HardwareAddr{0x02, 0, 0, 0, 1, byte(i)} }
func farMAC(i int) net.HardwareAddr  { return net.HardwareAddr{0x02, 0, 0, 0, 2, byte(i)} }

// fixture is a trunk whose members are memport cables; the test holds the
// far ends.
type fixture struct {
	// t is the test.
	t *testing.T
	// tr is the trunk under test.
	tr *Trunk
	// near are the members' ports (owned by tr); far their far ends.
	near, far []*memport.Port
	// clk is the trunk's clock.
	clk *clock.Fake
	// rx receives copies of what a consumer goroutine reads (consume).
	rx chan []byte
	// consumed is closed when the consumer goroutine returns.
	consumed chan struct{}

	// mu guards actives.
	mu sync.Mutex
	// actives records the OnActiveChange calls.
	actives []bool
}

// builtin returns a new instance of the built-in protocol name.
func builtin(t *testing.T, name Proto) Protocol {
	t.Helper()
	p, err := NewProtocol(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newFixture returns a trunk running proto with one member per cfg.
func newFixture(t *testing.T, proto Proto, cfgs ...PortConfig) *fixture {
	t.Helper()
	return newFixtureOpts(t, Options{Protocol: builtin(t, proto)}, cfgs...)
}

// newFixtureOpts returns a trunk with opts (the fixture sets its seed,
// clock, ticks, logger, MAC and OnActiveChange) and one member per cfg.
func newFixtureOpts(t *testing.T, opts Options, cfgs ...PortConfig) *fixture {
	t.Helper()
	fx := &fixture{t: t, clk: clock.NewFake()}
	opts.Seed, opts.Clock, opts.TickInterval, opts.Logger = 7, fx.clk, -1, quiet
	opts.MAC = net.HardwareAddr{0x02, 0x77, 0, 0, 0, 1}
	opts.OnActiveChange = func(a bool) {
		fx.mu.Lock()
		fx.actives = append(fx.actives, a)
		fx.mu.Unlock()
	}
	var err error
	fx.tr, err = New("trunk0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fx.close)
	for _, c := range cfgs {
		fx.add(c)
	}
	return fx
}

// add adds one more cable and its trunk end as a member with cfg.
func (fx *fixture) add(cfg PortConfig) int {
	fx.t.Helper()
	i := len(fx.near)
	near, far := memport.Pair(fmt.Sprintf("eth%d", i), nearMAC(i), fmt.Sprintf("peer%d", i), farMAC(i))
	fx.near, fx.far = append(fx.near, near), append(fx.far, far)
	if err := fx.tr.AddPort(near, cfg); err != nil {
		fx.t.Fatalf("AddPort(eth%d): %v", i, err)
	}
	return i
}

// setLink sets cable i's link (both ends, as a pulled cable) and tells
// the trunk.
func (fx *fixture) setLink(i int, up bool) {
	st := platform.LinkDown
	if up {
		st = platform.LinkUp
	}
	fx.near[i].SetLink(st)
	fx.far[i].SetLink(st)
	fx.tr.LinkChanged(fx.near[i].Name())
}

// close closes the trunk, waits for the consumer, closes the far ends.
func (fx *fixture) close() {
	_ = fx.tr.Close()
	if fx.consumed != nil {
		<-fx.consumed
	}
	for _, f := range fx.far {
		_ = f.Close()
	}
}

// consume starts a goroutine that reads the trunk and sends copies of the
// frames to fx.rx.
func (fx *fixture) consume() {
	fx.rx = make(chan []byte, 4096)
	fx.consumed = make(chan struct{})
	go func() {
		defer close(fx.consumed)
		frames := make([][]byte, fx.tr.BatchSize())
		for {
			n, err := fx.tr.ReadBatch(platform.Batch{Frames: frames})
			for _, f := range frames[:n] {
				fx.rx <- bytes.Clone(f)
			}
			if err != nil {
				return
			}
		}
	}()
}

// write sends frames through the trunk and returns WriteBatch's count.
func (fx *fixture) write(frames ...[]byte) int {
	fx.t.Helper()
	n, err := fx.tr.WriteBatch(platform.Batch{Frames: frames})
	if err != nil {
		fx.t.Fatalf("WriteBatch: %v", err)
	}
	return n
}

// drain returns the frames queued at far end i, copied.
func (fx *fixture) drain(i int) [][]byte {
	var out [][]byte
	buf := make([][]byte, 64)
	for {
		n, _ := fx.far[i].TryReadBatch(buf)
		if n == 0 {
			return out
		}
		for _, f := range buf[:n] {
			out = append(out, bytes.Clone(f))
		}
	}
}

// drainCounts returns how many frames each far end has queued, and
// empties them.
func (fx *fixture) drainCounts() []int {
	c := make([]int, len(fx.far))
	for i := range fx.far {
		c[i] = len(fx.drain(i))
	}
	return c
}

// sendFar writes frames into far end i (towards the trunk).
func (fx *fixture) sendFar(i int, frames ...[]byte) {
	fx.t.Helper()
	if n, err := fx.far[i].WriteBatch(platform.Batch{Frames: frames}); err != nil || n != len(frames) {
		fx.t.Fatalf("peer%d: WriteBatch = %d, %v; want %d, nil", i, n, err, len(frames))
	}
}

// settled waits until the trunk has dealt with total received frames:
// passed up (and read by the consumer), refused, or handed to the protocol.
func (fx *fixture) settled(total uint64) {
	fx.t.Helper()
	waitFor(fx.t, fmt.Sprintf("trunk to handle %d received frames", total), func() bool {
		s := fx.tr.Stats()
		return s.RxPackets+s.RxRefused+s.RxControl >= total
	})
}

// received returns the frames the consumer has read so far.
func (fx *fixture) received() [][]byte {
	var out [][]byte
	for {
		select {
		case f := <-fx.rx:
			out = append(out, f)
		default:
			return out
		}
	}
}

// activeCalls returns the OnActiveChange calls so far.
func (fx *fixture) activeCalls() []bool {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]bool(nil), fx.actives...)
}

// waitFor polls cond until it holds, failing after waitTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitTimeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// udp4 returns a UDP/IPv4 frame from stA to stB whose flow is told by
// sport, with seq in the payload.
func udp4(sport uint16, seq uint32) []byte {
	b := make([]byte, 14+20+8+8)
	frame.Encode(b, stB, stA, frame.TypeIPv4)
	ip := b[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	copy(ip[12:], []byte{192, 0, 2, 1, 192, 0, 2, 2})
	binary.BigEndian.PutUint16(ip[20:], sport)
	binary.BigEndian.PutUint16(ip[22:], 53)
	binary.BigEndian.PutUint32(ip[28:], seq)
	return b
}

// seqOf returns the seq of a udp4 frame.
func seqOf(f []byte) uint32 { return binary.BigEndian.Uint32(f[14+28:]) }

// slowFrame returns a slow-protocols frame (an LACPDU's header) from src.
func slowFrame(src net.HardwareAddr) []byte {
	b := make([]byte, 124)
	frame.Encode(b, frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, frame.MACOf(src), frame.TypeSlow)
	b[14], b[15] = 1, 1 // subtype LACP, version 1
	return b
}

// flowPorts sends one frame of each of flows UDP flows through the trunk
// and returns, for each flow's source port, the far end it arrived at.
func flowPorts(fx *fixture, flows int, seq uint32) map[uint16]int {
	fx.t.Helper()
	var batch [][]byte
	for f := 0; f < flows; f++ {
		batch = append(batch, udp4(uint16(1000+f), seq))
	}
	if n := fx.write(batch...); n != flows {
		fx.t.Fatalf("WriteBatch sent %d of %d frames", n, flows)
	}
	where := map[uint16]int{}
	for i := range fx.far {
		for _, f := range fx.drain(i) {
			sport := binary.BigEndian.Uint16(f[14+20:])
			if old, ok := where[sport]; ok {
				fx.t.Fatalf("flow %d left by ports %d and %d in one batch", sport, old, i)
			}
			where[sport] = i
		}
	}
	if len(where) != flows {
		fx.t.Fatalf("%d of %d flows arrived", len(where), flows)
	}
	return where
}

// newMemPair returns a memport cable whose near end is called name.
func newMemPair(name string) (*memport.Port, *memport.Port) {
	return memport.Pair(name, net.HardwareAddr{0x02, 0, 0, 0, 3, name[len(name)-1]}, "far"+name, net.HardwareAddr{0x02, 0, 0, 0, 4, name[len(name)-1]})
}
