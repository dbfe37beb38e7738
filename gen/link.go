package gen

import (
	"fmt"
	"net"
	"time"

	"github.com/swctl/swctl/platform"
)

// LinkPort is a port whose link state the caller keeps (no daemon's link
// watcher does it for a generator).
type LinkPort interface {
	Name() string
	platform.LinkSetter
}

// WaitLinkUp waits up to within until p's interface is up with a carrier
// (a veth whose peer just came up reports its carrier a moment later), then
// tells the port so. A port opened while its link was down would otherwise
// drop every frame it is given. It must run in the port's network
// namespace.
func WaitLinkUp(p LinkPort, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ifi, err := net.InterfaceByName(p.Name())
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
		if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0 {
			p.SetLink(platform.LinkUp)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: link down (no carrier after %v)", p.Name(), within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
