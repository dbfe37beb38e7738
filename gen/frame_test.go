package gen_test

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
)

var (
	macA = frame.MAC{0x02, 0, 0, 0, 0, 0xa}
	macB = frame.MAC{0x02, 0, 0, 0, 0, 0xb}
)

// ipChecksumOK reports whether an IPv4 header's one's-complement sum,
// checksum included, is 0xffff.
func ipChecksumOK(h []byte) bool {
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

func TestFrameLayout(t *testing.T) {
	tests := []struct {
		name string
		size int
		seq  uint64
	}{
		{"64-byte frame (60 on veth)", 60, 0},
		{"128-byte frame", 124, 1},
		{"1518-byte frame (1514 on veth)", 1514, 12345},
		{"48-bit sequence number", 1514, 1<<48 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gen.Stream{Src: macA, Dst: macB, Size: tt.size, RunID: 0xdeadbeef}
			f, err := s.Frame(tt.seq, 42)
			if err != nil {
				t.Fatal(err)
			}
			e := frame.Ethernet(f)
			switch {
			case len(f) != tt.size:
				t.Errorf("length %d, want %d", len(f), tt.size)
			case e.Destination() != macB || e.Source() != macA || e.Type() != frame.TypeIPv4:
				t.Errorf("Ethernet header %v -> %v type %#x, want %v -> %v IPv4", e.Source(), e.Destination(), e.Type(), macA, macB)
			case binary.BigEndian.Uint16(f[16:18]) != uint16(tt.size-14):
				t.Errorf("IPv4 total length %d, want %d", binary.BigEndian.Uint16(f[16:18]), tt.size-14)
			case !ipChecksumOK(f[14:34]):
				t.Errorf("IPv4 header checksum %#04x is wrong", binary.BigEndian.Uint16(f[24:26]))
			case f[23] != 17 || binary.BigEndian.Uint16(f[38:40]) != uint16(tt.size-34):
				t.Errorf("protocol %d, UDP length %d; want 17, %d", f[23], binary.BigEndian.Uint16(f[38:40]), tt.size-34)
			}
			m, ok := gen.Decode(f)
			want := gen.Mark{RunID: 0xdeadbeef, Seq: tt.seq, Time: 42, DstPort: gen.DefaultDstPort}
			if !ok || m != want {
				t.Errorf("Decode = %+v, %v; want %+v, true", m, ok, want)
			}
		})
	}
}

func TestFlowsVaryAddressAndPort(t *testing.T) {
	s := gen.Stream{Src: macA, Dst: macB, Flows: 4, SrcIP: netip.MustParseAddr("10.0.0.254"), SrcPort: 65534}
	tests := []struct {
		seq      uint64
		wantIP   string
		wantPort uint16
	}{
		{0, "10.0.0.254", 65534},
		{1, "10.0.0.255", 65535},
		{2, "10.0.1.0", 0},
		{3, "10.0.1.1", 1},
		{4, "10.0.0.254", 65534}, // flow 0 again
		{7, "10.0.1.1", 1},
	}
	for _, tt := range tests {
		f, err := s.Frame(tt.seq, 0)
		if err != nil {
			t.Fatal(err)
		}
		ip := netip.AddrFrom4([4]byte(f[26:30]))
		port := binary.BigEndian.Uint16(f[34:36])
		if ip.String() != tt.wantIP || port != tt.wantPort {
			t.Errorf("seq %d: source %v port %d, want %s port %d", tt.seq, ip, port, tt.wantIP, tt.wantPort)
		}
		if !ipChecksumOK(f[14:34]) {
			t.Errorf("seq %d: IPv4 header checksum wrong", tt.seq)
		}
	}
}

func TestFrameSizeFromRFC2544(t *testing.T) {
	want := []int{60, 124, 252, 508, 1020, 1276, 1514}
	for i, label := range gen.RFC2544Sizes {
		if got := gen.FrameSize(label); got != want[i] {
			t.Errorf("FrameSize(%d) = %d, want %d", label, got, want[i])
		}
	}
}

func TestDecodeRefusesOtherFrames(t *testing.T) {
	good, _ := gen.Stream{Src: macA, Dst: macB, RunID: 7}.Frame(3, 0)
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name   string
		f      []byte
		wantOK bool
	}{
		{"test frame", good, true},
		{"802.1Q tagged test frame", edit(func(b []byte) []byte {
			return append(append(append([]byte(nil), b[:12]...), 0x81, 0x00, 0x00, 0x05), b[12:]...)
		}), true},
		{"shorter than a mark", good[:59], false},
		{"shorter than an Ethernet header", good[:10], false},
		{"ARP", edit(func(b []byte) []byte { b[12], b[13] = 0x08, 0x06; return b }), false},
		{"IPv4 with options", edit(func(b []byte) []byte { b[14] = 0x46; return b }), false},
		{"TCP", edit(func(b []byte) []byte { b[23] = 6; return b }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := gen.Decode(tt.f)
			if ok != tt.wantOK {
				t.Fatalf("Decode ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && (m.RunID != 7 || m.Seq != 3) {
				t.Errorf("Decode = %+v, want run 7 seq 3", m)
			}
		})
	}
}

func TestStreamRefusesBadFields(t *testing.T) {
	tests := []struct {
		name string
		s    gen.Stream
		want string
	}{
		{"runt", gen.Stream{Size: 59}, "frame size 59 out of range 60-9230"},
		{"too large", gen.Stream{Size: 9231}, "frame size 9231 out of range"},
		{"negative flows", gen.Stream{Flows: -1}, "flows -1 out of range"},
		{"too many flows", gen.Stream{Flows: gen.MaxFlows + 1}, "flows 1048577 out of range"},
		{"IPv6 source", gen.Stream{SrcIP: netip.MustParseAddr("2001:db8::1")}, "source address 2001:db8::1: not an IPv4 address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.s.WithDefaults()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
