package frame_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform/platformtest"
)

// groFlow builds n consecutive TCP segments of one flow, each with a
// payload of size bytes (the last one last bytes), IPv4 IDs and sequence
// numbers going up as a sending stack's do. flags is the last segment's.
func groFlow(t testing.TB, v6 bool, vlan uint16, n, size, last int, flags string) [][]byte {
	t.Helper()
	data := platformtest.Payload(size*(n-1) + last)
	var fs [][]byte
	for i := range n {
		p := platformtest.Packet{V6: v6, VLAN: vlan, ID: uint16(100 + i), Seq: uint32(1000 + i*size)}
		p.Payload = data[i*size : min((i+1)*size, len(data))]
		if i == n-1 {
			p.Flags = flags
		}
		fs = append(fs, p.Build(t))
	}
	return fs
}

// refresh recomputes the IPv4 header checksum and the TCP checksum of a
// TCP frame behind an untagged Ethernet header, after a test changed it.
func refresh(f []byte) {
	h := frame.Walk(f)
	if !h.IPv6 {
		binary.BigEndian.PutUint16(f[h.L3+10:], 0)
		binary.BigEndian.PutUint16(f[h.L3+10:], ^platformtest.Fold(platformtest.NaiveSum(f[h.L3:h.L3End])))
	}
	binary.BigEndian.PutUint16(f[h.L4+16:], 0)
	var s uint32
	if h.IPv6 {
		s = platformtest.NaiveSum(f[h.L3+8 : h.L3+40])
	} else {
		s = platformtest.NaiveSum(f[h.L3+12 : h.L3+20])
	}
	s += 6 + uint32(len(f)-h.L4) + platformtest.NaiveSum(f[h.L4:])
	binary.BigEndian.PutUint16(f[h.L4+16:], ^platformtest.Fold(s))
}

// resegment cuts the merged frame m back with Segment.
func resegment(t *testing.T, m []byte, o frame.Offload) [][]byte {
	t.Helper()
	if err := frame.CheckOffload(m, o); err != nil {
		t.Fatalf("merged frame fails CheckOffload: %v", err)
	}
	n, err := frame.SegmentedLen(m, o)
	if err != nil {
		t.Fatal(err)
	}
	segs, err := frame.Segment(m, o, make([]byte, n), nil)
	if err != nil {
		t.Fatalf("Segment: %v", err)
	}
	return segs
}

func TestGROMerges(t *testing.T) {
	cases := []struct {
		name   string
		frames [][]byte
		gso    uint8
	}{
		{"TCP/IPv4, 4 full segments", groFlow(t, false, 0, 4, 1448, 1448, ""), frame.GSOTCPv4},
		{"TCP/IPv4, shorter last with PSH", groFlow(t, false, 0, 5, 1448, 300, "P"), frame.GSOTCPv4},
		{"TCP/IPv6", groFlow(t, true, 0, 3, 1428, 1428, "P"), frame.GSOTCPv6},
		{"TCP/IPv4 802.1Q", groFlow(t, false, 7, 3, 1000, 999, ""), frame.GSOTCPv4},
		{"TCP/IPv6 802.1Q, 44 segments (64 KiB)", groFlow(t, true, 7, 44, 1400, 1400, ""), frame.GSOTCPv6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g frame.GRO
			if n := g.Plan(c.frames, nil); n != 1 {
				t.Fatalf("Plan made %d frames of %d segments, want 1", n, len(c.frames))
			}
			if g.Frames(0) != len(c.frames) {
				t.Fatalf("the merged frame holds %d segments, want %d", g.Frames(0), len(c.frames))
			}
			m, o := g.Item(0, c.frames, nil)
			first := frame.Walk(c.frames[0])
			want := frame.Offload{Flags: frame.OffloadNeedsCsum, GSOType: c.gso, HdrLen: uint16(first.L4 + 32),
				GSOSize: uint16(len(c.frames[0]) - first.L4 - 32), CsumStart: uint16(first.L4), CsumOffset: 16}
			if o != want {
				t.Fatalf("offload %+v, want %+v", o, want)
			}
			segs := resegment(t, m, o)
			if len(segs) != len(c.frames) {
				t.Fatalf("the merged frame re-segments into %d frames, want %d", len(segs), len(c.frames))
			}
			for i := range segs {
				if !bytes.Equal(segs[i], c.frames[i]) {
					t.Fatalf("segment %d after merging and re-segmenting:\n% x\nwant\n% x", i, segs[i], c.frames[i])
				}
			}
		})
	}
}

