package frame

import (
	"path/filepath"
	"testing"

	"github.com/swctl/swctl/internal/fuzzcorpus"
)

// parseMACSeeds are FuzzParseMAC's seeds, by file name in
// testdata/fuzz/FuzzParseMAC.
func parseMACSeeds() map[string][]byte {
	return map[string][]byte{
		"colons":     []byte("02:00:00:00:00:01"),
		"dashes":     []byte("02-00-00-00-00-01"),
		"dots":       []byte("0200.0000.0001"),
		"upper":      []byte("0A:BB:CC:DD:EE:FF"),
		"eui64":      []byte("02:00:00:00:00:00:00:01"),
		"infiniband": []byte("00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"),
		"short":      []byte("02:00:00:00:00"),
		"empty":      nil,
		"garbage":    []byte("zz:00:00:00:00:01"),
	}
}

// TestParseMACFuzzCorpus checks that testdata/fuzz/FuzzParseMAC holds the
// seeds; FRAME_WRITE_FUZZ_CORPUS=1 writes them.
func TestParseMACFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParseMAC"), parseMACSeeds(), "FRAME_WRITE_FUZZ_CORPUS")
}

// FuzzParseMAC feeds arbitrary text to ParseMAC, which reads the MACs an
// operator types (CLI, configuration file): it never panics, and what it
// accepts prints as a MAC that parses back to the same address.
func FuzzParseMAC(f *testing.F) {
	fuzzcorpus.Add(f, parseMACSeeds())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMAC(string(b))
		if err != nil {
			return
		}
		again, err := ParseMAC(m.String())
		if err != nil || again != m {
			t.Fatalf("ParseMAC(%q) = %s, which parses back as %s, %v", b, m, again, err)
		}
	})
}
