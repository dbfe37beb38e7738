package lacp_test

import (
	"fmt"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lacp"
)

// A trunk drives one Actor: it adds its members, feeds it what they
// receive and ticks it; the Actor sends through the function it was given.
func Example() {
	clk := clock.NewFake()
	send := func(port int, f []byte) {
		// A trunk writes f out of member port here (copying it if the
		// write is asynchronous). It must not call back into the Actor.
		fmt.Printf("port %d sends %d bytes to %s\n", port, len(f), frame.Ethernet(f).Destination())
	}
	a := lacp.New(lacp.Config{Timeout: lacp.Fast, SystemMAC: [6]byte{2, 0, 0, 0, 0, 1}}, clk, send, nil)
	if err := a.AddPort(1, "eth1", [6]byte{2, 0, 0, 0, 0, 0x11}, lacp.DefaultPortPriority, true); err != nil {
		fmt.Println(err)
	}
	// Member readers call a.Receive(id, frame) for slow-protocols frames,
	// link events a.LinkChanged(id, up), a timer a.Tick().
	a.Tick()
	s := a.Ports()[0]
	fmt.Println(s.Name, s.Receive, s.Mux, s.Actor.State)
	fmt.Println("distributing:", a.Distributing(1))
	// Output:
	// port 1 sends 124 bytes to 01:80:c2:00:00:02
	// eth1 expired detached 0x87<activity,timeout,aggregation,expired>
	// distributing: false
}
