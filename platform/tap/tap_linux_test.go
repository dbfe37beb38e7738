package tap_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
	"github.com/swctl/swctl/platform/tap"
)

// testType is the IEEE 802 local experimental ethertype the tests send, so
// that nothing the host stack emits is mistaken for a test frame.
const testType = 0x88b5

// newTap makes a namespace and a TAP in it, closed at the end of the test.
func newTap(t testing.TB, opts tap.Options) (*netnstest.NS, *tap.Port) {
	t.Helper()
	netnstest.Require(t)
	ns := netnstest.New(t, "tap")
	name := netnstest.UniqueName("tp")
	var p *tap.Port
	var err error
	ns.Do(func() { p, err = tap.Create(name, opts) })
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	t.Cleanup(func() { p.Close() })
	return ns, p
}

// rawSocket is an AF_PACKET socket bound to one interface: the peer of a
// TAP, which sees what the TAP's fd writes and sends what its fd reads.
type rawSocket struct {
	fd int
}

func openRaw(t *testing.T, ns *netnstest.NS, ifindex int) *rawSocket {
	t.Helper()
	var fd int
	var err error
	proto := int(htons(unix.ETH_P_ALL))
	ns.Do(func() {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
		if err == nil {
			err = unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex})
		}
	})
	if err != nil {
		t.Fatalf("AF_PACKET socket on ifindex %d: %v", ifindex, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &rawSocket{fd: fd}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (s *rawSocket) send(t *testing.T, f []byte) {
	t.Helper()
	if _, err := unix.Write(s.fd, f); err != nil {
		t.Fatalf("AF_PACKET send: %v", err)
	}
}

// recvMatch returns the first frame match accepts, failing after within.
func (s *rawSocket) recvMatch(t *testing.T, within time.Duration, what string, match func([]byte) bool) []byte {
	t.Helper()
	deadline := time.Now().Add(within)
	buf := make([]byte, 65536)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("after %v: no frame on the AF_PACKET peer: %s", within, what)
		}
		pfd := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, int(left/time.Millisecond)+1); err != nil && err != unix.EINTR {
			t.Fatalf("poll: %v", err)
		}
		n, _, err := unix.Recvfrom(s.fd, buf, unix.MSG_DONTWAIT)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("recvfrom: %v", err)
		}
		if match(buf[:n]) {
			return append([]byte(nil), buf[:n]...)
		}
	}
}

// readMatch calls ReadBatch until match accepts a frame and returns a copy,
// failing after within (it then closes the port to stop the reader).
func readMatch(t *testing.T, p *tap.Port, within time.Duration, what string, match func([]byte) bool) []byte {
	t.Helper()
	type result struct {
		f   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		frames := make([][]byte, p.BatchSize())
		for {
			n, err := p.ReadBatch(platform.Batch{Frames: frames})
			if err != nil {
				done <- result{err: err}
				return
			}
			for _, f := range frames[:n] {
				if match(f) {
					done <- result{f: append([]byte(nil), f...)}
					return
				}
			}
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("ReadBatch while waiting for %s: %v", what, r.err)
		}
		return r.f
	case <-time.After(within):
		p.Close()
		<-done
		t.Fatalf("after %v: ReadBatch did not return %s", within, what)
		return nil
	}
}

// testFrame is a frame of testType from src to dst carrying marker and
// padded to size bytes.
func testFrame(dst, src net.HardwareAddr, marker byte, size int) []byte {
	f := make([]byte, size)
	copy(f[0:6], dst)
	copy(f[6:12], src)
	binary.BigEndian.PutUint16(f[12:14], testType)
	for i := 14; i < size; i++ {
		f[i] = marker
	}
	return f
}

func isTestFrame(marker byte) func([]byte) bool {
	return func(f []byte) bool {
		return len(f) > 14 && binary.BigEndian.Uint16(f[12:14]) == testType && f[14] == marker
	}
}

var peerMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x99}

