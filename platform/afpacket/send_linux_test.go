package afpacket_test

import (
	"bytes"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// sendModes are the transmitters, each with and without Offload.
var sendModes = []portMode{
	{"sendmmsg", afpacket.Options{}},
	{"sendmmsg, offload", afpacket.Options{Offload: true}},
	{"TX ring", afpacket.Options{TXRing: true}},
	{"TX ring, offload", afpacket.Options{TXRing: true, Offload: true}},
}

// TestIntegrationUnsendableAmongSendable sends one batch in which frames
// that may not be sent (a runt, a frame over the MTU and, on a port
// without Offload, a frame with a checksum offload) sit between frames
// that may: with every transmitter, those are dropped and counted, the
// others go out in order, and a batch like it allocates nothing.
func TestIntegrationUnsendableAmongSendable(t *testing.T) {
	forModes(t, sendModes, func(t *testing.T, opts afpacket.Options) {
		ns, a, b := cable(t)
		p := openIn(t, ns, opts, a, b)
		dut, peer := p[0], p[1]
		d, s := frame.MACOf(peer.HardwareAddr()), frame.MACOf(dut.HardwareAddr())
		good := [][]byte{platformtest.Frame(d, s, 1, 60), platformtest.Frame(d, s, 2, 1000), platformtest.Frame(d, s, 3, 60)}
		batch := platform.Batch{
			Frames: [][]byte{good[0], platformtest.Frame(d, s, 90, 60)[:frame.HeaderLen-1], good[1],
				platformtest.Frame(d, s, 91, frame.HeaderLen+dut.MTU()+1), good[2]},
			Offs: make([]platform.Offload, 5),
		}
		wantDropped := uint64(2)
		if !opts.Offload {
			csum := platformtest.Frame(d, s, 92, 100)
			batch.Frames = append(batch.Frames, csum)
			batch.Offs = append(batch.Offs, platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: frame.HeaderLen, CsumOffset: 6})
			wantDropped++
		}
		before := dut.Counters()
		if n, err := dut.WriteBatch(batch); n != len(good) || err != nil {
			t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(good))
		}
		after := dut.Counters()
		if got := after.TxDropped - before.TxDropped; got != wantDropped {
			t.Errorf("TxDropped moved by %d, want %d", got, wantDropped)
		}
		if got := after.TxPackets - before.TxPackets; got != uint64(len(good)) {
			t.Errorf("TxPackets moved by %d, want %d", got, len(good))
		}
		got := readSuiteFrames(t, peer, len(good))
		for i := range good {
			if !bytes.Equal(got[i], good[i]) {
				t.Errorf("frame %d the peer received: %d bytes, want the sendable frame %d of %d bytes, in order", i, len(got[i]), i, len(good[i]))
			}
		}
		if allocs := testing.AllocsPerRun(100, func() { _, _ = dut.WriteBatch(batch) }); allocs != 0 {
			t.Errorf("WriteBatch of a batch with unsendable frames: %v allocations, want 0", allocs)
		}
	})
}
