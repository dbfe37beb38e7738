package trunk

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
)

// offBatch is one batch an offPort's ReadBatch returns.
type offBatch struct {
	// frames and offs are the batch, parallel.
	frames [][]byte
	offs   []platform.Offload
}

// offPort is a member that carries offloads, as an AF_PACKET port with
// PACKET_VNET_HDR: the test feeds it received batches (views are handed
// out as they are) and it records what is written, frames copied, with
// their offloads.
type offPort struct {
	// name is the port's name.
	name string
	// in carries the batches ReadBatch returns.
	in chan offBatch
	// closed is closed by Close; once guards it.
	closed chan struct{}
	once   sync.Once
	// record, if false, makes writes count without keeping frames.
	record bool
	// writes counts frames written. Atomic.
	writes atomic.Uint64

	// mu guards sent and sentOffs.
	mu sync.Mutex
	// sent are copies of the frames written; sentOffs their offloads
	// (zero for WriteBatch).
	sent     [][]byte
	sentOffs []platform.Offload
}

func newOffPort(name string, record bool) *offPort {
	return &offPort{name: name, in: make(chan offBatch, 16), closed: make(chan struct{}), record: record}
}

var _ platform.Port = (*offPort)(nil)

func (p *offPort) Name() string { return p.name }
func (p *offPort) HardwareAddr() net.HardwareAddr {
	return net.HardwareAddr{2, 0, 0, 0, 8, p.name[len(p.name)-1]}
}
func (p *offPort) MTU() int                    { return 1500 }
func (p *offPort) Headroom() int               { return 0 }
func (p *offPort) BatchSize() int              { return platform.DefaultBatchSize }
func (p *offPort) Link() platform.LinkState    { return platform.LinkUp }
func (p *offPort) Counters() platform.Counters { return platform.Counters{} }
func (p *offPort) Offloads() bool              { return true }

func (p *offPort) ReadBatch(rb platform.Batch) (int, error) {
	select {
	case b := <-p.in:
		n := copy(rb.Frames, b.frames)
		if rb.Offs != nil {
			copy(rb.Offs, b.offs[:n])
		}
		return n, nil
	case <-p.closed:
		return 0, platform.ErrClosed
	}
}

func (p *offPort) WriteBatch(b platform.Batch) (int, error) {
	p.writes.Add(uint64(b.Len()))
	if p.record {
		p.mu.Lock()
		for i, f := range b.Frames {
			p.sent = append(p.sent, bytes.Clone(f))
			p.sentOffs = append(p.sentOffs, b.Offload(i))
		}
		p.mu.Unlock()
	}
	return b.Len(), nil
}

func (p *offPort) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// take returns and forgets what was written.
func (p *offPort) take() ([][]byte, []platform.Offload) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, o := p.sent, p.sentOffs
	p.sent, p.sentOffs = nil, nil
	return f, o
}

