package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/swctl/swctl/frame"
)

// hdrLayout is the geometry of a bpf record header (struct bpf_hdr in
// sys/net/bpf.h) on one OS and architecture: where the three fields the
// parser reads sit, and the record alignment. The kernel writes the fields
// in host byte order.
//
// Every record of a bpf buffer is the header, padding up to bh_hdrlen
// bytes (the kernel pads so that the network-layer header after a 14-byte
// Ethernet header is aligned), bh_caplen captured bytes of the frame, and
// padding up to the next multiple of BPF_ALIGNMENT, where the next record
// starts. The last record of a read carries no trailing padding. bh_hdrlen
// is authoritative: the parser never assumes a header size, so fields the
// kernel appends to the header (as OpenBSD has done over the years) change
// nothing.
type hdrLayout struct {
	// caplen is the offset of bh_caplen (u32): the bytes captured.
	caplen int
	// datalen is the offset of bh_datalen (u32): the frame's length on
	// the wire, more than bh_caplen when the kernel cut the frame.
	datalen int
	// hdrlen is the offset of bh_hdrlen (u16): the header with its
	// padding, where the frame starts.
	hdrlen int
	// align is BPF_ALIGNMENT: records start at multiples of it.
	align int
}

// The layouts of the supported systems. The BSD build takes its own from
// x/sys/unix's BpfHdr (hostLayout) and its tests check it against these.
var (
	// openbsdLayout: OpenBSD, every architecture. struct bpf_timeval
	// bh_tstamp is two u_int32_t (tv_sec, tv_usec), so bh_caplen sits at
	// 8, bh_datalen at 12, bh_hdrlen at 16; BPF_ALIGNMENT is
	// sizeof(u_int32_t) (openbsd/src sys/net/bpf.h, 1.41 of 2010 to 1.67
	// of 2019; x/sys/unix ztypes_openbsd_{amd64,arm64}.go BpfHdr). Later
	// versions append fields behind bh_hdrlen: x/sys/unix's BpfHdr has
	// bh_ifidx, bh_flowid, bh_flags and bh_drops (a 24-byte header,
	// bh_hdrlen 26 for Ethernet), and newer headers add bh_csumflags
	// (28 bytes, bh_hdrlen 30); the offsets above do not move.
	openbsdLayout = hdrLayout{caplen: 8, datalen: 12, hdrlen: 16, align: 4}
	// freebsd64Layout: FreeBSD on 64-bit architectures (amd64, arm64).
	// bh_tstamp is a struct timeval of two 8-byte fields (struct bpf_hdr,
	// the default BPF_T_MICROTIME format) or a struct bpf_ts of an int64
	// and a uint64 (struct bpf_xhdr, other formats): 16 bytes either way,
	// so bh_caplen sits at 16, bh_datalen at 20, bh_hdrlen at 24;
	// BPF_ALIGNMENT is sizeof(long), 8 (freebsd/freebsd-src
	// sys/net/bpf.h; x/sys/unix ztypes_freebsd_{amd64,arm64}.go BpfHdr,
	// zerrors BPF_ALIGNMENT = 0x8). The kernel's bh_hdrlen for Ethernet
	// is BPF_WORDALIGN(14 + 26) - 14 = 26 (bpf.c, bpf_hdrlen).
	freebsd64Layout = hdrLayout{caplen: 16, datalen: 20, hdrlen: 24, align: 8}
)

// minHeader is the shortest header a record may have: up to the end of
// bh_hdrlen.
func (l hdrLayout) minHeader() int { return l.hdrlen + 2 }

// wordAlign rounds x up to a multiple of the alignment (BPF_WORDALIGN).
func (l hdrLayout) wordAlign(x int) int { return (x + l.align - 1) &^ (l.align - 1) }

// Errors of a buffer the parser refuses. A bpf buffer never has them; one
// that does was misread (a wrong layout) or corrupted.
var (
	// errTruncated: a record runs past the end of the buffer.
	errTruncated = errors.New("truncated record")
	// errCorrupt: a record's header contradicts itself.
	errCorrupt = errors.New("corrupt record")
)

