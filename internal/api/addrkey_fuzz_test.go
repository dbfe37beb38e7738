package api

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/swctl/swctl/internal/fuzzcorpus"
)

// addrKeySeeds are FuzzParseAddrKey's seeds, by file name in
// testdata/fuzz/FuzzParseAddrKey.
func addrKeySeeds() map[string][]byte {
	return map[string][]byte{
		"mac":         []byte("02:00:00:00:00:01"),
		"vlan-mac":    []byte("10/02:00:00:00:00:01"),
		"vlan-4095":   []byte("4095/02:00:00:00:00:01"),
		"vlan-4096":   []byte("4096/02:00:00:00:00:01"),
		"vlan-signed": []byte("+1/02:00:00:00:00:01"),
		"two-slashes": []byte("1/2/02:00:00:00:00:01"),
		"no-mac":      []byte("10/"),
		"empty":       nil,
	}
}

// TestAddrKeyFuzzCorpus checks that testdata/fuzz/FuzzParseAddrKey holds
// the seeds; API_WRITE_FUZZ_CORPUS=1 writes them.
func TestAddrKeyFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParseAddrKey"), addrKeySeeds(), "API_WRITE_FUZZ_CORPUS")
}

// FuzzParseAddrKey feeds arbitrary text to ParseAddrKey (swctl bridge addr
// --after): it never panics; what it accepts has a VLAN ID of 0-4095 and a
// MAC that parses, and the request carrying it validates.
func FuzzParseAddrKey(f *testing.F) {
	fuzzcorpus.Add(f, addrKeySeeds())
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseAddrKey(string(b))
		if err != nil {
			return
		}
		m, err := k.Parse()
		if err != nil || k.VLAN > 4095 {
			t.Fatalf("ParseAddrKey(%q) = %+v, which does not check: %v", b, k, err)
		}
		again, err := ParseAddrKey(strconv.Itoa(int(k.VLAN)) + "/" + m.String())
		if err != nil || again.VLAN != k.VLAN {
			t.Fatalf("ParseAddrKey(%q) = %+v; its printed form parses as %+v, %v", b, k, again, err)
		}
		if err := (BridgeAddrRequest{Name: "bridge0", After: &k}).Validate(); err != nil {
			t.Fatalf("a request after %+v: %v", k, err)
		}
	})
}
