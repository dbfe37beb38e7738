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
	"fmt"
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
