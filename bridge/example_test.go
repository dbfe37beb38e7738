package bridge_test

import (
	"fmt"
	"log/slog"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// A bridge of two members over in-memory cables: a broadcast from one
// host reaches the other, and the sender's address is learned.
func Example() {
	opts := bridge.DefaultOptions()
	opts.Logger = slog.New(slog.DiscardHandler)
	b := bridge.New("bridge0", opts)
	defer b.Close()

	eth1, host1 := memport.Pair("eth1", nil, "host1", nil)
	eth2, host2 := memport.Pair("eth2", nil, "host2", nil)
	for _, p := range []*memport.Port{eth1, eth2} {
		if err := b.AddPort(p, bridge.DefaultPortFlags()); err != nil {
			fmt.Println(err)
		}
	}
	if err := b.AddPort(eth1, bridge.DefaultPortFlags()); err != nil {
		fmt.Println(err)
	}

	arp := make([]byte, 60)
	station, _ := frame.ParseMAC("02:00:00:00:00:01")
	frame.Encode(arp, frame.Broadcast, station, frame.TypeARP)
	host1.WriteBatch(platform.Batch{Frames: [][]byte{arp}})

	got := make([][]byte, 8)
	n, _ := host2.ReadBatch(platform.Batch{Frames: got})
	fmt.Println("host2 received", n, "frame from", frame.Ethernet(got[0]).Source())
	for _, a := range b.Addrs() {
		fmt.Println("learned", a.MAC, "vlan", a.VLAN, "on", a.Port)
	}
	// Output:
	// bridge0: add eth1: already a member
	// host2 received 1 frame from 02:00:00:00:00:01
	// learned 02:00:00:00:00:01 vlan 0 on eth1
}
