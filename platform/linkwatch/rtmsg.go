package linkwatch

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/swctl/swctl/platform"
)

// This file decodes the two routing-socket messages the BSD watcher reads:
// RTM_IFINFO (struct if_msghdr: an interface's flags and, in its if_data,
// link state and MTU) and RTM_IFANNOUNCE (struct if_announcemsghdr: an
// interface arrived or departed). It builds on every OS, so that the tests
// run on Linux with buffers laid out as each BSD lays them out.
//
// golang.org/x/net/route is not used for these two: its InterfaceMessage
// carries no ifi_link_state (its metrics are the type and the MTU), and it
// builds only on the BSDs. The BSD watcher uses it for what it covers: the
// interface listing (FetchRIB) and the link-level address in it.

// rtLayout is where one OS puts the fields the watcher reads. Offsets are
// in bytes from the start of the message, in the host's byte order.
type rtLayout struct {
	// os names the layout in errors.
	os string
	// version is RTM_VERSION: a message of another version is skipped.
	version byte
	// ifInfo, ifAnnounce and desync are the message types RTM_IFINFO,
	// RTM_IFANNOUNCE and RTM_DESYNC (0: the OS has none).
	ifInfo, ifAnnounce, desync byte

	// ifmFlags, ifmIndex and ifmData are the offsets of ifm_flags (int),
	// ifm_index (u_short) and ifm_data (struct if_data) in if_msghdr.
	ifmFlags, ifmIndex, ifmData int
	// ifiLinkState and ifiMTU are the offsets of ifi_link_state (u_char)
	// and ifi_mtu (32 bits) in if_data.
	ifiLinkState, ifiMTU int

	// ifanIndex, ifanWhat and ifanName are the offsets of ifan_index
	// (u_short), ifan_what (u_short) and ifan_name (char[IFNAMSIZ]) in
	// if_announcemsghdr, whose size is ifanSize.
	ifanIndex, ifanWhat, ifanName, ifanSize int

	// linkUp says whether an ifi_link_state value is a link that is up.
	linkUp func(state byte) bool
}

// ifInfoMin is the shortest RTM_IFINFO the decoder reads: up to the end of
// ifi_mtu.
func (l *rtLayout) ifInfoMin() int { return l.ifmData + l.ifiMTU + 4 }

// Flag bits of ifm_flags the watcher reads: the same values on both OSes
// (sys/net/if.h).
const (
	iffUp      = 0x1  // IFF_UP
	iffRunning = 0x40 // IFF_RUNNING (FreeBSD: IFF_DRV_RUNNING)
)

// ifanArrival and ifanDeparture are the values of ifan_what (sys/net/if.h,
// both OSes).
const (
	ifanArrival   = 0 // IFAN_ARRIVAL
	ifanDeparture = 1 // IFAN_DEPARTURE
)

// OpenBSD's link states (sys/net/if.h, if.h 1.221). LINK_STATE_IS_UP is
// true for UP and above, and for UNKNOWN: a driver that cannot tell
// (a pseudo-interface, most virtual NICs) reports UNKNOWN and works.
const (
	obsdLinkStateUnknown = 0 // LINK_STATE_UNKNOWN
	obsdLinkStateUp      = 4 // LINK_STATE_UP
)

// FreeBSD's link states (sys/net/if.h): UNKNOWN 0, DOWN 1, UP 2.
const (
	fbsdLinkStateUnknown = 0 // LINK_STATE_UNKNOWN
	fbsdLinkStateUp      = 2 // LINK_STATE_UP
)

