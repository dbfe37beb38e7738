package bpf

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// rec is one record of a test buffer.
type rec struct {
	// hdrlen is bh_hdrlen; the bytes between the header fields and it
	// are filled with 0xee, so reading padding as frame shows.
	hdrlen int
	// frame is the captured bytes.
	frame []byte
	// datalen is bh_datalen; 0 means len(frame).
	datalen int
	// caplen, when not 0, overrides bh_caplen (len(frame)) to make a lie.
	caplen uint32
}

// build lays records out as the kernel does: each at a multiple of the
// alignment (padding 0xdd), the last without trailing padding.
func build(l hdrLayout, recs ...rec) []byte {
	var b []byte
	for _, r := range recs {
		for len(b)%l.align != 0 {
			b = append(b, 0xdd)
		}
		h := bytes.Repeat([]byte{0xee}, max(r.hdrlen, l.minHeader()))
		caplen, datalen := uint32(len(r.frame)), r.datalen
		if r.caplen != 0 {
			caplen = r.caplen
		}
		if datalen == 0 {
			datalen = len(r.frame)
		}
		binary.NativeEndian.PutUint32(h[l.caplen:], caplen)
		binary.NativeEndian.PutUint32(h[l.datalen:], uint32(datalen))
		binary.NativeEndian.PutUint16(h[l.hdrlen:], uint16(r.hdrlen))
		b = append(b, h[:max(r.hdrlen, l.minHeader())]...)
		b = append(b, r.frame...)
	}
	return b
}

// testFrame returns an n-byte frame whose bytes all derive from seed.
func testFrame(n int, seed byte) []byte {
	f := make([]byte, n)
	for i := range f {
		f[i] = seed + byte(i)
	}
	return f
}

// collectAll takes every frame out of buf in batches of batch, copying
// each, and returns them with the skipped count and the first error.
func collectAll(l hdrLayout, buf []byte, batch int) (got [][]byte, skipped int, err error) {
	r := newRecordBuffer(l, len(buf))
	copy(r.buf, buf)
	r.filled(len(buf))
	frames := make([][]byte, batch)
	for !r.empty() {
		n, _, s, e := r.collect(frames)
		for _, f := range frames[:n] {
			got = append(got, bytes.Clone(f))
		}
		skipped += s
		if e != nil && err == nil {
			err = e
		}
	}
	return got, skipped, err
}

// layouts are the layouts every table runs against, with the bh_hdrlen
// their kernels give an Ethernet interface.
var layouts = []struct {
	name   string
	layout hdrLayout
	hdrlen int
}{
	{"openbsd", openbsdLayout, 26},
	{"openbsd-csumflags", openbsdLayout, 30},
	{"freebsd64", freebsd64Layout, 26},
}

