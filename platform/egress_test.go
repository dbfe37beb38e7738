package platform_test

import (
	"bytes"
	"net"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
)

// recordingPort is a Port that keeps what it is given: the chunks of
// each write call, with their offloads when it carries offloads. It
// accepts at most accept frames per call (all when 0).
type recordingPort struct {
	mtu, batch, accept int
	offload            bool
	chunks             [][][]byte
	offs               [][]platform.Offload
}

func (p *recordingPort) Name() string                          { return "rec0" }
func (p *recordingPort) HardwareAddr() net.HardwareAddr        { return nil }
func (p *recordingPort) MTU() int                              { return p.mtu }
func (p *recordingPort) Headroom() int                         { return 0 }
func (p *recordingPort) BatchSize() int                        { return p.batch }
func (p *recordingPort) ReadBatch(platform.Batch) (int, error) { return 0, platform.ErrClosed }
func (p *recordingPort) Link() platform.LinkState              { return platform.LinkUp }
func (p *recordingPort) Counters() platform.Counters           { return platform.Counters{} }
func (p *recordingPort) Close() error                          { return nil }
func (p *recordingPort) Offloads() bool                        { return p.offload }
func (p *recordingPort) WriteBatch(b platform.Batch) (int, error) {
	c := make([][]byte, b.Len())
	for i := range b.Frames {
		c[i] = bytes.Clone(b.Frames[i])
	}
	p.chunks = append(p.chunks, c)
	if b.Offs != nil && p.offload {
		p.offs = append(p.offs, append([]platform.Offload(nil), b.Offs...))
	}
	if p.accept > 0 && b.Len() > p.accept {
		return p.accept, nil
	}
	return b.Len(), nil
}

func (p *recordingPort) frames() int {
	n := 0
	for _, c := range p.chunks {
		n += len(c)
	}
	return n
}

