package frame_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform/platformtest"
)

func TestFinishChecksum(t *testing.T) {
	cases := []struct {
		name string
		p    platformtest.Packet
	}{
		{"TCP/IPv4", platformtest.Packet{Seq: 1, Payload: platformtest.Payload(1000)}},
		{"TCP/IPv4 odd length", platformtest.Packet{Seq: 1, Payload: platformtest.Payload(999)}},
		{"TCP/IPv4 802.1Q", platformtest.Packet{VLAN: 100, Seq: 7, Payload: platformtest.Payload(1448)}},
		{"TCP/IPv6", platformtest.Packet{V6: true, Seq: 9, Payload: platformtest.Payload(1200)}},
		{"UDP/IPv4", platformtest.Packet{UDP: true, Payload: platformtest.Payload(333)}},
		{"UDP/IPv6 802.1Q", platformtest.Packet{UDP: true, V6: true, VLAN: 5, Payload: platformtest.Payload(1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.p.Build(t)
			f, o := c.p.Partial(want)
			if bytes.Equal(f, want) {
				t.Fatal("test setup: the partial frame equals the complete one")
			}
			if err := frame.FinishChecksum(f, o); err != nil {
				t.Fatalf("FinishChecksum: %v", err)
			}
			if !bytes.Equal(f, want) {
				l4, off, _ := c.p.Offsets()
				t.Fatalf("checksum %#04x, want %#04x (gopacket)", f[l4+off:l4+off+2], want[l4+off:l4+off+2])
			}
		})
	}
	t.Run("no NEEDS_CSUM leaves the frame alone", func(t *testing.T) {
		f := platformtest.Packet{Payload: platformtest.Payload(10)}.Build(t)
		g := append([]byte(nil), f...)
		if err := frame.FinishChecksum(g, frame.Offload{Flags: frame.OffloadDataValid}); err != nil || !bytes.Equal(f, g) {
			t.Fatalf("FinishChecksum changed a complete frame (err %v)", err)
		}
	})
	t.Run("checksum outside the frame", func(t *testing.T) {
		f := platformtest.Packet{Payload: platformtest.Payload(10)}.Build(t)
		o := frame.Offload{Flags: frame.OffloadNeedsCsum, CsumStart: uint16(len(f) - 10), CsumOffset: 16}
		if err := frame.FinishChecksum(f, o); !errors.Is(err, frame.ErrOffloadBadFrame) {
			t.Fatalf("FinishChecksum = %v, want ErrOffloadBadFrame", err)
		}
	})
}

func TestSegment(t *testing.T) {
	const mss = 1448
	cases := []struct {
		name    string
		p       platformtest.Packet
		gso     uint8
		mss     int
		partial bool // the super-frame's checksum is partial (as from a stack)
	}{
		{"TCP/IPv4 3 segments, FIN PSH CWR", platformtest.Packet{ID: 0xfffe, Seq: 0xfffff000, Flags: "FPC", Payload: platformtest.Payload(2*mss + 100)}, frame.GSOTCPv4 | frame.GSOECN, mss, true},
		{"TCP/IPv4 exact multiple", platformtest.Packet{ID: 9, Seq: 5, Flags: "P", Payload: platformtest.Payload(4 * 1000)}, frame.GSOTCPv4, 1000, true},
		{"TCP/IPv4 one segment", platformtest.Packet{ID: 9, Seq: 5, Payload: platformtest.Payload(100)}, frame.GSOTCPv4, mss, true},
		{"TCP/IPv4 802.1Q, complete checksum", platformtest.Packet{VLAN: 100, ID: 1, Seq: 1, Payload: platformtest.Payload(3 * mss)}, frame.GSOTCPv4, mss, false},
		{"TCP/IPv6 802.1Q", platformtest.Packet{V6: true, VLAN: 42, Seq: 77, Flags: "P", Payload: platformtest.Payload(5*1428 + 1)}, frame.GSOTCPv6, 1428, true},
		{"UDP/IPv4 GSO", platformtest.Packet{UDP: true, ID: 3, Payload: platformtest.Payload(3*1200 + 30)}, frame.GSOUDPL4, 1200, true},
		{"UDP/IPv6 GSO", platformtest.Packet{UDP: true, V6: true, Payload: platformtest.Payload(2 * 1000)}, frame.GSOUDPL4, 1000, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			super := c.p.Build(t)
			o := frame.Offload{}
			if c.partial {
				super, o = c.p.Partial(super)
			}
			o.GSOType, o.GSOSize = c.gso, uint16(c.mss)
			orig := append([]byte(nil), super...)

			// The expected segments, built by gopacket.
			var want [][]byte
			pl := c.p.Payload
			for i := 0; i == 0 || len(pl) > 0; i++ {
				n := min(c.mss, len(pl))
				s := c.p
				s.Payload = pl[:n]
				pl = pl[n:]
				s.ID = c.p.ID + uint16(i)
				s.Seq = c.p.Seq + uint32(i*c.mss)
				s.Flags = ""
				for _, f := range c.p.Flags {
					if (f == 'C' && i == 0) || (f != 'C' && len(pl) == 0) {
						s.Flags += string(f)
					}
				}
				want = append(want, s.Build(t))
			}

			size, err := frame.SegmentedLen(super, o)
			if err != nil {
				t.Fatalf("SegmentedLen: %v", err)
			}
			total := 0
			for _, w := range want {
				total += len(w)
			}
			if size != total {
				t.Fatalf("SegmentedLen = %d, want %d", size, total)
			}
			_, _, hdrEnd := c.p.Offsets()
			wantPL := hdrEnd - 14 + c.mss
			if c.p.VLAN != 0 {
				wantPL -= 4
			}
			if len(want) == 1 {
				wantPL = len(want[0]) - 14
				if c.p.VLAN != 0 {
					wantPL -= 4
				}
			}
			if got := frame.SegmentPayloadLen(super, o); got != wantPL {
				t.Errorf("SegmentPayloadLen = %d, want %d", got, wantPL)
			}
			if !frame.FitsMTU(super, o, wantPL) || frame.FitsMTU(super, o, wantPL-1) {
				t.Errorf("FitsMTU at MTU %d, %d = %v, %v; want true, false", wantPL, wantPL-1,
					frame.FitsMTU(super, o, wantPL), frame.FitsMTU(super, o, wantPL-1))
			}
			buf := make([]byte, size)
			segs, err := frame.Segment(super, o, buf, nil)
			if err != nil {
				t.Fatalf("Segment: %v", err)
			}
			if len(segs) != len(want) {
				t.Fatalf("Segment made %d segments, want %d", len(segs), len(want))
			}
			for i := range want {
				if !bytes.Equal(segs[i], want[i]) {
					t.Errorf("segment %d of %d differs from gopacket's:\ngot  % x\nwant % x", i, len(want), segs[i][:min(80, len(segs[i]))], want[i][:min(80, len(want[i]))])
				}
			}
			if !bytes.Equal(super, orig) {
				t.Error("Segment changed its input frame")
			}
		})
	}
}

