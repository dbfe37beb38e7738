package memport_test

import (
	"net"
	"testing"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
	"github.com/swctl/swctl/platform/platformtest"
)

func TestContract(t *testing.T) {
	platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
		a, b := memport.Pair(
			"mem0", net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01},
			"mem1", net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02})
		t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
		return a, b
	})
}
