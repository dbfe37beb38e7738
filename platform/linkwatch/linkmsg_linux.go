package linkwatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform"
)

// Operational states of IFLA_OPERSTATE (RFC 2863), from
// include/uapi/linux/if.h.
const (
	IF_OPER_UNKNOWN = 0
	IF_OPER_UP      = 6
)

// NLA_TYPE_MASK strips the nested and byte-order flags from an attribute
// type (include/uapi/linux/netlink.h).
const NLA_TYPE_MASK = ^uint16(unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)

// decodeLink decodes the body of an RTM_NEWLINK or RTM_DELLINK message (a
// struct ifinfomsg, then route attributes) into the Event it reports.
// Only the attributes an Event needs are read (IFLA_IFNAME, IFLA_MTU,
// IFLA_ADDRESS, IFLA_OPERSTATE); every length is checked before it is
// used. ok is false, with no error, for a message about no interface's
// whole state: a kernel bridge's AF_BRIDGE port notification (the full
// RTM_NEWLINK comes too). The Event owns its MAC: nothing of b is kept.
func decodeLink(typ uint16, b []byte) (e Event, ok bool, err error) {
	if typ != unix.RTM_NEWLINK && typ != unix.RTM_DELLINK {
		return Event{}, false, fmt.Errorf("message type %d: not RTM_NEWLINK or RTM_DELLINK", typ)
	}
	if len(b) < unix.SizeofIfInfomsg {
		return Event{}, false, fmt.Errorf("link message of %d bytes: shorter than its ifinfomsg (%d)", len(b), unix.SizeofIfInfomsg)
	}
	if b[0] == unix.AF_BRIDGE {
		return Event{}, false, nil
	}
	index := int32(binary.NativeEndian.Uint32(b[4:8]))
	flags := binary.NativeEndian.Uint32(b[8:12])
	if index <= 0 {
		return Event{}, false, fmt.Errorf("link message: interface index %d", index)
	}
	e = Event{
		Index:   int(index),
		AdminUp: flags&unix.IFF_UP != 0,
		Carrier: flags&unix.IFF_LOWER_UP != 0,
	}
	oper := uint8(IF_OPER_UNKNOWN)
	for off := unix.SizeofIfInfomsg; off+unix.SizeofRtAttr <= len(b); {
		n := int(binary.NativeEndian.Uint16(b[off:]))
		if n < unix.SizeofRtAttr || n > len(b)-off {
			return Event{}, false, fmt.Errorf("link message, interface index %d: attribute at byte %d: length %d out of range (%d to %d)", index, off, n, unix.SizeofRtAttr, len(b)-off)
		}
		v := b[off+unix.SizeofRtAttr : off+n]
		switch binary.NativeEndian.Uint16(b[off+2:]) & NLA_TYPE_MASK {
		case unix.IFLA_IFNAME:
			if i := bytes.IndexByte(v, 0); i >= 0 {
				v = v[:i]
			}
			e.Name = string(v)
		case unix.IFLA_MTU:
			if len(v) < 4 {
				return Event{}, false, fmt.Errorf("link message, interface index %d: IFLA_MTU of %d bytes, want 4", index, len(v))
			}
			e.MTU = int(binary.NativeEndian.Uint32(v))
		case unix.IFLA_ADDRESS:
			if len(v) > 0 {
				e.MAC = append(net.HardwareAddr(nil), v...)
			}
		case unix.IFLA_OPERSTATE:
			if len(v) < 1 {
				return Event{}, false, fmt.Errorf("link message, interface index %d: empty IFLA_OPERSTATE", index)
			}
			oper = v[0]
		}
		off += (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1)
	}
	if e.Name == "" && typ == unix.RTM_NEWLINK {
		return Event{}, false, fmt.Errorf("link message, interface index %d: no IFLA_IFNAME", index)
	}
	switch {
	case typ == unix.RTM_DELLINK:
		e.State = platform.LinkAbsent
	case e.AdminUp && e.Carrier && (oper == IF_OPER_UP || oper == IF_OPER_UNKNOWN):
		e.State = platform.LinkUp
	default:
		e.State = platform.LinkDown
	}
	return e, true, nil
}
