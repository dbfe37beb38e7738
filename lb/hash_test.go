package lb

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseHashFields(t *testing.T) {
	cases := []struct {
		in      string
		want    HashFields
		wantErr string
	}{
		{"l2,l3,l4", AllFields, ""},
		{"l4,l2", L2 | L4, ""},
		{" L3 ", L3, ""},
		{"l2, l3", L2 | L3, ""},
		{"", 0, "empty"},
		{"l2,,l3", 0, "empty field"},
		{"l2,l5", 0, `unknown field "l5"`},
		{"l2,l2", 0, "l2 given twice"},
	}
	for _, c := range cases {
		got, err := ParseHashFields(c.in)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("ParseHashFields(%q): error %v, want %v", c.in, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("ParseHashFields(%q) = %v, %v; want an error containing %q", c.in, got, err, c.wantErr)
		case c.wantErr == "" && got != c.want:
			t.Errorf("ParseHashFields(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestHashFieldsString(t *testing.T) {
	cases := []struct {
		f    HashFields
		want string
	}{
		{AllFields, "l2,l3,l4"},
		{L3 | L4, "l3,l4"},
		{L2, "l2"},
		{0, "none"},
		{L2 | 0x80, "l2,0x80"},
	}
	for _, c := range cases {
		if got := c.f.String(); got != c.want {
			t.Errorf("HashFields(%#x).String() = %q, want %q", uint8(c.f), got, c.want)
		}
		if c.f&^AllFields == 0 && c.f != 0 {
			if back, err := ParseHashFields(c.f.String()); err != nil || back != c.f {
				t.Errorf("ParseHashFields(%q) = %v, %v; want %v (round trip)", c.f.String(), back, err, c.f)
			}
		}
	}
}

// TestHashFields checks, case by case, whether two frames hash alike:
// which header differences the hash sees under which fields.
func TestHashFields(t *testing.T) {
	macC := [6]byte{0x02, 0, 0, 0, 0, 0x0c}
	v10 := [][2]uint16{{typeVLAN, 10}}
	v11 := [][2]uint16{{typeVLAN, 11}}
	udp := func(frag uint16, sport uint16, src [4]byte) []byte {
		return eth(macB, macA, nil, typeIPv4, ip4(src, ipB, protoUDP, frag, l4(sport, 53)))
	}
	udp6 := func(flow uint32, srcLow byte, sport uint16) []byte {
		return eth(macB, macA, nil, typeIPv6, ip6(flow, protoUDP, srcLow, 2, l4(sport, 53)))
	}
	frag6f := func(off uint16, more bool, payload []byte) []byte {
		return eth(macB, macA, nil, typeIPv6, ip6(7, protoFragment, 1, 2, append(frag6(protoUDP, off, more), payload...)))
	}
	cases := []struct {
		name   string
		fields HashFields
		a, b   []byte
		same   bool
	}{
		{"identical frames", AllFields, tcp4(1, 2), tcp4(1, 2), true},
		{"L2: source MAC differs", L2, eth(macB, macA, nil, 0x88b5, nil), eth(macB, macC, nil, 0x88b5, nil), false},
		{"L2: destination MAC differs", L2, eth(macB, macA, nil, 0x88b5, nil), eth(macC, macA, nil, 0x88b5, nil), false},
		{"L2: MACs swapped", L2, eth(macB, macA, nil, 0x88b5, nil), eth(macA, macB, nil, 0x88b5, nil), false},
		{"L2: VLAN differs", L2, eth(macB, macA, v10, 0x88b5, nil), eth(macB, macA, v11, 0x88b5, nil), false},
		{"L2: tagged vs untagged", L2, eth(macB, macA, v10, 0x88b5, nil), eth(macB, macA, nil, 0x88b5, nil), false},
		{"L2: inner QinQ tag ignored", L2, eth(macB, macA, [][2]uint16{{typeQinQ, 5}, {typeVLAN, 10}}, 0x88b5, nil), eth(macB, macA, [][2]uint16{{typeQinQ, 5}, {typeVLAN, 11}}, 0x88b5, nil), true},
		{"L3 only: MAC ignored", L3, udp(0, 1, ipA), eth(macC, macA, nil, typeIPv4, ip4(ipA, ipB, protoUDP, 0, l4(1, 53))), true},
		{"L3 only: VLAN ignored", L3, eth(macB, macA, v10, typeIPv4, ip4(ipA, ipB, protoTCP, 0, l4(1, 2))), eth(macB, macA, v11, typeIPv4, ip4(ipA, ipB, protoTCP, 0, l4(1, 2))), true},
		{"L3: IPv4 source differs", L3, udp(0, 1, ipA), udp(0, 1, ipC), false},
		{"L3: IPv4 behind QinQ", L3, eth(macB, macA, [][2]uint16{{typeQinQ, 5}, {typeVLAN, 10}}, typeIPv4, ip4(ipA, ipB, protoTCP, 0, nil)), eth(macB, macA, [][2]uint16{{typeQinQ, 5}, {typeVLAN, 10}}, typeIPv4, ip4(ipC, ipB, protoTCP, 0, nil)), false},
		{"L3 only: ports ignored", L3, udp(0, 1, ipA), udp(0, 2, ipA), true},
		{"L2+L3: ports ignored", L2 | L3, tcp4(1, 2), tcp4(3, 4), true},
		{"L4: source port differs", L4, udp(0, 1, ipA), udp(0, 2, ipA), false},
		{"L4: TCP vs UDP same ports", L4, tcp4(1, 53), eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoUDP, 0, l4(1, 53))), false},
		{"L4: SCTP ports", L4, eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoSCTP, 0, l4(1, 2))), eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoSCTP, 0, l4(1, 3))), false},
		{"L4: ICMP has no ports", L4, eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, 1, 0, l4(1, 2))), eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, 1, 0, l4(3, 4))), true},
		{"IPv4 first fragment and later fragment", AllFields, udp(0x2000, 1, ipA), udp(185, 99, ipA), true},
		{"IPv4 fragment vs whole datagram", AllFields, udp(0x2000, 1, ipA), udp(0, 1, ipA), false},
		{"IPv4 fragments of different sources", AllFields, udp(0x2000, 1, ipA), udp(0x2000, 1, ipC), false},
		{"IPv4 with options: ports found", L4, eth(macB, macA, nil, typeIPv4, withOptions(ip4(ipA, ipB, protoTCP, 0, l4(1, 2)))), eth(macB, macA, nil, typeIPv4, withOptions(ip4(ipA, ipB, protoTCP, 0, l4(1, 3)))), false},
		{"L3: IPv6 source differs", L3, udp6(7, 1, 9), udp6(7, 3, 9), false},
		{"L3: IPv6 flow label differs", L3, udp6(7, 1, 9), udp6(8, 1, 9), false},
		{"L2+L4: IPv6 flow label ignored", L2 | L4, udp6(7, 1, 9), udp6(8, 1, 9), true},
		{"L4: IPv6 ports differ", L4, udp6(7, 1, 9), udp6(7, 1, 10), false},
		{"L4: IPv6 ports behind extension headers", L4,
			eth(macB, macA, nil, typeIPv6, ip6(7, protoHopByHop, 1, 2, append(ext6(protoDstOpts), append(ext6(protoUDP), l4(5, 6)...)...))),
			eth(macB, macA, nil, typeIPv6, ip6(7, protoHopByHop, 1, 2, append(ext6(protoDstOpts), append(ext6(protoUDP), l4(5, 7)...)...))), false},
		{"IPv6 first fragment and later fragment", AllFields, frag6f(0, true, l4(5, 6)), frag6f(100, false, []byte("later bytes")), true},
		{"IPv6 atomic fragment ignores ports", AllFields, frag6f(0, false, l4(5, 6)), frag6f(0, false, l4(5, 7)), true},
		{"no fields: everything alike", 0, tcp4(1, 2), udp6(9, 9, 9), true},
		{"non-IP under L3+L4 only: alike", L3 | L4, eth(macB, macA, nil, 0x88b5, nil), eth(macC, macA, nil, 0x88b5, []byte{1}), true},
		{"bad IPv4 version: no L3", L3, eth(macB, macA, nil, typeIPv4, badVersion(ip4(ipA, ipB, protoTCP, 0, nil))), eth(macB, macA, nil, typeIPv4, badVersion(ip4(ipC, ipB, protoTCP, 0, nil))), true},
	}
	for _, c := range cases {
		h := NewHasher(42, c.fields)
		ha, hb := h.Hash(c.a), h.Hash(c.b)
		if (ha == hb) != c.same {
			t.Errorf("%s (fields %v): hashes %#08x and %#08x; want same=%v", c.name, c.fields, ha, hb, c.same)
		}
	}
}

