package service

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/mdlayher/ethernet"
	"github.com/swctl/swctl/frame"
)

// The frames the service sends of its own: ARP and ND replies for its
// VIPs, and the requests that resolve its backends. They are rare (one
// per request received, one per backend per second at most) and
// allocate.

// Neighbour advertisement flags (RFC 4861 section 4.4).
const (
	naSolicited = 0x40
	naOverride  = 0x20
)

// allNodes is ff02::1 and its MAC.
var (
	allNodes    = netip.MustParseAddr("ff02::1")
	allNodesMAC = net.HardwareAddr{0x33, 0x33, 0, 0, 0, 1}
)

// arpFrame returns an ARP packet of operation op from (sha, spa) to
// (tha, tpa) in an Ethernet frame to dst.
func arpFrame(dst net.HardwareAddr, op uint16, sha frame.MAC, spa [4]byte, tha frame.MAC, tpa [4]byte) ([]byte, error) {
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

// arpReplyFrame answers req, an ARP request for vip, with mac.
func arpReplyFrame(req arpHeader, mac frame.MAC, vip [4]byte) ([]byte, error) {
	sha := req.senderMAC()
	return arpFrame(net.HardwareAddr(sha[:]), arpReply, mac, vip, sha, req.senderIP())
}

// arpRequestFrame asks, broadcast, for the MAC of target from (mac, src).
func arpRequestFrame(mac frame.MAC, src, target netip.Addr) ([]byte, error) {
	return arpFrame(ethernet.Broadcast, arpRequest, mac, src.As4(), frame.MAC{}, target.As4())
}

// ndFrame returns the ICMPv6 message msg (with its checksum) from src to
// dst in an IPv6 packet of hop limit 255, in an Ethernet frame from mac
// to dstMAC.
func ndFrame(dstMAC net.HardwareAddr, mac frame.MAC, src, dst netip.Addr, typ uint8, msg gopacket.SerializableLayer) ([]byte, error) {
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

// naFrame answers ns, a solicitation for vip from the Ethernet source
// from, with mac: a solicited advertisement to its sender, or to all
// nodes when it came from the unspecified address (duplicate address
// detection), with the override flag and the target link-layer option.
func naFrame(ns *ndMessage, from, mac frame.MAC, vip netip.Addr) ([]byte, error) {
	dst, dstMAC, flags := netip.AddrFrom16(ns.src), net.HardwareAddr(from[:]), uint8(naSolicited|naOverride)
	if dst.IsUnspecified() {
		dst, dstMAC, flags = allNodes, allNodesMAC, naOverride
	}
	na := &layers.ICMPv6NeighborAdvertisement{Flags: flags, TargetAddress: net.IP(vip.AsSlice()),
		Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptTargetAddress, Data: mac[:]}}}
	return ndFrame(dstMAC, mac, vip, dst, layers.ICMPv6TypeNeighborAdvertisement, na)
}

// nsFrame asks for the MAC of target from (mac, src), to target's
// solicited-node multicast group (RFC 4291 section 2.7.1). From the
// unspecified address it carries no source link-layer option (RFC 4861
// section 4.3), and target answers to all nodes.
func nsFrame(mac frame.MAC, src, target netip.Addr) ([]byte, error) {
	t := target.As16()
	group := netip.AddrFrom16([16]byte{0xff, 0x02, 11: 1, 12: 0xff, 13: t[13], 14: t[14], 15: t[15]})
	ns := &layers.ICMPv6NeighborSolicitation{TargetAddress: net.IP(target.AsSlice())}
	if !src.IsUnspecified() {
		ns.Options = layers.ICMPv6Options{{Type: layers.ICMPv6OptSourceAddress, Data: mac[:]}}
	}
	return ndFrame(solicitedNodeMAC(target), mac, src, group, layers.ICMPv6TypeNeighborSolicitation, ns)
}

// solicitedNodeMAC is the multicast MAC of the solicited-node group of
// a: the group a solicitation for a is sent to.
func solicitedNodeMAC(a netip.Addr) net.HardwareAddr {
	t := a.As16()
	return net.HardwareAddr{0x33, 0x33, 0xff, t[13], t[14], t[15]}
}
