package service

import (
	"bytes"
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/health"
)

func TestARPAnsweredForVIPsOnly(t *testing.T) {
	other := netip.MustParseAddr("192.0.2.200")
	cases := []struct {
		name   string
		f      []byte
		answer bool
	}{
		{"request for the VIP", arpPacket(clientMAC, frame.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, layers.ARPRequest, clientMAC, client4, frame.MAC{}, vip4), true},
		{"unicast request for the VIP", arpPacket(clientMAC, lbMAC, layers.ARPRequest, clientMAC, client4, frame.MAC{}, vip4), true},
		{"request for another address", arpPacket(clientMAC, frame.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, layers.ARPRequest, clientMAC, client4, frame.MAC{}, other), false},
		{"request for the lb's own source address", arpPacket(clientMAC, frame.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, layers.ARPRequest, clientMAC, client4, frame.MAC{}, source4), false},
		{"reply about the VIP", arpPacket(clientMAC, lbMAC, layers.ARPReply, clientMAC, vip4, lbMAC, source4), false},
		{"announcement of the VIP by another host", arpPacket(clientMAC, frame.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, layers.ARPRequest, clientMAC, vip4, frame.MAC{}, vip4), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Check{})
			p := r.answer(c.f, c.answer)
			if p == nil {
				return
			}
			e, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
			a, _ := p.Layer(layers.LayerTypeARP).(*layers.ARP)
			if e == nil || a == nil {
				t.Fatalf("reply does not decode as Ethernet+ARP: %v", p)
			}
			switch {
			case frame.MACOf(e.DstMAC) != clientMAC || frame.MACOf(e.SrcMAC) != lbMAC:
				t.Errorf("reply from %v to %v; want from %v to %v", e.SrcMAC, e.DstMAC, lbMAC, clientMAC)
			case a.Operation != layers.ARPReply:
				t.Errorf("operation %d; want reply", a.Operation)
			case frame.MACOf(a.SourceHwAddress) != lbMAC || !bytes.Equal(a.SourceProtAddress, vip4.AsSlice()):
				t.Errorf("reply says %v is at %v; want %v at %v", a.SourceProtAddress, a.SourceHwAddress, vip4, lbMAC)
			case frame.MACOf(a.DstHwAddress) != clientMAC || !bytes.Equal(a.DstProtAddress, client4.AsSlice()):
				t.Errorf("reply targets %v at %v; want %v at %v", a.DstProtAddress, a.DstHwAddress, client4, clientMAC)
			}
			if got := r.s.Status().ARPReplies; got != 1 {
				t.Errorf("ARPReplies = %d; want 1", got)
			}
		})
	}
}

func TestNSAnsweredForVIPsOnly(t *testing.T) {
	client6 := netip.MustParseAddr("2001:db8::7")
	cases := []struct {
		name      string
		src, tgt  netip.Addr
		answer    bool
		dst       netip.Addr
		solicited bool
	}{
		{"solicitation for the VIP", client6, vip6, true, client6, true},
		{"duplicate address detection of the VIP", netip.IPv6Unspecified(), vip6, true, netip.MustParseAddr("ff02::1"), false},
		{"solicitation for another address", client6, netip.MustParseAddr("2001:db8::200"), false, netip.Addr{}, false},
		{"solicitation for the lb's own source address", client6, source6, false, netip.Addr{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Check{})
			p := r.answer(nsPacket(t, c.src, c.tgt), c.answer)
			if p == nil {
				return
			}
			ip, _ := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
			na, _ := p.Layer(layers.LayerTypeICMPv6NeighborAdvertisement).(*layers.ICMPv6NeighborAdvertisement)
			if ip == nil || na == nil {
				t.Fatalf("answer does not decode as an IPv6 NA: %v", p)
			}
			if !icmpv6ChecksumOK(p.Data()) {
				t.Errorf("NA checksum invalid")
			}
			if ip.HopLimit != 255 || !ip.SrcIP.Equal(vip6.AsSlice()) || !ip.DstIP.Equal(c.dst.AsSlice()) {
				t.Errorf("NA from %v to %v hop limit %d; want from %v to %v hop limit 255", ip.SrcIP, ip.DstIP, ip.HopLimit, vip6, c.dst)
			}
			if !na.TargetAddress.Equal(vip6.AsSlice()) || na.Solicited() != c.solicited || !na.Override() {
				t.Errorf("NA target %v solicited %v override %v; want %v, %v, true", na.TargetAddress, na.Solicited(), na.Override(), vip6, c.solicited)
			}
			if len(na.Options) != 1 || na.Options[0].Type != layers.ICMPv6OptTargetAddress || frame.MACOf(na.Options[0].Data) != lbMAC {
				t.Errorf("NA options %v; want the target link-layer address %v", na.Options, lbMAC)
			}
		})
	}
}

