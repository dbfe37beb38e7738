// Package platformtest is the contract suite every platform.Port backend
// runs: the in-memory pair, AF_PACKET over veth, bpf, TAP. One Run call
// checks, subtest by subtest, the behaviour the platform package documents:
// batch delivery, frame ownership, copying on write, Close, the MTU rule,
// counters and the static properties.
//
// Frames the suite sends carry the local experimental ethertype 0x88b5
// (EtherType) and a magic word, so stray traffic a real interface may see
// (a kernel's own frames) is told apart and ignored when counting.
package platformtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// EtherType is the ethertype of every frame the suite builds: IEEE local
// experimental ethertype 1.
const EtherType = 0x88b5

// magic marks a suite frame right after the ethertype.
const magic = 0x73777074 // "swpt"

// Timeout bounds every wait in the suite: a frame that has not arrived by
// then is lost, a ReadBatch that has not returned is stuck.
const Timeout = 5 * time.Second

// tagLen is the length of one 802.1Q tag.
const tagLen = 4

// Open returns a fresh pair of ports for one subtest: dut is the port under
// test, peer receives what dut sends and sends what dut receives. It
// registers its own cleanup with t (the suite may Close either port first:
// Close is idempotent by contract).
type Open func(t *testing.T) (dut, peer platform.Port)

// Run runs the contract suite against the backend that open builds. Each
// subtest opens its own pair.
func Run(t *testing.T, open func(t *testing.T) (dut, peer platform.Port)) {
	t.Run("Properties", func(t *testing.T) { testProperties(t, open) })
	t.Run("Deliver", func(t *testing.T) { testDeliver(t, open) })
	t.Run("FramesValidUntilNextRead", func(t *testing.T) { testFramesValid(t, open) })
	t.Run("WriteBatchCopies", func(t *testing.T) { testWriteCopies(t, open) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrentWriters(t, open) })
	t.Run("MTU", func(t *testing.T) { testMTU(t, open) })
	t.Run("Counters", func(t *testing.T) { testCounters(t, open) })
	t.Run("CloseWakesReader", func(t *testing.T) { testCloseWakesReader(t, open) })
	t.Run("AfterClose", func(t *testing.T) { testAfterClose(t, open) })
}

// Frame builds a suite frame of size bytes (at least 26) from src to dst:
// EtherType, the magic word, seq, and a fill derived from seq, so two
// frames with different seq differ in every payload word.
func Frame(dst, src frame.MAC, seq uint32, size int) []byte {
	if size < frame.HeaderLen+12 {
		panic(fmt.Sprintf("platformtest: frame size %d < 26", size))
	}
	b := make([]byte, size)
	frame.Encode(b, dst, src, EtherType)
	fill(b[frame.HeaderLen:], seq)
	return b
}

// TaggedFrame builds a suite frame of size bytes that carries one tag
// (tpid 0x8100 or 0x88a8, VLAN vid) in front of EtherType.
func TaggedFrame(dst, src frame.MAC, tpid, vid uint16, seq uint32, size int) []byte {
	if size < frame.HeaderLen+tagLen+12 {
		panic(fmt.Sprintf("platformtest: tagged frame size %d < 30", size))
	}
	b := make([]byte, size)
	frame.Encode(b, dst, src, tpid)
	binary.BigEndian.PutUint16(b[14:16], vid&0x0fff)
	binary.BigEndian.PutUint16(b[16:18], EtherType)
	fill(b[18:], seq)
	return b
}

// fill writes the magic word, seq and a seq-derived pattern into p.
func fill(p []byte, seq uint32) {
	binary.BigEndian.PutUint32(p[0:4], magic)
	binary.BigEndian.PutUint32(p[4:8], seq)
	x := seq*2654435761 + 1
	for i := 8; i < len(p); i++ {
		x = x*1103515245 + 12345
		p[i] = byte(x >> 16)
	}
}

