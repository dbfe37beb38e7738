package daemon

import (
	"strings"
	"testing"
)

// TestParseLinkSpeed checks the reading of sysfs's speed and duplex
// files.
func TestParseLinkSpeed(t *testing.T) {
	tests := []struct {
		speed, duplex string
		mbps          uint64
		half          bool
	}{
		{"10000\n", "full\n", 10000, false},
		{"100\n", "half\n", 100, true},
		{"-1\n", "unknown\n", 0, false},
		{"", "", 0, false},
		{"fast", "full", 0, false},
		{"99999999999\n", "full\n", 0, false},
	}
	for _, tt := range tests {
		mbps, half := parseLinkSpeed(tt.speed, tt.duplex)
		if mbps != tt.mbps || half != tt.half {
			t.Errorf("parseLinkSpeed(%q, %q) = %d, %v; expected %d, %v", tt.speed, tt.duplex, mbps, half, tt.mbps, tt.half)
		}
	}
}

func FuzzParseLinkSpeed(f *testing.F) {
	f.Add("10000\n", "full\n")
	f.Add("-1\n", "half\n")
	f.Fuzz(func(t *testing.T, speed, duplex string) {
		mbps, half := parseLinkSpeed(speed, duplex)
		if half != (strings.TrimSpace(duplex) == "half") {
			t.Errorf("duplex %q read as half=%v", duplex, half)
		}
		if mbps > 1<<32-1 {
			t.Errorf("speed %q read as %d Mb/s, beyond the 32 bits sysfs prints", speed, mbps)
		}
	})
}