func TestSegmentRefuses(t *testing.T) {
	tcp := platformtest.Packet{Payload: platformtest.Payload(3000)}.Build(t)
	tcpPartial, po := platformtest.Packet{Payload: platformtest.Payload(3000)}.Partial(tcp)
	cases := []struct {
		name string
		f    []byte
		o    frame.Offload
		want error
	}{
		{"UFO", tcp, frame.Offload{GSOType: frame.GSOUDP, GSOSize: 1000}, frame.ErrOffloadUnsupported},
		{"GSO size 0", tcp, frame.Offload{GSOType: frame.GSOTCPv4}, frame.ErrOffloadBadFrame},
		{"TCPv6 type on an IPv4 frame", tcp, frame.Offload{GSOType: frame.GSOTCPv6, GSOSize: 1000}, frame.ErrOffloadBadFrame},
		{"UDP type on a TCP frame", tcp, frame.Offload{GSOType: frame.GSOUDPL4, GSOSize: 1000}, frame.ErrOffloadBadFrame},
		{"csum start past the end", tcpPartial, frame.Offload{Flags: po.Flags, CsumStart: 4000, CsumOffset: 16, GSOType: frame.GSOTCPv4, GSOSize: 1000}, frame.ErrOffloadBadFrame},
		{"not IP", append(append([]byte(nil), tcp[:12]...), append([]byte{0x88, 0xb5}, tcp[14:]...)...), frame.Offload{GSOType: frame.GSOTCPv4, GSOSize: 1000}, frame.ErrOffloadUnsupported},
		{"runt", tcp[:30], frame.Offload{GSOType: frame.GSOTCPv4, GSOSize: 1000}, frame.ErrOffloadBadFrame},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, 10000)
			if _, err := frame.Segment(c.f, c.o, buf, nil); !errors.Is(err, c.want) {
				t.Fatalf("Segment = %v, want %v", err, c.want)
			}
			// The MTU figure of a frame that cannot be parsed is its own.
			if got, want := frame.SegmentPayloadLen(c.f, c.o), len(c.f)-14; got != want && c.name != "csum start past the end" {
				t.Errorf("SegmentPayloadLen = %d, want the frame's own %d", got, want)
			}
		})
	}
	t.Run("buffer too small", func(t *testing.T) {
		o := po
		o.GSOType, o.GSOSize = frame.GSOTCPv4, 1000
		n, _ := frame.SegmentedLen(tcpPartial, o)
		if _, err := frame.Segment(tcpPartial, o, make([]byte, n-1), nil); !errors.Is(err, frame.ErrOffloadBadFrame) {
			t.Fatalf("Segment into %d of %d bytes = %v, want ErrOffloadBadFrame", n-1, n, err)
		}
	})
}

func TestSegmentZeroAllocs(t *testing.T) {
	p := platformtest.Packet{Seq: 1, Payload: platformtest.Payload(60000)}
	f, o := p.Partial(p.Build(t))
	o.GSOType, o.GSOSize = frame.GSOTCPv4, 1448
	n, _ := frame.SegmentedLen(f, o)
	buf := make([]byte, n)
	segs := make([][]byte, 0, 64)
	c := append([]byte(nil), f...)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if segs, err = frame.Segment(f, o, buf, segs[:0]); err != nil {
			t.Fatal(err)
		}
		copy(c, f)
		if err := frame.FinishChecksum(c, o); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Segment + FinishChecksum: %v allocations per run, want 0", allocs)
	}
}

func BenchmarkSegment(b *testing.B) {
	p := platformtest.Packet{Seq: 1, Payload: platformtest.Payload(64000)}
	f, o := p.Partial(p.Build(b))
	o.GSOType, o.GSOSize = frame.GSOTCPv4, 1448
	n, _ := frame.SegmentedLen(f, o)
	buf := make([]byte, n)
	segs := make([][]byte, 0, 64)
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		segs, _ = frame.Segment(f, o, buf, segs[:0])
	}
}

// A frame shorter than an Ethernet header fits no MTU; one that is just a
// header fits any.
func TestFitsMTUHeader(t *testing.T) {
	if frame.FitsMTU(make([]byte, frame.HeaderLen-1), frame.Offload{}, 9000) {
		t.Error("a 13-byte frame fits; want refused")
	}
	if !frame.FitsMTU(make([]byte, frame.HeaderLen), frame.Offload{}, 0) {
		t.Error("a bare Ethernet header does not fit MTU 0; want it to")
	}
}