func TestIntegrationCreateSetsMACMTUAndUp(t *testing.T) {
	mac := net.HardwareAddr{0x02, 0x5a, 0, 0, 0, 0x01}
	ns, p := newTap(t, tap.Options{MAC: mac, MTU: 1400, Up: true, QueueLen: 2345})
	out := ns.Run("ip", "-o", "link", "show", p.Name())
	for _, want := range []string{"mtu 1400", "link/ether " + mac.String(), "<BROADCAST,MULTICAST,UP,LOWER_UP>", "qlen 2345"} {
		if !strings.Contains(out, want) {
			t.Errorf("ip link show %s: want %q in:\n%s", p.Name(), want, out)
		}
	}
	if p.HardwareAddr().String() != mac.String() || p.MTU() != 1400 || p.Link() != platform.LinkUp {
		t.Errorf("port reports MAC %s MTU %d link %v, want %s 1400 up", p.HardwareAddr(), p.MTU(), p.Link(), mac)
	}
	if p.Index() <= 0 || p.BatchSize() != platform.DefaultBatchSize || p.Headroom() != tap.Headroom {
		t.Errorf("Index %d BatchSize %d Headroom %d: want >0, %d, %d", p.Index(), p.BatchSize(), p.Headroom(), platform.DefaultBatchSize, tap.Headroom)
	}
	if !strings.Contains(ns.Run("ip", "-d", "link", "show", p.Name()), "tun type tap") {
		t.Errorf("%s is not a tap", p.Name())
	}
}

func TestIntegrationSetInterfaceMTU(t *testing.T) {
	ns, p := newTap(t, tap.Options{MTU: 1500, Up: true})
	var err error
	ns.Do(func() { err = tap.SetInterfaceMTU(p.Name(), 1400) })
	if err != nil {
		t.Fatalf("SetInterfaceMTU(%s, 1400): %v", p.Name(), err)
	}
	if out := ns.Run("ip", "-o", "link", "show", p.Name()); !strings.Contains(out, "mtu 1400") {
		t.Errorf("ip link show %s after SetInterfaceMTU 1400:\n%s", p.Name(), out)
	}
	if p.MTU() != 1500 {
		t.Errorf("port MTU = %d after SetInterfaceMTU, want 1500 until SetMTU", p.MTU())
	}
	ns.Do(func() { err = tap.SetInterfaceMTU("swctl-none0", 1400) })
	if err == nil || !strings.HasPrefix(err.Error(), "swctl-none0: ") {
		t.Errorf("SetInterfaceMTU of a missing interface = %v, want an error naming it", err)
	}
}

// A TAP with offloads keeps the host's super-frames within
// SuperFrameWire on the wire: its gso_max_segs follows its MTU, at
// Create and at SetInterfaceMTU.
func TestIntegrationOffloadTapBoundsSuperFrames(t *testing.T) {
	ns, p := newTap(t, tap.Options{MTU: 1500, Up: true, Offload: true})
	wantSegs := func(mtu int) {
		t.Helper()
		want := fmt.Sprintf("gso_max_segs %d ", tap.SuperFrameSegments(mtu))
		if out := ns.Run("ip", "-d", "link", "show", p.Name()); !strings.Contains(out, want) {
			t.Errorf("MTU %d: want %q in:\n%s", mtu, want, out)
		}
	}
	wantSegs(1500)
	var err error
	ns.Do(func() { err = tap.SetInterfaceMTU(p.Name(), 9000) })
	if err != nil {
		t.Fatalf("SetInterfaceMTU(%s, 9000): %v", p.Name(), err)
	}
	wantSegs(9000)
}

func TestIntegrationCreateDefaults(t *testing.T) {
	ns, p := newTap(t, tap.Options{BatchSize: 7})
	out := ns.Run("ip", "-o", "link", "show", p.Name())
	if !strings.Contains(out, "mtu 1500") || strings.Contains(out, ",UP") || !strings.Contains(out, fmt.Sprintf("qlen %d", tap.DefaultQueueLen)) {
		t.Errorf("ip link show %s: want mtu 1500, admin down and qlen %d, got:\n%s", p.Name(), tap.DefaultQueueLen, out)
	}
	if len(p.HardwareAddr()) != 6 || p.MTU() != 1500 || p.Link() != platform.LinkDown || p.BatchSize() != 7 {
		t.Errorf("got MAC %s MTU %d link %v batch %d, want a MAC, 1500, down, 7", p.HardwareAddr(), p.MTU(), p.Link(), p.BatchSize())
	}
}

