package linkwatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/swctl/swctl/platform"
)

// The messages below are built field by field from the C declarations,
// with the padding the C compiler puts in written out, and encoded with
// encoding/binary (which adds none): an offset in the decoder that does
// not match the header shows up as a wrong field.

// obsdIfData is struct if_data of OpenBSD's sys/net/if.h (if.h 1.221).
type obsdIfData struct {
	Type, Addrlen, Hdrlen, LinkState uint8
	MTU, Metric, Rdomain             uint32
	Baudrate                         uint64
	// ipackets, ierrors, opackets, oerrors, collisions, ibytes, obytes,
	// imcasts, omcasts, iqdrops, oqdrops, noproto.
	Counters     [12]uint64
	Capabilities uint32
	_            [4]byte // struct timeval is 8-aligned
	Lastchange   [16]byte
}

// obsdIfMsghdr is struct if_msghdr of OpenBSD's sys/net/if.h.
type obsdIfMsghdr struct {
	Msglen                 uint16
	Version, Type          uint8
	Hdrlen, Index, Tableid uint16
	Pad1, Pad2             uint8
	Addrs, Flags, Xflags   int32
	Data                   obsdIfData
}

// obsdIfAnnounce is struct if_announcemsghdr of OpenBSD's sys/net/if.h.
type obsdIfAnnounce struct {
	Msglen              uint16
	Version, Type       uint8
	Hdrlen, Index, What uint16
	Name                [16]byte
}

// fbsdIfData is struct if_data of FreeBSD's sys/net/if.h (FreeBSD 11 and
// later).
type fbsdIfData struct {
	Type, Physical, Addrlen, Hdrlen, LinkState, Vhid uint8
	Datalen                                          uint16
	MTU, Metric                                      uint32
	Baudrate                                         uint64
	// ipackets, ierrors, opackets, oerrors, collisions, ibytes, obytes,
	// imcasts, omcasts, iqdrops, oqdrops, noproto, hwassist.
	Counters   [13]uint64
	Epoch      uint64
	Lastchange [16]byte
}

// fbsdIfMsghdr is struct if_msghdr of FreeBSD's sys/net/if.h.
type fbsdIfMsghdr struct {
	Msglen        uint16
	Version, Type uint8
	Addrs, Flags  int32
	Index, Spare1 uint16
	Data          fbsdIfData
}

// fbsdIfAnnounce is struct if_announcemsghdr of FreeBSD's sys/net/if.h.
type fbsdIfAnnounce struct {
	Msglen        uint16
	Version, Type uint8
	Index         uint16
	Name          [16]byte
	What          uint16
}

// The sizes the headers give (x/sys/unix's SizeofIfMsghdr and
// SizeofIfAnnounceMsghdr for each OS): the mirrors above are complete.
func TestMirrorSizes(t *testing.T) {
	for _, c := range []struct {
		what string
		v    any
		want int
	}{
		{"openbsd if_msghdr", obsdIfMsghdr{}, 0xa8},
		{"openbsd if_data", obsdIfData{}, 0x90},
		{"openbsd if_announcemsghdr", obsdIfAnnounce{}, 0x1a},
		{"freebsd if_msghdr", fbsdIfMsghdr{}, 0xa8},
		{"freebsd if_data", fbsdIfData{}, 0x98},
		{"freebsd if_announcemsghdr", fbsdIfAnnounce{}, 0x18},
	} {
		if got := binary.Size(c.v); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.what, got, c.want)
		}
	}
}

// encode lays v out in the host's byte order, as the kernel does, and sets
// its leading length field.
func encode(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := binary.Write(&b, binary.NativeEndian, v); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	binary.NativeEndian.PutUint16(out, uint16(len(out)))
	return out
}

func name16(s string) (n [16]byte) { copy(n[:], s); return }

// ifinfo builds an RTM_IFINFO for os with the given index, flags, link
// state and MTU.
func ifinfo(t testing.TB, os string, index uint16, flags int32, link uint8, mtu uint32) []byte {
	switch os {
	case "openbsd":
		return encode(t, obsdIfMsghdr{Version: 5, Type: 0xe, Hdrlen: 0xa8, Index: index, Flags: flags,
			Data: obsdIfData{Type: 6, Addrlen: 6, Hdrlen: 14, LinkState: link, MTU: mtu, Metric: 99, Rdomain: 7}})
	default:
		return encode(t, fbsdIfMsghdr{Version: 5, Type: 0xe, Index: index, Flags: flags, Spare1: 0xffff,
			Data: fbsdIfData{Type: 6, Physical: 9, Addrlen: 6, Hdrlen: 14, LinkState: link, Vhid: 8, Datalen: 0x98, MTU: mtu, Metric: 99}})
	}
}

