package tap_test

import (
	"testing"

	"github.com/swctl/swctl/platform/tap"
)

// A super-frame of SuperFrameSegments segments, each a full frame of the
// MTU behind its Ethernet header, fits SuperFrameWire; one more does not.
// At an MTU whose one frame is already over it, the bound is one segment.
func TestSuperFrameSegmentsFillSuperFrameWire(t *testing.T) {
	for _, tc := range []struct{ mtu, want int }{
		{1500, 43}, {1400, 46}, {9000, 7}, {65535, 1}, {0, 799}, {68, 799},
	} {
		got := tap.SuperFrameSegments(tc.mtu)
		if got != tc.want {
			t.Errorf("SuperFrameSegments(%d) = %d, want %d", tc.mtu, got, tc.want)
		}
		wire := max(tc.mtu, 68) + 14
		if got > 1 && got*wire > tap.SuperFrameWire || (got+1)*wire <= tap.SuperFrameWire {
			t.Errorf("MTU %d: %d segments take %d bytes, %d take %d: want the most within %d", tc.mtu, got, got*wire, got+1, (got+1)*wire, tap.SuperFrameWire)
		}
	}
}