func TestCollect(t *testing.T) {
	f60, f61, f62, f63, f64 := testFrame(60, 1), testFrame(61, 2), testFrame(62, 3), testFrame(63, 4), testFrame(64, 5)
	for _, lt := range layouts {
		l, h := lt.layout, lt.hdrlen
		cases := []struct {
			name    string
			buf     []byte
			want    [][]byte
			skipped int
			err     error
		}{
			{"zero-length buffer", nil, nil, 0, nil},
			{"one frame", build(l, rec{hdrlen: h, frame: f60}), [][]byte{f60}, 0, nil},
			{"several frames with alignment padding",
				build(l, rec{hdrlen: h, frame: f60}, rec{hdrlen: h, frame: f61}, rec{hdrlen: h, frame: f62}, rec{hdrlen: h, frame: f63}, rec{hdrlen: h, frame: f64}),
				[][]byte{f60, f61, f62, f63, f64}, 0, nil},
			{"header without padding (bh_hdrlen = end of bh_hdrlen)",
				build(l, rec{hdrlen: l.minHeader(), frame: f61}, rec{hdrlen: l.minHeader(), frame: f60}),
				[][]byte{f61, f60}, 0, nil},
			{"snapped frame (caplen < datalen) skipped",
				build(l, rec{hdrlen: h, frame: f60}, rec{hdrlen: h, frame: f61, datalen: 1514}, rec{hdrlen: h, frame: f62}),
				[][]byte{f60, f62}, 1, nil},
			{"runt (shorter than an Ethernet header) skipped",
				build(l, rec{hdrlen: h, frame: testFrame(13, 9)}, rec{hdrlen: h, frame: f63}),
				[][]byte{f63}, 1, nil},
			{"empty capture skipped",
				build(l, rec{hdrlen: h, frame: nil}, rec{hdrlen: h, frame: f64}),
				[][]byte{f64}, 1, nil},
			{"truncated header after a frame",
				build(l, rec{hdrlen: h, frame: f60}, rec{hdrlen: h, frame: f61})[:l.wordAlign(h+60)+l.minHeader()-1],
				[][]byte{f60}, 0, errTruncated},
			{"bh_hdrlen beyond the buffer",
				build(l, rec{hdrlen: h, frame: f60}, rec{hdrlen: 200, frame: nil})[:l.wordAlign(h+60)+100],
				[][]byte{f60}, 0, errTruncated},
			{"bh_caplen beyond the buffer",
				build(l, rec{hdrlen: h, frame: f60, caplen: 61, datalen: 61}),
				nil, 0, errTruncated},
			{"huge bh_caplen",
				build(l, rec{hdrlen: h, frame: f60, caplen: 0xffffffff, datalen: 60}),
				nil, 0, errTruncated},
			{"bh_hdrlen shorter than the header",
				build(l, rec{hdrlen: h, frame: f60}, rec{hdrlen: 4, frame: f61}),
				[][]byte{f60}, 0, errCorrupt},
			{"bh_hdrlen 0",
				build(l, rec{hdrlen: 0, frame: f60}),
				nil, 0, errCorrupt},
			{"bh_caplen larger than bh_datalen",
				build(l, rec{hdrlen: h, frame: f60, datalen: 59}),
				nil, 0, errCorrupt},
		}
		for _, c := range cases {
			for _, batch := range []int{1, 2, 64} {
				t.Run(fmt.Sprintf("%s/%s/batch%d", lt.name, c.name, batch), func(t *testing.T) {
					got, skipped, err := collectAll(l, c.buf, batch)
					if !errors.Is(err, c.err) {
						t.Fatalf("error %v, want %v", err, c.err)
					}
					if len(got) != len(c.want) {
						t.Fatalf("got %d frames, want %d", len(got), len(c.want))
					}
					for i := range got {
						if !bytes.Equal(got[i], c.want[i]) {
							t.Errorf("frame %d = %x, want %x", i, got[i], c.want[i])
						}
					}
					if skipped != c.skipped {
						t.Errorf("skipped %d records, want %d", skipped, c.skipped)
					}
				})
			}
		}
	}
}

// Buffers written out byte by byte as each kernel lays them down for two
// frames (20 and 16 bytes) on amd64 and arm64: independent of build.
var recorded = []struct {
	name   string
	layout hdrLayout
	hex    string
}{
	{"openbsd", openbsdLayout, "" +
		// bh_tstamp (tv_sec, tv_usec), bh_caplen 20, bh_datalen 20,
		// bh_hdrlen 26, bh_ifidx 3, bh_flowid, bh_flags, bh_drops,
		// then 2 bytes of padding to bh_hdrlen.
		"00000065 34120000 14000000 14000000 1a00 0300 0000 00 00 0000" +
		"ffffffffffff 020000000001 88b5 010203040506" + // frame 1, 20 bytes
		"0000" + // BPF_WORDALIGN(26+20) = 48
		"01000065 35120000 10000000 10000000 1a00 0300 0000 00 00 0000" +
		"020000000002 020000000001 0800 aabb"}, // frame 2, 16 bytes; no trailing padding
	{"freebsd64", freebsd64Layout, "" +
		// bh_tstamp (8-byte tv_sec, 8-byte tv_usec), bh_caplen 20,
		// bh_datalen 20, bh_hdrlen 26: the frame follows at once.
		"0000006500000000 3412000000000000 14000000 14000000 1a00" +
		"ffffffffffff 020000000001 88b5 010203040506" +
		"0000" + // BPF_WORDALIGN(26+20) = 48
		"0100006500000000 3512000000000000 10000000 10000000 1a00" +
		"020000000002 020000000001 0800 aabb"},
}

