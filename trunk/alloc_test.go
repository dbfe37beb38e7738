package trunk

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/swctl/swctl/platform"
)

// TestSteadyPathAllocs checks that WriteBatch and ReadBatch allocate
// nothing per call once warm, for each protocol: a batch out through the
// trunk, a batch in from a far end (with a slow-protocols frame) and the
// ReadBatch that returns it.
func TestSteadyPathAllocs(t *testing.T) {
	for _, proto := range []Proto{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast} {
		fx := newFixture(t, proto, PortConfig{}, PortConfig{})
		var out [][]byte
		for i := 0; i < 16; i++ {
			out = append(out, udp4(uint16(i), uint32(i)))
		}
		in := [][]byte{udp4(1, 1), udp4(2, 2), slowFrame(farMAC(0)), udp4(3, 3)}
		frames := make([][]byte, fx.tr.BatchSize())
		buf := make([][]byte, 64)
		got := testing.AllocsPerRun(200, func() {
			if n, _ := fx.tr.WriteBatch(platform.Batch{Frames: out}); n != len(out) {
				t.Fatalf("%s: WriteBatch sent %d of %d", proto, n, len(out))
			}
			for _, f := range fx.far {
				for n, _ := f.TryReadBatch(buf); n > 0; n, _ = f.TryReadBatch(buf) {
				}
			}
			_, _ = fx.far[0].WriteBatch(platform.Batch{Frames: in})
			if n, err := fx.tr.ReadBatch(platform.Batch{Frames: frames}); err != nil || n != 3 {
				t.Fatalf("%s: ReadBatch = %d, %v; want 3, nil", proto, n, err)
			}
		})
		if got != 0 {
			t.Errorf("%s: %v allocations per write+read round, want 0", proto, got)
		}
	}
}

// nullPort is a member that accepts and discards every frame, to measure
// the trunk's own TX cost.
type nullPort struct {
	// name is the port's name.
	name string
	// frames counts frames written. Atomic.
	frames atomic.Uint64
	// closed is closed by Close.
	closed chan struct{}
	// once guards closing closed. Atomic.
	once atomic.Bool
}

func newNullPort(name string) *nullPort { return &nullPort{name: name, closed: make(chan struct{})} }

func (p *nullPort) Name() string                   { return p.name }
func (p *nullPort) HardwareAddr() net.HardwareAddr { return net.HardwareAddr{2, 0, 0, 0, 9, 9} }
func (p *nullPort) MTU() int                       { return 1500 }
func (p *nullPort) Headroom() int                  { return 0 }
func (p *nullPort) BatchSize() int                 { return platform.DefaultBatchSize }
func (p *nullPort) Link() platform.LinkState       { return platform.LinkUp }
func (p *nullPort) Counters() platform.Counters    { return platform.Counters{TxPackets: p.frames.Load()} }
func (p *nullPort) Offloads() bool                 { return false }
func (p *nullPort) WriteBatch(b platform.Batch) (int, error) {
	p.frames.Add(uint64(b.Len()))
	return b.Len(), nil
}
func (p *nullPort) ReadBatch(platform.Batch) (int, error) {
	<-p.closed
	return 0, platform.ErrClosed
}
func (p *nullPort) Close() error {
	if p.once.CompareAndSwap(false, true) {
		close(p.closed)
	}
	return nil
}

