package afpacket_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// offloadModes are the receive rings a port with Offload can have: the
// default small slots with copies of super-frames, and 64 KiB slots
// (OffloadSlots; 256 of them: the contract suite sends up to 197 frames
// before it reads); and the TX ring, whose slots hold frames of the MTU
// (super-frames go with sendmmsg).
var offloadModes = []portMode{
	{"small slots", afpacket.Options{Offload: true}},
	{"64KiB slots", afpacket.Options{Offload: true, OffloadSlots: 256}},
	{"small slots, TX ring", afpacket.Options{Offload: true, TXRing: true}},
}

// forOffloadModes runs f as a subtest for every offload ring mode.
func forOffloadModes(t *testing.T, f func(t *testing.T, opts afpacket.Options)) {
	forModes(t, offloadModes, f)
}

func TestIntegrationContractOffload(t *testing.T) { forOffloadModes(t, runContract) }

// readTCP reads p until a TCP/IPv4 frame (tagged or not) arrives, and
// returns a copy of it and its Offload.
func readTCP(t *testing.T, p *afpacket.Port) ([]byte, platform.Offload) {
	t.Helper()
	watchdog := time.AfterFunc(platformtest.Timeout, func() { _ = p.Close() })
	defer watchdog.Stop()
	frames := make([][]byte, p.BatchSize())
	offs := make([]platform.Offload, p.BatchSize())
	for {
		n, err := p.ReadBatch(platform.Batch{Frames: frames, Offs: offs})
		if err != nil {
			t.Fatalf("%s: ReadBatch: %v (no TCP frame within %v)", p.Name(), err, platformtest.Timeout)
		}
		for i, f := range frames[:n] {
			if e := frame.Ethernet(f); e.InnerType() == frame.TypeIPv4 {
				return bytes.Clone(f), offs[i]
			}
		}
	}
}

// TestIntegrationOffloadSuperFrame sends a 20 KB TCP super-frame with a
// partial checksum through WriteBatch over veth (which keeps it
// whole), and checks that the peer's ReadBatch returns it whole
// with its metadata, tagged and untagged. A port without Offload on the
// same interface gets it truncated: dropped, counted, logged once.
func TestIntegrationOffloadSuperFrame(t *testing.T) {
	forOffloadModes(t, testOffloadSuperFrame)
}

func testOffloadSuperFrame(t *testing.T, opts afpacket.Options) {
	ns, a, b := cable(t)
	p := openIn(t, ns, opts, a, b)
	src, dst := p[0], p[1]
	var logBuf syncBuffer
	plainLog := slog.New(slog.NewTextHandler(&logBuf, nil))
	plain := openIn(t, ns, afpacket.Options{Logger: plainLog}, b)[0]

	for _, vlan := range []uint16{0, 100} {
		t.Run(fmt.Sprintf("vlan %d", vlan), func(t *testing.T) {
			f, o := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), vlan, 20000, 1448)
			if n, err := src.WriteBatch(platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}); n != 1 || err != nil {
				t.Fatalf("WriteBatch of a %d-byte super-frame = %d, %v; want 1, nil (counters %+v)", len(f), n, err, src.Counters())
			}
			got, gotO := readTCP(t, dst)
			if !bytes.Equal(got, f) {
				t.Fatalf("received %d bytes, want the %d sent unchanged\ngot  % x\nwant % x", len(got), len(f), got[:48], f[:48])
			}
			if gotO.GSOType != platform.GSOTCPv4 || gotO.GSOSize != 1448 || gotO.Flags&platform.OffloadNeedsCsum == 0 ||
				gotO.CsumStart != o.CsumStart || gotO.CsumOffset != 16 {
				t.Fatalf("received offload %+v, want TCPv4 GSO 1448, NEEDS_CSUM at %d+16", gotO, o.CsumStart)
			}
		})
	}

	// The plain port saw both super-frames, too large for its slots.
	netnstest_eventually(t, func() bool { return plain.Counters().RxDropped >= 2 }, func() string {
		return fmt.Sprintf("plain port RxDropped = %d, want >= 2", plain.Counters().RxDropped)
	}, func() {
		frames := make([][]byte, 8)
		go func() { time.Sleep(time.Second); _ = plain.Close() }()
		_, _ = plain.ReadBatch(platform.Batch{Frames: frames})
	})
	log := logBuf.String()
	if strings.Count(log, "larger than the ring slot") != 1 || !strings.Contains(log, "port="+b) {
		t.Fatalf("want one warning naming %s about a frame larger than the ring slot, got:\n%s", b, log)
	}
}