func TestForwardRewritesMACsOfVIPFramesOnly(t *testing.T) {
	r := newRig(t, Check{})
	r.backends(3)
	cases := []struct {
		name    string
		f       []byte
		forward bool
	}{
		{"TCP to the VIP", tcpFrame(t, lbMAC, client4, vip4, 40000), true},
		{"TCP to another address through the lb's MAC", tcpFrame(t, lbMAC, client4, netip.MustParseAddr("192.0.2.77"), 40000), false},
		{"TCP to the VIP at another MAC", tcpFrame(t, peerMAC, client4, vip4, 40000), false},
		{"TCP to the lb's own address", tcpFrame(t, lbMAC, client4, source4, 40000), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]byte(nil), c.f...)
			r.handle(in)
			out := r.sent()
			if !c.forward {
				if len(out) != 0 || !bytes.Equal(in, c.f) {
					t.Fatalf("sent %d frames (frame changed: %v); want the frame left alone", len(out), !bytes.Equal(in, c.f))
				}
				return
			}
			if len(out) != 1 {
				t.Fatalf("sent %d frames; want the frame forwarded", len(out))
			}
			f := frame.Ethernet(out[0])
			if f.Source() != lbMAC {
				t.Errorf("forwarded from %v; want from %v", f.Source(), lbMAC)
			}
			if d := f.Destination(); d != backendMAC(0) && d != backendMAC(1) && d != backendMAC(2) {
				t.Errorf("forwarded to %v; want a backend's MAC", d)
			}
			if !bytes.Equal(out[0][12:], c.f[12:]) {
				t.Errorf("forwarding changed more than the MACs")
			}
		})
	}
}

func TestEveryBackendGetsFlowsAndAFlowStays(t *testing.T) {
	r := newRig(t, Check{})
	r.backends(3)
	per := map[frame.MAC]int{}
	first := map[uint16]frame.MAC{}
	for sport := uint16(1000); sport < 1300; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		out := r.sent()
		if len(out) != 1 {
			t.Fatalf("flow %d: sent %d frames; want 1", sport, len(out))
		}
		per[frame.Ethernet(out[0]).Destination()]++
		first[sport] = frame.Ethernet(out[0]).Destination()
	}
	for i := range 3 {
		if per[backendMAC(i)] < 50 {
			t.Errorf("backend %d got %d of 300 flows; want about 100 (all: %v)", i, per[backendMAC(i)], per)
		}
	}
	for sport := uint16(1000); sport < 1010; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		if got := frame.Ethernet(r.sent()[0]).Destination(); got != first[sport] {
			t.Errorf("flow %d: second frame to %v, first to %v; want the same backend", sport, got, first[sport])
		}
	}
	st := r.s.Status()
	if st.Frames != 310 || st.Flows != 300 {
		t.Errorf("Status: %d frames, %d flows; want 310, 300", st.Frames, st.Flows)
	}
}

