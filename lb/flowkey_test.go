package lb

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/swctl/swctl/frame"
)

// key4 and key6 build expected keys: addresses, then protocol and ports
// (all 0 for an address-only key).
func key4(src, dst [4]byte, proto uint8, sport, dport uint16) FlowKey {
	k := FlowKey{Family: 4, Proto: proto, SrcPort: sport, DstPort: dport}
	copy(k.Src[:], src[:])
	copy(k.Dst[:], dst[:])
	return k
}

// key6 matches the addresses ip6 builds: 2001:: ending in srcLow and dstLow.
func key6(srcLow, dstLow byte, proto uint8, sport, dport uint16) FlowKey {
	k := FlowKey{Family: 6, Proto: proto, SrcPort: sport, DstPort: dport}
	k.Src[0], k.Src[1], k.Src[15] = 0x20, 0x01, srcLow
	k.Dst[0], k.Dst[1], k.Dst[15] = 0x20, 0x01, dstLow
	return k
}

func TestFlowKeyOf(t *testing.T) {
	udp4 := func(frag uint16, payload []byte) []byte {
		return eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoUDP, frag, payload))
	}
	frag6f := func(off uint16, more bool, payload []byte) []byte {
		return eth(macB, macA, nil, typeIPv6, ip6(7, protoFragment, 1, 2, append(frag6(protoUDP, off, more), payload...)))
	}
	addrs4, addrs6 := key4(ipA, ipB, 0, 0, 0), key6(1, 2, 0, 0, 0)
	cases := []struct {
		name  string
		frame []byte
		want  FlowKey
		ok    bool
	}{
		{"TCP/IPv4: 5-tuple", tcp4(1234, 80), key4(ipA, ipB, protoTCP, 1234, 80), true},
		{"UDP/IPv4 behind a VLAN tag", eth(macB, macA, [][2]uint16{{typeVLAN, 10}}, typeIPv4, ip4(ipA, ipB, protoUDP, 0, l4(53, 5353))), key4(ipA, ipB, protoUDP, 53, 5353), true},
		{"SCTP/IPv4 behind QinQ", eth(macB, macA, [][2]uint16{{typeQinQ, 100}, {typeVLAN, 10}}, typeIPv4, ip4(ipC, ipB, protoSCTP, 0, l4(9, 10))), key4(ipC, ipB, protoSCTP, 9, 10), true},
		{"IPv4 with options: ports found", eth(macB, macA, nil, typeIPv4, withOptions(ip4(ipA, ipB, protoTCP, 0, l4(1, 2)))), key4(ipA, ipB, protoTCP, 1, 2), true},
		{"ICMP: addresses only", eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, 1, 0, l4(8, 0))), addrs4, true},
		{"IPv4 first fragment (MF, offset 0): addresses only", udp4(0x2000, l4(53, 53)), addrs4, true},
		{"IPv4 middle fragment", udp4(0x2000|185, []byte("middle bytes")), addrs4, true},
		{"IPv4 last fragment (offset, no MF)", udp4(370, []byte("last")), addrs4, true},
		{"IPv4 DF set: not a fragment", udp4(0x4000, l4(53, 53)), key4(ipA, ipB, protoUDP, 53, 53), true},
		{"UDP header cut to 3 bytes: addresses only", udp4(0, []byte{0, 53, 0}), addrs4, true},
		{"TCP/IPv6: 5-tuple", eth(macB, macA, nil, typeIPv6, ip6(7, protoTCP, 1, 2, l4(40000, 443))), key6(1, 2, protoTCP, 40000, 443), true},
		{"UDP/IPv6 behind extension headers", eth(macB, macA, nil, typeIPv6, ip6(7, protoHopByHop, 1, 2, append(ext6(protoDstOpts), append(ext6(protoUDP), l4(5, 6)...)...))), key6(1, 2, protoUDP, 5, 6), true},
		{"IPv6 flow label ignored", eth(macB, macA, nil, typeIPv6, ip6(0xabcde, protoTCP, 1, 2, l4(40000, 443))), key6(1, 2, protoTCP, 40000, 443), true},
		{"IPv6 first fragment: addresses only", frag6f(0, true, l4(5, 6)), addrs6, true},
		{"IPv6 later fragment", frag6f(100, false, []byte("later bytes")), addrs6, true},
		{"IPv6 atomic fragment: addresses only", frag6f(0, false, l4(5, 6)), addrs6, true},
		{"ARP: no key", eth(macB, macA, nil, 0x0806, make([]byte, 28)), FlowKey{}, false},
		{"three tags: no key", eth(macB, macA, [][2]uint16{{typeVLAN, 10}, {typeVLAN, 20}, {typeVLAN, 30}}, typeIPv4, ip4(ipA, ipB, protoTCP, 0, l4(1, 2))), FlowKey{}, false},
		{"IPv4 header length under 20: no key", eth(macB, macA, nil, typeIPv4, withIHL(ip4(ipA, ipB, protoTCP, 0, l4(1, 2)), 4)), FlowKey{}, false},
		{"IPv4 options past the frame: no key", eth(macB, macA, nil, typeIPv4, withIHL(ip4(ipA, ipB, protoTCP, 0, nil), 15)), FlowKey{}, false},
		{"IPv4 header cut to 19 bytes: no key", eth(macB, macA, nil, typeIPv4, ip4(ipA, ipB, protoTCP, 0, nil)[:19]), FlowKey{}, false},
		{"IPv6 ethertype, version 4: no key", eth(macB, macA, nil, typeIPv6, badVersion(ip6(7, protoTCP, 1, 2, l4(1, 2)))), FlowKey{}, false},
		{"runt: no key", []byte{1, 2, 3}, FlowKey{}, false},
	}
	for _, c := range cases {
		got, ok := FlowKeyOf(c.frame)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: FlowKeyOf = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// withIHL sets the IPv4 header length of p to ihl words.
func withIHL(p []byte, ihl byte) []byte { p[0] = 0x40 | ihl; return p }

func TestFlowKeyAddrs(t *testing.T) {
	cases := []struct {
		name     string
		k        FlowKey
		src, dst string
	}{
		{"IPv4", key4(ipA, ipC, protoTCP, 1, 2), "192.0.2.1", "198.51.100.7"},
		{"IPv6", key6(1, 2, 0, 0, 0), "2001::1", "2001::2"},
	}
	for _, c := range cases {
		if got := c.k.SrcAddr(); got != netip.MustParseAddr(c.src) {
			t.Errorf("%s: SrcAddr = %v, want %s", c.name, got, c.src)
		}
		if got := c.k.DstAddr(); got != netip.MustParseAddr(c.dst) {
			t.Errorf("%s: DstAddr = %v, want %s", c.name, got, c.dst)
		}
	}
	var zero FlowKey
	if zero.SrcAddr().IsValid() || zero.HasPorts() {
		t.Errorf("zero key: SrcAddr %v, HasPorts %v; want invalid and false", zero.SrcAddr(), zero.HasPorts())
	}
}

// TestFlowKeyHashFields checks which key differences the hash sees.
func TestFlowKeyHashFields(t *testing.T) {
	base := key4(ipA, ipB, protoTCP, 1000, 80)
	v6 := FlowKey{Family: 6, Proto: protoTCP, SrcPort: 1000, DstPort: 80}
	copy(v6.Src[:], base.Src[:4])
	copy(v6.Dst[:], base.Dst[:4])
	cases := []struct {
		name string
		k    FlowKey
	}{
		{"source port", key4(ipA, ipB, protoTCP, 1001, 80)},
		{"destination port", key4(ipA, ipB, protoTCP, 1000, 81)},
		{"ports swapped", key4(ipA, ipB, protoTCP, 80, 1000)},
		{"protocol", key4(ipA, ipB, protoUDP, 1000, 80)},
		{"source address", key4(ipC, ipB, protoTCP, 1000, 80)},
		{"addresses swapped", key4(ipB, ipA, protoTCP, 1000, 80)},
		{"address-only key", key4(ipA, ipB, 0, 0, 0)},
		{"same bytes, family 6", v6},
	}
	for _, c := range cases {
		if c.k.Hash() == base.Hash() {
			t.Errorf("%s: hash %#x equals the base key's; want different", c.name, c.k.Hash())
		}
	}
	if again := base; again.Hash() != base.Hash() {
		t.Errorf("copy of a key hashes to %#x, the key to %#x; want equal", again.Hash(), base.Hash())
	}
}

// TestFlowKeyHashStable pins the hash of two keys. Hosts behind one ECMP
// router must hash alike, also while they run different releases during
// an upgrade: a change here is a change of the wire contract between lb
// hosts, not a refactoring.
func TestFlowKeyHashStable(t *testing.T) {
	cases := []struct {
		k    FlowKey
		want uint64
	}{
		{key4(ipA, ipB, protoTCP, 40000, 443), 0x6706b98684a2fa7b},
		{key6(1, 2, 0, 0, 0), 0x70d841cfb1f58668},
	}
	for _, c := range cases {
		if got := c.k.Hash(); got != c.want {
			t.Errorf("%v -> %v proto %d: hash %#x, want %#x", c.k.SrcAddr(), c.k.DstAddr(), c.k.Proto, got, c.want)
		}
	}
}

// TestFlowKeyTruncated cuts every sample frame at every length and sets
// every byte to 0xff in turn: FlowKeyOf never panics.
func TestFlowKeyTruncated(t *testing.T) {
	for i, f := range sampleFrames() {
		for n := 0; n <= len(f); n++ {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("sample %d cut to %d bytes: panic %v, want a key or false", i, n, r)
					}
				}()
				FlowKeyOf(f[:n])
				g := bytes.Clone(f[:n])
				for j := range g {
					old := g[j]
					g[j] = 0xff
					FlowKeyOf(g)
					g[j] = old
				}
			}()
		}
	}
}

