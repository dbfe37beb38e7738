package lacp

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/pcaptest"
)

// pcapFile is where TestPcap leaves the exchange, for `tshark -r`.
var pcapFile = filepath.Join("testdata", "lacp-negotiation.pcap")

// records returns frames as pcap records.
func records(frames []sent) []pcaptest.Record {
	recs := make([]pcaptest.Record, len(frames))
	for i, f := range frames {
		recs[i] = pcaptest.Record{At: f.at, Frame: f.frame}
	}
	return recs
}

// exchange negotiates two Actors back to back (fast, two ports), has B
// answer a marker request, and returns every frame on the wires.
func exchange(t *testing.T) []sent {
	t.Helper()
	pr := newPair(t, Config{Timeout: Fast}, Config{Timeout: Fast}, 2)
	pr.run(5 * time.Second)
	if !pr.allDistributing(2) {
		t.Fatalf("no negotiation in 5 s:\nA: %+v\nB: %+v", pr.a.Ports(), pr.b.Ports())
	}
	req := make([]byte, FrameLen)
	EncodeMarker(req, portMAC(sysA, 1), &MarkerFields{RequesterPort: 1, RequesterSystem: sysA, TransactionID: 0x01020304})
	pr.capture = append(pr.capture, sent{1, req, pr.clk.Now()})
	pr.b.Receive(1, req)
	pr.run(3 * time.Second)
	return pr.capture
}

// TestPcap writes the exchange to testdata/lacp-negotiation.pcap (only
// when it changed) and checks what it holds.
func TestPcap(t *testing.T) {
	frames := exchange(t)
	var lacp, markers int
	for _, f := range frames {
		switch k, c := Decode(f.frame); k {
		case KindLACP:
			lacp++
		case KindMarkerInfo, KindMarkerResponse:
			markers++
		default:
			t.Errorf("frame on the wire does not decode: %s", c)
		}
	}
	if lacp < 8 || markers != 2 {
		t.Errorf("frames captured: got %d LACPDUs and %d marker PDUs, want at least 8 and 2", lacp, markers)
	}
	pcaptest.WriteIfChanged(t, pcapFile, pcaptest.Encode(records(frames)))
}

// TestTsharkDecodes has tshark, a dissector nobody here wrote, decode the
// exchange, and fails on any malformed packet or warning.
func TestTsharkDecodes(t *testing.T) {
	frames := exchange(t)
	text := pcaptest.Tshark(t, records(frames))
	var lacp, markers int
	for _, f := range frames {
		if k, _ := Decode(f.frame); k == KindLACP {
			lacp++
		} else {
			markers++
		}
	}
	if got := strings.Count(text, "Link Aggregation Control Protocol\n"); got != lacp {
		t.Errorf("tshark decoded %d LACPDUs, want %d", got, lacp)
	}
	if got := strings.Count(text, "Marker Protocol\n"); got != markers {
		t.Errorf("tshark decoded %d marker PDUs, want %d", got, markers)
	}
	// Wireshark reads the state we end in: active, short timeout,
	// aggregatable, in sync, collecting, distributing.
	if !strings.Contains(text, "Actor State: 0x3f, LACP Activity, LACP Timeout, Aggregation, Synchronization, Collecting, Distributing") {
		t.Errorf("tshark shows no actor state 0x3f (active, fast, in sync, collecting, distributing)")
	}
}