// withOptions adds 8 bytes of IPv4 options (NOPs) to the header of p.
func withOptions(p []byte) []byte {
	out := append(append(append([]byte{}, p[:20]...), 1, 1, 1, 1, 1, 1, 1, 0), p[20:]...)
	out[0] = 0x47
	return out
}

// badVersion sets the IP version nibble of p to 5.
func badVersion(p []byte) []byte { p[0] = 0x50 | p[0]&0x0f; return p }

func TestHashSeed(t *testing.T) {
	f := tcp4(1234, 80)
	cases := []struct {
		name   string
		s1, s2 uint64
		same   bool
	}{
		{"same seed", 7, 7, true},
		{"different seed", 7, 8, false},
		{"zero and one", 0, 1, false},
	}
	for _, c := range cases {
		h1, h2 := NewHasher(c.s1, AllFields), NewHasher(c.s2, AllFields)
		if got := h1.Hash(f) == h2.Hash(f); got != c.same {
			t.Errorf("%s: seeds %d and %d hash alike = %v, want %v", c.name, c.s1, c.s2, got, c.same)
		}
	}
}

// TestHashTruncated hashes every prefix of every sample frame (and the
// frame with each byte set to 0xff) under every field set: none panics.
func TestHashTruncated(t *testing.T) {
	for fields := HashFields(0); fields <= AllFields; fields++ {
		h := NewHasher(1, fields)
		for i, f := range sampleFrames() {
			for n := 0; n <= len(f); n++ {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("sample %d cut to %d bytes, fields %v: panic %v, want a hash", i, n, fields, r)
						}
					}()
					h.Hash(f[:n])
					g := bytes.Clone(f[:n])
					for j := range g {
						old := g[j]
						g[j] = 0xff
						h.Hash(g)
						g[j] = old
					}
				}()
			}
		}
	}
}

