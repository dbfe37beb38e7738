package afpacket_test

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
	"golang.org/x/sys/unix"
)

// contractModes are the sending modes with a TX ring, and the
// busy-polling and coalescing modes, the contract suite covers (with
// Offload: offloadModes; fanout: fanoutModes).
var contractModes = []portMode{
	{"TX ring", afpacket.Options{TXRing: true}},
	{"TX ring, qdisc bypass", afpacket.Options{TXRing: true, QdiscBypass: true}},
	{"TX ring, small ring", afpacket.Options{TXRing: true, TXRingFrames: 64}},
	{"TX ring, offload, fanout", afpacket.Options{TXRing: true, Offload: true, Workers: 2}},
	{"sendmmsg, qdisc bypass", afpacket.Options{QdiscBypass: true}},
	{"busy poll", afpacket.Options{BusyPoll: true}},
	{"busy poll, TX ring", afpacket.Options{BusyPoll: true, TXRing: true}},
	{"busy poll, TX ring, offload, fanout", afpacket.Options{BusyPoll: true, TXRing: true, Offload: true, Workers: 2}},
	{"coalesce 100µs", afpacket.Options{Coalesce: 100 * time.Microsecond}},
	{"coalesce 100µs, TX ring, offload, fanout", afpacket.Options{Coalesce: 100 * time.Microsecond, TXRing: true, Offload: true, Workers: 2}},
}

func TestIntegrationContractModes(t *testing.T) { forModes(t, contractModes, runContract) }

func TestIntegrationTXRingZeroAllocs(t *testing.T) {
	for _, opts := range []afpacket.Options{{TXRing: true}, {TXRing: true, Offload: true}} {
		t.Run(fmt.Sprintf("offload %v", opts.Offload), func(t *testing.T) { testZeroAllocs(t, opts) })
	}
}

// TestIntegrationTXRingRefused sends, between two good frames, one whose
// virtio_net_hdr the kernel refuses (an unknown GSO type) through a TX
// ring (TP_STATUS_WRONG_FORMAT): that frame and the one behind it in the
// batch are dropped and counted, the refusal is logged once, and the
// ring goes on sending.
func TestIntegrationTXRingRefused(t *testing.T) {
	ns, a, b := cable(t)
	var logBuf syncBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	src := openIn(t, ns, afpacket.Options{TXRing: true, Offload: true, Logger: log}, a)[0]
	dst := openIn(t, ns, afpacket.Options{}, b)[0]
	d, s := frame.MACOf(dst.HardwareAddr()), frame.MACOf(src.HardwareAddr())
	small := func(seq uint32) []byte { return platformtest.Frame(d, s, seq, 60) }
	bad := platform.Offload{GSOType: 0x42, GSOSize: 100}
	for round := range 2 {
		before := src.Counters()
		n, err := src.WriteBatch(platform.Batch{Frames: [][]byte{small(1), small(99), small(2)}, Offs: []platform.Offload{{}, bad, {}}})
		if n != 1 || err != nil {
			t.Fatalf("round %d: WriteBatch(good, refused by the kernel, good) = %d, %v; want 1, nil", round, n, err)
		}
		after := src.Counters()
		if got := after.TxDropped - before.TxDropped; got != 2 {
			t.Fatalf("round %d: TxDropped moved by %d, want 2 (the refused frame and the one behind it)", round, got)
		}
		if after.Errors == before.Errors {
			t.Fatalf("round %d: Errors did not move", round)
		}
		if n, err := src.WriteBatch(platform.Batch{Frames: [][]byte{small(3), small(4)}}); n != 2 || err != nil {
			t.Fatalf("round %d: WriteBatch after a refusal = %d, %v; want 2, nil", round, n, err)
		}
		got := readSuiteFrames(t, dst, 3)
		for i, want := range []uint32{1, 3, 4} {
			if seq, _ := platformtest.IsSuiteFrame(got[i]); seq != want {
				t.Fatalf("round %d: frame %d received is %d, want %d", round, i, seq, want)
			}
		}
	}
	if got := strings.Count(logBuf.String(), "TX ring refused"); got != 1 {
		t.Fatalf("want one warning about a refused frame, got %d:\n%s", got, logBuf.String())
	}
}