// IsSuiteFrame reports whether f is a frame the suite built (untagged or
// with one tag), and returns its sequence number.
func IsSuiteFrame(f []byte) (seq uint32, ok bool) {
	e := frame.Ethernet(f)
	if !e.Valid() || e.InnerType() != EtherType {
		return 0, false
	}
	p := f[frame.HeaderLen:]
	if e.IsTagged() {
		p = f[frame.HeaderLen+tagLen:]
	}
	if len(p) < 8 || binary.BigEndian.Uint32(p[0:4]) != magic {
		return 0, false
	}
	return binary.BigEndian.Uint32(p[4:8]), true
}

// mac returns a port's hardware address as a frame.MAC.
func mac(p platform.Port) frame.MAC { return frame.MACOf(p.HardwareAddr()) }

// reader collects suite frames one port receives, in a goroutine, until
// it has want of them or the port closes.
type reader struct {
	// port is the port read from.
	port platform.Port
	// want is how many suite frames to collect before stopping.
	want int
	// got holds copies of the suite frames received, in order.
	got [][]byte
	// all and allBytes count every frame ReadBatch returned, suite or not.
	all, allBytes uint64
	// err is the error that ended the reading, if any.
	err error
	// done is closed when the goroutine stops.
	done chan struct{}
}

// startReader starts reading want suite frames from p.
func startReader(p platform.Port, want int) *reader {
	r := &reader{port: p, want: want, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		b := platform.NewBatch(p.BatchSize())
		for i := range b.Offs {
			b.Offs[i].GSOSize = 0xdead // ReadBatch must set every offload it returns
		}
		for len(r.got) < r.want {
			n, err := p.ReadBatch(b)
			for i, f := range b.Frames[:n] {
				r.all++
				r.allBytes += uint64(len(f))
				if _, ok := IsSuiteFrame(f); ok {
					if !b.Offs[i].IsPlain() || b.Offs[i].GSOSize != 0 {
						r.err = fmt.Errorf("suite frame %d read with offload %+v, want zero: the suite sends plain frames", len(r.got), b.Offs[i])
						return
					}
					r.got = append(r.got, bytes.Clone(f))
				}
			}
			if err != nil {
				r.err = err
				return
			}
		}
	}()
	return r
}

// wait waits up to Timeout for the reader to finish; on timeout it closes
// the port to stop the goroutine and fails the test with what.
func (r *reader) wait(t *testing.T, what string) {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case <-r.done:
	case <-timer.C:
		_ = r.port.Close()
		<-r.done
		t.Fatalf("%s: after %v, %d of %d frames received", what, Timeout, len(r.got), r.want)
	}
	if r.err != nil {
		t.Fatalf("%s: ReadBatch: %v (after %d of %d frames)", what, r.err, len(r.got), r.want)
	}
}

// writeAll writes frames through p in batches of p.BatchSize() and fails
// unless every frame was sent.
func writeAll(t *testing.T, p platform.Port, frames [][]byte) {
	t.Helper()
	for len(frames) > 0 {
		k := min(len(frames), p.BatchSize())
		n, err := p.WriteBatch(platform.Batch{Frames: frames[:k]})
		if err != nil {
			t.Fatalf("%s: WriteBatch of %d frames: %v", p.Name(), k, err)
		}
		if n != k {
			t.Fatalf("%s: WriteBatch sent %d of %d frames (counters %+v)", p.Name(), n, k, p.Counters())
		}
		frames = frames[k:]
	}
}

// sameFrames fails unless got equals want, frame by frame, byte for byte.
func sameFrames(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d frames, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			gs, _ := IsSuiteFrame(got[i])
			ws, _ := IsSuiteFrame(want[i])
			t.Fatalf("%s: frame %d: got seq %d len %d, want seq %d len %d\ngot  % x\nwant % x",
				what, i, gs, len(got[i]), ws, len(want[i]), head(got[i]), head(want[i]))
		}
	}
}

// head returns at most the first 32 bytes of f, for failure messages.
func head(f []byte) []byte { return f[:min(len(f), 32)] }

// maxFrame is the largest untagged frame p sends: its MTU plus the header,
// capped at a standard 1514 bytes so the suite's sizes fit every backend.
func maxFrame(p platform.Port) int { return min(p.MTU(), 1500) + frame.HeaderLen }

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
