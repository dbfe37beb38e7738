package daemon

import (
	"testing"

	"github.com/swctl/swctl/platform/afpacket"
)

// TestMaxCoalesceIsTheBackends checks that the daemon's bound on
// Options.Coalesce is the one the AF_PACKET ports enforce, so that an
// option Run accepts never fails later when a member opens.
func TestMaxCoalesceIsTheBackends(t *testing.T) {
	if MaxCoalesce != afpacket.MaxCoalesce {
		t.Fatalf("daemon.MaxCoalesce = %v, afpacket.MaxCoalesce = %v: want them equal", MaxCoalesce, afpacket.MaxCoalesce)
	}
}