// TestIntegrationTXRingWrap sends many more frames than the ring has
// slots, in batches, and checks that every one arrives in order.
func TestIntegrationTXRingWrap(t *testing.T) {
	ns, a, b := cable(t)
	src := openIn(t, ns, afpacket.Options{TXRing: true, TXRingFrames: 64, BatchSize: 16}, a)[0]
	dst := openIn(t, ns, afpacket.Options{}, b)[0]
	d, s := frame.MACOf(dst.HardwareAddr()), frame.MACOf(src.HardwareAddr())
	const total = 1000
	batch := make([][]byte, 16)
	next := uint32(0)
	rx := make([][]byte, dst.BatchSize())
	watchdog := time.AfterFunc(platformtest.Timeout, func() { _ = dst.Close() })
	defer watchdog.Stop()
	for seq := uint32(0); seq < total; seq += uint32(len(batch)) {
		for i := range batch {
			batch[i] = platformtest.Frame(d, s, seq+uint32(i), 60+int(seq+uint32(i))%1400)
		}
		if n, err := src.WriteBatch(platform.Batch{Frames: batch}); n != len(batch) || err != nil {
			t.Fatalf("WriteBatch at %d = %d, %v; want %d (counters %+v)", seq, n, err, len(batch), src.Counters())
		}
		for next < seq+uint32(len(batch)) {
			n, err := dst.ReadBatch(platform.Batch{Frames: rx})
			if err != nil {
				t.Fatalf("ReadBatch after %d frames: %v", next, err)
			}
			for _, f := range rx[:n] {
				got, ok := platformtest.IsSuiteFrame(f)
				if !ok {
					continue
				}
				if got != next {
					t.Fatalf("frame %d arrived where %d was expected", got, next)
				}
				next++
			}
		}
	}
}

// BenchmarkWriteBatch measures the sending side alone, in every TX mode:
// batches of frames for a MAC nobody has, out of one end of a veth cable
// whose other end has no socket (its stack drops them as for another
// host).
func BenchmarkWriteBatch(b *testing.B) {
	for _, size := range []int{60, 1514} {
		for _, m := range []struct {
			name string
			opts afpacket.Options
		}{
			{"mmsg", afpacket.Options{}},
			{"mmsg+vnet", afpacket.Options{Offload: true}},
			{"ring", afpacket.Options{TXRing: true}},
			{"ring+vnet", afpacket.Options{TXRing: true, Offload: true}},
			{"ring+bypass", afpacket.Options{TXRing: true, QdiscBypass: true}},
		} {
			b.Run(fmt.Sprintf("%s/%d", m.name, size), func(b *testing.B) {
				ns, pa, _ := cable(b)
				src := openIn(b, ns, m.opts, pa)[0]
				batch := make([][]byte, src.BatchSize())
				for i := range batch {
					batch[i] = platformtest.Frame(frame.MAC{0x02, 0, 0, 0, 0xee, 0xee}, frame.MACOf(src.HardwareAddr()), uint32(i), size)
				}
				// The CPU time of the sending thread counts the receiving
				// softirq work veth does in its context, and not the time
				// other processes on a shared machine take from it.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				cpu0 := threadCPU(b)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if n, err := src.WriteBatch(platform.Batch{Frames: batch}); n != len(batch) || err != nil {
						b.Fatalf("WriteBatch = %d, %v; want %d (counters %+v)", n, err, len(batch), src.Counters())
					}
				}
				b.StopTimer()
				frames := float64(b.N * len(batch))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/frames, "ns/frame")
				b.ReportMetric(float64(threadCPU(b)-cpu0)/frames, "cpu-ns/frame")
			})
		}
	}
}