// offTrunk returns a trunk running proto over members.
func offTrunk(t *testing.T, proto Proto, members ...platform.Port) *Trunk {
	t.Helper()
	tr, err := New("trunk0", Options{Protocol: builtin(t, proto), Seed: 7, TickInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	for _, m := range members {
		if err := tr.AddPort(m, PortConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// offFrames returns a TCP super-frame, a TCP frame with a partial
// checksum, and a plain UDP frame, with their offloads.
func offFrames(t *testing.T) ([][]byte, []platform.Offload) {
	sup, supO := platformtest.TCPFrame(t, net.HardwareAddr(stB[:]), net.HardwareAddr(stA[:]), 0, 10000, 1448)
	part, partO := platformtest.TCPFrame(t, net.HardwareAddr(stB[:]), net.HardwareAddr(stA[:]), 7, 900, 0)
	return [][]byte{sup, part, udp4(1, 1)}, []platform.Offload{supO, partO, {}}
}

// wellFormed checks that f is a TCP/IPv4 frame (one tag allowed) whose
// lengths and checksums are what gopacket computes for its fields, and
// returns its TCP payload and sequence number.
func wellFormed(t *testing.T, f []byte) ([]byte, uint32) {
	t.Helper()
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if eth == nil || ip == nil || tcp == nil {
		t.Fatalf("frame of %d bytes is not TCP/IPv4: %v", len(f), pkt)
	}
	ls := []gopacket.SerializableLayer{eth}
	if q, ok := pkt.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q); ok {
		ls = append(ls, q)
	}
	payload := tcp.Payload
	tcp.SetNetworkLayerForChecksum(ip)
	ls = append(ls, ip, tcp, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), f) {
		t.Fatalf("frame of %d bytes differs from gopacket's rebuild with lengths and checksums computed (IP csum %#04x, TCP csum %#04x)", len(f), ip.Checksum, tcp.Checksum)
	}
	return payload, tcp.Seq
}

// checkSegments checks that segs are the segments of the super-frame sup
// cut at mss: each well formed, at most mss of payload, in sequence,
// their payloads together sup's.
func checkSegments(t *testing.T, segs [][]byte, sup []byte, mss int) {
	t.Helper()
	want, seq := tcpPayload(t, sup)
	var got []byte
	for i, s := range segs {
		p, sq := wellFormed(t, s)
		if len(p) > mss {
			t.Fatalf("segment %d carries %d bytes, want at most %d", i, len(p), mss)
		}
		if sq != seq+uint32(len(got)) {
			t.Fatalf("segment %d has seq %d, want %d", i, sq, seq+uint32(len(got)))
		}
		got = append(got, p...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("segments carry %d bytes, want the super-frame's %d bytes", len(got), len(want))
	}
}

// tcpPayload returns the payload and sequence number of a TCP frame.
func tcpPayload(t *testing.T, f []byte) ([]byte, uint32) {
	t.Helper()
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if tcp == nil {
		t.Fatal("not a TCP frame")
	}
	return tcp.Payload, tcp.Seq
}

// TestOffloadPassThrough checks, for each protocol, that frames and their
// offloads cross the trunk intact between WriteBatch and members
// that carry offloads, and from such a member to ReadBatch, as
// views of the member's frames.
func TestOffloadPassThrough(t *testing.T) {
	for _, proto := range []Proto{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast} {
		t.Run(string(proto), func(t *testing.T) {
			m0, m1 := newOffPort("eth0", true), newOffPort("eth1", true)
			tr := offTrunk(t, proto, m0, m1)
			frames, offs := offFrames(t)
			orig := make([][]byte, len(frames))
			for i, f := range frames {
				orig[i] = bytes.Clone(f)
			}
			if n, err := tr.WriteBatch(platform.Batch{Frames: frames, Offs: offs}); err != nil || n != len(frames) {
				t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(frames))
			}
			copies := 1
			if proto == ProtoBroadcast {
				copies = 2
			}
			seen := make([]int, len(frames))
			for _, m := range []*offPort{m0, m1} {
				got, gotOffs := m.take()
				for j, f := range got {
					i := -1
					for x := range orig {
						if bytes.Equal(orig[x], f) {
							i = x
						}
					}
					if i < 0 {
						t.Fatalf("%s got a frame of %d bytes that was not sent", m.name, len(f))
					}
					if gotOffs[j] != offs[i] {
						t.Errorf("%s got frame %d with offload %+v, want %+v", m.name, i, gotOffs[j], offs[i])
					}
					seen[i]++
				}
			}
			for i, n := range seen {
				if n != copies {
					t.Errorf("frame %d left %d times, want %d", i, n, copies)
				}
			}
			for i, f := range frames {
				if !bytes.Equal(f, orig[i]) {
					t.Errorf("WriteBatch changed frame %d", i)
				}
			}

			// Receive: the member that collects (failover: the primary,
			// eth0) hands its batch up, offloads and all, as views.
			m0.in <- offBatch{frames, offs}
			got := make([][]byte, 8)
			gotOffs := make([]platform.Offload, 8)
			n, err := tr.ReadBatch(platform.Batch{Frames: got, Offs: gotOffs})
			if err != nil || n != len(frames) {
				t.Fatalf("ReadBatch = %d, %v; want %d, nil", n, err, len(frames))
			}
			for i := range n {
				if &got[i][0] != &frames[i][0] || len(got[i]) != len(frames[i]) {
					t.Errorf("ReadBatch frame %d is not a view of the member's frame", i)
				}
				if gotOffs[i] != offs[i] {
					t.Errorf("ReadBatch frame %d has offload %+v, want %+v", i, gotOffs[i], offs[i])
				}
			}
			if s := tr.Stats(); s.SoftOffload != 0 || s.OffloadDropped != 0 {
				t.Errorf("Stats: SoftOffload %d, OffloadDropped %d; want 0, 0", s.SoftOffload, s.OffloadDropped)
			}
		})
	}
}

// TestOffloadSoftwarePlainMember checks that WriteBatch to members
// without offloads (memport cables) finishes checksums and cuts
// super-frames into MSS-sized segments in software.
func TestOffloadSoftwarePlainMember(t *testing.T) {
	for _, proto := range []Proto{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast} {
		t.Run(string(proto), func(t *testing.T) {
			fx := newFixture(t, proto, PortConfig{}, PortConfig{})
			frames, offs := offFrames(t)
			orig := make([][]byte, len(frames))
			for i, f := range frames {
				orig[i] = bytes.Clone(f)
			}
			// One frame per call, so that round robin's choice does not
			// matter: whichever member sent it, its far end has it.
			for i := range frames {
				if n, err := fx.tr.WriteBatch(platform.Batch{Frames: frames[i : i+1], Offs: offs[i : i+1]}); err != nil || n != 1 {
					t.Fatalf("WriteBatch(frame %d) = %d, %v; want 1, nil", i, n, err)
				}
				var got [][]byte
				for j := range fx.far {
					d := fx.drain(j)
					if proto == ProtoBroadcast && len(d) == 0 {
						t.Fatalf("frame %d: far end %d got nothing from broadcast", i, j)
					}
					if len(got) == 0 {
						got = d
					}
				}
				switch i {
				case 0: // the super-frame
					if len(got) != 7 {
						t.Fatalf("super-frame of 10000 bytes at MSS 1448 became %d frames, want 7", len(got))
					}
					checkSegments(t, got, orig[0], 1448)
				case 1: // partial checksum
					if len(got) != 1 || len(got[0]) != len(orig[1]) {
						t.Fatalf("partial-checksum frame became %d frames, want 1 of %d bytes", len(got), len(orig[1]))
					}
					wellFormed(t, got[0])
				case 2: // plain
					if len(got) != 1 || !bytes.Equal(got[0], orig[2]) {
						t.Fatalf("plain frame arrived as %d frames, want 1 unchanged", len(got))
					}
				}
			}
			for i, f := range frames {
				if !bytes.Equal(f, orig[i]) {
					t.Errorf("WriteBatch changed frame %d", i)
				}
			}
			if s := fx.tr.Stats(); s.SoftOffload == 0 || s.OffloadDropped != 0 || s.TxPackets != 3 {
				t.Errorf("Stats: SoftOffload %d, OffloadDropped %d, TxPackets %d; want >0, 0, 3", s.SoftOffload, s.OffloadDropped, s.TxPackets)
			}
		})
	}
}

// TestOffloadMixedMembers checks a round-robin trunk over one member with
// offloads and one without: the first gets super-frames whole, the second
// their segments.
func TestOffloadMixedMembers(t *testing.T) {
	off := newOffPort("eth0", true)
	near, far := newMemPair("eth1")
	t.Cleanup(func() { _ = far.Close() })
	tr := offTrunk(t, ProtoRoundRobin, off, near)
	sup, o := platformtest.TCPFrame(t, net.HardwareAddr(stB[:]), net.HardwareAddr(stA[:]), 0, 4000, 1000)
	if n, err := tr.WriteBatch(platform.Batch{Frames: [][]byte{sup, sup}, Offs: []platform.Offload{o, o}}); err != nil || n != 2 {
		t.Fatalf("WriteBatch = %d, %v; want 2, nil", n, err)
	}
	got, gotOffs := off.take()
	if len(got) != 1 || !bytes.Equal(got[0], sup) || gotOffs[0] != o {
		t.Fatalf("member with offloads got %d frames, want the super-frame with its offload", len(got))
	}
	buf := make([][]byte, 16)
	n, _ := far.TryReadBatch(buf)
	if n != 4 {
		t.Fatalf("member without offloads sent %d frames, want 4 segments", n)
	}
	checkSegments(t, buf[:n], sup, 1000)
	if n, err := tr.WriteBatch(platform.Batch{Frames: [][]byte{udp4(1, 1)}, Offs: nil}); err != nil || n != 1 {
		t.Errorf("WriteBatch(nil offloads) = %d, %v; want 1 plain frame sent", n, err)
	}
}

// TestOffloadReadBatchFinishes checks that plain ReadBatch (a consumer
// without offloads: the daemon's TAP pump) never hands out a frame with an
// unfinished offload: partial checksums are finished and super-frames
// come out as their segments, while ReadBatch on a Handle gets
// them as received.
func TestOffloadReadBatchFinishes(t *testing.T) {
	m0 := newOffPort("eth0", true)
	tr := offTrunk(t, ProtoFailover, m0)
	frames, offs := offFrames(t)
	orig := make([][]byte, len(frames))
	for i, f := range frames {
		orig[i] = bytes.Clone(f)
	}
	m0.in <- offBatch{frames, offs}
	var got [][]byte
	buf := make([][]byte, 4) // smaller than the 9 frames: several calls
	for len(got) < 9 {
		n, err := tr.ReadBatch(platform.Batch{Frames: buf})
		if err != nil {
			t.Fatalf("ReadBatch: %v after %d frames", err, len(got))
		}
		for _, f := range buf[:n] {
			got = append(got, bytes.Clone(f))
		}
	}
	if len(got) != 9 {
		t.Fatalf("ReadBatch returned %d frames, want 7 segments + 2", len(got))
	}
	checkSegments(t, got[:7], orig[0], 1448)
	wellFormed(t, got[7])
	if !bytes.Equal(got[8], orig[2]) {
		t.Error("the plain frame came out changed")
	}
	if s := tr.Stats(); s.SoftOffload != 2 || s.RxPackets != 9 {
		t.Errorf("Stats: SoftOffload %d, RxPackets %d; want 2, 9", s.SoftOffload, s.RxPackets)
	}

	h := tr.Handle()
	defer h.Close()
	frames2, offs2 := offFrames(t)
	m0.in <- offBatch{frames2, offs2}
	fs, os := make([][]byte, 8), make([]platform.Offload, 8)
	n, err := h.ReadBatch(platform.Batch{Frames: fs, Offs: os})
	if err != nil || n != 3 {
		t.Fatalf("Handle.ReadBatch = %d, %v; want 3, nil", n, err)
	}
	for i := range n {
		if os[i] != offs2[i] || !bytes.Equal(fs[i], frames2[i]) {
			t.Errorf("Handle.ReadBatch frame %d: offload %+v, want %+v, unchanged", i, os[i], offs2[i])
		}
	}
}

// TestOffloadUnsupportedDropped checks that a frame whose offload the
// software cannot do (a checksum offset outside the frame) is dropped and
// counted, both ways: towards a member and towards a consumer without
// offloads. (A super-frame the software cannot cut is refused earlier, by
// the MTU check.)
func TestOffloadUnsupportedDropped(t *testing.T) {
	near, far := newMemPair("eth0")
	t.Cleanup(func() { _ = far.Close() })
	m1 := newOffPort("eth1", true)
	tr := offTrunk(t, ProtoRoundRobin, near, m1)
	bad := platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: 200, CsumOffset: 6}
	// Round robin from 0: the bad frame by eth0 (no offloads).
	if n, _ := tr.WriteBatch(platform.Batch{Frames: [][]byte{udp4(1, 1), udp4(2, 2)}, Offs: []platform.Offload{bad, {}}}); n != 1 {
		t.Errorf("WriteBatch sent %d frames, want 1 (the bad one dropped)", n)
	}
	if s := tr.Stats(); s.OffloadDropped != 1 || s.TxPackets != 1 {
		t.Errorf("after WriteBatch: OffloadDropped %d, TxPackets %d; want 1, 1", s.OffloadDropped, s.TxPackets)
	}
	m1.in <- offBatch{[][]byte{udp4(3, 3), udp4(4, 4)}, []platform.Offload{bad, {}}}
	buf := make([][]byte, 4)
	if n, err := tr.ReadBatch(platform.Batch{Frames: buf}); err != nil || n != 1 || seqOf(buf[0]) != 4 {
		t.Fatalf("ReadBatch = %d, %v; want 1 (the good frame), nil", n, err)
	}
	if s := tr.Stats(); s.OffloadDropped != 2 {
		t.Errorf("after ReadBatch: OffloadDropped %d, want 2", s.OffloadDropped)
	}
}