func TestDrainKeepsEstablishedFlows(t *testing.T) {
	r := newRig(t, Check{})
	r.backends(2)
	on := map[frame.MAC][]uint16{}
	for sport := uint16(2000); sport < 2100; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		d := frame.Ethernet(r.sent()[0]).Destination()
		on[d] = append(on[d], sport)
	}
	if err := r.s.SetBackends([]Backend{{Addr: backendAddr(0), Weight: 1, Drain: true}, {Addr: backendAddr(1), Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, sport := range on[backendMAC(0)] {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		if got := frame.Ethernet(r.sent()[0]).Destination(); got != backendMAC(0) {
			t.Fatalf("established flow %d went to %v after drain; want it kept on the drained %v", sport, got, backendMAC(0))
		}
	}
	for sport := uint16(3000); sport < 3100; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		if got := frame.Ethernet(r.sent()[0]).Destination(); got != backendMAC(1) {
			t.Fatalf("new flow %d went to %v; want the serving %v only", sport, got, backendMAC(1))
		}
	}
}

func TestHealthOnFakeClock(t *testing.T) {
	r := newRig(t, Check{Kind: CheckTCP, Port: 80})
	r.backends(2)
	results := map[netip.Addr]error{}
	r.s.probe = scriptedProbe(results)
	ctx := context.Background()
	round := func() { r.clk.Advance(2 * time.Second); r.s.probeRound(ctx) }
	states := func() (lb.BackendState, lb.BackendState) {
		st := r.s.Status()
		return st.Backends[0].State, st.Backends[1].State
	}
	if a, b := states(); a != lb.Down || b != lb.Down {
		t.Fatalf("before any check: %v, %v; want both down (unknown health takes no traffic)", a, b)
	}
	round()
	if a, b := states(); a != lb.Serving || b != lb.Serving {
		t.Fatalf("after one passing check: %v, %v; want both serving", a, b)
	}
	upAt := r.clk.Now()
	results[backendAddr(0)] = errRefused
	for i := 1; i <= health.DefaultFall; i++ {
		round()
		want := lb.Serving
		if i == health.DefaultFall {
			want = lb.Down
		}
		if a, _ := states(); a != want {
			t.Fatalf("after %d failed checks: backend 0 %v; want %v", i, a, want)
		}
	}
	b0 := r.s.Status().Backends[0]
	if b0.Health != "down" || !b0.HealthSince.Equal(r.clk.Now()) || b0.LastError != errRefused.Error() {
		t.Errorf("backend 0: health %s since %v (%q); want down since %v (%q)", b0.Health, b0.HealthSince, b0.LastError, r.clk.Now(), errRefused)
	}
	if b1 := r.s.Status().Backends[1]; !b1.HealthSince.Equal(upAt) {
		t.Errorf("backend 1: up since %v; want %v, its first check", b1.HealthSince, upAt)
	}
	for sport := uint16(5000); sport < 5050; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		if got := frame.Ethernet(r.sent()[0]).Destination(); got != backendMAC(1) {
			t.Fatalf("flow %d went to %v while backend 0 is down; want %v", sport, got, backendMAC(1))
		}
	}
	delete(results, backendAddr(0))
	for i := 1; i <= health.DefaultRise; i++ {
		round()
		want := lb.Down
		if i == health.DefaultRise {
			want = lb.Serving
		}
		if a, _ := states(); a != want {
			t.Fatalf("after %d passing checks: backend 0 %v; want %v", i, a, want)
		}
	}
}

func TestAllBackendsDownDropsAndCounts(t *testing.T) {
	r := newRig(t, Check{Kind: CheckTCP, Port: 80})
	r.backends(2)
	r.s.probe = scriptedProbe(map[netip.Addr]error{backendAddr(0): errRefused, backendAddr(1): errRefused})
	r.s.probeRound(context.Background())
	for sport := uint16(1); sport <= 5; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
	}
	if out := r.sent(); len(out) != 0 {
		t.Errorf("sent %d frames with every backend down; want none", len(out))
	}
	if st := r.s.Status(); st.NoBackend != 5 || st.Serving != 0 {
		t.Errorf("Status: NoBackend %d, Serving %d; want 5, 0", st.NoBackend, st.Serving)
	}
}

func TestUnresolvedBackendTakesNoFlows(t *testing.T) {
	r := newRig(t, Check{})
	if err := r.s.SetBackends([]Backend{{Addr: backendAddr(0)}, {Addr: backendAddr(1)}}); err != nil {
		t.Fatal(err)
	}
	r.handle(arpPacket(backendMAC(1), lbMAC, layers.ARPReply, backendMAC(1), backendAddr(1), lbMAC, source4))
	for sport := uint16(1); sport <= 20; sport++ {
		r.handle(tcpFrame(t, lbMAC, client4, vip4, sport))
		if got := frame.Ethernet(r.sent()[0]).Destination(); got != backendMAC(1) {
			t.Fatalf("flow %d to %v; want only the resolved %v", sport, got, backendMAC(1))
		}
	}
}