func TestGROTrustsOffloadedChecksums(t *testing.T) {
	fs := groFlow(t, false, 0, 3, 1448, 1448, "")
	p := platformtest.Packet{}
	cases := []struct {
		name string
		offs func() ([][]byte, []frame.Offload)
	}{
		{"partial checksums (NEEDS_CSUM)", func() ([][]byte, []frame.Offload) {
			var in [][]byte
			var offs []frame.Offload
			for _, f := range fs {
				pf, o := p.Partial(f)
				in, offs = append(in, pf), append(offs, o)
			}
			return in, offs
		}},
		{"verified checksums (DATA_VALID) over a wrong one", func() ([][]byte, []frame.Offload) {
			in := [][]byte{fs[0], append([]byte(nil), fs[1]...), fs[2]}
			in[1][14+20+16] ^= 0xff
			return in, []frame.Offload{{Flags: frame.OffloadDataValid}, {Flags: frame.OffloadDataValid}, {Flags: frame.OffloadDataValid}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, offs := c.offs()
			var g frame.GRO
			if n := g.Plan(in, offs); n != 1 {
				t.Fatalf("Plan made %d frames, want 1", n)
			}
			m, o := g.Item(0, in, offs)
			for i, s := range resegment(t, m, o) {
				if !bytes.Equal(s, fs[i]) {
					t.Fatalf("segment %d differs from the complete input", i)
				}
			}
		})
	}
}

func TestGRODoesNotMerge(t *testing.T) {
	// Each case changes the second of two segments that would merge, and
	// fixes its checksums unless the case is about them.
	cases := []struct {
		name   string
		v6     bool
		change func(f []byte)
		keep   bool // leave the checksums as changed
	}{
		{"another destination MAC", false, func(f []byte) { f[5] ^= 1 }, false},
		{"another source address", false, func(f []byte) { f[14+15] ^= 1 }, false},
		{"another destination port", false, func(f []byte) { f[34+3] ^= 1 }, false},
		{"another TOS", false, func(f []byte) { f[14+1] = 0x10 }, false},
		{"another TTL", false, func(f []byte) { f[14+8] = 63 }, false},
		{"DF cleared", false, func(f []byte) { f[14+6] &^= 0x40 }, false},
		{"IPv4 ID not the next one", false, func(f []byte) { f[14+5]++ }, false},
		{"a bad IPv4 header checksum", false, func(f []byte) { f[14+10] ^= 0xff }, true},
		{"a bad TCP checksum", false, func(f []byte) { f[34+16] ^= 0xff }, true},
		{"sequence gap", false, func(f []byte) { f[34+7]++ }, false},
		{"another ack number", false, func(f []byte) { f[34+11]++ }, false},
		{"another window", false, func(f []byte) { f[34+15]++ }, false},
		{"other TCP options", false, func(f []byte) { f[34+20+4] ^= 1 }, false},
		{"FIN", false, func(f []byte) { f[34+13] |= 0x01 }, false},
		{"SYN", false, func(f []byte) { f[34+13] |= 0x02 }, false},
		{"RST", false, func(f []byte) { f[34+13] |= 0x04 }, false},
		{"URG", false, func(f []byte) { f[34+13] |= 0x20 }, false},
		{"CWR", false, func(f []byte) { f[34+13] |= 0x80 }, false},
		{"ECE on one segment only", false, func(f []byte) { f[34+13] |= 0x40 }, false},
		{"no ACK", false, func(f []byte) { f[34+13] &^= 0x10 }, false},
		{"IPv6 flow label", true, func(f []byte) { f[14+3] = 1 }, false},
		{"IPv6 traffic class", true, func(f []byte) { f[14+1] |= 0x01 }, false},
		{"IPv6 hop limit", true, func(f []byte) { f[14+7] = 63 }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := groFlow(t, c.v6, 0, 2, 1000, 1000, "")
			c.change(fs[1])
			if !c.keep {
				refresh(fs[1])
			}
			assertApart(t, fs, nil)
		})
	}
	t.Run("PSH on the first", func(t *testing.T) {
		fs := groFlow(t, false, 0, 2, 1000, 1000, "")
		fs[0][34+13] |= 0x08
		refresh(fs[0])
		assertApart(t, fs, nil)
	})
	t.Run("a shorter segment before the last", func(t *testing.T) {
		short := platformtest.Packet{ID: 100, Seq: 1000, Payload: platformtest.Payload(1000)[:500]}.Build(t)
		next := platformtest.Packet{ID: 101, Seq: 1500, Payload: platformtest.Payload(1000)}.Build(t)
		assertApart(t, [][]byte{short, next}, nil)
	})
	t.Run("a longer segment than the first", func(t *testing.T) {
		a := platformtest.Packet{ID: 100, Seq: 1000, Payload: platformtest.Payload(500)}.Build(t)
		b := platformtest.Packet{ID: 101, Seq: 1500, Payload: platformtest.Payload(1000)}.Build(t)
		assertApart(t, [][]byte{a, b}, nil)
	})
	t.Run("no payload (pure ACKs)", func(t *testing.T) {
		a := platformtest.Packet{ID: 100, Seq: 1000}.Build(t)
		b := platformtest.Packet{ID: 101, Seq: 1000}.Build(t)
		assertApart(t, [][]byte{a, b}, nil)
	})
	t.Run("more than 64 KiB", func(t *testing.T) {
		fs := groFlow(t, false, 0, 47, 1400, 1400, "")
		var g frame.GRO
		if n := g.Plan(fs, nil); n != 2 || g.Frames(0) != 46 {
			t.Fatalf("47 segments of 1,400 bytes: %d frames, the first of %d segments; want 2, 46 (65,535 bytes)", n, g.Frames(0))
		}
	})
	t.Run("a super-frame (GSO) already", func(t *testing.T) {
		fs := groFlow(t, false, 0, 2, 1000, 1000, "")
		offs := []frame.Offload{{}, {GSOType: frame.GSOTCPv4, GSOSize: 500}}
		assertApart(t, fs, offs)
	})
	t.Run("a partial checksum elsewhere than TCP's", func(t *testing.T) {
		fs := groFlow(t, false, 0, 2, 1000, 1000, "")
		offs := []frame.Offload{{}, {Flags: frame.OffloadNeedsCsum, CsumStart: 34, CsumOffset: 6}}
		assertApart(t, fs, offs)
	})
	t.Run("Ethernet padding behind the IP packet", func(t *testing.T) {
		fs := groFlow(t, false, 0, 2, 1000, 1000, "")
		fs[1] = append(fs[1], 0, 0)
		assertApart(t, fs, nil)
	})
	t.Run("an IPv4 fragment", func(t *testing.T) {
		fs := groFlow(t, false, 0, 2, 1000, 1000, "")
		fs[1][14+6] |= 0x20 // MF
		refresh(fs[1])
		assertApart(t, fs, nil)
	})
	t.Run("an IPv6 extension header", func(t *testing.T) {
		a := v6ExtFrame(t)
		b := append([]byte(nil), a...)
		binary.BigEndian.PutUint32(b[62+4:], binary.BigEndian.Uint32(a[62+4:])+100)
		assertApart(t, [][]byte{a, b}, nil)
	})
	t.Run("UDP", func(t *testing.T) {
		a := platformtest.Packet{UDP: true, Payload: platformtest.Payload(1000)}.Build(t)
		assertApart(t, [][]byte{a, a}, nil)
	})
}