// threadCPU returns the CPU time the calling thread has used, in ns.
func threadCPU(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestIntegrationTXRingRoom checks TxRoom against a link slower than the
// sender: behind a 1 Mbit/s tbf the ring's slots stay in flight, so
// TxRoom says how many frames the ring takes now (none once the ring is
// full, while WriteBatch would drop), and every slot comes back once
// the link has sent them; after Close it takes nothing. Without a TX
// ring it cannot tell: -1.
func TestIntegrationTXRingRoom(t *testing.T) {
	ns, a, b := cable(t)
	ns.Run("tc", "qdisc", "replace", "dev", a, "root", "tbf", "rate", "1mbit", "burst", "1600", "limit", "1000000")
	src := openIn(t, ns, afpacket.Options{TXRing: true, TXRingFrames: 64, BatchSize: 16}, a)[0]
	plain := openIn(t, ns, afpacket.Options{}, b)[0]
	// 64 rounded up to whole ring blocks.
	slots := src.TxRoom(1000)
	if slots < 64 || slots >= 128 || src.TxRoom(10) != 10 {
		t.Fatalf("an idle ring of 64 slots or a few more: TxRoom(1000) = %d, TxRoom(10) = %d", slots, src.TxRoom(10))
	}
	if got := plain.TxRoom(7); got != -1 {
		t.Fatalf("without a TX ring: TxRoom(7) = %d, want -1 (cannot tell)", got)
	}
	d, s := frame.MACOf(plain.HardwareAddr()), frame.MACOf(src.HardwareAddr())
	batch := make([][]byte, 16)
	for i := range batch {
		batch[i] = platformtest.Frame(d, s, uint32(i), 1000)
	}
	sent := 0
	for sent+len(batch) <= slots {
		n, _ := src.WriteBatch(platform.Batch{Frames: batch})
		sent += n
	}
	if room := src.TxRoom(slots); room+sent-2 > slots || room > slots-sent+2 {
		// tbf's burst lets a frame or two leave at once.
		t.Fatalf("after %d frames into %d slots behind 1 Mbit/s: TxRoom = %d, want about %d", sent, slots, room, slots-sent)
	}
	netnstest.Eventually(t, 10*time.Second, "every slot back once the link sent its frames", func() bool {
		return src.TxRoom(slots) == slots
	})
	src.Close()
	if got := src.TxRoom(10); got != 0 {
		t.Fatalf("after Close (the ring unmapped): TxRoom = %d, want 0", got)
	}
}

// TestIntegrationSendBufferHoldsSuperFrames checks Options.SendBuffer
// behind a link slower than the sender (a 20 Mbit/s tbf that queues up to
// 8 MB): 30 super-frames of 60 KB (1.8 MB) written at once all go out
// with a 4 MiB send buffer, with a TX ring (whose slots they do not fit)
// and without; a 256 KiB buffer (near the kernel's default of about
// 200 KiB) drops what it cannot hold, and counts it.
func TestIntegrationSendBufferHoldsSuperFrames(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      afpacket.Options
		wantDrops bool
	}{
		{"TX ring, 4 MiB", afpacket.Options{TXRing: true, Offload: true, SendBuffer: 4 << 20}, false},
		{"sendmmsg, 4 MiB", afpacket.Options{Offload: true, SendBuffer: 4 << 20}, false},
		{"TX ring, 256 KiB", afpacket.Options{TXRing: true, Offload: true, SendBuffer: 256 << 10}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns, ea, eb := cable(t)
			ns.Run("tc", "qdisc", "replace", "dev", ea, "root", "tbf", "rate", "20mbit", "burst", "64kb", "limit", "8000000")
			src := openIn(t, ns, c.opts, ea)[0]
			dst := openIn(t, ns, afpacket.Options{}, eb)[0]
			super, o := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), 0, 60000, 1448)
			b := platform.Batch{Frames: make([][]byte, 30), Offs: make([]platform.Offload, 30)}
			for i := range b.Frames {
				b.Frames[i], b.Offs[i] = super, o
			}
			n, err := src.WriteBatch(b)
			dropped := src.Counters().TxDropped
			switch {
			case err != nil:
				t.Fatalf("WriteBatch: %v", err)
			case !c.wantDrops && (n != 30 || dropped != 0):
				t.Fatalf("30 super-frames of 60 KB behind 20 Mbit/s: %d sent, %d dropped; want all sent", n, dropped)
			case c.wantDrops && (n == 30 || dropped != uint64(30-n)):
				t.Fatalf("30 super-frames of 60 KB into a 256 KiB send buffer: %d sent, %d dropped; want some dropped and counted", n, dropped)
			}
		})
	}
}

// TestIntegrationTxFitSuperFrames checks TxFit for super-frames, which go
// with sendmmsg around the TX ring, behind a link slower than the sender
// (a 20 Mbit/s tbf that queues up to 8 MB) and a 256 KiB send buffer:
// of 30 super-frames of 60 KB it admits a few; WriteBatch sends every
// frame it admits without a drop, until it admits none (the buffer
// full, though the link would queue them all); once the link has sent
// them it admits as many as at first, without allocating. Without a TX
// ring it cannot tell: -1.
func TestIntegrationTxFitSuperFrames(t *testing.T) {
	ns, ea, eb := cable(t)
	ns.Run("tc", "qdisc", "replace", "dev", ea, "root", "tbf", "rate", "20mbit", "burst", "64kb", "limit", "8000000")
	src := openIn(t, ns, afpacket.Options{TXRing: true, Offload: true, SendBuffer: 256 << 10}, ea)[0]
	dst := openIn(t, ns, afpacket.Options{Offload: true}, eb)[0]
	super, o := platformtest.TCPFrame(t, dst.HardwareAddr(), src.HardwareAddr(), 0, 60000, 1448)
	b := platform.Batch{Frames: make([][]byte, 30), Offs: make([]platform.Offload, 30)}
	for i := range b.Frames {
		b.Frames[i], b.Offs[i] = super, o
	}
	if got := dst.TxFit(b.Frames); got != -1 {
		t.Fatalf("without a TX ring: TxFit = %d, want -1 (cannot tell)", got)
	}
	first := src.TxFit(b.Frames)
	if first < 2 || first > 6 {
		t.Fatalf("30 super-frames of 60 KB into an empty 256 KiB send buffer: TxFit = %d, want 2 to 6", first)
	}
	sent := 0
	for k := first; k > 0 && sent < 30; k = src.TxFit(b.Frames) {
		n, err := src.WriteBatch(b.Slice(0, k))
		if n != k || err != nil || src.Counters().TxDropped != 0 {
			t.Fatalf("after %d sent, the %d super-frames TxFit admitted: WriteBatch = %d, %v, %d dropped; want all sent", sent, k, n, err, src.Counters().TxDropped)
		}
		sent += n
	}
	if sent >= 30 {
		t.Fatalf("TxFit admitted all 30 super-frames (1.8 MB) behind 20 Mbit/s into a 256 KiB send buffer")
	}
	netnstest.Eventually(t, 10*time.Second, "the send buffer empty once the link sent its frames", func() bool {
		return src.TxFit(b.Frames) == first
	})
	if a := testing.AllocsPerRun(100, func() { src.TxFit(b.Frames) }); a != 0 {
		t.Errorf("TxFit: %v allocations, want 0", a)
	}
}
