package lb

import (
	"encoding/binary"
	"net/netip"

	"github.com/swctl/swctl/frame"
)

// FlowKey identifies a flow to the load balancer: the transport protocol,
// addresses and ports of a TCP, UDP, UDP-Lite, SCTP or DCCP packet, or the
// addresses alone for any other IP packet and for every IP fragment (the
// first one included), so that a datagram is never split across backends.
// It is a comparable value of fixed size, holding no reference to the
// frame it came from.
type FlowKey struct {
	// Src is the source address: an IPv4 address in its first 4 bytes
	// (the rest zero), or an IPv6 address.
	Src [16]byte
	// Dst is the destination address, laid out as Src.
	Dst [16]byte
	// SrcPort and DstPort are the transport ports; 0 in address-only keys.
	SrcPort, DstPort uint16
	// Proto is the transport protocol; 0 in address-only keys.
	Proto uint8
	// Family is 4 or 6.
	Family uint8
}

// Fixed seeds of FlowKey.Hash. They are constants, not per-process
// random, so that several hosts behind one ECMP router hash a flow alike.
const (
	flowSeed0 = 0x7377_6374_6c2d_6c62 // "swctl-lb"
	flowSeed1 = 0x666c_6f77_2d6b_6579 // "flow-key"
)

// FlowKeyOf returns the flow key of f, an Ethernet frame starting at the
// destination address (frame.FlowOf finds the headers, behind up to two
// VLAN tags), and false when f holds no whole IPv4 or IPv6 header. It
// reads f only during the call, never panics and never allocates,
// whatever f holds.
func FlowKeyOf(f []byte) (k FlowKey, ok bool) {
	w := frame.FlowOf(f)
	if w.L3 < 0 {
		return FlowKey{}, false
	}
	p := f[w.L3:]
	if p[0]>>4 == 6 {
		k.Family = 6
		copy(k.Src[:], p[8:24])
		copy(k.Dst[:], p[24:40])
	} else {
		k.Family = 4
		copy(k.Src[:4], p[12:16])
		copy(k.Dst[:4], p[16:20])
	}
	if w.Ports >= 0 {
		k.Proto = w.Proto
		k.SrcPort = binary.BigEndian.Uint16(f[w.Ports:])
		k.DstPort = binary.BigEndian.Uint16(f[w.Ports+2:])
	}
	return k, true
}

// HasPorts reports whether k is a 5-tuple rather than an address-only key.
func (k *FlowKey) HasPorts() bool { return k.Proto != 0 }

// SrcAddr returns the source address.
func (k *FlowKey) SrcAddr() netip.Addr { return k.addr(&k.Src) }

// DstAddr returns the destination address.
func (k *FlowKey) DstAddr() netip.Addr { return k.addr(&k.Dst) }

// addr returns a as k's family reads it; the zero Addr for a zero key.
func (k *FlowKey) addr(a *[16]byte) netip.Addr {
	switch k.Family {
	case 4:
		return netip.AddrFrom4([4]byte(a[:4]))
	case 6:
		return netip.AddrFrom16(*a)
	}
	return netip.Addr{}
}

// Hash returns a 64-bit hash of k under fixed seeds: the same key gives
// the same hash in every process on every host, which Maglev needs for
// hosts behind ECMP to agree. Not a MAC: a sender can aim flows at a
// backend, as with any stateless balancer.
func (k *FlowKey) Hash() uint64 {
	acc := uint64(flowSeed0)
	acc = round(acc, binary.BigEndian.Uint64(k.Src[0:8]))
	acc = round(acc, binary.BigEndian.Uint64(k.Src[8:16]))
	acc = round(acc, binary.BigEndian.Uint64(k.Dst[0:8]))
	acc = round(acc, binary.BigEndian.Uint64(k.Dst[8:16]))
	acc = round(acc, uint64(k.Family)<<40|uint64(k.Proto)<<32|uint64(k.SrcPort)<<16|uint64(k.DstPort))
	return finish64(acc, flowSeed1)
}
