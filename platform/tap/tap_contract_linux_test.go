package tap_test

import (
	"testing"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
	"github.com/swctl/swctl/platform/tap"
)

// The peer of a TAP is an AF_PACKET port on the TAP interface itself: what
// it sends on the interface the TAP's descriptor reads, and what the
// descriptor writes arrives on the interface.
func TestIntegrationContract(t *testing.T) {
	netnstest.Require(t)
	platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
		ns, dut := newTap(t, tap.Options{Up: true})
		var peer *afpacket.Port
		var err error
		ns.Do(func() { peer, err = afpacket.Open(dut.Name(), afpacket.Options{}) })
		if err != nil {
			t.Fatalf("afpacket.Open(%s): %v", dut.Name(), err)
		}
		t.Cleanup(func() { peer.Close() })
		return dut, peer
	})
}
