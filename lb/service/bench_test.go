package service

import (
	"net/netip"
	"testing"

	"github.com/swctl/swctl/platform"
)

// BenchmarkForward is the per-frame cost of the data path: a batch of 64
// TCP frames of 64 flows to the VIP, each looked up (Maglev and the
// connection table), rewritten and handed to the port.
func BenchmarkForward(b *testing.B) {
	r := newRig(b, Check{})
	r.backends(8)
	in := platform.NewBatch(64)
	for i := range in.Frames {
		in.Frames[i] = tcpFrame(b, lbMAC, netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), vip4, uint16(1000+i))
	}
	out := platform.NewBatch(64)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, f := range in.Frames {
			copy(f[0:6], lbMAC[:])
		}
		r.s.forwardBatch(in, out)
		r.peer.TryReadBatch(out.Frames) // keep the cable's queue from filling
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in.Frames)), "ns/frame")
}