// openbsdLayout is OpenBSD's (sys/net/if.h, sys/net/route.h), the same on
// every 64-bit architecture:
//
//	struct if_msghdr {            // offset
//		u_short ifm_msglen;       //  0
//		u_char  ifm_version;      //  2
//		u_char  ifm_type;         //  3
//		u_short ifm_hdrlen;       //  4
//		u_short ifm_index;        //  6
//		u_short ifm_tableid;      //  8
//		u_char  ifm_pad1, ifm_pad2; // 10, 11
//		int     ifm_addrs;        // 12
//		int     ifm_flags;        // 16
//		int     ifm_xflags;       // 20
//		struct if_data ifm_data;  // 24: ifi_type, ifi_addrlen,
//		                          // ifi_hdrlen, ifi_link_state (+3),
//		                          // u_int32_t ifi_mtu (+4), ...
//	};
//	struct if_announcemsghdr {    // 26 bytes
//		u_short ifan_msglen, u_char ifan_version, u_char ifan_type,
//		u_short ifan_hdrlen;      //  0..5
//		u_short ifan_index;       //  6
//		u_short ifan_what;        //  8
//		char    ifan_name[16];    // 10
//	};
//
// RTM_VERSION 5, RTM_IFINFO 0xe, RTM_IFANNOUNCE 0xf, RTM_DESYNC 0x10 (the
// socket's buffer overflowed: messages were lost).
var openbsdLayout = rtLayout{
	os:      "openbsd",
	version: 5, ifInfo: 0xe, ifAnnounce: 0xf, desync: 0x10,
	ifmFlags: obsdIfmFlags, ifmIndex: obsdIfmIndex, ifmData: obsdIfmData,
	ifiLinkState: obsdIfiLinkState, ifiMTU: obsdIfiMTU,
	ifanIndex: obsdIfanIndex, ifanWhat: obsdIfanWhat, ifanName: obsdIfanName, ifanSize: obsdIfanSize,
	linkUp: func(s byte) bool { return s >= obsdLinkStateUp || s == obsdLinkStateUnknown },
}

// The offsets of openbsdLayout, as constants so that the OpenBSD build
// checks them against x/sys/unix's IfMsghdr, IfData and IfAnnounceMsghdr
// (rtmsg_openbsd_unsafe.go).
const (
	obsdIfmFlags     = 16
	obsdIfmIndex     = 6
	obsdIfmData      = 24
	obsdIfiLinkState = 3
	obsdIfiMTU       = 4
	obsdIfanIndex    = 6
	obsdIfanWhat     = 8
	obsdIfanName     = 10
	obsdIfanSize     = 26
)

// freebsdLayout is FreeBSD's (sys/net/if.h, sys/net/route.h; if_data has
// fixed-width fields since FreeBSD 11, so it is the same on every
// architecture):
//
//	struct if_msghdr {            // offset
//		u_short ifm_msglen;       //  0
//		u_char  ifm_version;      //  2
//		u_char  ifm_type;         //  3
//		int     ifm_addrs;        //  4
//		int     ifm_flags;        //  8
//		u_short ifm_index;        // 12
//		u_short _ifm_spare1;      // 14
//		struct if_data ifm_data;  // 16: ifi_type, ifi_physical,
//		                          // ifi_addrlen, ifi_hdrlen,
//		                          // ifi_link_state (+4), ifi_vhid,
//		                          // ifi_datalen, uint32_t ifi_mtu (+8), ...
//	};
//	struct if_announcemsghdr {    // 24 bytes
//		u_short ifan_msglen, u_char ifan_version, u_char ifan_type; // 0..3
//		u_short ifan_index;       //  4
//		char    ifan_name[16];    //  6
//		u_short ifan_what;        // 22
//	};
//
// RTM_VERSION 5, RTM_IFINFO 0xe, RTM_IFANNOUNCE 0x11; an overflow is a
// read error (ENOBUFS, with SO_RERROR), not a message. A link state other
// than DOWN is up: UNKNOWN is what drivers without link detection report.
var freebsdLayout = rtLayout{
	os:      "freebsd",
	version: 5, ifInfo: 0xe, ifAnnounce: 0x11,
	ifmFlags: fbsdIfmFlags, ifmIndex: fbsdIfmIndex, ifmData: fbsdIfmData,
	ifiLinkState: fbsdIfiLinkState, ifiMTU: fbsdIfiMTU,
	ifanIndex: fbsdIfanIndex, ifanWhat: fbsdIfanWhat, ifanName: fbsdIfanName, ifanSize: fbsdIfanSize,
	linkUp: func(s byte) bool { return s == fbsdLinkStateUp || s == fbsdLinkStateUnknown },
}

// The offsets of freebsdLayout, as constants so that the FreeBSD build
// checks them against x/sys/unix (rtmsg_freebsd_unsafe.go).
const (
	fbsdIfmFlags     = 8
	fbsdIfmIndex     = 12
	fbsdIfmData      = 16
	fbsdIfiLinkState = 4
	fbsdIfiMTU       = 8
	fbsdIfanIndex    = 4
	fbsdIfanWhat     = 22
	fbsdIfanName     = 6
	fbsdIfanSize     = 24
)

// rtKind is what a decoded routing message says.
type rtKind int

