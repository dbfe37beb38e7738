package lacp

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
	absurd := samplePDU(1)
	absurd[frame.HeaderLen+offActorTLV+1] = 0xff
	v2junk := samplePDU(2)
	v2junk[frame.HeaderLen+offTerminator+1] = 0xff // an extra TLV claiming 255 octets
	return map[string][]byte{
		"lacp-v1":              samplePDU(1),
		"lacp-v2-extra-tlvs":   samplePDU(2),
		"lacp-v2-absurd-tlv":   v2junk,
		"lacp-v0":              samplePDU(0),
		"lacp-truncated":       samplePDU(1)[:60],
		"lacp-absurd-length":   absurd,
		"marker-information":   markerFrame(1, 1, 16),
		"marker-response":      markerFrame(1, 2, 16),
		"marker-truncated":     markerFrame(1, 1, 16)[:30],
		"marker-absurd-tlv":    markerFrame(1, 1, 0xff),
		"oam-subtype":          append(samplePDU(1)[:frame.HeaderLen:frame.HeaderLen], 3, 1, 0, 0),
		"ethernet-header-only": samplePDU(1)[:frame.HeaderLen],
	}
}

// TestFuzzCorpus checks that testdata/fuzz/FuzzDecode holds the seeds of
// fuzzSeeds; LACP_WRITE_FUZZ_CORPUS=1 writes them.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzDecode"), fuzzSeeds(), "LACP_WRITE_FUZZ_CORPUS")
}

// FuzzDecode checks that no frame makes Decode, the accessors or an
// Actor panic; that Decode returns exactly one of a kind and a cause;
// that what it accepts re-encodes to the same fields; and that an Actor
// counts every frame exactly once.
func FuzzDecode(f *testing.F) {
	for _, b := range fuzzSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, c := Decode(b)
		if (k == KindNone) == (c == CauseNone) {
			t.Fatalf("Decode: got kind %d and cause %q, want exactly one of them", k, c)
		}
		buf := make([]byte, FrameLen)
		switch k {
		case KindLACP:
			p := LACPDU(b[frame.HeaderLen:])
			in := LACPFields{Actor: p.Actor(), Partner: p.Partner(), CollectorMaxDelay: p.CollectorMaxDelay()}
			EncodeLACP(buf, [6]byte(b[6:12]), &in)
			if k2, c2 := Decode(buf); k2 != KindLACP {
				t.Fatalf("re-encoded LACPDU: got kind %d cause %q, want a LACPDU", k2, c2)
			}
			q := LACPDU(buf[frame.HeaderLen:])
			if q.Actor() != in.Actor || q.Partner() != in.Partner || q.CollectorMaxDelay() != in.CollectorMaxDelay {
				t.Fatalf("re-encoded LACPDU: got %+v %+v, want %+v", q.Actor(), q.Partner(), in)
			}
		case KindMarkerInfo, KindMarkerResponse:
			m := Marker(b[frame.HeaderLen:])
			in := MarkerFields{Response: m.Response(), RequesterPort: m.RequesterPort(), RequesterSystem: m.RequesterSystem(), TransactionID: m.TransactionID()}
			EncodeMarker(buf, [6]byte(b[6:12]), &in)
			if k2, _ := Decode(buf); k2 != k {
				t.Fatalf("re-encoded marker: got kind %d, want %d", k2, k)
			}
		}
		a := New(Config{SystemMAC: sysA}, clock.NewFake(), func(int, []byte) {}, nil)
		if err := a.AddPort(1, "eth1", portMAC(sysA, 1), DefaultPortPriority, true); err != nil {
			t.Fatal(err)
		}
		a.Receive(1, b)
		a.Tick()
		cn := a.Ports()[0].Counters
		if got := cn.RxLACPDU + cn.RxMarker + cn.RxMarkerResponse + cn.Bad.Total(); got != 1 {
			t.Fatalf("frame counted %d times, want once: %+v", got, cn)
		}
	})
}
