// Package announce builds the frames a host sends so that the switches
// and neighbours around it relearn at once where its addresses are, after
// the port it is reached through changed (a trunk's failover): a
// gratuitous ARP request for each IPv4 address and an unsolicited
// neighbour advertisement (RFC 4861 section 7.2.6) for each IPv6 one, as
// Linux bonding's num_grat_arp and num_unsol_na do. These are
// control-plane frames, built rarely: they allocate, and use the
// project's frame libraries (github.com/mdlayher/ethernet for the
// Ethernet envelope, gopacket where a checksum is needed). ARP and ND,
// the builders under the announcements, serve the other control-plane
// frames too (a load balancer's replies and requests, lb/service).
package announce

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/mdlayher/ethernet"

	"github.com/swctl/swctl/frame"
)

// allNodes is ff02::1 and its MAC 33:33:00:00:00:01 (RFC 2464).
var (
	allNodes    = netip.MustParseAddr("ff02::1")
	allNodesMAC = net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}
)

// naOverride is the NA's Override flag (RFC 4861 section 4.4): the
// receiver replaces the link-layer address it has cached.
const naOverride = 0x20

// Frames returns one announcement per address in addrs from mac: a
// gratuitous ARP for an IPv4 address, an unsolicited NA for an IPv6 one.
// Unspecified, multicast and IPv4-mapped addresses are refused by name.
func Frames(mac net.HardwareAddr, addrs []netip.Addr) ([][]byte, error) {
	out := make([][]byte, 0, len(addrs))
	for _, a := range addrs {
		var f []byte
		var err error
		if a.Is4() {
			f, err = GratuitousARP(mac, a)
		} else {
			f, err = UnsolicitedNA(mac, a)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// check refuses what no host announces.
func check(mac net.HardwareAddr, ip netip.Addr) error {
	switch {
	case len(mac) != 6:
		return fmt.Errorf("announce %s: source %v is not a 6-byte MAC", ip, mac)
	case !ip.IsValid() || ip.IsUnspecified():
		return fmt.Errorf("announce %s: no address", ip)
	case ip.IsMulticast():
		return fmt.Errorf("announce %s: a multicast address", ip)
	case ip.Is4In6():
		return fmt.Errorf("announce %s: an IPv4-mapped IPv6 address", ip)
	}
	return nil
}

// GratuitousARP returns a broadcast ARP request from mac whose sender
// and target protocol addresses are both ip (RFC 5227 section 3's ARP
// announcement), padded to the Ethernet minimum.
func GratuitousARP(mac net.HardwareAddr, ip netip.Addr) ([]byte, error) {
	if err := check(mac, ip); err != nil {
		return nil, err
	}
	if !ip.Is4() {
		return nil, fmt.Errorf("announce %s: ARP is for IPv4 addresses", ip)
	}
	return ARP(ethernet.Broadcast, layers.ARPRequest, frame.MACOf(mac), ip.As4(), frame.MAC{}, ip.As4())
}

// UnsolicitedNA returns a neighbour advertisement from mac for ip to all
// nodes (ff02::1), with the Override flag and a target link-layer address
// option, hop limit 255 and its ICMPv6 checksum.
func UnsolicitedNA(mac net.HardwareAddr, ip netip.Addr) ([]byte, error) {
	if err := check(mac, ip); err != nil {
		return nil, err
	}
	if !ip.Is6() {
		return nil, fmt.Errorf("announce %s: neighbour advertisements are for IPv6 addresses", ip)
	}
	na := &layers.ICMPv6NeighborAdvertisement{Flags: naOverride, TargetAddress: net.IP(ip.AsSlice()),
		Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptTargetAddress, Data: mac}}}
	return ND(allNodesMAC, frame.MACOf(mac), ip, allNodes, layers.ICMPv6TypeNeighborAdvertisement, na)
}

// ARP returns an ARP packet of operation op from (sha, spa) to (tha,
// tpa) in an Ethernet frame from sha to dst, padded to the minimum.
func ARP(dst net.HardwareAddr, op uint16, sha frame.MAC, spa [4]byte, tha frame.MAC, tpa [4]byte) ([]byte, error) {
	arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: op,
		SourceHwAddress: sha[:], SourceProtAddress: spa[:],
		DstHwAddress: tha[:], DstProtAddress: tpa[:]}
	buf := gopacket.NewSerializeBuffer()
	if err := arp.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		return nil, fmt.Errorf("arp %v: %w", netip.AddrFrom4(tpa), err)
	}
	f := &ethernet.Frame{Destination: dst, Source: net.HardwareAddr(sha[:]), EtherType: ethernet.EtherTypeARP, Payload: buf.Bytes()}
	return f.MarshalBinary()
}

// ND returns the ICMPv6 message msg of type typ (with its checksum) from
// src to dst in an IPv6 packet of hop limit 255, in an Ethernet frame
// from mac to dstMAC.
func ND(dstMAC net.HardwareAddr, mac frame.MAC, src, dst netip.Addr, typ uint8, msg gopacket.SerializableLayer) ([]byte, error) {
	ip6 := &layers.IPv6{Version: 6, HopLimit: 255, NextHeader: layers.IPProtocolICMPv6,
		SrcIP: net.IP(src.AsSlice()), DstIP: net.IP(dst.AsSlice())}
	icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(typ, 0)}
	if err := icmp.SetNetworkLayerForChecksum(ip6); err != nil {
		return nil, err
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ip6, icmp, msg); err != nil {
		return nil, fmt.Errorf("nd %v to %v: %w", src, dst, err)
	}
	f := &ethernet.Frame{Destination: dstMAC, Source: net.HardwareAddr(mac[:]), EtherType: ethernet.EtherTypeIPv6, Payload: buf.Bytes()}
	return f.MarshalBinary()
}
