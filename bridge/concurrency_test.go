package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// host is the far end of a member's in-memory cable: a station that sends
// and counts what it receives.
type host struct {
	// end is the host's end of the cable.
	end *memport.Port
	// got counts frames received.
	got atomic.Uint64
	// mu guards marks.
	mu sync.Mutex
	// marks holds copies of received frames whose payload starts with
	// the marker.
	marks [][]byte
}

// marker tags the frames a test looks for among the background traffic.
var marker = []byte("MARK")

// receive reads until the end is closed.
func (h *host) receive() {
	buf := make([][]byte, 64)
	for {
		n, err := h.end.ReadBatch(platform.Batch{Frames: buf})
		if errors.Is(err, platform.ErrClosed) {
			return
		}
		h.got.Add(uint64(n))
		for _, f := range buf[:n] {
			if len(f) >= 18 && bytes.Equal(f[14:18], marker) {
				h.mu.Lock()
				h.marks = append(h.marks, bytes.Clone(f))
				h.mu.Unlock()
			}
		}
	}
}

func (h *host) marked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.marks)
}

// TestConcurrentTrafficAndChanges runs the members' reader goroutines over
// in-memory cables while hosts send and the configuration changes under
// them (ports and span ports added and removed, flags, flushes, timeout,
// size, link changes), then checks that the bridge still forwards
// correctly. Run it with -race.
func TestConcurrentTrafficAndChanges(t *testing.T) {
	clk := clock.NewFake()
	b := New("bridge0", Options{Timeout: DefaultTimeout, MaxAddr: 64, Clock: clk, Logger: quietLogger()})
	defer b.Close()
	const nHosts = 4
	hosts := make([]*host, nHosts)
	members := make([]*memport.Port, nHosts)
	var wg sync.WaitGroup
	for i := range hosts {
		member, end := memport.Pair(fmt.Sprintf("e%d", i), nil, fmt.Sprintf("h%d", i), nil)
		hosts[i], members[i] = &host{end: end}, member
		if err := b.AddPort(member, DefaultPortFlags()); err != nil {
			t.Fatal(err)
		}
		wg.Go(hosts[i].receive)
	}
	defer func() {
		for _, h := range hosts {
			h.end.Close()
		}
		wg.Wait()
	}()

	stop := make(chan struct{})
	var senders sync.WaitGroup
	for i, h := range hosts {
		senders.Go(func() {
			batch := make([][]byte, 16)
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				for j := range batch {
					dst := mac((i + 1 + j) % nHosts)
					switch j % 4 {
					case 0:
						dst = frame.Broadcast
					case 1:
						dst = mac(100 + n%200) // unknown, and filling the table
					}
					src := mac(i)
					if j%8 == 7 {
						src = mac(300 + n%100) // many sources: learning and moving
					}
					batch[j] = ip4(dst, src)
				}
				h.end.WriteBatch(platform.Batch{Frames: batch})
				time.Sleep(50 * time.Microsecond)
			}
		})
	}

	churn := func(round int) {
		// testPorts, not memport: a memport end costs 9 MB of buffers.
		extra := newTestPort("x0", false)
		if err := b.AddPort(extra, DefaultPortFlags()); err != nil {
			t.Errorf("round %d: AddPort(x0) = %v", round, err)
		}
		if err := b.AddSpan(newTestPort("s0", false)); err != nil {
			t.Errorf("round %d: AddSpan(s0) = %v", round, err)
		}
		extra.feed(ip4(frame.Broadcast, mac(400)), ip4(mac(1), mac(401)))
		b.SetPortFlags("e1", PortFlags{Learning: round%2 == 0, Discover: true, BlockNonIP: round%3 == 0})
		b.AddStatic(mac(500), uint16(round%3), "x0")
		b.Addrs()
		b.Ports()
		b.Stats()
		hosts[2].end.SetLink(platform.LinkDown)
		b.LinkChanged("e2")
		hosts[2].end.SetLink(platform.LinkUp)
		b.LinkChanged("e2")
		b.SetTimeout(time.Duration(1+round%5) * time.Second)
		clk.Advance(time.Second)
		b.SetMaxAddr(32 + round%64)
		if round%4 == 0 {
			b.Flush(round%8 == 0)
		}
		b.DeleteAddr(mac(300 + round%100))
		if err := b.RemovePort("x0"); err != nil {
			t.Errorf("round %d: RemovePort(x0) = %v", round, err)
		}
		if err := b.RemoveSpan("s0"); err != nil {
			t.Errorf("round %d: RemoveSpan(s0) = %v", round, err)
		}
	}
	for round := range 200 {
		churn(round)
	}
	close(stop)
	senders.Wait()

	for i, h := range hosts {
		if h.got.Load() == 0 {
			t.Errorf("h%d received nothing during the run", i)
		}
	}
	for _, a := range b.Addrs() {
		if a.Port == "x0" {
			t.Errorf("address %s still on removed member x0", a.MAC)
		}
	}

	// The traffic has stopped: once the queues have drained, the bridge
	// must forward exactly.
	eventually(t, "the queues to drain", func() bool {
		for i := range hosts {
			if members[i].Pending() > 0 || hosts[i].end.Pending() > 0 {
				return false
			}
		}
		return true
	})
	b.SetPortFlags("e1", DefaultPortFlags())
	b.SetMaxAddr(DefaultMaxAddr)
	b.SetTimeout(0)
	b.Flush(true)
	hosts[1].end.WriteBatch(platform.Batch{Frames: [][]byte{ip4(frame.Broadcast, stX)}})
	eventually(t, "stX to be learned on e1", func() bool {
		return slices.Contains(b.Addrs(), Addr{MAC: stX, Port: "e1", Age: 0})
	})
	f := ip4(stX, stA)
	copy(f[14:], marker)
	hosts[0].end.WriteBatch(platform.Batch{Frames: [][]byte{f}})
	eventually(t, "the marked frame to reach h1", func() bool { return hosts[1].marked() == 1 })
	time.Sleep(20 * time.Millisecond)
	for i, h := range hosts {
		if want := map[bool]int{true: 1, false: 0}[i == 1]; h.marked() != want {
			t.Errorf("h%d got %d marked frames, want %d", i, h.marked(), want)
		}
	}
}

