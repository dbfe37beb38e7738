package gen

import (
	"context"
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

// WaitForward waits up to within until a short paced run of MinSize
// frames (100 at 10 k/s) opened by open crosses the device under test,
// trying every 100 ms. The ports are opened again for every try: a port
// takes its link state from the interface at open, and a link just set
// up may not be forwarding yet. It returns the last try's result, and an
// error when no frame crossed in time, when open or a run fails, or when
// ctx ends.
func WaitForward(ctx context.Context, open func(Stream) (*Bench, error), within time.Duration) (Result, error) {
	deadline := time.Now().Add(within)
	for {
		bench, err := open(Stream{Size: MinSize})
		if err != nil {
			return Result{}, err
		}
		bench.SetDrain(100 * time.Millisecond)
		r, err := bench.Run(ctx, Load{Rate: 10000, Count: 100})
		bench.Close()
		if err != nil || r.Received > 0 {
			return r, err
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("no frame crossed within %v (last try: %d offered, %d sent, %d refused by the sending port)",
				within, r.Sent+r.TxDropped, r.Sent, r.TxDropped)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