// BenchmarkWriteBatch measures the trunk's TX choice and grouping, per
// frame, over members that discard: 64 frames of 64 flows per call.
func BenchmarkWriteBatch(b *testing.B) {
	for _, proto := range []Proto{ProtoLoadBalance, ProtoRoundRobin, ProtoFailover, ProtoBroadcast} {
		for _, ports := range []int{2, 4} {
			b.Run(fmt.Sprintf("%s/ports=%d", proto, ports), func(b *testing.B) {
				p, _ := NewProtocol(proto)
				tr, err := New("trunk0", Options{Protocol: p, Seed: 1, TickInterval: -1, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				for i := 0; i < ports; i++ {
					if err := tr.AddPort(newNullPort(fmt.Sprintf("eth%d", i)), PortConfig{}); err != nil {
						b.Fatal(err)
					}
				}
				var batch [][]byte
				for i := 0; i < 64; i++ {
					batch = append(batch, udp4(uint16(i), uint32(i)))
				}
				b.ReportAllocs()
				for b.Loop() {
					_, _ = tr.WriteBatch(platform.Batch{Frames: batch})
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/frame")
			})
		}
	}
}

// BenchmarkRoundTrip measures a frame batch out through the trunk and one
// in through ReadBatch, over memport cables (which copy every frame).
func BenchmarkRoundTrip(b *testing.B) {
	near, far := newMemPair("eth0")
	near2, far2 := newMemPair("eth1")
	defer far.Close()
	defer far2.Close()
	p, _ := NewProtocol(ProtoLoadBalance)
	tr, err := New("trunk0", Options{Protocol: p, Seed: 1, TickInterval: -1, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	_ = tr.AddPort(near, PortConfig{})
	_ = tr.AddPort(near2, PortConfig{})
	var batch [][]byte
	for i := 0; i < 32; i++ {
		batch = append(batch, udp4(uint16(i), uint32(i)))
	}
	frames := make([][]byte, 64)
	buf := make([][]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = tr.WriteBatch(platform.Batch{Frames: batch})
		for n, _ := far.TryReadBatch(buf); n > 0; n, _ = far.TryReadBatch(buf) {
		}
		for n, _ := far2.TryReadBatch(buf); n > 0; n, _ = far2.TryReadBatch(buf) {
		}
		_, _ = far.WriteBatch(platform.Batch{Frames: batch})
		for got := 0; got < len(batch); {
			n, _ := tr.ReadBatch(platform.Batch{Frames: frames})
			got += n
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*len(batch)), "ns/frame")
}

// TestOffloadSteadyPathAllocs checks that the offload paths allocate
// nothing per call once warm: WriteBatch to members with offloads
// and to members without (software finishing, super-frames segmented),
// ReadBatch, and ReadBatch finishing a received super-frame.
func TestOffloadSteadyPathAllocs(t *testing.T) {
	frames, offs := offFrames(t)
	for _, proto := range []Proto{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast} {
		t.Run(string(proto)+"/offload members", func(t *testing.T) {
			m0, m1 := newOffPort("eth0", false), newOffPort("eth1", false)
			tr := offTrunk(t, proto, m0, m1)
			rd := make([][]byte, 64)
			rdOffs := make([]platform.Offload, 64)
			got := testing.AllocsPerRun(200, func() {
				if n, _ := tr.WriteBatch(platform.Batch{Frames: frames, Offs: offs}); n != len(frames) {
					t.Fatalf("WriteBatch sent %d of %d", n, len(frames))
				}
				m0.in <- offBatch{frames, offs}
				if n, err := tr.ReadBatch(platform.Batch{Frames: rd, Offs: rdOffs}); err != nil || n != len(frames) {
					t.Fatalf("ReadBatch = %d, %v; want %d, nil", n, err, len(frames))
				}
				m0.in <- offBatch{frames, offs}
				for got := 0; got < 9; {
					n, err := tr.ReadBatch(platform.Batch{Frames: rd})
					if err != nil {
						t.Fatal(err)
					}
					got += n
				}
			})
			if got != 0 {
				t.Errorf("%v allocations per round, want 0", got)
			}
		})
		t.Run(string(proto)+"/plain members", func(t *testing.T) {
			fx := newFixture(t, proto, PortConfig{}, PortConfig{})
			buf := make([][]byte, 64)
			got := testing.AllocsPerRun(200, func() {
				if n, _ := fx.tr.WriteBatch(platform.Batch{Frames: frames, Offs: offs}); n != len(frames) {
					t.Fatalf("WriteBatch sent %d of %d", n, len(frames))
				}
				for _, f := range fx.far {
					for n, _ := f.TryReadBatch(buf); n > 0; n, _ = f.TryReadBatch(buf) {
					}
				}
			})
			if got != 0 {
				t.Errorf("%v allocations per WriteBatch, want 0", got)
			}
		})
	}
}
