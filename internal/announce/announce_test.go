package announce_test

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/internal/announce"
)

var mac = net.HardwareAddr{0x02, 0x77, 0, 0, 0, 1}

func TestGratuitousARPDecodes(t *testing.T) {
	f, err := announce.GratuitousARP(mac, netip.MustParseAddr("192.0.2.7"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 60 {
		t.Errorf("frame of %d bytes, want 60 (padded to the Ethernet minimum)", len(f))
	}
	pk := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := pk.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	arp, _ := pk.Layer(layers.LayerTypeARP).(*layers.ARP)
	if eth == nil || arp == nil {
		t.Fatalf("gopacket does not see Ethernet and ARP: %v", pk)
	}
	switch {
	case eth.DstMAC.String() != "ff:ff:ff:ff:ff:ff" || eth.SrcMAC.String() != mac.String():
		t.Errorf("Ethernet %s -> %s, want %s -> broadcast", eth.SrcMAC, eth.DstMAC, mac)
	case arp.Operation != layers.ARPRequest:
		t.Errorf("ARP operation %d, want request", arp.Operation)
	case net.IP(arp.SourceProtAddress).String() != "192.0.2.7" || net.IP(arp.DstProtAddress).String() != "192.0.2.7":
		t.Errorf("ARP sender %v target %v, want both 192.0.2.7", net.IP(arp.SourceProtAddress), net.IP(arp.DstProtAddress))
	case net.HardwareAddr(arp.SourceHwAddress).String() != mac.String():
		t.Errorf("ARP sender MAC %v, want %s", net.HardwareAddr(arp.SourceHwAddress), mac)
	}
}

func TestUnsolicitedNADecodesWithAValidChecksum(t *testing.T) {
	ip := netip.MustParseAddr("2001:db8::7")
	f, err := announce.UnsolicitedNA(mac, ip)
	if err != nil {
		t.Fatal(err)
	}
	pk := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := pk.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip6, _ := pk.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	icmp, _ := pk.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
	na, _ := pk.Layer(layers.LayerTypeICMPv6NeighborAdvertisement).(*layers.ICMPv6NeighborAdvertisement)
	if eth == nil || ip6 == nil || icmp == nil || na == nil {
		t.Fatalf("gopacket does not see Ethernet, IPv6, ICMPv6 and an NA: %v", pk)
	}
	if eth.DstMAC.String() != "33:33:00:00:00:01" || ip6.DstIP.String() != "ff02::1" || ip6.HopLimit != 255 {
		t.Errorf("to %s / %s hop limit %d, want 33:33:00:00:00:01 / ff02::1, 255", eth.DstMAC, ip6.DstIP, ip6.HopLimit)
	}
	if na.TargetAddress.String() != ip.String() || na.Flags&0x20 == 0 || na.Flags&0x40 != 0 {
		t.Errorf("NA target %s flags %#x, want %s with Override and not Solicited", na.TargetAddress, na.Flags, ip)
	}
	if len(na.Options) != 1 || na.Options[0].Type != layers.ICMPv6OptTargetAddress || net.HardwareAddr(na.Options[0].Data).String() != mac.String() {
		t.Errorf("NA options %v, want the target link-layer address %s", na.Options, mac)
	}
	// The checksum, recomputed independently over the pseudo-header
	// (RFC 8200 section 8.1) and the ICMPv6 message, must verify.
	msg := ip6.Payload
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(ip6.SrcIP)
	add(ip6.DstIP)
	sum += uint32(len(msg)) + 58
	add(msg)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	if sum != 0xffff {
		t.Errorf("ICMPv6 checksum does not verify (sum %#x)", sum)
	}
}

func TestFramesRefusesWhatNoHostAnnounces(t *testing.T) {
	for _, c := range []struct {
		mac  net.HardwareAddr
		addr string
		want string
	}{
		{mac, "224.0.0.1", "announce 224.0.0.1: a multicast address"},
		{mac, "::", "announce ::: no address"},
		{mac, "::ffff:192.0.2.1", "announce ::ffff:192.0.2.1: an IPv4-mapped IPv6 address"},
		{net.HardwareAddr{1, 2}, "192.0.2.1", "announce 192.0.2.1: source 01:02 is not a 6-byte MAC"},
	} {
		_, err := announce.Frames(c.mac, []netip.Addr{netip.MustParseAddr(c.addr)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Frames(%s) = %v, want %q", c.addr, err, c.want)
		}
	}
	fs, err := announce.Frames(mac, []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")})
	if err != nil || len(fs) != 2 {
		t.Fatalf("Frames of one IPv4 and one IPv6 address = %d frames, %v; want 2", len(fs), err)
	}
}