// announce builds an RTM_IFANNOUNCE for os.
func announce(t testing.TB, os string, index uint16, name string, what uint16) []byte {
	switch os {
	case "openbsd":
		return encode(t, obsdIfAnnounce{Version: 5, Type: 0xf, Hdrlen: 26, Index: index, What: what, Name: name16(name)})
	default:
		return encode(t, fbsdIfAnnounce{Version: 5, Type: 0x11, Index: index, Name: name16(name), What: what})
	}
}

// other builds a message of another type (an RTM_NEWADDR, 0xc on both) of
// n bytes, or of another version.
func other(version, typ byte, n int) []byte {
	b := make([]byte, n)
	binary.NativeEndian.PutUint16(b, uint16(n))
	b[2], b[3] = version, typ
	return b
}

func layoutOf(os string) *rtLayout {
	if os == "openbsd" {
		return &openbsdLayout
	}
	return &freebsdLayout
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

const upRunning = iffUp | iffRunning

func TestParseRouteMessages(t *testing.T) {
	type tc struct {
		name string
		buf  []byte
		want []rtMsg
	}
	for _, os := range []string{"openbsd", "freebsd"} {
		announceType := map[string]byte{"openbsd": 0xf, "freebsd": 0x11}[os]
		cases := []tc{
			{"ifinfo", ifinfo(t, os, 3, upRunning, 4, 9000),
				[]rtMsg{{kind: rtInfo, index: 3, flags: upRunning, linkState: 4, mtu: 9000}}},
			{"index above 255", ifinfo(t, os, 0x1234, iffUp, 1, 1500),
				[]rtMsg{{kind: rtInfo, index: 0x1234, flags: iffUp, linkState: 1, mtu: 1500}}},
			{"arrival", announce(t, os, 7, "tap3", ifanArrival),
				[]rtMsg{{kind: rtArrival, index: 7, name: "tap3"}}},
			{"departure", announce(t, os, 7, "bridge0", ifanDeparture),
				[]rtMsg{{kind: rtDeparture, index: 7, name: "bridge0"}}},
			{"name of 16 bytes, no NUL", announce(t, os, 2, "abcdefghijklmnop", ifanArrival),
				[]rtMsg{{kind: rtArrival, index: 2, name: "abcdefghijklmnop"}}},
			{"unknown announcement skipped", announce(t, os, 7, "x", 9), nil},
			{"other type skipped", other(5, 0xc, 40), nil},
			{"other version skipped", cat(other(4, 0xe, 8), other(4, announceType, 8)), nil},
			{"listing: several back to back", cat(
				ifinfo(t, os, 1, upRunning, 0, 33152), other(5, 0xc, 20),
				ifinfo(t, os, 2, 0, 2, 1500), announce(t, os, 9, "em1", ifanDeparture)),
				[]rtMsg{
					{kind: rtInfo, index: 1, flags: upRunning, linkState: 0, mtu: 33152},
					{kind: rtInfo, index: 2, flags: 0, linkState: 2, mtu: 1500},
					{kind: rtDeparture, index: 9, name: "em1"},
				}},
			{"empty", nil, nil},
		}
		if os == "openbsd" {
			cases = append(cases, tc{"desync", other(5, 0x10, 16), []rtMsg{{kind: rtDesync}}})
		} else {
			cases = append(cases, tc{"0x10 is no desync", other(5, 0x10, 16), nil})
		}
		for _, c := range cases {
			t.Run(os+"/"+c.name, func(t *testing.T) {
				got, err := parseRouteMessages(layoutOf(os), c.buf)
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("got %+v\nwant %+v", got, c.want)
				}
			})
		}
	}
}

