package integration

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
)

// vnetTap is a TAP opened as qemu opens one for a VM (IFF_VNET_HDR):
// whatever is written to it, virtio_net_hdr and frame, reaches the
// interface's packet sockets as the guest claimed it.
type vnetTap struct {
	*os.File
	name string
	mac  net.HardwareAddr
}

// openVnetTap makes the TAP name in ns, up, and closes it at cleanup.
func openVnetTap(t *testing.T, ns *netnstest.NS, name string) *vnetTap {
	t.Helper()
	var fd int
	var err error
	ns.Do(func() {
		fd, err = unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return
		}
		var ifr *unix.Ifreq
		if ifr, err = unix.NewIfreq(name); err != nil {
			return
		}
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	})
	if err != nil {
		t.Fatalf("open TAP %s with IFF_VNET_HDR: %v", name, err)
	}
	tap := &vnetTap{File: os.NewFile(uintptr(fd), name), name: name}
	t.Cleanup(func() { tap.Close() })
	ns.Run("ip", "link", "set", name, "up")
	var iface *net.Interface
	ns.Do(func() { iface, err = net.InterfaceByName(name) })
	if err != nil {
		t.Fatal(err)
	}
	tap.mac = iface.HardwareAddr
	return tap
}

// write sends f with the virtio_net_hdr of o (host byte order, as the
// TAP takes it). It returns the kernel's refusal, if any.
func (v *vnetTap) write(f []byte, o platform.Offload) error {
	b := make([]byte, 10+len(f))
	b[0], b[1] = o.Flags, o.GSOType
	binary.NativeEndian.PutUint16(b[2:], o.HdrLen)
	binary.NativeEndian.PutUint16(b[4:], o.GSOSize)
	binary.NativeEndian.PutUint16(b[6:], o.CsumStart)
	binary.NativeEndian.PutUint16(b[8:], o.CsumOffset)
	copy(b[10:], f)
	_, err := v.Write(b)
	return err
}

// arpAnswered writes an ARP request for ip from a made-up station into
// the TAP and waits for the reply to come out of it: the engine forwarded
// the request in and the reply out.
func (v *vnetTap) arpAnswered(t *testing.T, ip string) {
	t.Helper()
	station := net.HardwareAddr{0x02, 0x5a, 0, 0, 0, 0x01}
	eth := &layers.Ethernet{SrcMAC: station, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP}
	arp := &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
		Operation: layers.ARPRequest, SourceHwAddress: station, SourceProtAddress: net.ParseIP(ip).To4()[:3:3],
		DstHwAddress: make([]byte, 6), DstProtAddress: net.ParseIP(ip).To4()}
	arp.SourceProtAddress = append(arp.SourceProtAddress, 250)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, arp); err != nil {
		t.Fatal(err)
	}
	req := buf.Bytes()
	rb := make([]byte, 70000)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := v.write(req, platform.Offload{}); err != nil {
			t.Fatalf("%s: write ARP request: %v", v.name, err)
		}
		v.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		for {
			n, err := v.Read(rb)
			if err != nil {
				break
			}
			pk := gopacket.NewPacket(rb[10:n], layers.LayerTypeEthernet, gopacket.Default)
			if a, ok := pk.Layer(layers.LayerTypeARP).(*layers.ARP); ok && a.Operation == layers.ARPReply &&
				net.IP(a.SourceProtAddress).Equal(net.ParseIP(ip)) && net.HardwareAddr(a.DstHwAddress).String() == station.String() {
				return
			}
		}
	}
	t.Fatalf("%s: no ARP reply for %s within 10s", v.name, ip)
}

// badOffloadFrame is a frame whose virtio_net_hdr does not describe it.
type badOffloadFrame struct {
	name string
	f    []byte
	o    platform.Offload
}

