package stp

import (
	"path/filepath"
	"testing"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/fuzzcorpus"
)

// fuzzSeeds are the seed frames of FuzzDecode, by file name in
// testdata/fuzz/FuzzDecode.
func fuzzSeeds() map[string][]byte {
	rst, cfg, tcn := encoded(KindRST), encoded(KindConfig), encoded(KindTCN)
	return map[string][]byte{
		"rst":                   rst,
		"config":                cfg,
		"tcn":                   tcn,
		"mst":                   mstFrame(),
		"rst-version-1":         edit(rst, func(b []byte) { b[HeaderLen+offVersion] = 1 }),
		"rst-truncated":         rst[:HeaderLen+20],
		"length-beyond-frame":   edit(rst, func(b []byte) { setLength(b, 1500) }),
		"config-max-age":        edit(cfg, func(b []byte) { b[HeaderLen+offMessageAge] = 0xff }),
		"unknown-type":          edit(tcn, func(b []byte) { b[HeaderLen+offType] = 0x03 }),
		"ethernet-header-only":  rst[:frame.HeaderLen],
		"snap-llc":              edit(rst, func(b []byte) { b[14], b[15] = 0xaa, 0xaa }),
		"protocol-identifier-1": edit(rst, func(b []byte) { b[HeaderLen+1] = 1 }),
	}
}

// TestFuzzCorpus checks that testdata/fuzz/FuzzDecode holds the seeds of
// fuzzSeeds; STP_WRITE_FUZZ_CORPUS=1 writes them.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzDecode"), fuzzSeeds(), "STP_WRITE_FUZZ_CORPUS")
}

// FuzzDecode checks that no frame makes Decode, the accessors or a Bridge
// panic; that Decode returns exactly one of a kind and a cause; that what
// it accepts re-encodes to a BPDU of the same kind and fields; and that a
// Bridge counts every frame exactly once.
func FuzzDecode(f *testing.F) {
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, c := Decode(b)
		if (k == KindNone) == (c == CauseNone) {
			t.Fatalf("Decode: got kind %s and cause %q, want exactly one of them", k, c)
		}
		fuzzReencode(t, b, k)
		br, err := New(DefaultConfig(), clock.NewFake(), Outputs{Send: func(int, []byte) {}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := br.AddPort(1, "p1", mac(0x51), up, DefaultPortConfig()); err != nil {
			t.Fatal(err)
		}
		br.Input(1, b)
		br.Tick()
		if c := br.Ports()[0].Counters; c.Rx()+c.Bad.Total() != 1 {
			t.Fatalf("frame counted %d times, want once: %+v", c.Rx()+c.Bad.Total(), c)
		}
	})
}

// fuzzReencode re-encodes an accepted frame of kind k and checks that it
// decodes to the same kind and fields.
func fuzzReencode(t *testing.T, b []byte, k Kind) {
	if k == KindNone {
		return
	}
	p := Payload(b)
	buf := make([]byte, FrameLen)
	src := [6]byte(b[6:12])
	if k == KindTCN {
		EncodeTCN(buf, src)
		if k2, c2 := Decode(buf); k2 != KindTCN {
			t.Fatalf("re-encoded TCN: got %s, %q", k2, c2)
		}
		return
	}
	in := p.Fields()
	if k == KindConfig {
		EncodeConfig(buf, src, &in)
		in.Flags &= FlagTC | FlagTCAck
	} else {
		EncodeRST(buf, src, &in)
	}
	if k2, c2 := Decode(buf); k2 != k {
		t.Fatalf("re-encoded %s BPDU: got %s, %q", k, k2, c2)
	}
	q := Payload(buf)
	out := q.Fields()
	if out != in {
		t.Fatalf("re-encoded %s BPDU:\ngot  %+v\nwant %+v", k, out, in)
	}
}
