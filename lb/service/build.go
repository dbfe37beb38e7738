package service

import (
	"net"
	"net/netip"

	"github.com/google/gopacket/layers"
	"github.com/mdlayher/ethernet"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/announce"
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

// arpReplyFrame answers req, an ARP request for vip, with mac.
func arpReplyFrame(req arpHeader, mac frame.MAC, vip [4]byte) ([]byte, error) {
	sha := req.senderMAC()
	return announce.ARP(net.HardwareAddr(sha[:]), arpReply, mac, vip, sha, req.senderIP())
}

// arpRequestFrame asks, broadcast, for the MAC of target from (mac, src).
func arpRequestFrame(mac frame.MAC, src, target netip.Addr) ([]byte, error) {
	return announce.ARP(ethernet.Broadcast, arpRequest, mac, src.As4(), frame.MAC{}, target.As4())
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
	return announce.ND(dstMAC, mac, vip, dst, layers.ICMPv6TypeNeighborAdvertisement, na)
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
	return announce.ND(solicitedNodeMAC(target), mac, src, group, layers.ICMPv6TypeNeighborSolicitation, ns)
}

// solicitedNodeMAC is the multicast MAC of the solicited-node group of
// a: the group a solicitation for a is sent to.
func solicitedNodeMAC(a netip.Addr) net.HardwareAddr {
	t := a.As16()
	return net.HardwareAddr{0x33, 0x33, 0xff, t[13], t[14], t[15]}
}
