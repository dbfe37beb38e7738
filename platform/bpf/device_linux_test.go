package bpf

import (
	"bytes"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/platform"
	"golang.org/x/sys/unix"
)

// The device tests run the I/O half of the BSD Port on Linux over a
// SOCK_SEQPACKET socketpair: the test writes bpf buffers (one message
// each) where the kernel would, and reads the frames WriteBatch sends (one
// message each).

// testDevice is a Port whose device is one end of a socketpair, and the
// other end.
type testDevice struct {
	*Port
	// peer is the socketpair's other end.
	peer int
	// once closes the device once.
	once sync.Once
}

// newTestDevice makes a Port reading buffers of bufSize bytes laid out
// as layout, with an MTU of 1500 and its link up.
func newTestDevice(t *testing.T, layout hdrLayout, bufSize, batch int) *testDevice {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	p := &Port{promiscFD: -1, device: device{log: slog.New(slog.DiscardHandler), fd: -1, wake: [2]int{-1, -1}}}
	p.Init("test0", nil, 1500, batch, platform.LinkUp)
	if err := p.init(fds[0], layout, bufSize); err != nil {
		p.closeDevice()
		unix.Close(fds[1])
		t.Fatalf("init: %v", err)
	}
	td := &testDevice{Port: p, peer: fds[1]}
	t.Cleanup(func() {
		td.close(t)
		unix.Close(td.peer)
	})
	return td
}

