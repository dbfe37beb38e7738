package frame

import (
	"encoding/binary"
	"testing"
)

// header returns a frame of size bytes: dst, src, then the given 16-bit
// words (ethertype, tag, inner type...), zero padded.
func header(size int, dst, src MAC, words ...uint16) Ethernet {
	f := make([]byte, size)
	copy(f[0:6], dst[:])
	copy(f[6:12], src[:])
	for i, w := range words {
		if 12+2*i+2 <= size {
			binary.BigEndian.PutUint16(f[12+2*i:], w)
		}
	}
	return f
}

var (
	macA = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}
	macB = MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b}
)

// TestEthernetAccessors checks the header accessors on tagged, untagged
// and short frames.
func TestEthernetAccessors(t *testing.T) {
	tests := []struct {
		name       string
		f          Ethernet
		wantType   uint16
		tagged     bool
		vlan       uint16
		innerType  uint16
		payloadLen int
	}{
		{"untagged IPv4", header(60, macB, macA, TypeIPv4), TypeIPv4, false, 0, TypeIPv4, 46},
		{"bare header", header(14, macB, macA, TypeARP), TypeARP, false, 0, TypeARP, 0},
		{"802.1Q VLAN 5", header(64, macB, macA, TypeVLAN, 5, TypeIPv6), TypeVLAN, true, 5, TypeIPv6, 46},
		{"802.1Q with PCP and DEI bits", header(64, macB, macA, TypeVLAN, 0xf000|100, TypeIPv4), TypeVLAN, true, 100, TypeIPv4, 46},
		{"priority tag (VID 0)", header(64, macB, macA, TypeVLAN, 0x6000, TypeIPv4), TypeVLAN, true, 0, TypeIPv4, 46},
		{"VLAN 4095", header(64, macB, macA, TypeVLAN, 0x0fff, TypeIPv4), TypeVLAN, true, 4095, TypeIPv4, 46},
		{"802.1ad outer tag", header(68, macB, macA, TypeQinQ, 200, TypeVLAN, 5, TypeIPv4), TypeQinQ, true, 200, TypeVLAN, 50},
		{"old QinQ 0x9100", header(64, macB, macA, TypeQinQOld, 7, TypeIPv4), TypeQinQOld, true, 7, TypeIPv4, 46},
		{"tag type but too short for a tag", header(17, macB, macA, TypeVLAN, 5), TypeVLAN, false, 0, TypeVLAN, 3},
		{"exactly header and tag", header(18, macB, macA, TypeVLAN, 9, TypeIPv4), TypeVLAN, true, 9, TypeIPv4, 0},
		{"802.3 length field", header(60, macB, macA, 46), 46, false, 0, 46, 46},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.f.Valid() {
				t.Fatalf("Valid() = false for a %d-byte frame, want true", len(tc.f))
			}
			if got := tc.f.Destination(); got != macB {
				t.Errorf("Destination() = %s, want %s", got, macB)
			}
			if got := tc.f.Source(); got != macA {
				t.Errorf("Source() = %s, want %s", got, macA)
			}
			if got := tc.f.Type(); got != tc.wantType {
				t.Errorf("Type() = %#04x, want %#04x", got, tc.wantType)
			}
			if got := tc.f.IsTagged(); got != tc.tagged {
				t.Errorf("IsTagged() = %v, want %v", got, tc.tagged)
			}
			if got := tc.f.VLAN(); got != tc.vlan {
				t.Errorf("VLAN() = %d, want %d", got, tc.vlan)
			}
			if got := tc.f.InnerType(); got != tc.innerType {
				t.Errorf("InnerType() = %#04x, want %#04x", got, tc.innerType)
			}
			if got := tc.f.PayloadLen(); got != tc.payloadLen {
				t.Errorf("PayloadLen() = %d, want %d", got, tc.payloadLen)
			}
		})
	}
}

// TestValid checks the length Valid requires: a whole header.
func TestValid(t *testing.T) {
	for _, n := range []int{0, 1, 13, 14, 15, 1514} {
		if got, want := Ethernet(make([]byte, n)).Valid(), n >= HeaderLen; got != want {
			t.Errorf("Valid() for %d bytes = %v, want %v", n, got, want)
		}
	}
}

// TestMACPredicates checks IsMulticast, IsZero and IsLinkLocal.
func TestMACPredicates(t *testing.T) {
	tests := []struct {
		mac                        MAC
		multicast, zero, linkLocal bool
	}{
		{macA, false, false, false},
		{MAC{}, false, true, false},
		{Broadcast, true, false, false},
		{MAC{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}, true, false, false},
		{MAC{0x33, 0x33, 0x00, 0x00, 0x00, 0x01}, true, false, false},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}, true, false, true},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}, true, false, true},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}, true, false, true},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0f}, true, false, true},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x10}, true, false, false},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x01, 0x00}, true, false, false},
		{MAC{0x00, 0x80, 0xc2, 0x00, 0x00, 0x00}, false, false, false},
	}
	for _, tc := range tests {
		if got := tc.mac.IsMulticast(); got != tc.multicast {
			t.Errorf("%s IsMulticast() = %v, want %v", tc.mac, got, tc.multicast)
		}
		if got := tc.mac.IsZero(); got != tc.zero {
			t.Errorf("%s IsZero() = %v, want %v", tc.mac, got, tc.zero)
		}
		if got := tc.mac.IsLinkLocal(); got != tc.linkLocal {
			t.Errorf("%s IsLinkLocal() = %v, want %v", tc.mac, got, tc.linkLocal)
		}
	}
}

