package lb

import (
	"fmt"
	"testing"
)

func BenchmarkHash(b *testing.B) {
	cases := []struct {
		name string
		f    []byte
	}{
		{"tcp4", tcp4(1234, 80)},
		{"udp6", eth(macB, macA, nil, typeIPv6, ip6(7, protoUDP, 1, 2, l4(5, 6)))},
		{"qinq-tcp4", eth(macB, macA, [][2]uint16{{typeQinQ, 100}, {typeVLAN, 10}}, typeIPv4, ip4(ipA, ipB, protoTCP, 0, l4(1, 2)))},
		{"non-ip", eth(macB, macA, nil, 0x88b5, make([]byte, 46))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			h := NewHasher(1, AllFields)
			b.ReportAllocs()
			var sink uint32
			for b.Loop() {
				sink += h.Hash(c.f)
			}
			_ = sink
		})
	}
}

func BenchmarkPick(b *testing.B) {
	for _, k := range []int{2, 4, 8, 64} {
		b.Run(fmt.Sprintf("ports=%d", k), func(b *testing.B) {
			sel := NewSelector(1)
			up := fullSet(k)
			if k == 64 {
				up = ^Set(0)
			}
			b.ReportAllocs()
			var sink int
			h := uint32(0)
			for b.Loop() {
				h += 0x9e3779b9
				sink += sel.Pick(h, up)
			}
			_ = sink
		})
	}
}
