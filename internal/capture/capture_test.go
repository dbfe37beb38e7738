package capture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/swctl/swctl/bridge"
)

var t0 = time.Unix(1700000000, 123456789)

// frameOf returns a frame of n bytes whose bytes are all b.
func frameOf(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// drain takes every queued frame of s as "port dir len/caplen first-byte",
// releasing each.
func drain(s *Session) []string {
	var out []string
	for {
		fr, ok := s.TryNext()
		if !ok {
			return out
		}
		out = append(out, fmt.Sprintf("%s %d %d/%d %02x", fr.Port, fr.Dir, fr.Len, len(fr.Data), fr.Data[0]))
		s.Release(fr)
	}
}

// tapCall is one call of Capture.
type tapCall struct {
	port   string
	dir    bridge.Direction
	frames [][]byte
}

func TestSessionFiltersCopiesAndDrops(t *testing.T) {
	tests := []struct {
		name    string
		port    string
		dirs    bridge.Direction
		snaplen int
		queue   int
		// calls are Capture's calls.
		calls   []tapCall
		want    []string
		dropped uint64
	}{
		{name: "every port, in only", dirs: bridge.In, snaplen: 100, queue: 8,
			calls: []tapCall{{"p1", bridge.In, [][]byte{frameOf(60, 1)}}, {"p2", bridge.Out, [][]byte{frameOf(60, 2)}}, {"p2", bridge.In, [][]byte{frameOf(70, 3)}}},
			want:  []string{"p1 1 60/60 01", "p2 1 70/70 03"}},
		{name: "one port, both ways", port: "p2", dirs: bridge.In | bridge.Out, snaplen: 100, queue: 8,
			calls: []tapCall{{"p1", bridge.In, [][]byte{frameOf(60, 1)}}, {"p2", bridge.Out, [][]byte{frameOf(60, 2)}}, {"p2", bridge.In, [][]byte{frameOf(70, 3)}}},
			want:  []string{"p2 2 60/60 02", "p2 1 70/70 03"}},
		{name: "snap length cuts, the length stays", dirs: bridge.In, snaplen: 64, queue: 8,
			calls: []tapCall{{"p1", bridge.In, [][]byte{frameOf(9000, 4)}}},
			want:  []string{"p1 1 9000/64 04"}},
		{name: "a full queue drops and counts", dirs: bridge.In, snaplen: 100, queue: 2,
			calls: []tapCall{{"p1", bridge.In, [][]byte{frameOf(60, 1), frameOf(60, 2), frameOf(60, 3)}}, {"p1", bridge.In, [][]byte{frameOf(60, 4)}}},
			want:  []string{"p1 1 60/60 01", "p1 1 60/60 02"}, dropped: 2},
	}
	for _, tt := range tests {
		s := NewSession(tt.port, tt.dirs, tt.snaplen, tt.queue)
		for _, c := range tt.calls {
			s.Capture(c.port, c.dir, c.frames, t0)
			for _, f := range c.frames {
				clear(f) // the caller's buffer is reused: the session copied
			}
		}
		if got := drain(s); !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued\nexpected %q\ngot      %q", tt.name, tt.want, got)
		}
		if q, d := s.Counts(); q != uint64(len(tt.want)) || d != tt.dropped {
			t.Errorf("%s: counts: expected %d queued, %d dropped; got %d, %d", tt.name, len(tt.want), tt.dropped, q, d)
		}
	}
}

// TestSessionCaptureAllocatesNothing: once its buffers are filled once,
// a session copies frames up to a full-size tagged frame without
// allocating, queue full or not.
func TestSessionCaptureAllocatesNothing(t *testing.T) {
	s := NewSession("", bridge.In, 65535, 4)
	batch := [][]byte{frameOf(1518, 1), frameOf(60, 2)}
	run := func() {
		s.Capture("p1", bridge.In, batch, t0)
		s.Capture("p1", bridge.In, batch, t0)
		s.Capture("p1", bridge.In, batch, t0) // the queue is full: drops
		for fr, ok := s.TryNext(); ok; fr, ok = s.TryNext() {
			s.Release(fr)
		}
	}
	if got := testing.AllocsPerRun(100, run); got != 0 {
		t.Errorf("Capture: %v allocations per run, want 0", got)
	}
}