// badOffloadFrames are the two frames of the hotfix report and a few more
// of the same family.
func badOffloadFrames(t *testing.T) []badOffloadFrame {
	bcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	src := net.HardwareAddr{0x02, 0x5a, 0, 0, 0, 0x02}
	var out []badOffloadFrame

	// Report frame 1: a 60-byte broadcast UDP frame, UDP_L4 GSO, csum_start
	// 20 (inside the IPv4 header).
	udp, _ := platformtest.TCPFrame(t, bcast, src, 0, 6, 0)
	udp[14+9] = 17 // UDP
	out = append(out, badOffloadFrame{"UDP GSO, csum_start inside the IPv4 header", udp,
		platform.Offload{Flags: platform.OffloadNeedsCsum, GSOType: platform.GSOUDPL4, GSOSize: 4, CsumStart: 20, CsumOffset: 6}})

	// Report frame 2: TCPv4 GSO, gso_size 1, TCP data offset 2.
	tcp, _ := platformtest.TCPFrame(t, bcast, src, 0, 8, 0)
	tcp[14+20+12] = 2 << 4
	out = append(out, badOffloadFrame{"TCP GSO, data offset 2", tcp,
		platform.Offload{Flags: platform.OffloadNeedsCsum, GSOType: platform.GSOTCPv4, GSOSize: 1, CsumStart: 34, CsumOffset: 16}})

	// A partial checksum whose csum_offset names UDP on a TCP frame.
	f3, o3 := platformtest.TCPFrame(t, bcast, src, 0, 100, 0)
	o3.CsumOffset = 6
	out = append(out, badOffloadFrame{"csum_offset names UDP on TCP", f3, o3})

	// A TCP super-frame whose IPv4 total length is past the frame.
	f4, o4 := platformtest.TCPFrame(t, bcast, src, 0, 3000, 1000)
	binary.BigEndian.PutUint16(f4[16:], 9000)
	out = append(out, badOffloadFrame{"IPv4 total length past the frame", f4, o4})

	// A partial checksum whose csum_offset is no checksum field.
	f5, o5 := platformtest.TCPFrame(t, bcast, src, 0, 100, 0)
	o5.CsumOffset = 10
	out = append(out, badOffloadFrame{"csum_offset of no protocol", f5, o5})

	// A partial checksum behind an IPv4 header whose length field says 4.
	f6, o6 := platformtest.TCPFrame(t, bcast, src, 0, 100, 0)
	f6[14] = 0x44
	out = append(out, badOffloadFrame{"IPv4 header length 4", f6, o6})
	return out
}

// TestIntegrationBadOffloadHeadersFromATapMember is the hotfix's
// regression test: a VM's TAP (IFF_VNET_HDR) in a bridge that has a
// --local TAP (a port without offloads, where super-frames are cut in
// software) and another in a roundrobin trunk whose host TAP has none
// either. Frames whose virtio_net_hdr lies (each of which once crashed the
// daemon) are dropped and counted on the member, and both still forward.
func TestIntegrationBadOffloadHeadersFromATapMember(t *testing.T) {
	tb := newTestbed(t, 1)
	vm0 := openVnetTap(t, tb.dut, "vm0")
	vm1 := openVnetTap(t, tb.dut, "vm1")
	tb.start()
	tb.swctl("bridge", "create", "bridge0", "--local")
	tb.swctl("bridge", "add", "bridge0", "p1", "vm0")
	tb.swctl("trunk", "create", "trunk0", "--proto", "roundrobin", "--port", "vm1", "--promisc")
	bridgeIP := fmt.Sprintf("10.66.%d.100", tb.subnet)
	trunkIP := fmt.Sprintf("10.67.%d.1", tb.subnet)
	tb.dut.Run("ip", "addr", "add", bridgeIP+"/24", "dev", "bridge0")
	tb.dut.Run("ip", "addr", "add", trunkIP+"/24", "dev", "trunk0")
	// Both paths work before.
	vm0.arpAnswered(t, bridgeIP)
	vm1.arpAnswered(t, trunkIP)

	bad := badOffloadFrames(t)
	for _, tap := range []*vnetTap{vm0, vm1} {
		for _, b := range bad {
			if err := tap.write(b.f, b.o); err != nil {
				t.Fatalf("%s: the kernel refused %q (%v): the test needs frames a TAP passes on", tap.name, b.name, err)
			}
		}
	}
	for _, tap := range []*vnetTap{vm0, vm1} {
		netnstest.Eventually(t, 10*time.Second, fmt.Sprintf("%s counts %d frames with bad offload headers", tap.name, len(bad)), func() bool {
			return tb.port(tap.name).RxBadOffload >= uint64(len(bad))
		})
		if got := tb.port(tap.name).RxBadOffload; got != uint64(len(bad)) {
			t.Errorf("%s: rx_bad_offload = %d, want %d", tap.name, got, len(bad))
		}
	}
	select {
	case <-tb.exited:
		t.Fatalf("the daemon died:\n%s", tb.log.String())
	default:
	}
	// Both paths still forward, and the bridge's other member too.
	vm0.arpAnswered(t, bridgeIP)
	vm1.arpAnswered(t, trunkIP)
	mustPing(t, tb.hosts[0], bridgeIP)
}