// TestConcurrentForwardersShareTable runs several forwarding goroutines on
// one bridge through Forward, each learning its own stations and sending
// to the others', and checks the counters add up.
func TestConcurrentForwardersShareTable(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout}, false, names...)
	const rounds = 2000
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			in, w := fx.b.Member(n), NewWorker()
			batch := [][]byte{
				ip4(frame.Broadcast, mac(i)),
				ip4(mac((i+1)%len(names)), mac(i)),
				ip4(mac(10+i), mac(i)),
			}
			for range rounds {
				fx.b.Forward(w, in, platform.Batch{Frames: batch}, fx.clk.Now())
			}
		})
	}
	wg.Wait()
	s := fx.b.Stats()
	if want := uint64(len(names) * rounds * 3); s.Received != want {
		t.Errorf("Received = %d, want %d", s.Received, want)
	}
	if sum := s.Forwarded + s.Flooded + s.DroppedSamePort; sum != s.Received {
		t.Errorf("Forwarded+Flooded+DroppedSamePort = %d, want Received %d", sum, s.Received)
	}
	if s.Learned != uint64(len(names)) || s.Moved != 0 {
		t.Errorf("Learned, Moved = %d, %d, want %d, 0", s.Learned, s.Moved, len(names))
	}
	var copies uint64
	for _, p := range fx.ports {
		copies += p.count.Load()
	}
	if copies != s.Sent {
		t.Errorf("members got %d copies, Sent = %d", copies, s.Sent)
	}
}
