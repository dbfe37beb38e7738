package platformtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// The cases of the contract suite Run runs, one behaviour each.

func testProperties(t *testing.T, open Open) {
	dut, _ := open(t)
	if dut.Name() == "" || len(dut.Name()) > 15 {
		t.Errorf("Name() = %q, want 1 to 15 bytes", dut.Name())
	}
	if len(dut.HardwareAddr()) != 6 {
		t.Errorf("HardwareAddr() = %v, want 6 bytes", dut.HardwareAddr())
	}
	if dut.MTU() < 68 {
		t.Errorf("MTU() = %d, want at least 68", dut.MTU())
	}
	if dut.BatchSize() <= 0 {
		t.Errorf("BatchSize() = %d, want > 0", dut.BatchSize())
	}
	if dut.Headroom() < 0 {
		t.Errorf("Headroom() = %d, want >= 0", dut.Headroom())
	}
	if got := dut.Link(); got != platform.LinkUp {
		t.Errorf("Link() = %v on an up link, want up", got)
	}
}

func testDeliver(t *testing.T, open Open) {
	cases := []struct {
		name  string
		sizes func(batch, max int) []int
	}{
		{"60", func(batch, _ int) []int { return repeat(batch, 60) }},
		{"1514", func(batch, max int) []int { return repeat(batch, max) }},
		{"mixed", func(batch, max int) []int {
			var s []int
			for i := 0; i < batch; i++ {
				s = append(s, []int{60, max, 64, 1000, 128, max - 1, 61, 590}[i%8])
			}
			return s
		}},
		{"moreThanOneBatch", func(batch, max int) []int {
			s := repeat(3*batch+5, 60)
			for i := range s {
				if i%3 == 1 {
					s[i] = max
				}
			}
			return s
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dut, peer := open(t)
			sizes := c.sizes(min(dut.BatchSize(), peer.BatchSize()), min(maxFrame(dut), maxFrame(peer)))
			want := make([][]byte, len(sizes))
			for i, size := range sizes {
				want[i] = Frame(mac(dut), mac(peer), uint32(i), size)
			}
			r := startReader(dut, len(want))
			writeAll(t, peer, want)
			r.wait(t, "peer to dut")
			sameFrames(t, "peer to dut", r.got, want)
		})
	}
}

