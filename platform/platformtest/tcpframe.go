package platformtest

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/platform"
)

// TCPFrame builds a TCP/IPv4 frame from src to dst with n payload bytes,
// behind an 802.1Q tag when vlan is not 0, its checksum left partial as a
// local stack with offloads hands it to a device, and its Offload
// (NEEDS_CSUM). With mss > 0 it is a super-frame: the Offload also says
// TCPv4 with GSO size mss and the header length. For tests only: it
// allocates.
func TCPFrame(t testing.TB, dst, src net.HardwareAddr, vlan uint16, n, mss int) ([]byte, platform.Offload) {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ls := []gopacket.SerializableLayer{eth}
	l4 := 14 + 20
	if vlan != 0 {
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: vlan, Type: layers.EthernetTypeIPv4})
		l4 += 4
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, Flags: layers.IPv4DontFragment,
		SrcIP: net.IP{10, 9, 0, 1}, DstIP: net.IP{10, 9, 0, 2}}
	tcp := &layers.TCP{SrcPort: 40000, DstPort: 9, Seq: 1, Ack: 1, ACK: true, Window: 100}
	tcp.SetNetworkLayerForChecksum(ip)
	pl := make([]byte, n)
	for i := range pl {
		pl[i] = byte(i*7 + 1)
	}
	ls = append(ls, ip, tcp, gopacket.Payload(pl))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	f := buf.Bytes()
	// The partial checksum: the folded pseudo-header sum.
	var s uint32
	for i := l4 - 8; i < l4; i += 2 {
		s += uint32(binary.BigEndian.Uint16(f[i:]))
	}
	s += 6 + uint32(len(f)-l4)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	binary.BigEndian.PutUint16(f[l4+16:], uint16(s))
	o := platform.Offload{Flags: platform.OffloadNeedsCsum, CsumStart: uint16(l4), CsumOffset: 16}
	if mss > 0 {
		o.GSOType, o.GSOSize, o.HdrLen = platform.GSOTCPv4, uint16(mss), uint16(l4+20)
	}
	return f, o
}
