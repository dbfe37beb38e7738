package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/fuzzcorpus"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/stp"
	"github.com/swctl/swctl/trunk"
)

// wordSeeds are FuzzCLIWords' seeds, by file name in
// testdata/fuzz/FuzzCLIWords.
func wordSeeds() map[string][]byte {
	return map[string][]byte{
		"lacp":      []byte("lacp"),
		"fast":      []byte("fast"),
		"rstp":      []byte("rstp"),
		"auto":      []byte("auto"),
		"on":        []byte("on"),
		"hash":      []byte("l2,l3,l4"),
		"hash-dup":  []byte("l3,l3"),
		"fwdmask":   []byte("0x4000"),
		"fwdmask-8": []byte("8"),
		"maglev":    []byte("maglev"),
		"spaces":    []byte("  LACP "),
		"empty":     nil,
	}
}

// TestWordsFuzzCorpus checks that testdata/fuzz/FuzzCLIWords holds the
// seeds; SWCTL_WRITE_FUZZ_CORPUS=1 writes them.
func TestWordsFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzCLIWords"), wordSeeds(), "SWCTL_WRITE_FUZZ_CORPUS")
}

// roundTrip checks that what parse accepts prints (String) as a word
// parse reads back to the same value.
func roundTrip[T interface {
	comparable
	fmt.Stringer
}](t *testing.T, what string, parse func(string) (T, error), in string) {
	v, err := parse(in)
	if err != nil {
		return
	}
	again, err := parse(v.String())
	if err != nil || again != v {
		t.Fatalf("%s(%q) = %v, whose word %q parses as %v, %v", what, in, v, v.String(), again, err)
	}
}

// FuzzCLIWords feeds arbitrary text to every parser of an option's word
// that the CLI and the configuration file take (trunk protocol, LACP mode
// and timeout, spanning tree protocol and point-to-point, hash fields,
// balancing method, backend state, on/off, forward mask): none panics, and
// what each accepts prints as a word it accepts again, to the same value.
func FuzzCLIWords(f *testing.F) {
	fuzzcorpus.Add(f, wordSeeds())
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		roundTrip(t, "lacp.ParseMode", lacp.ParseMode, s)
		roundTrip(t, "lacp.ParseTimeout", lacp.ParseTimeout, s)
		roundTrip(t, "stp.ParseProtocol", stp.ParseProtocol, s)
		roundTrip(t, "stp.ParsePointToPoint", stp.ParsePointToPoint, s)
		roundTrip(t, "lb.ParseHashFields", lb.ParseHashFields, s)
		roundTrip(t, "lb.ParseMethod", lb.ParseMethod, s)
		roundTrip(t, "lb.ParseBackendState", lb.ParseBackendState, s)
		if p, err := trunk.ParseProto(s); err == nil {
			if again, err := trunk.ParseProto(string(p)); err != nil || again != p {
				t.Fatalf("trunk.ParseProto(%q) = %q, which parses as %q, %v", s, p, again, err)
			}
		}
		if on, err := config.ParseOnOff("learning", s); err == nil && s != map[bool]string{true: "on", false: "off"}[on] {
			t.Fatalf("ParseOnOff(%q) = %v: want only on and off accepted", s, on)
		}
		if m, err := config.ParseFwdMask(s); err == nil {
			if again, err := config.ParseFwdMask(fmt.Sprintf("0x%04x", m)); err != nil || again != m {
				t.Fatalf("ParseFwdMask(%q) = %#04x, which parses back as %#04x, %v", s, m, again, err)
			}
		}
	})
}
