// Package pcaptest writes frames a test captured as a classic pcap file,
// and has tshark, a dissector nobody here wrote, decode them: the
// interoperability check of the protocol packages (lacp, stp).
package pcaptest

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

// Record is one captured frame.
type Record struct {
	// At is when it was sent.
	At time.Time
	// Frame is the whole Ethernet frame.
	Frame []byte
}

// Encode returns recs as a classic pcap file (microsecond timestamps,
// link type Ethernet).
func Encode(recs []Record) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 24)
	le.PutUint32(hdr[0:], 0xa1b2c3d4) // magic, microsecond timestamps
	le.PutUint16(hdr[4:], 2)          // version 2.4
	le.PutUint16(hdr[6:], 4)
	le.PutUint32(hdr[16:], 65535) // snap length
	le.PutUint32(hdr[20:], 1)     // LINKTYPE_ETHERNET
	b.Write(hdr)
	for _, r := range recs {
		rec := make([]byte, 16)
		le.PutUint32(rec[0:], uint32(r.At.Unix()))
		le.PutUint32(rec[4:], uint32(r.At.Nanosecond()/1000))
		le.PutUint32(rec[8:], uint32(len(r.Frame)))
		le.PutUint32(rec[12:], uint32(len(r.Frame)))
		b.Write(rec)
		b.Write(r.Frame)
	}
	return b.Bytes()
}

// WriteIfChanged writes data to path (through a temporary file and a
// rename) unless the file already holds it, so that a test that leaves a
// capture in testdata for people to read does not touch it needlessly.
func WriteIfChanged(t testing.TB, path string, data []byte) {
	t.Helper()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Tshark has tshark decode recs verbosely (-V) and returns its text. It
// skips the test when tshark is not installed, and fails it on any
// malformed packet or expert warning.
func Tshark(t testing.TB, recs []Record) string {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (Debian package tshark): cannot check frames against Wireshark's dissectors")
	}
	path := filepath.Join(t.TempDir(), "capture.pcap")
	if err := os.WriteFile(path, Encode(recs), 0o644); err != nil {
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
	return text
}