// parseRecord parses the record that starts at b[off:] and returns its
// captured bytes (a view into b whose capacity ends with the frame), the
// frame's length on the wire, and the offset of the next record (len(b)
// after the last). It rejects a record that does not fit in b or whose
// header contradicts itself; it never panics for any b and any
// 0 <= off < len(b).
func (l hdrLayout) parseRecord(b []byte, off int) (capture []byte, datalen, next int, err error) {
	rest := len(b) - off
	if rest < l.minHeader() {
		return nil, 0, 0, fmt.Errorf("record at %d: %d bytes left, a header needs %d: %w", off, rest, l.minHeader(), errTruncated)
	}
	h := b[off:]
	caplen := binary.NativeEndian.Uint32(h[l.caplen:])
	wire := binary.NativeEndian.Uint32(h[l.datalen:])
	hdrlen := int(binary.NativeEndian.Uint16(h[l.hdrlen:]))
	switch {
	case hdrlen < l.minHeader():
		return nil, 0, 0, fmt.Errorf("record at %d: bh_hdrlen %d shorter than the header (%d): %w", off, hdrlen, l.minHeader(), errCorrupt)
	case hdrlen > rest:
		return nil, 0, 0, fmt.Errorf("record at %d: bh_hdrlen %d beyond the buffer (%d bytes left): %w", off, hdrlen, rest, errTruncated)
	case uint64(caplen) > uint64(rest-hdrlen):
		return nil, 0, 0, fmt.Errorf("record at %d: bh_caplen %d beyond the buffer (%d bytes left after the header): %w", off, caplen, rest-hdrlen, errTruncated)
	case caplen > wire:
		return nil, 0, 0, fmt.Errorf("record at %d: bh_caplen %d larger than bh_datalen %d: %w", off, caplen, wire, errCorrupt)
	}
	start, end := off+hdrlen, off+hdrlen+int(caplen)
	next = min(off+l.wordAlign(hdrlen+int(caplen)), len(b))
	return b[start:end:end], int(wire), next, nil
}

// recordBuffer holds what the last read(2) of a bpf descriptor returned
// and hands out its frames a batch at a time. ReadBatch takes frames from
// it until it is empty and only then reads into it again, so the frames
// it returned stay valid until the next ReadBatch.
type recordBuffer struct {
	// layout is the record header geometry.
	layout hdrLayout
	// buf is the whole read buffer: bpf reads must ask for exactly the
	// descriptor's buffer size (BIOCGBLEN).
	buf []byte
	// data is buf[:n] after a read of n bytes.
	data []byte
	// off is the offset of the next record in data.
	off int
}

// newRecordBuffer returns an empty buffer of size bytes.
func newRecordBuffer(layout hdrLayout, size int) *recordBuffer {
	return &recordBuffer{layout: layout, buf: make([]byte, size)}
}

// filled records that a read put n bytes at the start of buf.
func (r *recordBuffer) filled(n int) {
	r.data, r.off = r.buf[:n], 0
}

// empty reports whether every record of the last read has been taken.
func (r *recordBuffer) empty() bool { return r.off >= len(r.data) }

// collect fills frames[:n] with the next Ethernet frames of the buffer,
// views into it, and returns n, their total length, and how many records
// it skipped: shorter than an Ethernet header, or cut by the kernel (a
// frame larger than the buffer). On a record it cannot parse it drops the
// rest of the buffer and returns the error with the frames it had.
func (r *recordBuffer) collect(frames [][]byte) (n, bytes, skipped int, err error) {
	for n < len(frames) && r.off < len(r.data) {
		f, wire, next, e := r.layout.parseRecord(r.data, r.off)
		if e != nil {
			r.off = len(r.data)
			return n, bytes, skipped, e
		}
		r.off = next
		if len(f) < frame.HeaderLen || len(f) < wire {
			skipped++
			continue
		}
		frames[n] = f
		n++
		bytes += len(f)
	}
	return n, bytes, skipped, nil
}