func TestFlowKeyAllocs(t *testing.T) {
	for i, f := range sampleFrames() {
		if got := testing.AllocsPerRun(100, func() {
			k, _ := FlowKeyOf(f)
			_ = k.Hash()
		}); got != 0 {
			t.Errorf("sample %d: FlowKeyOf and Hash allocate %v times per call, want 0", i, got)
		}
	}
}

// FuzzFlowKey extracts keys from arbitrary bytes: no panic, the same
// input gives the same key, and every key is well formed.
func FuzzFlowKey(f *testing.F) {
	for _, s := range sampleFrames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, ok := FlowKeyOf(data)
		k2, ok2 := FlowKeyOf(data)
		if k != k2 || ok != ok2 {
			t.Fatalf("same %d bytes gave %+v, %v then %+v, %v; want equal", len(data), k, ok, k2, ok2)
		}
		switch {
		case !ok && k != FlowKey{}:
			t.Fatalf("no key, but %+v; want the zero key", k)
		case ok && k.Family != 4 && k.Family != 6:
			t.Fatalf("family %d, want 4 or 6", k.Family)
		case ok && k.Family == 4 && ([12]byte(k.Src[4:]) != [12]byte{} || [12]byte(k.Dst[4:]) != [12]byte{}):
			t.Fatalf("IPv4 key %+v: bytes past the address are not zero", k)
		case k.Proto == 0 && (k.SrcPort != 0 || k.DstPort != 0):
			t.Fatalf("address-only key %+v has ports", k)
		case k.Proto != 0 && !frame.HasPorts(k.Proto):
			t.Fatalf("key %+v: protocol %d has no ports", k, k.Proto)
		}
	})
}