func TestIntegrationCreateErrors(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "tape")
	taken := netnstest.UniqueName("tv")
	ns.Run("ip", "link", "add", taken, "type", "veth", "peer", "name", netnstest.UniqueName("tv"))
	first := netnstest.UniqueName("tp")
	var p *tap.Port
	ns.Do(func() {
		var err error
		p, err = tap.Create(first, tap.Options{})
		if err != nil {
			t.Fatalf("Create(%q): %v", first, err)
		}
	})
	defer p.Close()
	cases := []struct {
		name, tap string
		opts      tap.Options
		want      []string
	}{
		{"veth has the name", taken, tap.Options{}, []string{"tap " + taken, "TUNSETIFF"}},
		{"tap has the name", first, tap.Options{}, []string{"tap " + first, "TUNSETIFF", "busy"}},
		{"name too long", "sixteen-bytes-xx", tap.Options{}, []string{"sixteen-bytes-xx", "longer than 15"}},
		{"bad MAC", netnstest.UniqueName("tp"), tap.Options{MAC: net.HardwareAddr{1, 2}}, []string{"MAC", "not 6 bytes"}},
		{"too many queues", netnstest.UniqueName("tp"), tap.Options{Queues: tap.MaxQueues + 1}, []string{"257 queues: want 1 to 256"}},
		{"a queue of a single-queue TAP", first, tap.Options{Queues: 2}, []string{"tap " + first, "TUNSETIFF"}},
		{"multicast MAC", netnstest.UniqueName("tp"), tap.Options{MAC: net.HardwareAddr{1, 0, 0, 0, 0, 1}}, []string{"set MAC 01:00:00:00:00:01"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			ns.Do(func() {
				var q *tap.Port
				if q, err = tap.Create(c.tap, c.opts); err == nil {
					q.Close()
				}
			})
			if err == nil {
				t.Fatalf("Create(%q): no error", c.tap)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Create(%q): error %q does not contain %q", c.tap, err, w)
				}
			}
		})
	}
	// A Create that failed after TUNSETIFF leaves no interface behind.
	gone := cases[len(cases)-1].tap
	netnstest.Eventually(t, 5*time.Second, "failed Create left "+gone+" behind", func() bool {
		_, err := ns.Try("ip", "link", "show", gone)
		return err != nil
	})
}

func TestIntegrationPeerFramesBothWays(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true, MAC: net.HardwareAddr{0x02, 0x5a, 0, 0, 0, 0x02}})
	raw := openRaw(t, ns, p.Index())

	// Peer -> tap fd: what the host sends on the interface, ReadBatch reads.
	sent := testFrame(p.HardwareAddr(), peerMAC, 0xa1, 100)
	raw.send(t, sent)
	got := readMatch(t, p, 5*time.Second, "the frame sent on the interface", isTestFrame(0xa1))
	if !bytes.Equal(got, sent) {
		t.Fatalf("ReadBatch returned\n%x\nwant\n%x", got, sent)
	}

	// Tap fd -> peer: what WriteBatch writes, the host receives.
	frames := [][]byte{
		testFrame(peerMAC, p.HardwareAddr(), 0xb1, 60),
		testFrame(peerMAC, p.HardwareAddr(), 0xb2, 1514),
	}
	n, err := p.WriteBatch(platform.Batch{Frames: frames})
	if n != 2 || err != nil {
		t.Fatalf("WriteBatch: %d, %v; want 2, nil", n, err)
	}
	for i, f := range frames {
		got := raw.recvMatch(t, 5*time.Second, "frame written to the tap", isTestFrame(f[14]))
		if !bytes.Equal(got, f) {
			t.Errorf("frame %d: peer received %d bytes, want %d identical bytes", i, len(got), len(f))
		}
	}
	c := p.Counters()
	if c.RxPackets < 1 || c.TxPackets != 2 || c.TxBytes != 60+1514 || c.TxDropped != 0 || c.Errors != 0 {
		t.Errorf("counters %+v: want RxPackets>=1, TxPackets 2, TxBytes 1574, no drops or errors", c)
	}
}

func TestIntegrationReadBatchReturnsManyFrames(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true, BatchSize: 8})
	raw := openRaw(t, ns, p.Index())
	const total = 20
	for i := 0; i < total; i++ {
		raw.send(t, testFrame(p.HardwareAddr(), peerMAC, byte(i), 64))
	}
	seen := make(map[byte]bool)
	frames := make([][]byte, 16)
	maxBatch := 0
	deadline := time.Now().Add(5 * time.Second)
	done := make(chan error, 1)
	go func() {
		for len(seen) < total {
			n, err := p.ReadBatch(platform.Batch{Frames: frames})
			if err != nil {
				done <- err
				return
			}
			maxBatch = max(maxBatch, n)
			for _, f := range frames[:n] {
				if binary.BigEndian.Uint16(f[12:14]) == testType {
					seen[f[14]] = true
				}
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Until(deadline)):
		p.Close()
		<-done
		t.Fatalf("read %d of %d frames", len(seen), total)
	}
	if maxBatch > 8 || maxBatch < 2 {
		t.Errorf("largest batch %d: want 2..8 (BatchSize 8, %d frames queued)", maxBatch, total)
	}
}

