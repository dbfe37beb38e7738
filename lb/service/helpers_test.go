package service

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// The test segment: the service's port lb0 cabled to peer, where the
// test plays client and backends.
var (
	lbMAC     = frame.MAC{0x02, 0, 0, 0, 0x1b, 0x01}
	peerMAC   = frame.MAC{0x02, 0, 0, 0, 0xee, 0x01}
	clientMAC = frame.MAC{0x02, 0, 0, 0, 0xc1, 0x01}
	vip4      = netip.MustParseAddr("192.0.2.100")
	vip6      = netip.MustParseAddr("2001:db8::100")
	source4   = netip.MustParseAddr("192.0.2.1")
	source6   = netip.MustParseAddr("2001:db8::1")
	client4   = netip.MustParseAddr("198.51.100.7")
)

// backendMAC is the MAC the test gives backend i.
func backendMAC(i int) frame.MAC { return frame.MAC{0x02, 0, 0, 0, 0xbe, byte(i)} }

// backendAddr is backend i's IPv4 address.
func backendAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{192, 0, 2, byte(10 + i)}) }

// rig is a service on one end of a memport cable; the test holds the
// other end. Nothing runs on its own: the test calls handle, probeRound
// and resolveRound.
type rig struct {
	t    testing.TB
	s    *Service
	peer *memport.Port
	clk  *clock.Fake
}

func newRig(t testing.TB, check Check) *rig {
	t.Helper()
	a, b := memport.Pair("lb0", net.HardwareAddr(lbMAC[:]), "peer", net.HardwareAddr(peerMAC[:]))
	t.Cleanup(func() { b.Close() })
	clk := clock.NewFake()
	s, err := New(Config{Name: "web", VIPs: []netip.Addr{vip4, vip6}, Source: source4, Source6: source6, Check: check}, a, clk, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &rig{t: t, s: s, peer: b, clk: clk}
}

// backends configures n backends and teaches the service their MACs
// with ARP replies.
func (r *rig) backends(n int) {
	r.t.Helper()
	var bs []Backend
	for i := range n {
		bs = append(bs, Backend{Addr: backendAddr(i), Weight: 1})
	}
	if err := r.s.SetBackends(bs); err != nil {
		r.t.Fatalf("SetBackends: %v", err)
	}
	for i := range n {
		r.handle(arpPacket(backendMAC(i), lbMAC, layers.ARPReply, backendMAC(i), backendAddr(i), lbMAC, source4))
	}
}

// handle runs f through the data path as one batch: what it forwards
// and what the service answers arrive at the peer.
func (r *rig) handle(f []byte) {
	in := platform.Plain(f)
	in.Offs = make([]platform.Offload, 1)
	r.s.forwardBatch(in, platform.NewBatch(1))
}

// sent returns the frames waiting at the peer, copied.
func (r *rig) sent() [][]byte {
	var out [][]byte
	buf := make([][]byte, 16)
	for r.peer.Pending() > 0 {
		n, err := r.peer.TryReadBatch(buf)
		if err != nil {
			r.t.Fatalf("peer read: %v", err)
		}
		for _, f := range buf[:n] {
			out = append(out, append([]byte(nil), f...))
		}
	}
	return out
}

// answer handles f and returns the one frame the service answered it
// with, decoded, or nil when want says it must not answer (and it did
// not).
func (r *rig) answer(f []byte, want bool) gopacket.Packet {
	r.t.Helper()
	r.handle(f)
	out := r.sent()
	switch {
	case !want && len(out) != 0:
		r.t.Fatalf("sent %d frames; want no answer", len(out))
	case want && len(out) != 1:
		r.t.Fatalf("sent %d frames; want one answer", len(out))
	case !want:
		return nil
	}
	return gopacket.NewPacket(out[0], layers.LayerTypeEthernet, gopacket.Default)
}

// serialize builds a frame from layers, with lengths and checksums.
func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return buf.Bytes()
}

func eth(src, dst frame.MAC, typ layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: net.HardwareAddr(src[:]), DstMAC: net.HardwareAddr(dst[:]), EthernetType: typ}
}

// arpPacket is an ARP packet in a frame from src to dst.
func arpPacket(src, dst frame.MAC, op uint16, sha frame.MAC, spa netip.Addr, tha frame.MAC, tpa netip.Addr) []byte {
	buf := gopacket.NewSerializeBuffer()
	_ = gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth(src, dst, layers.EthernetTypeARP), &layers.ARP{
		AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
		Operation: op, SourceHwAddress: sha[:], SourceProtAddress: spa.AsSlice(), DstHwAddress: tha[:], DstProtAddress: tpa.AsSlice()})
	return buf.Bytes()
}

// tcpFrame is a TCP SYN from client:sport to dst:80 in a frame to dstMAC.
func tcpFrame(t testing.TB, dstMAC frame.MAC, src, dst netip.Addr, sport uint16) []byte {
	tcp := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: 80, SYN: true, Window: 1000}
	if dst.Is4() {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
		_ = tcp.SetNetworkLayerForChecksum(ip)
		return serialize(t, eth(clientMAC, dstMAC, layers.EthernetTypeIPv4), ip, tcp, gopacket.Payload("hello"))
	}
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	_ = tcp.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth(clientMAC, dstMAC, layers.EthernetTypeIPv6), ip, tcp, gopacket.Payload("hello"))
}

// nsPacket is a neighbour solicitation for target from src (with a
// source link-layer option unless src is unspecified).
func nsPacket(t testing.TB, src, target netip.Addr) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 255, NextHeader: layers.IPProtocolICMPv6, SrcIP: src.AsSlice(),
		DstIP: net.ParseIP("ff02::1:ff00:100")}
	icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborSolicitation, 0)}
	_ = icmp.SetNetworkLayerForChecksum(ip)
	ns := &layers.ICMPv6NeighborSolicitation{TargetAddress: target.AsSlice()}
	if !src.IsUnspecified() {
		ns.Options = layers.ICMPv6Options{{Type: layers.ICMPv6OptSourceAddress, Data: clientMAC[:]}}
	}
	return serialize(t, eth(clientMAC, frame.MAC{0x33, 0x33, 0xff, 0, 1, 0}, layers.EthernetTypeIPv6), ip, icmp, ns)
}

// icmpv6ChecksumOK recomputes the checksum of the ICMPv6 message of an
// untagged IPv6 frame over the pseudo-header (RFC 8200 section 8.1).
func icmpv6ChecksumOK(f []byte) bool {
	ip := f[14:]
	plen := int(binary.BigEndian.Uint16(ip[4:]))
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(b[i:]))
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(ip[8:40])
	sum += uint32(plen) + 58
	add(ip[40 : 40+plen])
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// errRefused is a failing check's result.
var errRefused = errors.New("connection refused")

// scriptedProbe returns a probe that answers each backend from results
// in turn (nil for success), by address.
func scriptedProbe(results map[netip.Addr]error) func(context.Context, *backend) error {
	return func(_ context.Context, b *backend) error { return results[b.addr] }
}
