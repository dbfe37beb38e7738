package bridge

import (
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// benchForward forwards batch received on member "a" b.N times and reports
// the time per frame. Members are counting testPorts, so that the figures
// are the bridge's own.
func benchForward(b *testing.B, members int, spans int, batch func(fx *fixture) [][]byte) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}[:members]
	fx := newFixtureOpts(b, Options{Timeout: DefaultTimeout}, false, names...)
	for i := range spans {
		fx.b.AddSpan(newTestPort("span"+string(rune('0'+i)), false))
	}
	frames := batch(fx)
	in, now := fx.b.Member("a"), fx.clk.Now()
	fx.b.Forward(fx.w, in, platform.Batch{Frames: frames}, now)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		fx.b.Forward(fx.w, in, platform.Batch{Frames: frames}, now)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
}

// BenchmarkForwardUnicast: a batch of 64 60-byte frames of one flow to a
// known station.
func BenchmarkForwardUnicast(b *testing.B) {
	benchForward(b, 2, 0, func(fx *fixture) [][]byte {
		fx.send("b", ip4(stA, stB))
		return batchOf(64, ip4(stB, stA))
	})
}

// BenchmarkForwardUnicastMixed: a batch of 64 60-byte frames from 64
// stations on a to 64 stations spread over 3 members.
func BenchmarkForwardUnicastMixed(b *testing.B) {
	benchForward(b, 4, 0, func(fx *fixture) [][]byte {
		var frames [][]byte
		for i := range 64 {
			dst, src := mac(1000+i), mac(i)
			fx.send([]string{"b", "c", "d"}[i%3], ip4(src, dst))
			frames = append(frames, ip4(dst, src))
		}
		return frames
	})
}

// BenchmarkForwardFlood: a batch of 64 60-byte broadcast frames to 3
// members.
func BenchmarkForwardFlood(b *testing.B) {
	benchForward(b, 4, 0, func(fx *fixture) [][]byte {
		return batchOf(64, ip4(frame.Broadcast, stA))
	})
}

// BenchmarkForwardUnicastSpan: BenchmarkForwardUnicast with a span port.
func BenchmarkForwardUnicastSpan(b *testing.B) {
	benchForward(b, 2, 1, func(fx *fixture) [][]byte {
		fx.send("b", ip4(stA, stB))
		return batchOf(64, ip4(stB, stA))
	})
}

// BenchmarkForwardParallel: known unicast from several goroutines at once,
// each with its own Worker and ingress member, all into one table.
func BenchmarkForwardParallel(b *testing.B) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	fx := newFixtureOpts(b, Options{Timeout: DefaultTimeout}, false, names...)
	now := fx.clk.Now()
	for i, n := range names {
		fx.send(n, ip4(frame.Broadcast, mac(i)))
	}
	next := make(chan int, len(names))
	for i := range names {
		next <- i
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := <-next % len(names)
		in, w := fx.b.Member(names[i]), NewWorker()
		frames := batchOf(64, ip4(mac((i+1)%len(names)), mac(i)))
		for pb.Next() {
			fx.b.Forward(w, in, platform.Batch{Frames: frames}, now)
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/frame")
}

// BenchmarkLearnNew measures learning new addresses (a write lock and an
// insert each), ageing them out so that the table never fills.
func BenchmarkLearnNew(b *testing.B) {
	fx := newFixtureOpts(b, Options{Timeout: time.Second, MaxAddr: 1 << 20}, false, "a", "b")
	in := fx.b.Member("a")
	var ts int64
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		fx.b.fdb.learn(fdbKey(0, uint64(i)<<1&macMask), in, ts)
		i++
		if i%65536 == 0 {
			ts += int64(time.Hour)
			fx.b.fdb.expire(ts)
		}
	}
}