func TestIntegrationHostStackAnswersARP(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true, MAC: net.HardwareAddr{0x02, 0x5a, 0, 0, 0, 0x03}})
	ns.Run("ip", "addr", "add", "10.77.0.1/24", "dev", p.Name())
	req := make([]byte, 42)
	copy(req[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(req[6:12], peerMAC)
	binary.BigEndian.PutUint16(req[12:], 0x0806)
	binary.BigEndian.PutUint16(req[14:], 1)      // Ethernet
	binary.BigEndian.PutUint16(req[16:], 0x0800) // IPv4
	req[18], req[19] = 6, 4
	binary.BigEndian.PutUint16(req[20:], 1) // request
	copy(req[22:28], peerMAC)
	copy(req[28:32], []byte{10, 77, 0, 2})
	copy(req[38:42], []byte{10, 77, 0, 1})
	if n, err := p.WriteBatch(platform.Batch{Frames: [][]byte{req}}); n != 1 || err != nil {
		t.Fatalf("WriteBatch(ARP request): %d, %v", n, err)
	}
	reply := readMatch(t, p, 5*time.Second, "an ARP reply for 10.77.0.1", func(f []byte) bool {
		return len(f) >= 42 && binary.BigEndian.Uint16(f[12:]) == 0x0806 && binary.BigEndian.Uint16(f[20:]) == 2
	})
	if !bytes.Equal(reply[0:6], peerMAC) || !bytes.Equal(reply[22:28], p.HardwareAddr()) ||
		!bytes.Equal(reply[28:32], []byte{10, 77, 0, 1}) {
		t.Errorf("ARP reply %x: want to %s, sender %s is-at 10.77.0.1", reply, peerMAC, p.HardwareAddr())
	}
}

func TestIntegrationWriteBatchDrops(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true, MTU: 1400})
	raw := openRaw(t, ns, p.Index())
	tagged := testFrame(peerMAC, p.HardwareAddr(), 0, 1400+18)
	binary.BigEndian.PutUint16(tagged[12:], 0x8100)
	binary.BigEndian.PutUint16(tagged[14:], 5)
	binary.BigEndian.PutUint16(tagged[16:], testType)
	tagged[18] = 0xc3
	cases := []struct {
		name  string
		frame []byte
		sent  bool
	}{
		{"runt", make([]byte, 13), false},
		{"payload at MTU", testFrame(peerMAC, p.HardwareAddr(), 0xc1, 1400+14), true},
		{"payload over MTU", testFrame(peerMAC, p.HardwareAddr(), 0xc2, 1400+15), false},
		{"tagged payload at MTU", tagged, true},
		{"tagged payload over MTU", append(append([]byte(nil), tagged...), 0), false},
	}
	for _, c := range cases {
		before := p.Counters()
		n, err := p.WriteBatch(platform.Batch{Frames: [][]byte{c.frame}})
		if err != nil {
			t.Fatalf("%s: WriteBatch: %v", c.name, err)
		}
		after := p.Counters()
		if got := n == 1; got != c.sent {
			t.Errorf("%s (%d bytes): sent %v, want %v", c.name, len(c.frame), got, c.sent)
		}
		wantDrop := uint64(1)
		if c.sent {
			wantDrop = 0
		}
		if d := after.TxDropped - before.TxDropped; d != wantDrop {
			t.Errorf("%s: TxDropped grew by %d, want %d", c.name, d, wantDrop)
		}
	}
	// The frames at the MTU reached the host.
	raw.recvMatch(t, 5*time.Second, "the frame at the MTU", isTestFrame(0xc1))
	// SetMTU follows a change the host made.
	p.SetMTU(1500)
	if n, _ := p.WriteBatch(platform.Batch{Frames: [][]byte{testFrame(peerMAC, p.HardwareAddr(), 0xc4, 1514)}}); n != 1 || p.MTU() != 1500 {
		t.Errorf("after SetMTU(1500): MTU %d, a 1514-byte frame sent %d; want 1500, 1", p.MTU(), n)
	}
}

