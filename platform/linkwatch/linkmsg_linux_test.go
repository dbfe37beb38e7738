package linkwatch

import (
	"bytes"
	"net"
	"reflect"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform"
)

// linkMsg builds the body of a link message: an ifinfomsg, then attrs.
func linkMsg(family uint8, index int32, flags uint32, attrs ...*nl.RtAttr) []byte {
	m := nl.NewIfInfomsg(int(family))
	m.Index, m.Flags = index, flags
	b := m.Serialize()
	for _, a := range attrs {
		b = append(b, a.Serialize()...)
	}
	return b
}

func name(s string) *nl.RtAttr { return nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(s)) }
func mtu(n uint32) *nl.RtAttr  { return nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(n)) }
func oper(s uint8) *nl.RtAttr  { return nl.NewRtAttr(unix.IFLA_OPERSTATE, []byte{s}) }
func addr(mac string) *nl.RtAttr {
	hw, err := net.ParseMAC(mac)
	if err != nil {
		panic(err)
	}
	return nl.NewRtAttr(unix.IFLA_ADDRESS, hw)
}

// libraryEvent is the Event the netlink package's own decoder gives for a
// well-formed message: the reference decodeLink is checked against.
func libraryEvent(t *testing.T, typ uint16, b []byte) Event {
	t.Helper()
	l, err := netlink.LinkDeserialize(&unix.NlMsghdr{Type: typ}, b)
	if err != nil {
		t.Fatalf("netlink.LinkDeserialize: %v", err)
	}
	a := l.Attrs()
	e := Event{Name: a.Name, Index: a.Index, AdminUp: a.RawFlags&unix.IFF_UP != 0, Carrier: a.RawFlags&unix.IFF_LOWER_UP != 0, MTU: a.MTU}
	if len(a.HardwareAddr) > 0 {
		e.MAC = append(net.HardwareAddr(nil), a.HardwareAddr...)
	}
	switch {
	case typ == unix.RTM_DELLINK:
		e.State = platform.LinkAbsent
	case e.AdminUp && e.Carrier && (a.OperState == netlink.OperUp || a.OperState == netlink.OperUnknown):
		e.State = platform.LinkUp
	default:
		e.State = platform.LinkDown
	}
	return e
}

// wellFormed are link messages as the kernel sends them.
var wellFormed = []struct {
	name string
	typ  uint16
	body []byte
}{
	{"veth up", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 7, unix.IFF_UP|unix.IFF_LOWER_UP|unix.IFF_BROADCAST, name("eth0"), mtu(1500), oper(IF_OPER_UP), addr("02:00:00:00:0a:01"))},
	{"admin up, no carrier", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 7, unix.IFF_UP, name("eth0"), mtu(1500), oper(2), addr("02:00:00:00:0a:01"))},
	{"carrier, dormant", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 8, unix.IFF_UP|unix.IFF_LOWER_UP, name("wlan0"), mtu(1500), oper(5), addr("02:00:00:00:0a:02"))},
	{"tun: unknown state, no address", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 9, unix.IFF_UP|unix.IFF_LOWER_UP, name("tun0"), mtu(1420), oper(IF_OPER_UNKNOWN))},
	{"down", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 3, 0, name("p1"), mtu(9000), oper(2), addr("02:00:00:00:00:03"))},
	{"deleted", unix.RTM_DELLINK, linkMsg(unix.AF_UNSPEC, 3, 0, name("p1"), mtu(1500), addr("02:00:00:00:00:03"))},
	{"nested link info and odd lengths", unix.RTM_NEWLINK, func() []byte {
		info := nl.NewRtAttr(unix.IFLA_LINKINFO|unix.NLA_F_NESTED, nil)
		info.AddRtAttr(unix.IFLA_INFO_KIND, []byte("veth"))
		return linkMsg(unix.AF_UNSPEC, 12, unix.IFF_UP|unix.IFF_LOWER_UP, nl.NewRtAttr(unix.IFLA_QDISC, []byte("noqueue\x00")), name("v"), info, mtu(65535), oper(IF_OPER_UP), addr("02:00:00:00:00:0c"))
	}()},
}