func TestHubInstallsItselfWhileCapturing(t *testing.T) {
	var installed []bool
	h := NewHub(func(tp bridge.Tap) { installed = append(installed, tp != nil) })
	a, b := NewSession("", bridge.In, 100, 4), NewSession("p1", bridge.Out, 100, 1)
	for _, s := range []*Session{a, b} {
		if err := h.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	h.Capture("p1", bridge.In, [][]byte{frameOf(60, 1)}, t0)
	h.Capture("p1", bridge.Out, [][]byte{frameOf(60, 2), frameOf(60, 3)}, t0)
	if got := drain(a); !slices.Equal(got, []string{"p1 1 60/60 01"}) {
		t.Errorf("session a: expected the frame in, got %q", got)
	}
	if got, want := h.Stats(), (Stats{Sessions: 2, Queued: 2, Dropped: 1}); got != want {
		t.Errorf("stats with both sessions: expected %+v, got %+v", want, got)
	}
	h.Remove(a)
	h.Remove(b)
	h.Remove(b) // twice is harmless
	h.CountCut()
	if got, want := h.Stats(), (Stats{Queued: 2, Dropped: 1, Cut: 1}); got != want {
		t.Errorf("stats after both ended: expected %+v, got %+v", want, got)
	}
	if want := []bool{true, false}; !slices.Equal(installed, want) {
		t.Errorf("setTap calls (installed?): expected %v, got %v", want, installed)
	}
}

func TestHubCloseEndsSessions(t *testing.T) {
	h := NewHub(func(bridge.Tap) {})
	s := NewSession("", bridge.In, 100, 4)
	if err := h.Add(s); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := s.Next(context.Background()); got <- err }()
	h.Close()
	h.Close()
	if err := <-got; !errors.Is(err, ErrHubClosed) {
		t.Errorf("Next after Close: expected ErrHubClosed, got %v", err)
	}
	if err := h.Add(NewSession("", bridge.In, 100, 1)); !errors.Is(err, ErrHubClosed) {
		t.Errorf("Add after Close: expected ErrHubClosed, got %v", err)
	}
	var nilHub *Hub
	nilHub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewSession("", bridge.In, 100, 1).Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context: expected context.Canceled, got %v", err)
	}
}

// written is a frame as read back from a file.
type written struct {
	iface, desc string
	time        time.Time
	length      int
	data        []byte
}

func readPcapng(t *testing.T, b []byte) []written {
	t.Helper()
	r, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatalf("pcapng does not read back: %v", err)
	}
	var out []written
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("pcapng packet %d: %v", len(out), err)
		}
		intf, err := r.Interface(ci.InterfaceIndex)
		if err != nil {
			t.Fatal(err)
		}
		if intf.LinkType != layers.LinkTypeEthernet {
			t.Errorf("interface %d: link type %v, want Ethernet", ci.InterfaceIndex, intf.LinkType)
		}
		out = append(out, written{intf.Name, intf.Description, ci.Timestamp, ci.Length, data})
	}
}

func TestWriterPcapng(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, "bridge0", 64, false)
	if err != nil {
		t.Fatal(err)
	}
	frames := []*Frame{
		{Port: "p1", Dir: bridge.In, Time: t0, Len: 60, Data: frameOf(60, 1)},
		{Port: "p2", Dir: bridge.Out, Time: t0.Add(time.Microsecond), Len: 1514, Data: frameOf(64, 2)},
		{Port: "p1", Dir: bridge.Out, Time: t0.Add(2 * time.Microsecond), Len: 60, Data: frameOf(60, 3)},
		{Port: "p1", Dir: bridge.In, Time: t0.Add(3 * time.Microsecond), Len: 61, Data: frameOf(61, 4)},
	}
	for _, f := range frames {
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readPcapng(t, b.Bytes())
	want := []written{
		{"p1", "frames received by p1 (swctl capture bridge0)", t0, 60, frameOf(60, 1)},
		{"p2", "frames sent by p2 (swctl capture bridge0)", t0.Add(time.Microsecond), 1514, frameOf(64, 2)},
		{"p1", "frames sent by p1 (swctl capture bridge0)", t0.Add(2 * time.Microsecond), 60, frameOf(60, 3)},
		{"p1", "frames received by p1 (swctl capture bridge0)", t0.Add(3 * time.Microsecond), 61, frameOf(61, 4)},
	}
	if len(got) != len(want) {
		t.Fatalf("read back %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.iface != w.iface || g.desc != w.desc || !g.time.Equal(w.time) || g.length != w.length || !bytes.Equal(g.data, w.data) {
			t.Errorf("frame %d: expected %s %q %v len %d %d bytes, got %s %q %v len %d %d bytes",
				i, w.iface, w.desc, w.time, w.length, len(w.data), g.iface, g.desc, g.time, g.length, len(g.data))
		}
	}
}

func TestWriterEmptyPcapngIsValid(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, "p1", 65535, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readPcapng(t, b.Bytes()); len(got) != 0 {
		t.Errorf("an empty capture read back %d frames", len(got))
	}
}

func TestWriterPcap(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, "bridge0", 65535, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Frame{Port: "p1", Dir: bridge.In, Time: t0, Len: 100, Data: frameOf(60, 7)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("pcap does not read back: %v", err)
	}
	// pcapgo's Reader.Resolution has micro and nano swapped: read the
	// magic number.
	if magic := binary.LittleEndian.Uint32(b.Bytes()); r.LinkType() != layers.LinkTypeEthernet || r.Snaplen() != 65535 || magic != 0xa1b23c4d {
		t.Errorf("pcap header: expected Ethernet, snaplen 65535, magic a1b23c4d (ns); got %v, %d, %x", r.LinkType(), r.Snaplen(), magic)
	}
	data, ci, err := r.ReadPacketData()
	if err != nil || !bytes.Equal(data, frameOf(60, 7)) || ci.Length != 100 || !ci.Timestamp.Equal(t0) {
		t.Errorf("pcap frame: expected 60 bytes of 07, length 100 at %v; got %d bytes, length %d at %v, %v", t0, len(data), ci.Length, ci.Timestamp, err)
	}
}