// close closes the device as Port.Close does on the BSDs, once.
func (td *testDevice) close(t *testing.T) {
	td.once.Do(func() {
		err := td.shutdown()
		defer td.unlock()
		if err = errors.Join(err, td.closeDevice()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// send writes one bpf buffer to the device.
func (td *testDevice) send(t *testing.T, buf []byte) {
	t.Helper()
	if _, err := unix.Write(td.peer, buf); err != nil {
		t.Fatalf("write buffer: %v", err)
	}
}

// received reads every message the device sent so far.
func (td *testDevice) received(t *testing.T) [][]byte {
	t.Helper()
	var got [][]byte
	b := make([]byte, 65536)
	for {
		n, err := unix.Read(td.peer, b)
		if err == unix.EAGAIN {
			return got
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		got = append(got, bytes.Clone(b[:n]))
	}
}

// ethFrame returns an n-byte frame, untagged or with one 802.1Q tag.
func ethFrame(n int, tagged bool, seed byte) []byte {
	f := testFrame(n, seed)
	f[12], f[13] = 0x88, 0xb5
	if tagged {
		f[12], f[13], f[16], f[17] = 0x81, 0x00, 0x88, 0xb5
	}
	return f
}

func TestDeviceReadBatch(t *testing.T) {
	l := freebsd64Layout
	td := newTestDevice(t, l, 1<<16, 64)
	var want [][]byte
	var recs []rec
	for i := range 5 {
		f := testFrame(60+i, byte(i))
		want = append(want, f)
		recs = append(recs, rec{hdrlen: 26, frame: f})
	}
	recs = append(recs[:2], append([]rec{{hdrlen: 26, frame: testFrame(100, 7), datalen: 1514}}, recs[2:]...)...)
	td.send(t, build(l, recs...))
	td.send(t, build(l, rec{hdrlen: 26, frame: testFrame(70, 9)}))
	want = append(want, testFrame(70, 9))

	frames := make([][]byte, 2)
	var got [][]byte
	var sizes []int
	for len(got) < len(want) {
		n, err := td.ReadBatch(platform.Batch{Frames: frames})
		if err != nil {
			t.Fatalf("ReadBatch after %d frames: %v", len(got), err)
		}
		sizes = append(sizes, n)
		for _, f := range frames[:n] {
			got = append(got, bytes.Clone(f))
		}
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("frame %d = %x, want %x", i, got[i], want[i])
		}
	}
	// 2 + 2 from the first buffer (the snapped record skipped), its last
	// one alone, then the second buffer's.
	if want := []int{2, 2, 1, 1}; !equalInts(sizes, want) {
		t.Errorf("batches of %v frames, want %v: leftovers wait for the next call, a read only when drained", sizes, want)
	}
	c := td.Counters()
	var bytesWant uint64
	for _, f := range want {
		bytesWant += uint64(len(f))
	}
	if c.RxPackets != uint64(len(want)) || c.RxBytes != bytesWant || c.RxDropped != 1 {
		t.Errorf("counters rx %d packets %d bytes %d dropped, want %d, %d, 1", c.RxPackets, c.RxBytes, c.RxDropped, len(want), bytesWant)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDeviceReadBlocksUntilData(t *testing.T) {
	l := openbsdLayout
	td := newTestDevice(t, l, 1<<16, 64)
	got := make(chan []byte, 1)
	go func() {
		frames := make([][]byte, 64)
		n, err := td.ReadBatch(platform.Batch{Frames: frames})
		if err != nil || n != 1 {
			t.Errorf("ReadBatch = %d, %v; want 1, nil", n, err)
			got <- nil
			return
		}
		got <- bytes.Clone(frames[0])
	}()
	select {
	case <-got:
		t.Fatal("ReadBatch returned before anything was sent")
	case <-time.After(50 * time.Millisecond):
	}
	f := testFrame(64, 3)
	td.send(t, build(l, rec{hdrlen: 26, frame: f}))
	select {
	case g := <-got:
		if !bytes.Equal(g, f) {
			t.Errorf("ReadBatch returned %x, want %x", g, f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadBatch still blocked 5s after a buffer arrived")
	}
}

// TestDeviceReadReady checks that ReadReady returns at once with no
// frame while nothing was sent, then the frames of a buffer that came.
func TestDeviceReadReady(t *testing.T) {
	l := openbsdLayout
	td := newTestDevice(t, l, 1<<16, 64)
	frames := make([][]byte, 64)
	if n, err := td.ReadReady(platform.Batch{Frames: frames}); n != 0 || err != nil {
		t.Fatalf("ReadReady with nothing sent = %d, %v; want 0, nil", n, err)
	}
	f := testFrame(64, 3)
	td.send(t, build(l, rec{hdrlen: 26, frame: f}, rec{hdrlen: 26, frame: f}))
	if n, err := td.ReadReady(platform.Batch{Frames: frames}); n != 2 || err != nil || !bytes.Equal(frames[0], f) {
		t.Fatalf("ReadReady after a buffer of 2 = %d, %v; want both frames", n, err)
	}
	if n, err := td.ReadReady(platform.Batch{Frames: frames}); n != 0 || err != nil {
		t.Fatalf("ReadReady once drained = %d, %v; want 0, nil", n, err)
	}
}

func TestDeviceCloseWakesReader(t *testing.T) {
	td := newTestDevice(t, openbsdLayout, 1<<16, 64)
	result := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		_, err := td.ReadBatch(platform.Batch{Frames: make([][]byte, 64)})
		result <- err
	}()
	<-started
	time.Sleep(20 * time.Millisecond)
	td.close(t)
	select {
	case err := <-result:
		if !errors.Is(err, platform.ErrClosed) {
			t.Fatalf("blocked ReadBatch returned %v after Close, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadBatch still blocked 5s after Close")
	}
	if n, err := td.ReadBatch(platform.Batch{Frames: make([][]byte, 1)}); n != 0 || !errors.Is(err, platform.ErrClosed) {
		t.Errorf("ReadBatch after Close = %d, %v; want 0, ErrClosed", n, err)
	}
	if n, err := td.WriteBatch(platform.Batch{Frames: [][]byte{ethFrame(60, false, 1)}}); n != 0 || !errors.Is(err, platform.ErrClosed) {
		t.Errorf("WriteBatch after Close = %d, %v; want 0, ErrClosed", n, err)
	}
}

func TestDeviceWriteBatch(t *testing.T) {
	td := newTestDevice(t, openbsdLayout, 1<<16, 64)
	cases := []struct {
		name string
		f    []byte
		sent bool
	}{
		{"minimum frame", ethFrame(60, false, 1), true},
		{"untagged payload == MTU", ethFrame(14+1500, false, 2), true},
		{"untagged payload == MTU+1", ethFrame(14+1501, false, 3), false},
		{"802.1Q payload == MTU-4 (frame less header == MTU)", ethFrame(14+1500, true, 4), true},
		{"802.1Q payload == MTU (no tag allowance on the BSDs)", ethFrame(18+1500, true, 5), false},
		{"shorter than an Ethernet header", testFrame(13, 6), false},
	}
	var batch, want [][]byte
	for _, c := range cases {
		batch = append(batch, c.f)
		if c.sent {
			want = append(want, c.f)
		}
	}
	n, err := td.WriteBatch(platform.Batch{Frames: batch})
	if err != nil || n != len(want) {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(want))
	}
	got := td.received(t)
	if len(got) != len(want) {
		t.Fatalf("peer got %d frames, want %d (one write per frame)", len(got), len(want))
	}
	var wantBytes uint64
	for i := range want {
		wantBytes += uint64(len(want[i]))
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("frame %d: peer got %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
	c := td.Counters()
	if c.TxPackets != uint64(len(want)) || c.TxBytes != wantBytes || c.TxDropped != uint64(len(cases)-len(want)) {
		t.Errorf("counters tx %d packets %d bytes %d dropped, want %d, %d, %d", c.TxPackets, c.TxBytes, c.TxDropped, len(want), wantBytes, len(cases)-len(want))
	}

	td.SetLink(platform.LinkDown)
	if n, err := td.WriteBatch(platform.Batch{Frames: batch[:2]}); n != 0 || err != nil {
		t.Errorf("WriteBatch with the link down = %d, %v; want 0, nil", n, err)
	}
	if got := td.Counters().TxDropped - c.TxDropped; got != 2 {
		t.Errorf("link down: TxDropped moved by %d, want 2", got)
	}
	if got := td.received(t); len(got) != 0 {
		t.Errorf("link down: peer got %d frames, want 0", len(got))
	}
}

func TestDeviceCorruptBuffer(t *testing.T) {
	l := freebsd64Layout
	td := newTestDevice(t, l, 1<<16, 64)
	good := testFrame(60, 1)
	td.send(t, build(l, rec{hdrlen: 26, frame: good}, rec{hdrlen: 4, frame: testFrame(60, 2)}))
	td.send(t, build(l, rec{hdrlen: 26, frame: testFrame(61, 3)}))
	frames := make([][]byte, 64)
	n, err := td.ReadBatch(platform.Batch{Frames: frames})
	if err != nil || n != 1 || !bytes.Equal(frames[0], good) {
		t.Fatalf("ReadBatch = %d, %v; want the 1 good frame before the corrupt record", n, err)
	}
	n, err = td.ReadBatch(platform.Batch{Frames: frames})
	if err != nil || n != 1 || len(frames[0]) != 61 {
		t.Fatalf("next ReadBatch = %d, %v; want the next buffer's frame", n, err)
	}
	if c := td.Counters(); c.Errors != 1 {
		t.Errorf("Errors = %d after a corrupt buffer, want 1", c.Errors)
	}
}

func TestDeviceConcurrentWriters(t *testing.T) {
	td := newTestDevice(t, openbsdLayout, 1<<16, 64)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if n, err := td.WriteBatch(platform.Batch{Frames: [][]byte{ethFrame(60+w, false, byte(i))}}); n != 1 || err != nil {
					t.Errorf("WriteBatch = %d, %v", n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := len(td.received(t)); got != 100 {
		t.Errorf("peer got %d frames, want 100", got)
	}
}
