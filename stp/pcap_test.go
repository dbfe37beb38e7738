package stp

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/pcaptest"
)

// pcapFile is where TestPcap leaves the capture, for `tshark -r`.
var pcapFile = filepath.Join("testdata", "stp-rstp-and-802.1d.pcap")

// capture runs TestSTPNeighbour's network (RSTP bridges A and C, an 802.1D
// bridge like Linux's, B, between them) for 40 s and returns every frame sent: RST,
// Configuration and TCN BPDUs, proposals, agreements and topology changes.
func capture(t *testing.T) []pcaptest.Record {
	t.Helper()
	stp := prio(32768)
	stp.Protocol = STP
	nw := newNetwork(t, map[string]Config{"A": prio(4096), "B": stp, "C": prio(32768)})
	nw.nodes["B"].legacy = true
	var frames []sent
	nw.capture = &frames
	nw.link("A1", "B1")
	nw.link("B2", "C1")
	nw.link("A2", "C2")
	nw.run(40 * time.Second)
	recs := make([]pcaptest.Record, len(frames))
	for i, f := range frames {
		recs[i] = pcaptest.Record{At: f.at, Frame: f.frame}
	}
	return recs
}

// kindCounts counts the BPDUs of each kind in recs, failing on any frame
// that does not decode.
func kindCounts(t *testing.T, recs []pcaptest.Record) map[Kind]int {
	t.Helper()
	n := map[Kind]int{}
	for _, r := range recs {
		k, c := Decode(r.Frame)
		if c != CauseNone {
			t.Errorf("frame on the wire does not decode: %s", c)
		}
		n[k]++
	}
	return n
}

// TestPcap writes the capture to testdata (only when it changed) and
// checks that it holds every kind of BPDU.
func TestPcap(t *testing.T) {
	recs := capture(t)
	n := kindCounts(t, recs)
	if n[KindRST] < 10 || n[KindConfig] < 10 || n[KindTCN] < 1 {
		t.Errorf("frames captured: got %v, want at least 10 RST, 10 Configuration and 1 TCN BPDU", n)
	}
	pcaptest.WriteIfChanged(t, pcapFile, pcaptest.Encode(recs))
}

// TestTsharkDecodes has tshark decode the capture: every frame is a BPDU
// of the kind we sent, with no warning, and Wireshark reads our flags.
func TestTsharkDecodes(t *testing.T) {
	recs := capture(t)
	text := pcaptest.Tshark(t, recs)
	n := kindCounts(t, recs)
	for _, c := range []struct {
		line string
		want int
	}{
		{"Spanning Tree Protocol\n", len(recs)},
		{"BPDU Type: Rapid/Multiple Spanning Tree (0x02)\n", n[KindRST]},
		{"BPDU Type: Configuration (0x00)\n", n[KindConfig]},
		{"BPDU Type: Topology Change Notification (0x80)\n", n[KindTCN]},
		{"Logical-Link Control\n", len(recs)},
	} {
		if got := strings.Count(text, c.line); got != c.want {
			t.Errorf("tshark shows %q %d times, want %d", strings.TrimSpace(c.line), got, c.want)
		}
	}
	for _, flag := range []string{"Proposal: Yes", "Agreement: Yes", "Port Role: Root", "Port Role: Designated",
		"Topology Change Acknowledgment: Yes", "Forwarding: Yes"} {
		if !strings.Contains(text, flag) {
			t.Errorf("tshark shows no %q", flag)
		}
	}
}