// netnstest_eventually runs read (which may block up to a second) until
// cond holds, at most a few times.
func netnstest_eventually(t *testing.T, cond func() bool, what func() string, read func()) {
	t.Helper()
	for i := 0; i < 3 && !cond(); i++ {
		read()
	}
	if !cond() {
		t.Fatal(what())
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestIntegrationOffloadPlainReadWrite checks the plain methods of a port
// with Offload: WriteBatch sends with a zero vnet header, ReadBatch
// finishes partial checksums and drops super-frames.
func TestIntegrationOffloadPlainReadWrite(t *testing.T) {
	forOffloadModes(t, testOffloadPlainReadWrite)
}

func testOffloadPlainReadWrite(t *testing.T, opts afpacket.Options) {
	ns, a, b := cable(t)
	p := openIn(t, ns, opts, a, b)
	src, dst := p[0], p[1]
	// One segment's worth with a partial checksum, then a super-frame.
	small, so := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), 0, 1000, 1448)
	so.GSOType, so.GSOSize = platform.GSONone, 0
	big, bo := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), 0, 20000, 1448)
	if n, err := src.WriteBatch(platform.Batch{Frames: [][]byte{big, small}, Offs: []platform.Offload{bo, so}}); n != 2 || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want 2, nil", n, err)
	}
	before := dst.Counters().RxDropped
	frames := make([][]byte, dst.BatchSize())
	var got []byte
	watchdog := time.AfterFunc(platformtest.Timeout, func() { _ = dst.Close() })
	defer watchdog.Stop()
	for got == nil {
		n, err := dst.ReadBatch(platform.Batch{Frames: frames})
		if err != nil {
			t.Fatalf("ReadBatch: %v", err)
		}
		for _, f := range frames[:n] {
			if frame.Ethernet(f).Type() == frame.TypeIPv4 {
				got = bytes.Clone(f)
			}
		}
	}
	if len(got) != len(small) {
		t.Fatalf("ReadBatch returned a %d-byte TCP frame first, want the %d-byte one (the super-frame dropped)", len(got), len(small))
	}
	if d := dst.Counters().RxDropped - before; d != 1 {
		t.Errorf("RxDropped moved by %d, want 1 (the super-frame)", d)
	}
	// The checksum was finished: the one's complement sum over the
	// pseudo-header and the segment is 0xffff.
	var s uint32
	for i := 26; i < 34; i += 2 {
		s += uint32(binary.BigEndian.Uint16(got[i:]))
	}
	s += 6 + uint32(len(got)-34)
	for i := 34; i+1 < len(got); i += 2 {
		s += uint32(binary.BigEndian.Uint16(got[i:]))
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	if s != 0xffff {
		t.Fatalf("TCP checksum of the received frame does not verify (sum %#04x)", s)
	}
}

func TestIntegrationOffloadZeroAllocs(t *testing.T) {
	forOffloadModes(t, testOffloadZeroAllocs)
}