func TestParseRouteMessagesRefusesShortMessages(t *testing.T) {
	for _, os := range []string{"openbsd", "freebsd"} {
		l := layoutOf(os)
		info := ifinfo(t, os, 3, upRunning, 4, 1500)
		ann := announce(t, os, 3, "em0", ifanArrival)
		withLen := func(b []byte, n int) []byte {
			b = bytes.Clone(b)
			binary.NativeEndian.PutUint16(b, uint16(n))
			return b
		}
		for _, c := range []struct {
			name  string
			buf   []byte
			valid int // messages returned before the error
		}{
			{"3 bytes", []byte{3, 0, 5}, 0},
			{"length 0", withLen(info, 0), 0},
			{"length 3", withLen(info, 3), 0},
			{"length past the buffer", withLen(info, len(info)+1), 0},
			{"ifinfo cut before ifi_mtu", withLen(info[:l.ifInfoMin()-1], l.ifInfoMin()-1), 0},
			{"announce cut before its name ends", withLen(ann[:l.ifanSize-1], l.ifanSize-1), 0},
			{"good then bad", cat(ann, []byte{9, 0}), 1},
			{"good then cut", cat(info, info[:20]), 1},
		} {
			t.Run(os+"/"+c.name, func(t *testing.T) {
				got, err := parseRouteMessages(l, c.buf)
				if !errors.Is(err, errShortMessage) {
					t.Errorf("error %v, want one wrapping %q", err, errShortMessage)
				}
				if len(got) != c.valid {
					t.Errorf("%d messages before the error, want %d: %+v", len(got), c.valid, got)
				}
			})
		}
	}
}

// A link is up when the interface is up and running and its link state is
// up by the OS's rule: OpenBSD's LINK_STATE_IS_UP (UP, HALF_DUPLEX,
// FULL_DUPLEX, and UNKNOWN), FreeBSD's UP or UNKNOWN.
func TestInfoEventState(t *testing.T) {
	mac := []byte{2, 0, 0, 0, 0, 1}
	for _, c := range []struct {
		os      string
		flags   uint32
		link    byte
		state   platform.LinkState
		carrier bool
	}{
		{"openbsd", upRunning, 0, platform.LinkUp, true},    // UNKNOWN
		{"openbsd", upRunning, 1, platform.LinkDown, false}, // INVALID
		{"openbsd", upRunning, 2, platform.LinkDown, false}, // DOWN
		{"openbsd", upRunning, 3, platform.LinkDown, false}, // KALIVE_DOWN
		{"openbsd", upRunning, 4, platform.LinkUp, true},    // UP
		{"openbsd", upRunning, 5, platform.LinkUp, true},    // HALF_DUPLEX
		{"openbsd", upRunning, 6, platform.LinkUp, true},    // FULL_DUPLEX
		{"openbsd", iffUp, 6, platform.LinkDown, true},      // not running
		{"openbsd", iffRunning, 6, platform.LinkDown, true}, // not up
		{"freebsd", upRunning, 0, platform.LinkUp, true},    // UNKNOWN
		{"freebsd", upRunning, 1, platform.LinkDown, false}, // DOWN
		{"freebsd", upRunning, 2, platform.LinkUp, true},    // UP
		{"freebsd", iffUp, 2, platform.LinkDown, true},
		{"freebsd", 0, 2, platform.LinkDown, true},
	} {
		t.Run(fmt.Sprintf("%s/flags=%#x/link=%d", c.os, c.flags, c.link), func(t *testing.T) {
			m := rtMsg{kind: rtInfo, index: 4, flags: c.flags, linkState: c.link, mtu: 1500}
			e := infoEvent(layoutOf(c.os), m, "em0", mac)
			want := Event{Name: "em0", Index: 4, State: c.state, AdminUp: c.flags&iffUp != 0, Carrier: c.carrier, MTU: 1500, MAC: mac}
			if !e.same(want) {
				t.Errorf("got %+v, want %+v", e, want)
			}
		})
	}
}

func FuzzParseRouteMessages(f *testing.F) {
	for _, os := range []string{"openbsd", "freebsd"} {
		f.Add(os == "openbsd", ifinfo(f, os, 3, upRunning, 4, 1500))
		f.Add(os == "openbsd", cat(announce(f, os, 7, "tap0", ifanArrival), ifinfo(f, os, 7, 0, 0, 1500)))
		f.Add(os == "openbsd", []byte{4, 0, 5, 0x10})
	}
	f.Fuzz(func(t *testing.T, openbsd bool, b []byte) {
		l := &freebsdLayout
		if openbsd {
			l = &openbsdLayout
		}
		msgs, err := parseRouteMessages(l, b)
		if err != nil && !errors.Is(err, errShortMessage) {
			t.Fatalf("error %v does not wrap errShortMessage", err)
		}
		for _, m := range msgs {
			if m.kind < rtInfo || m.kind > rtDesync || len(m.name) > 16 || m.index > 0xffff {
				t.Fatalf("implausible message %+v", m)
			}
		}
	})
}