func TestIntegrationWriteWhileAdminDownDrops(t *testing.T) {
	_, p := newTap(t, tap.Options{})
	n, err := p.WriteBatch(platform.Batch{Frames: [][]byte{testFrame(peerMAC, p.HardwareAddr(), 1, 60)}})
	if err != nil || n != 0 {
		t.Fatalf("WriteBatch on an admin-down tap: %d, %v; want 0 sent, no error", n, err)
	}
	if c := p.Counters(); c.TxDropped != 1 || c.Errors != 0 {
		t.Errorf("counters %+v: want TxDropped 1, no errors", c)
	}
}

func TestIntegrationSetCarrier(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true})
	lowerUp := func() bool {
		return strings.Contains(ns.Run("ip", "-o", "link", "show", p.Name()), "LOWER_UP")
	}
	if err := p.SetCarrier(false); err != nil {
		t.Fatal(err)
	}
	netnstest.Eventually(t, 5*time.Second, "carrier off: ip link still says LOWER_UP", func() bool { return !lowerUp() })
	if !strings.Contains(ns.Run("ip", "-o", "link", "show", p.Name()), "NO-CARRIER") {
		t.Errorf("carrier off: ip link does not say NO-CARRIER")
	}
	if err := p.SetCarrier(true); err != nil {
		t.Fatal(err)
	}
	netnstest.Eventually(t, 5*time.Second, "carrier on: ip link does not say LOWER_UP", lowerUp)
	if p.Link() != platform.LinkUp {
		t.Errorf("SetCarrier changed Link to %v", p.Link())
	}
	p.SetLink(platform.LinkDown)
	if p.Link() != platform.LinkDown {
		t.Errorf("after SetLink(down), Link is %v", p.Link())
	}
}

func TestIntegrationCloseWakesReaderAndRemovesInterface(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true})
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		frames := make([][]byte, 4)
		close(started)
		_, err := p.ReadBatch(platform.Batch{Frames: frames})
		done <- err
	}()
	<-started
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // concurrent Closes are fine
		wg.Add(1)
		go func() { defer wg.Done(); p.Close() }()
	}
	wg.Wait()
	select {
	case err := <-done:
		if !errors.Is(err, platform.ErrClosed) {
			t.Fatalf("blocked ReadBatch returned %v after Close, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadBatch still blocked 5s after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := p.ReadBatch(platform.Batch{Frames: make([][]byte, 1)}); !errors.Is(err, platform.ErrClosed) {
		t.Errorf("ReadBatch after Close: %v, want ErrClosed", err)
	}
	if _, err := p.WriteBatch(platform.Batch{Frames: [][]byte{make([]byte, 60)}}); !errors.Is(err, platform.ErrClosed) {
		t.Errorf("WriteBatch after Close: %v, want ErrClosed", err)
	}
	if err := p.SetCarrier(true); !errors.Is(err, platform.ErrClosed) {
		t.Errorf("SetCarrier after Close: %v, want ErrClosed", err)
	}
	netnstest.Eventually(t, 5*time.Second, "interface "+p.Name()+" still exists after Close", func() bool {
		_, err := ns.Try("ip", "link", "show", p.Name())
		return err != nil
	})
}

func TestIntegrationConcurrentWriters(t *testing.T) {
	ns, p := newTap(t, tap.Options{Up: true})
	raw := openRaw(t, ns, p.Index())
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := [][]byte{testFrame(peerMAC, p.HardwareAddr(), byte(w), 80)}
			for i := 0; i < each; i++ {
				p.WriteBatch(platform.Batch{Frames: f})
			}
		}()
	}
	wg.Wait()
	c := p.Counters()
	if c.TxPackets+c.TxDropped != writers*each || c.Errors != 0 {
		t.Fatalf("counters %+v: want TxPackets+TxDropped = %d, no errors", c, writers*each)
	}
	got := 0
	for got < int(c.TxPackets) {
		raw.recvMatch(t, 5*time.Second, "frames from concurrent writers", func(f []byte) bool {
			return len(f) == 80 && binary.BigEndian.Uint16(f[12:14]) == testType
		})
		got++
	}
}