func testOffloadZeroAllocs(t *testing.T, opts afpacket.Options) {
	ns, a, b := cable(t)
	p := openIn(t, ns, opts, a, b)
	src, dst := p[0], p[1]
	f, o := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), 0, 20000, 1448)
	batch, offs := [][]byte{f, f}, []platform.Offload{o, o}
	rx, rxo := make([][]byte, dst.BatchSize()), make([]platform.Offload, dst.BatchSize())
	watchdog := time.AfterFunc(30*time.Second, func() { _ = dst.Close() })
	defer watchdog.Stop()
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		if n, e := src.WriteBatch(platform.Batch{Frames: batch, Offs: offs}); (n != 2 || e != nil) && err == nil {
			err = fmt.Errorf("WriteBatch = %d, %v", n, e)
		}
		for got := 0; got < 2 && err == nil; {
			n, e := dst.ReadBatch(platform.Batch{Frames: rx, Offs: rxo})
			if e != nil {
				err = e
			}
			for i := range n {
				if rxo[i].GSOType == platform.GSOTCPv4 {
					got++
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per WriteBatch+ReadBatch, want 0", allocs)
	}
}

// TestIntegrationOffloadSmallBurst is the reason for small slots: a burst
// of 1,000 small frames that nobody reads yet fits the default ring of a
// port with Offload (a ring of 256 64 KiB slots dropped most of it).
func TestIntegrationOffloadSmallBurst(t *testing.T) {
	ns, a, b := cable(t)
	p := openIn(t, ns, afpacket.Options{Offload: true}, a, b)
	src, dst := p[0], p[1]
	const burst = 1000
	var sent [][]byte
	for i := range burst {
		sent = append(sent, platformtest.Frame(frame.MACOf(dst.HardwareAddr()), frame.MACOf(src.HardwareAddr()), uint32(i), 60))
	}
	if n, err := src.WriteBatch(platform.Batch{Frames: sent}); n != burst || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, burst)
	}
	watchdog := time.AfterFunc(platformtest.Timeout, func() { _ = dst.Close() })
	defer watchdog.Stop()
	frames := make([][]byte, dst.BatchSize())
	next := uint32(0)
	for next < burst {
		n, err := dst.ReadBatch(platform.Batch{Frames: frames})
		if err != nil {
			t.Fatalf("ReadBatch after %d of %d frames: %v (counters %+v)", next, burst, err, dst.Counters())
		}
		for _, f := range frames[:n] {
			seq, ok := platformtest.IsSuiteFrame(f)
			if !ok {
				continue
			}
			if seq != next {
				t.Fatalf("frame %d arrived when %d was due (counters %+v)", seq, next, dst.Counters())
			}
			next++
		}
	}
	if c := dst.Counters(); c.RingDropped != 0 || c.RxDropped != 0 {
		t.Fatalf("ring dropped %d, rx dropped %d; want 0", c.RingDropped, c.RxDropped)
	}
}

// TestIntegrationOffloadCopyOrder interleaves small frames and
// super-frames, tagged and untagged, more super-frames than copy buffers,
// in one burst: with small slots the super-frames come through the
// socket's receive queue, and every frame must arrive whole, with its tag
// and metadata, in the order sent.
func TestIntegrationOffloadCopyOrder(t *testing.T) {
	ns, a, b := cable(t)
	p := openIn(t, ns, afpacket.Options{Offload: true, CopyBuffers: 3}, a, b)
	src, dst := p[0], p[1]
	var sent [][]byte
	var offs []platform.Offload
	for i := range 40 {
		switch i % 4 {
		case 0, 2:
			sent = append(sent, platformtest.Frame(frame.MACOf(dst.HardwareAddr()), frame.MACOf(src.HardwareAddr()), uint32(i), 60+i))
			offs = append(offs, platform.Offload{})
		case 1, 3:
			vlan := uint16(0)
			if i%4 == 3 {
				vlan = 100 + uint16(i)
			}
			f, o := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), vlan, 10000+i, 1448)
			sent = append(sent, f)
			offs = append(offs, o)
		}
	}
	if n, err := src.WriteBatch(platform.Batch{Frames: sent, Offs: offs}); n != len(sent) || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(sent))
	}
	watchdog := time.AfterFunc(platformtest.Timeout, func() { _ = dst.Close() })
	defer watchdog.Stop()
	frames := make([][]byte, dst.BatchSize())
	rxo := make([]platform.Offload, dst.BatchSize())
	next := 0
	for next < len(sent) {
		n, err := dst.ReadBatch(platform.Batch{Frames: frames, Offs: rxo})
		if err != nil {
			t.Fatalf("ReadBatch after %d of %d frames: %v (counters %+v)", next, len(sent), err, dst.Counters())
		}
		supers := 0
		for i, f := range frames[:n] {
			if _, ok := platformtest.IsSuiteFrame(f); !ok && frame.Ethernet(f).InnerType() != frame.TypeIPv4 {
				continue // not ours
			}
			if !bytes.Equal(f, sent[next]) {
				t.Fatalf("frame %d: got %d bytes, want the %d sent unchanged\ngot  % x\nwant % x",
					next, len(f), len(sent[next]), f[:min(len(f), 48)], sent[next][:48])
			}
			if rxo[i] != offs[next] {
				t.Fatalf("frame %d: offload %+v, want %+v", next, rxo[i], offs[next])
			}
			if offs[next].GSOType != platform.GSONone {
				supers++
			}
			next++
		}
		if supers > 3 {
			t.Fatalf("one ReadBatch returned %d super-frames, more than the 3 copy buffers", supers)
		}
	}
	if c := dst.Counters(); c.RingDropped != 0 || c.RxDropped != 0 {
		t.Fatalf("ring dropped %d, rx dropped %d; want 0", c.RingDropped, c.RxDropped)
	}
}