func TestResolverAsksAndFollowsAChange(t *testing.T) {
	r := newRig(t, Check{})
	if err := r.s.SetBackends([]Backend{{Addr: backendAddr(0)}, {Addr: netip.MustParseAddr("2001:db8::10")}}); err != nil {
		t.Fatal(err)
	}
	r.s.resolveRound()
	out := r.sent()
	if len(out) != 2 {
		t.Fatalf("first round sent %d frames; want an ARP request and an NS", len(out))
	}
	a, _ := gopacket.NewPacket(out[0], layers.LayerTypeEthernet, gopacket.Default).Layer(layers.LayerTypeARP).(*layers.ARP)
	if a == nil || a.Operation != layers.ARPRequest || !bytes.Equal(a.SourceProtAddress, source4.AsSlice()) ||
		frame.MACOf(a.SourceHwAddress) != lbMAC || !bytes.Equal(a.DstProtAddress, backendAddr(0).AsSlice()) {
		t.Errorf("first frame %v; want an ARP request from %v at %v for %v", a, source4, lbMAC, backendAddr(0))
	}
	ns, _ := gopacket.NewPacket(out[1], layers.LayerTypeEthernet, gopacket.Default).Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation)
	if ns == nil || !ns.TargetAddress.Equal(netip.MustParseAddr("2001:db8::10").AsSlice()) || !icmpv6ChecksumOK(out[1]) {
		t.Errorf("second frame %v; want an NS for 2001:db8::10 with a valid checksum", ns)
	}
	r.handle(arpPacket(backendMAC(0), lbMAC, layers.ARPReply, backendMAC(0), backendAddr(0), lbMAC, source4))
	r.s.resolveRound()
	if out := r.sent(); len(out) != 1 {
		t.Errorf("second round sent %d frames; want only the NS for the unresolved IPv6 backend", len(out))
	}
	moved := frame.MAC{0x02, 0, 0, 0, 0x99, 0x99}
	r.handle(arpPacket(moved, frame.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, layers.ARPRequest, moved, backendAddr(0), frame.MAC{}, backendAddr(0)))
	if got := r.s.Status().Backends[0].MAC; got != moved.String() {
		t.Errorf("after a gratuitous ARP from a new MAC the backend is at %s; want %v", got, moved)
	}
	r.clk.Advance(DefaultResolveInterval)
	r.sent()
	r.s.resolveRound()
	if out := r.sent(); len(out) != 2 {
		t.Errorf("after the resolve interval sent %d frames; want both backends asked again", len(out))
	}
}

func TestMalformedFramesCounted(t *testing.T) {
	arp := arpPacket(clientMAC, lbMAC, layers.ARPRequest, clientMAC, client4, frame.MAC{}, vip4)
	ns := nsPacket(t, netip.MustParseAddr("2001:db8::7"), vip6)
	ip := tcpFrame(t, lbMAC, client4, vip4, 1)
	mod := func(f []byte, fn func(f []byte)) []byte { f = append([]byte(nil), f...); fn(f); return f }
	cases := []struct {
		name string
		f    []byte
		what func(Status) uint64
	}{
		{"ARP cut short", arp[:14+20], func(s Status) uint64 { return s.BadARP }},
		{"ARP for another hardware type", mod(arp, func(f []byte) { f[15] = 6 }), func(s Status) uint64 { return s.BadARP }},
		{"ARP with an unknown operation", mod(arp, func(f []byte) { f[21] = 9 }), func(s Status) uint64 { return s.BadARP }},
		{"ARP from a multicast MAC", mod(arp, func(f []byte) { f[22] = 1 }), func(s Status) uint64 { return s.BadARP }},
		{"NS with hop limit 254", mod(ns, func(f []byte) { f[14+7] = 254 }), func(s Status) uint64 { return s.BadND }},
		{"NS cut short", ns[:14+40+10], func(s Status) uint64 { return s.BadND }},
		{"NS with a zero-length option", mod(ns, func(f []byte) { f[14+40+24+1] = 0 }), func(s Status) uint64 { return s.BadND }},
		{"NS with a non-zero code", mod(ns, func(f []byte) { f[14+40+1] = 1 }), func(s Status) uint64 { return s.BadND }},
		{"IPv4 header cut short", ip[:14+12], func(s Status) uint64 { return s.BadIP }},
		{"IPv4 header length under 20", mod(ip, func(f []byte) { f[14] = 0x44 }), func(s Status) uint64 { return s.BadIP }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Check{})
			r.backends(1)
			r.handle(c.f)
			if out := r.sent(); len(out) != 0 {
				t.Errorf("sent %d frames; want none for a malformed frame", len(out))
			}
			if got := c.what(r.s.Status()); got != 1 {
				t.Errorf("counted %d; want 1", got)
			}
		})
	}
}

func TestSetBackendsRefusesBadBackends(t *testing.T) {
	cases := []struct {
		name string
		bs   []Backend
	}{
		{"duplicate", []Backend{{Addr: backendAddr(0)}, {Addr: backendAddr(0)}}},
		{"the lb's own address", []Backend{{Addr: source4}}},
		{"a VIP", []Backend{{Addr: vip4}}},
		{"multicast", []Backend{{Addr: netip.MustParseAddr("224.0.0.1")}}},
		{"no address", []Backend{{}}},
		{"weight too large", []Backend{{Addr: backendAddr(0), Weight: lb.MaxWeight + 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Check{})
			r.backends(1)
			if err := r.s.SetBackends(c.bs); err == nil {
				t.Fatalf("SetBackends(%v) succeeded; want an error", c.bs)
			}
			if st := r.s.Status(); len(st.Backends) != 1 || st.Backends[0].Addr != backendAddr(0) {
				t.Errorf("after a refused change the backends are %v; want them unchanged", st.Backends)
			}
		})
	}
}

