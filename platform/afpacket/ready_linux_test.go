package afpacket_test

import (
	"errors"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// TestIntegrationReadReady checks ReadReady, with one receive queue and
// with a fanout group: with nothing received it returns 0 frames at once,
// and it returns what arrived, as ReadBatch would, without waiting.
func TestIntegrationReadReady(t *testing.T) {
	forModes(t, []portMode{
		{"one queue", afpacket.Options{}},
		{"two queues", afpacket.Options{Offload: true, Workers: 2}},
	}, func(t *testing.T, opts afpacket.Options) {
		ns, a, b := cable(t)
		src := openIn(t, ns, afpacket.Options{}, a)[0]
		dst := openIn(t, ns, opts, b)[0]
		buf := platform.NewBatch(dst.BatchSize())
		// Nothing sent yet: it returns at once (the cable's own IPv6
		// chatter aside, no frame).
		n, err := dst.ReadReady(buf)
		if err != nil {
			t.Fatalf("ReadReady with nothing sent: %v", err)
		}
		for _, f := range buf.Frames[:n] {
			if _, ok := platformtest.IsSuiteFrame(f); ok {
				t.Fatalf("ReadReady with nothing sent returned a test frame")
			}
		}
		const want = 8
		var frames [][]byte
		for i := range want {
			frames = append(frames, platformtest.Frame(frame.MACOf(dst.HardwareAddr()), frame.MACOf(src.HardwareAddr()), uint32(i), 100))
		}
		if n, err := src.WriteBatch(platform.Plain(frames...)); n != want || err != nil {
			t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, want)
		}
		seen := map[uint32]bool{}
		netnstest.Eventually(t, 5*time.Second, "every frame through ReadReady", func() bool {
			n, err := dst.ReadReady(buf)
			if err != nil {
				t.Fatalf("ReadReady: %v", err)
			}
			for _, f := range buf.Frames[:n] {
				if seq, ok := platformtest.IsSuiteFrame(f); ok {
					seen[seq] = true
				}
			}
			return len(seen) == want
		})
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := dst.ReadReady(buf); !errors.Is(err, platform.ErrClosed) {
			t.Fatalf("ReadReady after Close: %v, want ErrClosed", err)
		}
	})
}
