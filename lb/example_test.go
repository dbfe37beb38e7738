package lb_test

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/lb"
)

// tcpFrame returns an untagged TCP/IPv4 frame from src:sport to dst:dport.
func tcpFrame(src, dst netip.Addr, sport, dport uint16) []byte {
	f := make([]byte, 14+20+20)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	f[14], f[14+9] = 0x45, 6
	s, d := src.As4(), dst.As4()
	copy(f[14+12:], s[:])
	copy(f[14+16:], d[:])
	binary.BigEndian.PutUint16(f[34:], sport)
	binary.BigEndian.PutUint16(f[36:], dport)
	return f
}

// A service keeps one Balancer: the control side sets its backends (with
// the states its health checks give), each forwarding worker picks a
// backend per frame.
func ExampleBalancer() {
	clk := clock.NewFake()
	b, err := lb.NewBalancer(lb.BalancerConfig{Method: lb.MethodMaglev}, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	backends := []lb.Backend{
		{ID: 0, Addr: netip.MustParseAddr("10.0.0.1"), Weight: 1},
		{ID: 1, Addr: netip.MustParseAddr("10.0.0.2"), Weight: 1},
		{ID: 2, Addr: netip.MustParseAddr("10.0.0.3"), Weight: 2},
	}
	if err := b.SetBackends(backends); err != nil {
		fmt.Println(err)
		return
	}
	client, vip := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("198.51.100.80")
	k, _ := lb.FlowKeyOf(tcpFrame(client, vip, 40000, 443))
	first := b.Pick(k, clk.Now())

	// Drain the flow's backend: the connection stays, new flows go
	// elsewhere.
	backends[first].State = lb.Draining
	if err := b.SetBackends(backends); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("established flow kept:", b.Pick(k, clk.Now()) == first)
	drained := 0
	for port := uint16(1); port <= 1000; port++ {
		k, _ := lb.FlowKeyOf(tcpFrame(client, vip, port, 443))
		if b.Pick(k, clk.Now()) == first {
			drained++
		}
	}
	fmt.Println("new flows on the draining backend:", drained)
	// Output:
	// established flow kept: true
	// new flows on the draining backend: 0
}