// TestKeyRoundTrip checks that Key and MACFromKey are inverses, that keys
// keep the address's byte order, and that the frame accessors agree.
func TestKeyRoundTrip(t *testing.T) {
	tests := []struct {
		mac MAC
		key uint64
	}{
		{MAC{}, 0},
		{Broadcast, 0xffffffffffff},
		{MAC{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}, 0x0180c2000002},
		{MAC{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc}, 0x123456789abc},
	}
	for _, tc := range tests {
		if got := tc.mac.Key(); got != tc.key {
			t.Errorf("%s.Key() = %#x, want %#x", tc.mac, got, tc.key)
		}
		if got := MACFromKey(tc.key); got != tc.mac {
			t.Errorf("MACFromKey(%#x) = %s, want %s", tc.key, got, tc.mac)
		}
		f := header(14, tc.mac, tc.mac, TypeIPv4)
		if f.DestinationKey() != tc.key || f.SourceKey() != tc.key {
			t.Errorf("DestinationKey, SourceKey = %#x, %#x, want %#x", f.DestinationKey(), f.SourceKey(), tc.key)
		}
	}
}

// TestParseMAC checks the notations ParseMAC accepts and what it refuses.
func TestParseMAC(t *testing.T) {
	want := MAC{0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}
	for _, s := range []string{"02:00:5e:10:00:01", "02-00-5e-10-00-01", "0200.5e10.0001"} {
		if got, err := ParseMAC(s); err != nil || got != want {
			t.Errorf("ParseMAC(%q) = %s, %v, want %s, nil", s, got, err, want)
		}
	}
	for _, s := range []string{"", "02:00:5e:10:00", "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01", "zz:00:5e:10:00:01"} {
		if _, err := ParseMAC(s); err == nil {
			t.Errorf("ParseMAC(%q) = nil error, want one", s)
		}
	}
}

// TestEncode checks that Encode writes what the accessors read.
func TestEncode(t *testing.T) {
	b := make([]byte, 20)
	Encode(b, macB, macA, TypeIPv6)
	e := Ethernet(b)
	if e.Destination() != macB || e.Source() != macA || e.Type() != TypeIPv6 {
		t.Errorf("after Encode: %s > %s type %#04x, want %s > %s type %#04x", e.Source(), e.Destination(), e.Type(), macA, macB, TypeIPv6)
	}
}

// FuzzEthernet checks that no accessor panics on any frame that is Valid,
// and that their results are consistent.
func FuzzEthernet(f *testing.F) {
	f.Add([]byte(header(60, macB, macA, TypeIPv4)))
	f.Add([]byte(header(18, macB, macA, TypeVLAN, 5, TypeIPv4)))
	f.Add([]byte(header(17, macB, macA, TypeVLAN, 5)))
	f.Add([]byte(header(22, macB, macA, TypeQinQ, 100, TypeVLAN, 5, TypeIPv4)))
	f.Add([]byte(header(14, Broadcast, MAC{}, 0)))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		e := Ethernet(b)
		if !e.Valid() {
			if len(b) >= HeaderLen {
				t.Fatalf("Valid() = false for %d bytes", len(b))
			}
			return
		}
		dst, src := e.Destination(), e.Source()
		if dst.Key() != e.DestinationKey() || MACFromKey(e.DestinationKey()) != dst {
			t.Errorf("destination %s and its key %#x disagree", dst, e.DestinationKey())
		}
		if src.Key() != e.SourceKey() || MACFromKey(e.SourceKey()) != src {
			t.Errorf("source %s and its key %#x disagree", src, e.SourceKey())
		}
		if dst.IsLinkLocal() && !dst.IsMulticast() {
			t.Errorf("%s is link-local but not multicast", dst)
		}
		if v := e.VLAN(); v > 4095 {
			t.Errorf("VLAN() = %d, want at most 4095", v)
		}
		tagged := e.IsTagged()
		n := e.PayloadLen()
		switch {
		case n < 0:
			t.Errorf("PayloadLen() = %d, want >= 0", n)
		case tagged && n != len(b)-HeaderLen-TagLen:
			t.Errorf("tagged: PayloadLen() = %d, want %d", n, len(b)-HeaderLen-TagLen)
		case !tagged && n != len(b)-HeaderLen:
			t.Errorf("untagged: PayloadLen() = %d, want %d", n, len(b)-HeaderLen)
		}
		if !tagged && (e.InnerType() != e.Type() || e.VLAN() != 0) {
			t.Errorf("untagged: InnerType() = %#04x, VLAN() = %d, want Type() %#04x and 0", e.InnerType(), e.VLAN(), e.Type())
		}
	})
}
