package ifreq

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// The request SIOCSIFLLADDR reads, byte by byte as sys/net/if.h lays out
// struct ifreq: ifr_name at 0, then ifr_addr at 16 (struct sockaddr:
// sa_len at 16, sa_family at 17, sa_data from 18).
func TestLLAddrRequestLayout(t *testing.T) {
	mac := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	const afLink = 18 // AF_LINK on both OSes
	r, err := lladdrRequest("em1", mac, afLink)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 32)
	copy(want, "em1")
	want[16], want[17] = 6, afLink
	copy(want[18:], mac)
	if got := bytesOf(&r); !bytes.Equal(got, want) {
		t.Errorf("request bytes\n got %x\nwant %x", got, want)
	}
}

func TestLLAddrRequestRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		mac  net.HardwareAddr
		want string
	}{
		{"em1", net.HardwareAddr{1, 0, 0x5e, 0, 0, 1}, "multicast"},
		{"em1", net.HardwareAddr{2, 0, 0, 0, 0}, "want 6 bytes"},
		{"em1", nil, "want 6 bytes"},
		{"", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "want 1 to 15 bytes"},
		{"abcdefghijklmnop", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "want 1 to 15 bytes"},
		{"em\x001", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "NUL"},
	} {
		_, err := lladdrRequest(c.name, c.mac, 18)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("lladdrRequest(%q, %v): error %v, want one saying %q", c.name, c.mac, err, c.want)
		}
	}
}

// The other unions: an int (ifr_mtu) and ifr_flags at 16, FreeBSD's
// ifr_flagshigh at 18, ifr_data (a pointer) at 16.
func TestUnionOffsets(t *testing.T) {
	n, err := makeName("tap0")
	if err != nil {
		t.Fatal(err)
	}
	ri := reqInt{name: n, value: 0x01020304}
	if b := bytesOf(&ri); b[16]|b[17]|b[18]|b[19] == 0 || !bytes.Equal(b[20:], make([]byte, 12)) || string(b[:4]) != "tap0" {
		t.Errorf("reqInt bytes %x: want the int in 16..19", b)
	}
	rf := reqFlags{name: n, flags: 0xffff, flagsHigh: 0}
	if b := bytesOf(&rf); b[16] != 0xff || b[17] != 0xff || b[18] != 0 || b[19] != 0 {
		t.Errorf("reqFlags bytes %x: want ifr_flags in 16..17", b)
	}
	rf = reqFlags{flagsHigh: 0xffff}
	if b := bytesOf(&rf); b[16] != 0 || b[18] != 0xff || b[19] != 0xff {
		t.Errorf("reqFlags bytes %x: want ifr_flagshigh in 18..19", b)
	}
	var target byte
	rd := reqData{data: &target}
	if b := bytesOf(&rd); bytes.Equal(b[16:24], make([]byte, 8)) || !bytes.Equal(b[:16], make([]byte, 16)) {
		t.Errorf("reqData bytes %x: want the pointer from 16", b)
	}
}

func TestNameRoundTrip(t *testing.T) {
	for _, name := range []string{"a", "tap12", "bridge0", "abcdefghijklmno"} {
		n, err := makeName(name)
		if err != nil {
			t.Fatalf("makeName(%q): %v", name, err)
		}
		if got := n.String(); got != name {
			t.Errorf("makeName(%q).String() = %q", name, got)
		}
	}
	var full ifName
	copy(full[:], "abcdefghijklmnop")
	if got := full.String(); got != "abcdefghijklmnop" {
		t.Errorf("a name without NUL: %q, want all 16 bytes", got)
	}
}

// Flags reads ifr_flags as the low 16 bits and FreeBSD's ifr_flagshigh as
// the high 16: IFF_PROMISC (0x100) is low on both systems, FreeBSD's
// IFF_PPROMISC (0x20000) high.
func TestFlagsAll(t *testing.T) {
	for _, c := range []struct {
		low, high uint16
		want      uint32
	}{
		{0x0143, 0, 0x0143},
		{0x0100, 0x0002, 0x00020100},
		{0, 0xffff, 0xffff0000},
	} {
		r := reqFlags{flags: c.low, flagsHigh: c.high}
		if got := r.all(); got != c.want {
			t.Errorf("ifr_flags %#x, ifr_flagshigh %#x: all() = %#x, want %#x", c.low, c.high, got, c.want)
		}
	}
}
