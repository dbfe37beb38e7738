package stp_test

import (
	"fmt"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/stp"
)

// A bridge drives one stp.Bridge: it adds its members, feeds it the BPDUs
// they receive, their link changes and a clock tick; the Bridge sends
// through Outputs, and the forwarding path reads each port's Gate.
func Example() {
	clk := clock.NewFake()
	out := stp.Outputs{
		Send: func(port int, f []byte) {
			// The bridge writes f out of member port here, whatever the
			// port's state (copying f if the write is asynchronous). It
			// must not call back into the Bridge.
			fmt.Printf("port %d sends %d bytes to %s\n", port, len(f), frame.Ethernet(f).Destination())
		},
		Flush: func(port int) {
			// The bridge drops the addresses learned on port here.
		},
	}
	cfg := stp.DefaultConfig()
	cfg.MAC = [6]byte{2, 0, 0, 0, 0, 1} // the bridge's own MAC
	b, err := stp.New(cfg, clk, out, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	link := stp.Link{Up: true, SpeedMbps: 10_000}
	if err := b.AddPort(1, "eth1", [6]byte{2, 0, 0, 0, 0, 0x11}, link, stp.DefaultPortConfig()); err != nil {
		fmt.Println(err)
	}
	gate := b.Gate(1) // the forwarding path keeps this and reads it per frame
	// Member readers call b.Input(id, frame) for frames to
	// 01:80:c2:00:00:00, link events b.LinkChanged(id, link), a timer
	// b.Tick() every 100 ms or so.
	b.Tick()
	p := b.Ports()[0]
	fmt.Println(p.Name, p.Role, p.State, p.Protocol, "path cost", p.PathCost)
	fmt.Println("forwarding:", gate.Forwarding(), "learning:", gate.Learning())
	s := b.Status()
	fmt.Println("root", s.Root, "we are root:", s.IsRoot)
	// Output:
	// port 1 sends 60 bytes to 01:80:c2:00:00:00
	// eth1 designated discarding rstp path cost 2000
	// forwarding: false learning: false
	// root 8000.020000000001 we are root: true
}