func TestForwardAllocatesNothing(t *testing.T) {
	r := newRig(t, Check{})
	r.backends(3)
	f := tcpFrame(t, lbMAC, client4, vip4, 4242)
	now := r.clk.Now()
	r.s.handle(f, now)
	allocs := testing.AllocsPerRun(1000, func() {
		copy(f[0:6], lbMAC[:])
		if !r.s.handle(f, now) {
			t.Fatal("frame to the VIP not forwarded")
		}
	})
	if allocs != 0 {
		t.Errorf("handle allocates %.1f times per forwarded frame; want 0", allocs)
	}
}

func TestParseCheck(t *testing.T) {
	cases := []struct {
		in   string
		want Check
		ok   bool
	}{
		{"tcp:80", Check{Kind: CheckTCP, Port: 80}, true},
		{"http:8080/healthz", Check{Kind: CheckHTTP, Port: 8080, Path: "/healthz"}, true},
		{"http:80", Check{Kind: CheckHTTP, Port: 80, Path: "/"}, true},
		{"arp", Check{Kind: CheckARP}, true},
		{"none", Check{}, true},
		{"tcp:0", Check{}, false},
		{"tcp:65536", Check{}, false},
		{"udp:53", Check{}, false},
		{"tcp", Check{}, false},
	}
	for _, c := range cases {
		got, err := ParseCheck(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseCheck(%q) = %+v, %v; want %+v, ok %v", c.in, got, err, c.want, c.ok)
		}
		if c.ok && c.in != "none" && c.in != "http:80" && got.String() != c.in {
			t.Errorf("ParseCheck(%q).String() = %q; want it back", c.in, got.String())
		}
	}
}

func TestResolverAsksAnonymouslyWhenTold(t *testing.T) {
	r := newRig(t, Check{})
	r.s.anonymous = true
	v6 := netip.MustParseAddr("2001:db8::10")
	if err := r.s.SetBackends([]Backend{{Addr: backendAddr(0)}, {Addr: v6}}); err != nil {
		t.Fatal(err)
	}
	r.s.resolveRound()
	out := r.sent()
	if len(out) != 2 {
		t.Fatalf("sent %d frames; want an ARP probe and an NS", len(out))
	}
	a, _ := gopacket.NewPacket(out[0], layers.LayerTypeEthernet, gopacket.Default).Layer(layers.LayerTypeARP).(*layers.ARP)
	if a == nil || !bytes.Equal(a.SourceProtAddress, []byte{0, 0, 0, 0}) || frame.MACOf(a.SourceHwAddress) != lbMAC {
		t.Errorf("ARP %v; want a probe: sender 0.0.0.0 at %v", a, lbMAC)
	}
	p := gopacket.NewPacket(out[1], layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	ns, _ := p.Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation)
	if ip == nil || ns == nil || !ip.SrcIP.IsUnspecified() || len(ns.Options) != 0 || !icmpv6ChecksumOK(out[1]) {
		t.Errorf("NS %v from %v; want one from :: without options, with a valid checksum", ns, ip)
	}
	// The owner defends its address to all nodes: that answer resolves.
	mac1 := backendMAC(1)
	na := serialize(t, eth(backendMAC(1), frame.MAC{0x33, 0x33, 0, 0, 0, 1}, layers.EthernetTypeIPv6),
		&layers.IPv6{Version: 6, HopLimit: 255, NextHeader: layers.IPProtocolICMPv6, SrcIP: v6.AsSlice(), DstIP: netip.MustParseAddr("ff02::1").AsSlice()},
		func() *layers.ICMPv6 {
			c := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborAdvertisement, 0)}
			_ = c.SetNetworkLayerForChecksum(&layers.IPv6{SrcIP: v6.AsSlice(), DstIP: netip.MustParseAddr("ff02::1").AsSlice(), NextHeader: layers.IPProtocolICMPv6})
			return c
		}(),
		&layers.ICMPv6NeighborAdvertisement{Flags: naOverride, TargetAddress: v6.AsSlice(),
			Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptTargetAddress, Data: mac1[:]}}})
	r.handle(na)
	if got := r.s.Status().Backends[1].MAC; got != backendMAC(1).String() {
		t.Errorf("after the NA to all nodes the IPv6 backend is at %q; want %v", got, backendMAC(1))
	}
}