func TestEgressSend(t *testing.T) {
	small := platformtest.Packet{Payload: platformtest.Payload(100)}.Build(t)
	big := platformtest.Packet{Payload: platformtest.Payload(1600)}.Build(t)
	superF, superO := platformtest.Packet{Payload: platformtest.Payload(3 * 1000)}.Partial(platformtest.Packet{Payload: platformtest.Payload(3 * 1000)}.Build(t))
	superO.GSOType, superO.GSOSize = frame.GSOTCPv4, 1000
	partialF, partialO := platformtest.Packet{Payload: platformtest.Payload(200)}.Partial(platformtest.Packet{Payload: platformtest.Payload(200)}.Build(t))
	bad := partialF
	badO := partialO
	badO.GSOType, badO.GSOSize, badO.CsumStart = frame.GSOTCPv4, 50, 20 // csum_start inside the IPv4 header

	t.Run("frames over the MTU are left out, the caller's batch unchanged", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64}
		in := [][]byte{small, big, small[:10], small}
		keep := append([][]byte(nil), in...)
		var e platform.Egress
		st := e.Send(p, platform.Batch{Frames: in})
		if st.Sent != 2 || st.Oversize != 2 || p.frames() != 2 {
			t.Errorf("Send = %+v, port got %d frames; want 2 sent, 2 oversize (the 1,614-byte frame and the 10-byte runt)", st, p.frames())
		}
		for i := range in {
			if &in[i][0] != &keep[i][0] || len(in[i]) != len(keep[i]) {
				t.Errorf("Send changed the caller's frame %d", i)
			}
		}
	})
	t.Run("chunks of the port's batch size, checked or not", func(t *testing.T) {
		in := make([][]byte, 10)
		for i := range in {
			in[i] = small
		}
		for _, send := range []struct {
			name string
			f    func(*platform.Egress, platform.Port, platform.Batch) platform.EgressStats
		}{
			{"Send", (*platform.Egress).Send},
			{"SendChecked", func(e *platform.Egress, p platform.Port, b platform.Batch) platform.EgressStats {
				return e.SendChecked(p, b, 1500)
			}},
		} {
			p := &recordingPort{mtu: 1500, batch: 4}
			var e platform.Egress
			if st := send.f(&e, p, platform.Batch{Frames: in}); st.Sent != 10 {
				t.Errorf("%s: Sent = %d, want 10", send.name, st.Sent)
			}
			if len(p.chunks) != 3 || len(p.chunks[0]) != 4 || len(p.chunks[2]) != 2 {
				t.Errorf("%s: chunks of %d calls, want 4+4+2", send.name, len(p.chunks))
			}
		}
	})
	t.Run("a port with offloads gets super-frames whole, with their offloads", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64, offload: true}
		var e platform.Egress
		st := e.Send(p, platform.Batch{Frames: [][]byte{superF, small}, Offs: []platform.Offload{superO, {}}})
		if st.Sent != 2 || st.Oversize != 0 || st.Finished != 0 || len(p.offs) != 1 || p.offs[0][0] != superO {
			t.Errorf("Send = %+v, offloads %v: want the super-frame whole with its offload", st, p.offs)
		}
	})
	t.Run("a port without offloads gets them done in software", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64}
		var e platform.Egress
		st := e.Send(p, platform.Batch{Frames: [][]byte{superF, partialF, small, bad}, Offs: []platform.Offload{superO, partialO, {}, badO}})
		want := platform.EgressStats{Sent: 5, Finished: 2, Segments: 4, OffloadDropped: 1, Err: st.Err, ErrOffload: badO}
		if st != want || st.Err == nil {
			t.Errorf("Send = %+v, want %+v with an error", st, want)
		}
		if p.frames() != 5 || len(p.offs) != 0 {
			t.Errorf("port got %d plain frames (%d calls with offloads), want 5 plain: 3 segments, the finished frame, the plain one", p.frames(), len(p.offs))
		}
		if got := st.Lost(4); got != 1 {
			t.Errorf("Lost(4) = %d, want 1 (the frame with the bad offload)", got)
		}
	})
	t.Run("SendChecked sends frames checked against an MTU the port meets", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64}
		var e platform.Egress
		if st := e.SendChecked(p, platform.Batch{Frames: [][]byte{small, small}}, 1500); st.Sent != 2 || st.Oversize != 0 || p.frames() != 2 {
			t.Errorf("SendChecked(mtu 1500) to a 1500-byte port = %+v, port got %d; want both sent", st, p.frames())
		}
	})
	t.Run("SendChecked checks again for a port whose MTU is below the checked one", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64}
		var e platform.Egress
		st := e.SendChecked(p, platform.Batch{Frames: [][]byte{small, big}}, 9000)
		if st.Sent != 1 || st.Oversize != 1 || p.frames() != 1 {
			t.Errorf("SendChecked(mtu 9000) to a 1500-byte port = %+v, port got %d; want the 1,614-byte frame left out", st, p.frames())
		}
	})
	t.Run("SendChecked finishes offloads in software for a port without them", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64}
		var e platform.Egress
		st := e.SendChecked(p, platform.Batch{Frames: [][]byte{superF, small}, Offs: []platform.Offload{superO, {}}}, 1500)
		want := platform.EgressStats{Sent: 4, Finished: 1, Segments: 3}
		if st != want || p.frames() != 4 || len(p.offs) != 0 {
			t.Errorf("SendChecked = %+v, port got %d frames (%d calls with offloads); want %+v: 3 plain segments and the plain frame", st, p.frames(), len(p.offs), want)
		}
	})
	t.Run("a port that refuses some frames: Lost counts input frames", func(t *testing.T) {
		p := &recordingPort{mtu: 1500, batch: 64, accept: 1}
		var e platform.Egress
		st := e.Send(p, platform.Batch{Frames: [][]byte{small, small, big}, Offs: nil})
		if st.Sent != 1 || st.Lost(3) != 2 {
			t.Errorf("Send = %+v, Lost(3) = %d; want 1 sent and 2 lost (one refused, one oversize)", st, st.Lost(3))
		}
	})
}

func TestEgressSendZeroAllocs(t *testing.T) {
	p := &recordingPort{mtu: 1500, batch: 64, offload: true}
	small := platformtest.Packet{Payload: platformtest.Payload(100)}.Build(t)
	big := platformtest.Packet{Payload: platformtest.Payload(1600)}.Build(t)
	in := [][]byte{small, big, small}
	offs := make([]platform.Offload, 3)
	var e platform.Egress
	e.Send(p, platform.Batch{Frames: in, Offs: offs})
	sink := &countingPort{recordingPort: p}
	if n := testing.AllocsPerRun(100, func() { e.Send(sink, platform.Batch{Frames: in, Offs: offs}) }); n != 0 {
		t.Fatalf("Send allocates %.1f times per batch, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { e.SendChecked(sink, platform.Batch{Frames: in[:1], Offs: offs[:1]}, 1500) }); n != 0 {
		t.Fatalf("SendChecked allocates %.1f times per batch, want 0", n)
	}
}

// countingPort is a recordingPort that only counts (no copies).
type countingPort struct {
	*recordingPort
	n int
}

func (p *countingPort) WriteBatch(b platform.Batch) (int, error) {
	p.n += b.Len()
	return b.Len(), nil
}