// assertApart checks that GRO leaves every frame of fs as it is.
func assertApart(t *testing.T, fs [][]byte, offs []frame.Offload) {
	t.Helper()
	var g frame.GRO
	if n := g.Plan(fs, offs); n != len(fs) {
		t.Fatalf("Plan made %d frames of %d, want them apart", n, len(fs))
	}
	for k := range fs {
		f, o := g.Item(k, fs, offs)
		var want frame.Offload
		if offs != nil {
			want = offs[k]
		}
		if !bytes.Equal(f, fs[k]) || o != want {
			t.Fatalf("frame %d changed: %+v\n% x", k, o, f)
		}
	}
}

func TestGROKeepsEachFlowInOrder(t *testing.T) {
	a := groFlow(t, false, 0, 3, 1000, 1000, "")
	b := groFlow(t, true, 0, 2, 1000, 1000, "")
	udp := platformtest.Packet{UDP: true, Payload: platformtest.Payload(100)}.Build(t)
	// a0 b0 udp a1 b1 a2(gap: starts a new group) : a0+a1, b0+b1, udp, a2.
	gap := append([]byte(nil), a[2]...)
	binary.BigEndian.PutUint32(gap[34+4:], binary.BigEndian.Uint32(gap[34+4:])+1)
	refresh(gap)
	in := [][]byte{a[0], b[0], udp, a[1], b[1], gap}
	var g frame.GRO
	n := g.Plan(in, nil)
	want := []int{2, 2, 1, 1}
	if n != len(want) {
		t.Fatalf("Plan made %d frames, want %d", n, len(want))
	}
	for k, w := range want {
		if g.Frames(k) != w {
			t.Fatalf("frame %d holds %d segments, want %d", k, g.Frames(k), w)
		}
	}
	if f, _ := g.Item(2, in, nil); !bytes.Equal(f, udp) {
		t.Fatal("frame 2 is not the UDP frame")
	}
	if f, _ := g.Item(3, in, nil); !bytes.Equal(f, gap) {
		t.Fatal("frame 3 is not the segment after the gap")
	}
}