func repeat(n, size int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

// readSuite calls ReadBatch on p until it returns at least one suite frame
// and returns that batch's frames (views, not copies). A watchdog closes
// the port after Timeout so a lost frame fails instead of hanging.
func readSuite(t *testing.T, p platform.Port, frames [][]byte) [][]byte {
	t.Helper()
	watchdog := time.AfterFunc(Timeout, func() { _ = p.Close() })
	defer watchdog.Stop()
	for {
		n, err := p.ReadBatch(platform.Batch{Frames: frames})
		if err != nil {
			t.Fatalf("%s: ReadBatch: %v (a frame not received within %v?)", p.Name(), err, Timeout)
		}
		var out [][]byte
		for _, f := range frames[:n] {
			if _, ok := IsSuiteFrame(f); ok {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
}

func testFramesValid(t *testing.T, open Open) {
	dut, peer := open(t)
	// First batch: read it and keep the views.
	var first [][]byte
	for i := 0; i < 4; i++ {
		first = append(first, Frame(mac(dut), mac(peer), uint32(i), 200))
	}
	writeAll(t, peer, first)
	frames := make([][]byte, dut.BatchSize())
	views := readSuite(t, dut, frames)
	kept := make([][]byte, len(views))
	for i, v := range views {
		kept[i] = bytes.Clone(v)
	}
	sameFrames(t, "first ReadBatch", kept, first[:len(kept)])
	// More traffic arrives while the views are held: they must not change.
	var second [][]byte
	for i := 0; i < 2*dut.BatchSize(); i++ {
		second = append(second, Frame(mac(dut), mac(peer), uint32(1000+i), 200))
	}
	writeAll(t, peer, second)
	sameFrames(t, "views held while more frames arrived", views, kept)
	// The next ReadBatch may reuse them; it must deliver what came next.
	next := readSuite(t, dut, frames)
	if seq, _ := IsSuiteFrame(next[0]); len(kept) == len(first) && seq != 1000 {
		t.Fatalf("next ReadBatch began with seq %d, want 1000", seq)
	}
}

func testWriteCopies(t *testing.T, open Open) {
	dut, peer := open(t)
	var frames, want [][]byte
	for i := 0; i < dut.BatchSize(); i++ {
		f := Frame(mac(peer), mac(dut), uint32(i), 60+i%200)
		frames = append(frames, f)
		want = append(want, bytes.Clone(f))
	}
	r := startReader(peer, len(want))
	n, err := dut.WriteBatch(platform.Batch{Frames: frames})
	if err != nil || n != len(frames) {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(frames))
	}
	// Scribble over everything the caller owns: the frames and the slice.
	for _, f := range frames {
		for j := range f {
			f[j] = 0xee
		}
	}
	for i := range frames {
		frames[i] = nil
	}
	r.wait(t, "dut to peer")
	sameFrames(t, "frames changed after WriteBatch returned", r.got, want)
}

func testConcurrentWriters(t *testing.T, open Open) {
	dut, peer := open(t)
	const writers, perWriter = 4, 48
	r := startReader(peer, writers*perWriter)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i += 8 {
				var batch [][]byte
				for j := i; j < i+8; j++ {
					batch = append(batch, Frame(mac(peer), mac(dut), uint32(w<<16|j), 60+j))
				}
				if n, err := dut.WriteBatch(platform.Batch{Frames: batch}); err != nil || n != len(batch) {
					errs <- fmt.Errorf("writer %d: WriteBatch = %d, %v; want %d, nil", w, n, err, len(batch))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r.wait(t, "concurrent writers to peer")
	next := make([]uint32, writers)
	for _, f := range r.got {
		seq, _ := IsSuiteFrame(f)
		w, j := seq>>16, seq&0xffff
		if int(w) >= writers || j != next[w] {
			t.Fatalf("writer %d: got frame %d, want %d (per-writer order must hold)", w, j, next[min(int(w), writers-1)])
		}
		next[w]++
	}
}

func testMTU(t *testing.T, open Open) {
	dut, peer := open(t)
	mtu := dut.MTU()
	d, s := mac(peer), mac(dut)
	cases := []struct {
		name string
		f    []byte
		sent bool
	}{
		{"untagged payload == MTU", Frame(d, s, 1, frame.HeaderLen+mtu), true},
		{"802.1Q payload == MTU", TaggedFrame(d, s, frame.TypeVLAN, 100, 2, frame.HeaderLen+tagLen+mtu), true},
		{"untagged payload == MTU+1", Frame(d, s, 3, frame.HeaderLen+mtu+1), false},
		{"802.1Q payload == MTU+1", TaggedFrame(d, s, frame.TypeVLAN, 100, 4, frame.HeaderLen+tagLen+mtu+1), false},
		{"untagged payload == MTU+4", Frame(d, s, 5, frame.HeaderLen+mtu+tagLen), false},
	}
	for _, c := range cases {
		before := dut.Counters()
		n, err := dut.WriteBatch(platform.Batch{Frames: [][]byte{c.f}})
		after := dut.Counters()
		if err != nil {
			t.Fatalf("%s: WriteBatch: %v", c.name, err)
		}
		wantN, wantDrop := 1, uint64(0)
		if !c.sent {
			wantN, wantDrop = 0, 1
		}
		if n != wantN {
			t.Errorf("%s (%d bytes): WriteBatch sent %d, want %d", c.name, len(c.f), n, wantN)
		}
		if got := after.TxDropped - before.TxDropped; got != wantDrop {
			t.Errorf("%s: TxDropped moved by %d, want %d", c.name, got, wantDrop)
		}
		if got := after.TxPackets - before.TxPackets; got != uint64(wantN) {
			t.Errorf("%s: TxPackets moved by %d, want %d", c.name, got, wantN)
		}
	}
	// The peer receives exactly the frames that were sent, and nothing of
	// the oversize ones. A final marker frame ends the wait.
	var want [][]byte
	for _, c := range cases {
		if c.sent {
			want = append(want, c.f)
		}
	}
	marker := Frame(d, s, 99, 60)
	want = append(want, marker)
	r := startReader(peer, len(want))
	writeAll(t, dut, [][]byte{marker})
	r.wait(t, "dut to peer")
	sameFrames(t, "frames the peer received", r.got, want)
}

func testCounters(t *testing.T, open Open) {
	dut, peer := open(t)
	// TX: dut sends frames of known sizes.
	var out [][]byte
	var outBytes uint64
	for i := 0; i < 10; i++ {
		f := Frame(mac(peer), mac(dut), uint32(i), 60+100*i)
		out = append(out, f)
		outBytes += uint64(len(f))
	}
	before := dut.Counters()
	r := startReader(peer, len(out))
	writeAll(t, dut, out)
	r.wait(t, "dut to peer")
	after := dut.Counters()
	if got := after.TxPackets - before.TxPackets; got != uint64(len(out)) {
		t.Errorf("TxPackets moved by %d, want %d", got, len(out))
	}
	if got := after.TxBytes - before.TxBytes; got != outBytes {
		t.Errorf("TxBytes moved by %d, want %d", got, outBytes)
	}
	if after.TxDropped != before.TxDropped {
		t.Errorf("TxDropped moved by %d, want 0", after.TxDropped-before.TxDropped)
	}
	// RX: dut's counters count every frame ReadBatch returned.
	var in [][]byte
	for i := 0; i < 7; i++ {
		in = append(in, Frame(mac(dut), mac(peer), uint32(i), 1400-150*i))
	}
	before = dut.Counters()
	rd := startReader(dut, len(in))
	writeAll(t, peer, in)
	rd.wait(t, "peer to dut")
	after = dut.Counters()
	if got := after.RxPackets - before.RxPackets; got != rd.all {
		t.Errorf("RxPackets moved by %d, want %d (frames ReadBatch returned)", got, rd.all)
	}
	if got := after.RxBytes - before.RxBytes; got != rd.allBytes {
		t.Errorf("RxBytes moved by %d, want %d", got, rd.allBytes)
	}
}

func testCloseWakesReader(t *testing.T, open Open) {
	dut, _ := open(t)
	started := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		frames := make([][]byte, dut.BatchSize())
		close(started)
		for {
			// Stray frames may come first; only the error ends it.
			if _, err := dut.ReadBatch(platform.Batch{Frames: frames}); err != nil {
				result <- err
				return
			}
		}
	}()
	<-started
	if err := dut.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case err := <-result:
		if !errors.Is(err, platform.ErrClosed) {
			t.Fatalf("blocked ReadBatch returned %v after Close, want ErrClosed", err)
		}
	case <-timer.C:
		t.Fatalf("ReadBatch still blocked %v after Close", Timeout)
	}
}

func testAfterClose(t *testing.T, open Open) {
	dut, peer := open(t)
	if err := dut.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	frames := make([][]byte, dut.BatchSize())
	if n, err := dut.ReadBatch(platform.Batch{Frames: frames}); n != 0 || !errors.Is(err, platform.ErrClosed) {
		t.Errorf("ReadBatch after Close = %d, %v; want 0, ErrClosed", n, err)
	}
	f := Frame(mac(peer), mac(dut), 1, 60)
	if n, err := dut.WriteBatch(platform.Batch{Frames: [][]byte{f}}); n != 0 || !errors.Is(err, platform.ErrClosed) {
		t.Errorf("WriteBatch after Close = %d, %v; want 0, ErrClosed", n, err)
	}
	if err := dut.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	_ = dut.Counters() // must not panic after Close
}