func TestCollectRecorded(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("recorded buffers are little-endian (amd64, arm64)")
	}
	want := [][]byte{
		mustHex(t, "ffffffffffff 020000000001 88b5 010203040506"),
		mustHex(t, "020000000002 020000000001 0800 aabb"),
	}
	for _, r := range recorded {
		t.Run(r.name, func(t *testing.T) {
			buf := mustHex(t, r.hex)
			if len(buf) != 90 {
				t.Fatalf("recorded buffer is %d bytes, want 90", len(buf))
			}
			got, skipped, err := collectAll(r.layout, buf, 64)
			if err != nil || skipped != 0 {
				t.Fatalf("collect: skipped %d, error %v; want 0, nil", skipped, err)
			}
			if len(got) != 2 || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
				t.Fatalf("frames %x, want %x", got, want)
			}
		})
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCollectLeftovers checks that frames beyond len(frames) wait for the
// next call, and that the frames are views into the buffer whose capacity
// ends with the frame (an append must not run into the next record).
func TestCollectLeftovers(t *testing.T) {
	l := freebsd64Layout
	var recs []rec
	for i := range 5 {
		recs = append(recs, rec{hdrlen: 26, frame: testFrame(60+i, byte(i))})
	}
	buf := build(l, recs...)
	r := newRecordBuffer(l, len(buf)+100)
	copy(r.buf, buf)
	r.filled(len(buf))
	frames := make([][]byte, 2)
	var counts []int
	for !r.empty() {
		n, _, _, err := r.collect(frames)
		if err != nil {
			t.Fatalf("collect: %v", err)
		}
		for _, f := range frames[:n] {
			if cap(f) != len(f) {
				t.Errorf("frame of %d bytes has capacity %d, want %d", len(f), cap(f), len(f))
			}
			if !within(f, r.buf) {
				t.Errorf("frame is not a view into the read buffer")
			}
		}
		counts = append(counts, n)
	}
	if fmt.Sprint(counts) != "[2 2 1]" {
		t.Errorf("batches of %v frames, want [2 2 1]", counts)
	}
	if n, _, _, _ := r.collect(frames); n != 0 {
		t.Errorf("collect on an empty buffer returned %d frames, want 0", n)
	}
}

// within reports whether f starts inside buf.
func within(f, buf []byte) bool {
	for i := range buf {
		if &buf[i] == &f[0] {
			return true
		}
	}
	return false
}

func TestCollectAllocs(t *testing.T) {
	l := openbsdLayout
	var recs []rec
	for i := range 64 {
		recs = append(recs, rec{hdrlen: 26, frame: testFrame(60+i, byte(i))})
	}
	buf := build(l, recs...)
	r := newRecordBuffer(l, len(buf))
	copy(r.buf, buf)
	frames := make([][]byte, 64)
	allocs := testing.AllocsPerRun(100, func() {
		r.filled(len(buf))
		if n, _, _, err := r.collect(frames); n != 64 || err != nil {
			t.Fatalf("collect = %d, %v; want 64, nil", n, err)
		}
	})
	if allocs != 0 {
		t.Errorf("collect allocates %v times per buffer, want 0", allocs)
	}
}

func BenchmarkCollect(b *testing.B) {
	l := freebsd64Layout
	var recs []rec
	for i := range 64 {
		recs = append(recs, rec{hdrlen: 26, frame: testFrame(1514, byte(i))})
	}
	buf := build(l, recs...)
	r := newRecordBuffer(l, len(buf))
	copy(r.buf, buf)
	frames := make([][]byte, 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		r.filled(len(buf))
		r.collect(frames)
	}
}

func FuzzCollect(f *testing.F) {
	f.Add(build(openbsdLayout, rec{hdrlen: 26, frame: testFrame(60, 1)}, rec{hdrlen: 26, frame: testFrame(61, 2)}), uint8(1))
	f.Add(build(freebsd64Layout, rec{hdrlen: 26, frame: testFrame(60, 1)}, rec{hdrlen: 26, frame: testFrame(63, 2), datalen: 100}), uint8(3))
	f.Add([]byte{}, uint8(0))
	for _, r := range recorded {
		b, _ := hex.DecodeString(strings.ReplaceAll(r.hex, " ", ""))
		f.Add(b, uint8(64))
	}
	f.Fuzz(func(t *testing.T, data []byte, batch uint8) {
		for _, l := range []hdrLayout{openbsdLayout, freebsd64Layout} {
			r := newRecordBuffer(l, len(data))
			copy(r.buf, data)
			r.filled(len(data))
			frames := make([][]byte, int(batch)%8+1)
			for calls := 0; !r.empty(); calls++ {
				if calls > len(data) {
					t.Fatalf("no progress after %d calls on %d bytes", calls, len(data))
				}
				before := r.off
				n, total, _, err := r.collect(frames)
				if r.off <= before && !r.empty() {
					t.Fatalf("collect stayed at offset %d", before)
				}
				sum := 0
				for _, fr := range frames[:n] {
					if len(fr) < 14 {
						t.Fatalf("returned a %d-byte frame", len(fr))
					}
					sum += len(fr)
				}
				if sum != total {
					t.Fatalf("collect reported %d bytes for frames of %d", total, sum)
				}
				if err != nil && !errors.Is(err, errTruncated) && !errors.Is(err, errCorrupt) {
					t.Fatalf("unexpected error kind: %v", err)
				}
			}
		}
	})
}