func TestGROZeroAllocs(t *testing.T) {
	in := append(groFlow(t, false, 0, 16, 1448, 1448, ""), groFlow(t, true, 0, 16, 1428, 1428, "")...)
	var g frame.GRO
	g.Plan(in, nil)
	allocs := testing.AllocsPerRun(100, func() {
		for k := range g.Plan(in, nil) {
			g.Item(k, in, nil)
		}
	})
	if allocs != 0 {
		t.Fatalf("Plan and Item allocate %.1f times per batch, want 0", allocs)
	}
}

// BenchmarkGRO is the cost per segment of merging 8 interleaved flows of
// 1,448-byte segments, 64 segments per batch, with the TCP checksums
// verified (plain input) or trusted (DATA_VALID).
func BenchmarkGRO(b *testing.B) {
	var flows [8][][]byte
	for i := range flows {
		flows[i] = groFlow(b, false, 0, 8, 1448, 1448, "")
		for _, f := range flows[i] {
			f[34+1] = byte(i) // the source port
			refresh(f)
		}
	}
	var in [][]byte
	for j := range 8 {
		for i := range flows {
			in = append(in, flows[i][j])
		}
	}
	valid := make([]frame.Offload, len(in))
	for i := range valid {
		valid[i].Flags = frame.OffloadDataValid
	}
	for _, c := range []struct {
		name string
		offs []frame.Offload
	}{{"verified", nil}, {"trusted", valid}} {
		b.Run(c.name, func(b *testing.B) {
			var g frame.GRO
			b.ReportAllocs()
			b.SetBytes(int64(len(in) * len(in[0])))
			for b.Loop() {
				for k := range g.Plan(in, c.offs) {
					g.Item(k, in, c.offs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/segment")
		})
	}
}

// groBatch encodes frames and their offloads as FuzzGRO's input: for each
// frame a 2-byte length, an offload byte (0 none, 1 DATA_VALID, 2
// NEEDS_CSUM at the TCP checksum) and the frame.
func groBatch(fs [][]byte, kind byte) []byte {
	var b []byte
	for _, f := range fs {
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, kind)
		b = append(b, f...)
	}
	return b
}

// FuzzGRO merges what the fuzzer makes of batches of segments and checks
// the result against the input: a frame left alone comes out as it went
// in, and a merged frame passes CheckOffload and re-segments (Segment)
// into input frames, each used once, equal byte for byte but for the TCP
// checksum of a segment whose checksum GRO trusted.
func FuzzGRO(f *testing.F) {
	f.Add(groBatch(groFlow(f, false, 0, 3, 100, 60, "P"), 0))
	f.Add(groBatch(groFlow(f, true, 5, 3, 100, 100, ""), 1))
	f.Add(groBatch(append(groFlow(f, false, 0, 2, 50, 50, ""), groFlow(f, true, 0, 2, 40, 40, "")...), 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fs [][]byte
		var offs []frame.Offload
		for len(data) >= 3 && len(fs) < 64 {
			n := min(int(binary.BigEndian.Uint16(data)), len(data)-3)
			fr := data[3 : 3+n : 3+n]
			var o frame.Offload
			switch data[2] % 3 {
			case 1:
				o.Flags = frame.OffloadDataValid
			case 2:
				o = frame.Offload{Flags: frame.OffloadNeedsCsum, CsumStart: uint16(frame.Walk(fr).L4), CsumOffset: 16}
			}
			fs, offs = append(fs, fr), append(offs, o)
			data = data[3+n:]
		}
		orig := make([][]byte, len(fs))
		for i := range fs {
			orig[i] = append([]byte(nil), fs[i]...)
		}
		var g frame.GRO
		used := make([]bool, len(fs))
		total := 0
		for k := range g.Plan(fs, offs) {
			m, o := g.Item(k, fs, offs)
			total += g.Frames(k)
			if g.Frames(k) == 1 {
				i := findInput(fs, offs, used, m, false)
				if i < 0 || o != offs[i] {
					t.Fatalf("frame %d left alone is no input frame as it was (offload %+v)", k, o)
				}
				continue
			}
			for _, s := range resegment(t, m, o) {
				if findInput(fs, offs, used, s, true) < 0 {
					t.Fatalf("item %d (%d segments) re-segments into a frame that is no input:\n% x", k, g.Frames(k), s)
				}
			}
		}
		if total != len(fs) {
			t.Fatalf("the items hold %d frames, the batch %d", total, len(fs))
		}
		for i := range fs {
			if !used[i] {
				t.Fatalf("input frame %d is in no item", i)
			}
			if !bytes.Equal(fs[i], orig[i]) {
				t.Fatalf("input frame %d changed", i)
			}
		}
	})
}

// findInput marks and returns the first unused input equal to s, or -1.
// With segment set, s came out of Segment: a trusted input's TCP checksum
// is not compared (Segment computes it), a verified one's is.
func findInput(fs [][]byte, offs []frame.Offload, used []bool, s []byte, segment bool) int {
	for i, f := range fs {
		if used[i] || len(f) != len(s) {
			continue
		}
		eq := bytes.Equal(f, s)
		if !eq && segment && offs[i].Flags != 0 {
			at := frame.Walk(f).L4 + 16
			eq = at >= 16 && bytes.Equal(f[:at], s[:at]) && bytes.Equal(f[at+2:], s[at+2:])
		}
		if eq {
			used[i] = true
			return i
		}
	}
	return -1
}