// TestIntegrationNoAllocsInSteadyState checks that ReadBatch and
// WriteBatch allocate nothing, on one queue and on several (where
// WriteBatch hashes each frame to a queue and ReadBatch takes them in
// turn).
func TestIntegrationNoAllocsInSteadyState(t *testing.T) {
	for _, queues := range []int{1, 2} {
		for _, offload := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d queues, offload %v", queues, offload), func(t *testing.T) { testNoAllocs(t, queues, offload) })
		}
	}
}

func testNoAllocs(t *testing.T, queues int, offload bool) {
	ns, p := newTap(t, tap.Options{Up: true, Queues: queues, Offload: offload})
	raw := openRaw(t, ns, p.Index())
	in := testFrame(p.HardwareAddr(), peerMAC, 0xd1, 200)
	out := [][]byte{testFrame(peerMAC, p.HardwareAddr(), 0xd2, 200), testFrame(peerMAC, p.HardwareAddr(), 0xd3, 60)}
	frames := make([][]byte, p.BatchSize())
	// Warm up: first calls may grow runtime structures.
	raw.send(t, in)
	if _, err := p.ReadBatch(platform.Batch{Frames: frames}); err != nil {
		t.Fatal(err)
	}
	var failed error
	reads := testing.AllocsPerRun(200, func() {
		if _, err := unix.Write(raw.fd, in); err != nil {
			failed = err
			return
		}
		if _, err := p.ReadBatch(platform.Batch{Frames: frames}); err != nil {
			failed = err
		}
	})
	// With offloads, WriteBatch merges TCP segments (frame.GRO).
	segs := [][]byte{tcpSegment(t, peerMAC, p.HardwareAddr(), 0), tcpSegment(t, peerMAC, p.HardwareAddr(), 1)}
	out = append(out, segs...)
	p.WriteBatch(platform.Batch{Frames: out})
	writes := testing.AllocsPerRun(200, func() {
		if _, err := p.WriteBatch(platform.Batch{Frames: out}); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if reads != 0 || writes != 0 {
		t.Errorf("allocations per call: ReadBatch %v, WriteBatch %v; want 0", reads, writes)
	}
}

// tcpSegment returns segment i of 1,000 bytes of a TCP stream, as a
// sending stack cuts it.
func tcpSegment(t testing.TB, dst, src net.HardwareAddr, i int) []byte {
	t.Helper()
	return segments(t)(platformtest.TCPFrame(t, dst, src, 0, 2000, 1000))[i]
}

// segments returns a function that cuts a super-frame as a sending
// stack does (frame.Segment).
func segments(t testing.TB) func(super []byte, o platform.Offload) [][]byte {
	return func(super []byte, o platform.Offload) [][]byte {
		t.Helper()
		n, err := frame.SegmentedLen(super, o)
		if err != nil {
			t.Fatal(err)
		}
		segs, err := frame.Segment(super, o, make([]byte, n), nil)
		if err != nil {
			t.Fatal(err)
		}
		return segs
	}
}

// BenchmarkWriteBatchTCP is the cost per segment of writing batches of 64
// TCP segments of 8 interleaved flows (1,448 bytes of payload each) to a
// TAP with offloads, the host stack taking them: in sequence, which
// WriteBatch merges into 8 super-frames, and with every segment out of
// sequence, which it writes one by one.
func BenchmarkWriteBatchTCP(b *testing.B) {
	_, p := newTap(b, tap.Options{Up: true, Offload: true})
	src := net.HardwareAddr{2, 0, 0, 0, 0x77, 1}
	var flows [8][][]byte
	for i := range flows {
		super, o := platformtest.TCPFrame(b, p.HardwareAddr(), src, 0, 8*1448, 1448)
		super[35] = byte(i) // the source port; Segment sets the checksums
		flows[i] = segments(b)(super, o)
	}
	var inSeq, gaps [][]byte
	for j := range 8 {
		for i := range flows {
			inSeq = append(inSeq, flows[i][j])
			gaps = append(gaps, flows[i][7-j])
		}
	}
	for _, c := range []struct {
		name   string
		frames [][]byte
	}{{"in-sequence", inSeq}, {"out-of-sequence", gaps}} {
		b.Run(c.name, func(b *testing.B) {
			batch := platform.Batch{Frames: c.frames, Offs: make([]platform.Offload, len(c.frames))}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.WriteBatch(batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.frames)), "ns/segment")
		})
	}
}