func TestHashAllocs(t *testing.T) {
	h := NewHasher(1, AllFields)
	for i, f := range sampleFrames() {
		if got := testing.AllocsPerRun(100, func() { h.Hash(f) }); got != 0 {
			t.Errorf("sample %d: Hash allocates %v times per call, want 0", i, got)
		}
	}
}

// fuzzTargets are the fuzz targets whose seed corpus is sampleFrames.
var fuzzTargets = []string{"FuzzHash", "FuzzFlowKey"}

// TestFuzzCorpusPresent checks that the seed corpus of every fuzz target
// is there, so that plain `go test` replays it.
func TestFuzzCorpusPresent(t *testing.T) {
	for _, target := range fuzzTargets {
		files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("seed corpus testdata/fuzz/%s: %d files, %v; want at least one", target, len(files), err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !bytes.HasPrefix(b, []byte("go test fuzz v1\n")) {
				t.Errorf("%s: not a fuzz corpus file (%v)", f, err)
			}
		}
	}
}

// FuzzHash hashes arbitrary bytes under every field set: no panic, and the
// same input always gives the same hash.
func FuzzHash(f *testing.F) {
	for _, s := range sampleFrames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for fields := HashFields(0); fields <= AllFields; fields++ {
			h := NewHasher(uint64(fields), fields)
			a, b := h.Hash(data), h.Hash(data)
			if a != b {
				t.Fatalf("fields %v: hash of the same %d bytes %#x then %#x, want equal", fields, len(data), a, b)
			}
		}
	})
}

// TestWriteCorpus rewrites the seed corpora from sampleFrames when run
// with SWCTL_WRITE_CORPUS=1.
func TestWriteCorpus(t *testing.T) {
	if os.Getenv("SWCTL_WRITE_CORPUS") == "" {
		t.Skip("set SWCTL_WRITE_CORPUS=1 to rewrite testdata/fuzz/*")
	}
	for _, target := range fuzzTargets {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range sampleFrames() {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample%02d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