func TestDecodeLinkAgreesWithNetlink(t *testing.T) {
	for _, tt := range wellFormed {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := decodeLink(tt.typ, tt.body)
			if err != nil || !ok {
				t.Fatalf("decodeLink: expected an event, got ok %v, error %v", ok, err)
			}
			if want := libraryEvent(t, tt.typ, tt.body); !reflect.DeepEqual(got, want) {
				t.Errorf("decodeLink:\nexpected %+v (the netlink package's reading)\ngot      %+v", want, got)
			}
		})
	}
}

func TestDecodeLinkRefusesMalformedMessages(t *testing.T) {
	valid := linkMsg(unix.AF_UNSPEC, 7, unix.IFF_UP, name("eth0"), mtu(1500))
	tests := []struct {
		name    string
		typ     uint16
		body    []byte
		wantErr string // "" for ok false without an error
	}{
		{"not a link message", unix.RTM_NEWADDR, valid, "message type 20: not RTM_NEWLINK or RTM_DELLINK"},
		{"shorter than ifinfomsg", unix.RTM_NEWLINK, valid[:15], "link message of 15 bytes: shorter than its ifinfomsg (16)"},
		{"index 0", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 0, 0, name("eth0")), "link message: interface index 0"},
		{"negative index", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, -2, 0, name("eth0")), "link message: interface index -2"},
		{"attribute shorter than its header", unix.RTM_NEWLINK, append(linkMsg(unix.AF_UNSPEC, 7, 0), 2, 0, 3, 0), "link message, interface index 7: attribute at byte 16: length 2 out of range (4 to 4)"},
		{"attribute past the end", unix.RTM_NEWLINK, valid[:len(valid)-4], "link message, interface index 7: attribute at byte 28: length 8 out of range (4 to 4)"},
		{"short MTU", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 7, 0, name("eth0"), nl.NewRtAttr(unix.IFLA_MTU, []byte{1, 2})), "link message, interface index 7: IFLA_MTU of 2 bytes, want 4"},
		{"empty operstate", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 7, 0, name("eth0"), nl.NewRtAttr(unix.IFLA_OPERSTATE, nil)), "link message, interface index 7: empty IFLA_OPERSTATE"},
		{"new link without a name", unix.RTM_NEWLINK, linkMsg(unix.AF_UNSPEC, 7, 0, mtu(1500)), "link message, interface index 7: no IFLA_IFNAME"},
		{"bridge port notification", unix.RTM_NEWLINK, linkMsg(unix.AF_BRIDGE, 7, 0, name("eth0")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok, err := decodeLink(tt.typ, tt.body)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr || ok {
				t.Errorf("decodeLink: expected no event and error %q, got %+v (ok %v), error %q", tt.wantErr, e, ok, got)
			}
		})
	}
}

// FuzzDecodeLink feeds arbitrary link messages to the decoder of what the
// kernel reports on the subscription and in listings. It must never
// panic; an event it returns has a positive index, a name without NUL
// (for a new link), a state that matches the message type, and a MAC of
// its own, not a view of the message.
func FuzzDecodeLink(f *testing.F) {
	for _, tt := range wellFormed {
		f.Add(tt.typ, tt.body)
	}
	f.Fuzz(func(t *testing.T, typ uint16, b []byte) {
		e, ok, err := decodeLink(typ, b)
		if err != nil || !ok {
			if ok {
				t.Fatalf("decodeLink: ok with error %v", err)
			}
			return
		}
		if e.Index <= 0 {
			t.Errorf("event %+v: expected a positive index", e)
		}
		if bytes.IndexByte([]byte(e.Name), 0) >= 0 || typ == unix.RTM_NEWLINK && e.Name == "" {
			t.Errorf("event %+v: expected a name without NUL, not empty for RTM_NEWLINK", e)
		}
		switch {
		case typ == unix.RTM_DELLINK && e.State != platform.LinkAbsent,
			typ == unix.RTM_NEWLINK && e.State != platform.LinkUp && e.State != platform.LinkDown,
			e.State == platform.LinkUp && !(e.AdminUp && e.Carrier):
			t.Errorf("event %+v from message type %d: state %v does not fit", e, typ, e.State)
		}
		mac := append(net.HardwareAddr(nil), e.MAC...)
		for i := range b {
			b[i] ^= 0xff
		}
		if !bytes.Equal(mac, e.MAC) {
			t.Errorf("event MAC %v changed with the message: expected a copy", e.MAC)
		}
	})
}
