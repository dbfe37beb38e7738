package platform_test

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
	"github.com/swctl/swctl/platform/platformtest"
)

// finisherCable returns a memport cable: frames written to the first end
// are read from the second.
func finisherCable(t *testing.T) (*memport.Port, *memport.Port) {
	a, b := memport.Pair("eth0", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "peer0", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// drainAll returns copies of the frames queued at p.
func drainAll(p *memport.Port) [][]byte {
	var out [][]byte
	buf := make([][]byte, 64)
	for n, _ := p.TryReadBatch(buf); n > 0; n, _ = p.TryReadBatch(buf) {
		for _, f := range buf[:n] {
			out = append(out, bytes.Clone(f))
		}
	}
	return out
}

// TestSoftwareFinisherWriteTo checks that WriteTo sends plain frames as
// they are, finished copies of partial-checksum frames, the segments of
// super-frames (as Segment makes them), and drops and reports a frame it
// cannot finish, all in order, without changing its input.
func TestSoftwareFinisherWriteTo(t *testing.T) {
	plain := platformtest.Packet{UDP: true, ID: 1, Payload: platformtest.Payload(300)}.Build(t)
	tcp := platformtest.Packet{ID: 2, Seq: 9, Payload: platformtest.Payload(1000)}
	complete := tcp.Build(t)
	part, partO := tcp.Partial(complete)
	sp := platformtest.Packet{ID: 3, Seq: 100, Payload: platformtest.Payload(60000)}
	super, superO := sp.Partial(sp.Build(t))
	superO.GSOType, superO.GSOSize = platform.GSOTCPv4, 1448
	n, _ := frame.SegmentedLen(super, superO)
	wantSegs, err := frame.Segment(super, superO, make([]byte, n), nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: 2000, CsumOffset: 16}

	// Five super-frames overflow the first arena (256 KiB): WriteTo
	// sends what it holds and reuses it.
	frames := [][]byte{plain, part, super, plain, super, super, super, super}
	offs := []platform.Offload{{}, partO, superO, bad, superO, superO, superO, superO}
	var want [][]byte
	want = append(want, plain, complete)
	for range 5 {
		want = append(want, wantSegs...)
	}
	orig := make([][]byte, len(frames))
	for i, f := range frames {
		orig[i] = bytes.Clone(f)
	}

	a, b := finisherCable(t)
	var fin platform.SoftwareFinisher
	st := fin.WriteTo(a, 0, platform.Batch{Frames: frames, Offs: offs})
	got := drainAll(b)
	if len(got) != len(want) {
		t.Fatalf("peer got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d of %d bytes differs from the expected %d bytes", i, len(got[i]), len(want[i]))
		}
	}
	wantSt := platform.FinishStats{Sent: len(want), Finished: 6, Segments: 1 + 5*len(wantSegs), Dropped: 1,
		Err: frame.ErrOffloadBadFrame, ErrOffload: bad}
	if st != wantSt {
		t.Errorf("WriteTo = %+v, want %+v", st, wantSt)
	}
	if !errors.Is(st.Err, frame.ErrOffloadBadFrame) {
		t.Errorf("Err = %v, want ErrOffloadBadFrame", st.Err)
	}
	for i, f := range frames {
		if !bytes.Equal(f, orig[i]) {
			t.Errorf("WriteTo changed input frame %d", i)
		}
	}
	if len(fin.Frames()) != 0 {
		t.Errorf("finisher holds %d frames after WriteTo, want 0", len(fin.Frames()))
	}

	buf := make([][]byte, 64)
	allocs := testing.AllocsPerRun(50, func() {
		fin.WriteTo(a, 0, platform.Batch{Frames: frames, Offs: offs})
		for n, _ := b.TryReadBatch(buf); n > 0; n, _ = b.TryReadBatch(buf) {
		}
	})
	if allocs != 0 {
		t.Errorf("WriteTo: %v allocations per call once warm, want 0", allocs)
	}
}

// TestSoftwareFinisherAdd checks that Add keeps the frames it added
// before valid when its arena grows, and that plain frames are not
// copied.
func TestSoftwareFinisherAdd(t *testing.T) {
	sp := platformtest.Packet{ID: 3, Seq: 100, Payload: platformtest.Payload(60000)}
	super, o := sp.Partial(sp.Build(t))
	o.GSOType, o.GSOSize = platform.GSOTCPv4, 1448
	plain := platformtest.Packet{UDP: true, Payload: platformtest.Payload(100)}.Build(t)
	var fin platform.SoftwareFinisher
	if n, err := fin.Add(plain, platform.Offload{}); n != 1 || err != nil {
		t.Fatalf("Add(plain) = %d, %v; want 1, nil", n, err)
	}
	if &fin.Frames()[0][0] != &plain[0] {
		t.Error("Add copied a plain frame")
	}
	total := 1
	for i := range 8 { // 8 x ~62 KiB: the arena grows at least once
		if fin.Full(super, o) && i == 0 {
			t.Error("Full with an empty arena")
		}
		n, err := fin.Add(super, o)
		if err != nil || n != 42 {
			t.Fatalf("Add(super-frame %d) = %d, %v; want 42, nil", i, n, err)
		}
		total += n
	}
	segs := fin.Frames()
	if len(segs) != total {
		t.Fatalf("Frames() holds %d frames, want %d", len(segs), total)
	}
	want, _ := frame.Segment(super, o, make([]byte, 70000), nil)
	for i, s := range segs[1:] {
		if !bytes.Equal(s, want[i%42]) {
			t.Fatalf("segment %d changed after the arena grew", i)
		}
	}
	fin.Reset()
	if len(fin.Frames()) != 0 {
		t.Errorf("Frames() holds %d frames after Reset, want 0", len(fin.Frames()))
	}
}