const (
	// rtInfo is an RTM_IFINFO: the interface's flags, link and MTU.
	rtInfo rtKind = iota + 1
	// rtArrival is an RTM_IFANNOUNCE with IFAN_ARRIVAL.
	rtArrival
	// rtDeparture is an RTM_IFANNOUNCE with IFAN_DEPARTURE.
	rtDeparture
	// rtDesync says the kernel dropped messages: list again.
	rtDesync
)

// rtMsg is one decoded routing message.
type rtMsg struct {
	// kind says which message it was.
	kind rtKind
	// index is the interface index.
	index int
	// name is the interface name; announcements only (RTM_IFINFO from
	// the socket carries no name).
	name string
	// flags is ifm_flags; RTM_IFINFO only.
	flags uint32
	// linkState is ifi_link_state; RTM_IFINFO only.
	linkState byte
	// mtu is ifi_mtu; RTM_IFINFO only.
	mtu int
}

// errShortMessage wraps every length error of parseRouteMessages.
var errShortMessage = errors.New("routing message truncated")

// parseRouteMessages decodes the RTM_IFINFO, RTM_IFANNOUNCE and
// RTM_DESYNC messages in b (one read from a routing socket, or a sysctl
// NET_RT_IFLIST listing: messages back to back, each starting with its
// length) and skips the others, and messages of another RTM_VERSION. A
// message whose length field is shorter than the message header or runs
// past b, or an RTM_IFINFO or RTM_IFANNOUNCE too short for the fields
// read, is an error; the messages before it are returned with it.
func parseRouteMessages(l *rtLayout, b []byte) ([]rtMsg, error) {
	var out []rtMsg
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < 4 {
			return out, fmt.Errorf("%w: %d bytes left at offset %d, a header needs 4", errShortMessage, len(rest), off)
		}
		n := int(binary.NativeEndian.Uint16(rest))
		if n < 4 || n > len(rest) {
			return out, fmt.Errorf("%w: length %d at offset %d, %d bytes left", errShortMessage, n, off, len(rest))
		}
		m := rest[:n]
		off += n
		if m[2] != l.version {
			continue
		}
		switch typ := m[3]; {
		case typ == l.ifInfo:
			if n < l.ifInfoMin() {
				return out, fmt.Errorf("%w: %s RTM_IFINFO of %d bytes, needs %d", errShortMessage, l.os, n, l.ifInfoMin())
			}
			d := m[l.ifmData:]
			out = append(out, rtMsg{
				kind:      rtInfo,
				index:     int(binary.NativeEndian.Uint16(m[l.ifmIndex:])),
				flags:     binary.NativeEndian.Uint32(m[l.ifmFlags:]),
				linkState: d[l.ifiLinkState],
				mtu:       int(binary.NativeEndian.Uint32(d[l.ifiMTU:])),
			})
		case typ == l.ifAnnounce:
			if n < l.ifanSize {
				return out, fmt.Errorf("%w: %s RTM_IFANNOUNCE of %d bytes, needs %d", errShortMessage, l.os, n, l.ifanSize)
			}
			msg := rtMsg{
				index: int(binary.NativeEndian.Uint16(m[l.ifanIndex:])),
				name:  cString(m[l.ifanName : l.ifanName+16]),
			}
			switch binary.NativeEndian.Uint16(m[l.ifanWhat:]) {
			case ifanArrival:
				msg.kind = rtArrival
			case ifanDeparture:
				msg.kind = rtDeparture
			default:
				continue
			}
			out = append(out, msg)
		case l.desync != 0 && typ == l.desync:
			out = append(out, rtMsg{kind: rtDesync})
		}
	}
	return out, nil
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// infoEvent is the Event an RTM_IFINFO describes, for the interface name
// with hardware address mac: up when the interface is up, running, and its
// link state is up by the OS's rule.
func infoEvent(l *rtLayout, m rtMsg, name string, mac []byte) Event {
	e := Event{
		Name:    name,
		Index:   m.index,
		AdminUp: m.flags&iffUp != 0,
		Carrier: l.linkUp(m.linkState),
		MTU:     m.mtu,
	}
	if len(mac) > 0 {
		e.MAC = append(e.MAC, mac...)
	}
	if e.AdminUp && e.Carrier && m.flags&iffRunning != 0 {
		e.State = platform.LinkUp
	} else {
		e.State = platform.LinkDown
	}
	return e
}
