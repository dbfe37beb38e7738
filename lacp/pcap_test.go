package lacp

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pcapFile is where TestPcap leaves the exchange, for `tshark -r`.
var pcapFile = filepath.Join("testdata", "lacp-negotiation.pcap")

// writePcap returns frames as a classic pcap file (link type Ethernet).
func writePcap(frames []sent) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 24)
	le.PutUint32(hdr[0:], 0xa1b2c3d4) // magic, microsecond timestamps
	le.PutUint16(hdr[4:], 2)          // version 2.4
	le.PutUint16(hdr[6:], 4)
	le.PutUint32(hdr[16:], 65535) // snap length
	le.PutUint32(hdr[20:], 1)     // LINKTYPE_ETHERNET
	b.Write(hdr)
	for _, f := range frames {
		rec := make([]byte, 16)
		le.PutUint32(rec[0:], uint32(f.at.Unix()))
		le.PutUint32(rec[4:], uint32(f.at.Nanosecond()/1000))
		le.PutUint32(rec[8:], uint32(len(f.frame)))
		le.PutUint32(rec[12:], uint32(len(f.frame)))
		b.Write(rec)
		b.Write(f.frame)
	}
	return b.Bytes()
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
	data := writePcap(frames)
	if old, err := os.ReadFile(pcapFile); err == nil && bytes.Equal(old, data) {
		return
	}
	tmp := pcapFile + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, pcapFile); err != nil {
		t.Fatal(err)
	}
}

// TestTsharkDecodes has tshark, a dissector nobody here wrote, decode the
// exchange, and fails on any malformed packet or warning.
func TestTsharkDecodes(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (Debian package tshark): cannot check LACPDUs against Wireshark's dissector")
	}
	frames := exchange(t)
	path := filepath.Join(t.TempDir(), "lacp.pcap")
	if err := os.WriteFile(path, writePcap(frames), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tshark, "-n", "-r", path, "-V")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user profile
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark -r %s -V: %v", path, err)
	}
	text := string(out)
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "Malformed") || strings.Contains(line, "Expert Info (Warning") {
			t.Errorf("tshark: %s", strings.TrimSpace(line))
		}
	}
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
