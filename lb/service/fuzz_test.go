package service

import (
	"net/netip"
	"testing"

	"github.com/google/gopacket/layers"
	"github.com/swctl/swctl/frame"
)

// FuzzHandle feeds the data path any frame: it must not panic, and a
// frame it forwards must have only its MACs changed.
func FuzzHandle(f *testing.F) {
	f.Add(arpPacket(clientMAC, lbMAC, layers.ARPRequest, clientMAC, client4, frame.MAC{}, vip4))
	f.Add(nsPacket(f, netip.MustParseAddr("2001:db8::7"), vip6))
	f.Add(tcpFrame(f, lbMAC, client4, vip4, 1))
	f.Add(tcpFrame(f, lbMAC, netip.MustParseAddr("2001:db8::7"), vip6, 1))
	f.Add([]byte{})
	r := newRig(f, Check{})
	if err := r.s.SetBackends([]Backend{{Addr: backendAddr(0)}}); err != nil {
		f.Fatal(err)
	}
	r.s.learn(backendAddr(0), backendMAC(0))
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := append([]byte(nil), in...)
		if r.s.handle(in, r.clk.Now()) {
			if frame.Ethernet(in).Source() != lbMAC || string(in[12:]) != string(orig[12:]) {
				t.Fatalf("forwarded frame changed beyond its MACs")
			}
		}
		r.sent()
	})
}

// FuzzDecodeND reads any packet as ND and as ARP: no panic.
func FuzzDecodeND(f *testing.F) {
	f.Add(nsPacket(f, netip.MustParseAddr("2001:db8::7"), vip6)[14:])
	f.Fuzz(func(t *testing.T, p []byte) {
		if isND(p) {
			decodeND(p)
		}
		decodeARP(p)
	})
}
