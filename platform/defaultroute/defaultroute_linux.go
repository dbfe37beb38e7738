package defaultroute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// dumpRetries is how often a dump interrupted by a concurrent change
// (NLM_F_DUMP_INTR) is taken again before its result is used as it is.
const dumpRetries = 5

func ifaces() ([]string, error) {
	var msgs [][]byte
	for try := 0; ; try++ {
		req := nl.NewNetlinkRequest(unix.RTM_GETROUTE, unix.NLM_F_DUMP)
		req.AddData(&nl.RtMsg{RtMsg: unix.RtMsg{Family: unix.AF_UNSPEC}})
		var err error
		msgs, err = req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWROUTE)
		interrupted := errors.Is(err, nl.ErrDumpInterrupted)
		if err != nil && !interrupted {
			return nil, fmt.Errorf("list routes: %w", err)
		}
		if !interrupted || try >= dumpRetries {
			break
		}
	}
	var names []string
	for _, m := range msgs {
		oifs, err := decodeDefault(m)
		if err != nil {
			return nil, fmt.Errorf("list routes: %w", err)
		}
		for _, index := range oifs {
			if ifi, err := net.InterfaceByIndex(index); err == nil && !slices.Contains(names, ifi.Name) {
				names = append(names, ifi.Name)
			}
		}
	}
	return names, nil
}

// RTNH_ALIGNTO aligns a struct rtnexthop (include/uapi/linux/rtnetlink.h).
const RTNH_ALIGNTO = 4

// align rounds n up to a multiple of to, a power of two.
func align(n, to int) int { return (n + to - 1) &^ (to - 1) }

// decodeDefault decodes the body of an RTM_NEWROUTE message (a struct
// rtmsg, then route attributes) and returns the interfaces it leaves by
// if it is a default route of the main table: IPv4 or IPv6, unicast, to
// 0.0.0.0/0 or ::/0, not a cached clone; none otherwise. The output
// interface is RTA_OIF, or each hop's of RTA_MULTIPATH. Every length is
// checked before it is read.
func decodeDefault(b []byte) (oifs []int, err error) {
	if len(b) < unix.SizeofRtMsg {
		return nil, fmt.Errorf("route message of %d bytes: shorter than its rtmsg (%d)", len(b), unix.SizeofRtMsg)
	}
	family, dstLen, table, typ := b[0], b[1], uint32(b[4]), b[7]
	flags := binary.NativeEndian.Uint32(b[8:12])
	var hops []int
	for off := unix.SizeofRtMsg; off+unix.SizeofRtAttr <= len(b); {
		n := int(binary.NativeEndian.Uint16(b[off:]))
		if n < unix.SizeofRtAttr || n > len(b)-off {
			return nil, fmt.Errorf("route message: attribute at byte %d: length %d out of range (%d to %d)", off, n, unix.SizeofRtAttr, len(b)-off)
		}
		v := b[off+unix.SizeofRtAttr : off+n]
		switch at := binary.NativeEndian.Uint16(b[off+2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER); at {
		case unix.RTA_TABLE, unix.RTA_OIF:
			if len(v) < 4 {
				return nil, fmt.Errorf("route message: attribute %d of %d bytes, want 4", at, len(v))
			}
			if at == unix.RTA_TABLE {
				table = binary.NativeEndian.Uint32(v)
			} else {
				hops = append(hops, int(int32(binary.NativeEndian.Uint32(v))))
			}
		case unix.RTA_MULTIPATH:
			for h := 0; h+unix.SizeofRtNexthop <= len(v); {
				hn := int(binary.NativeEndian.Uint16(v[h:]))
				if hn < unix.SizeofRtNexthop || hn > len(v)-h {
					return nil, fmt.Errorf("route message: next hop at byte %d of RTA_MULTIPATH: length %d out of range (%d to %d)", h, hn, unix.SizeofRtNexthop, len(v)-h)
				}
				hops = append(hops, int(int32(binary.NativeEndian.Uint32(v[h+4:]))))
				h += align(hn, RTNH_ALIGNTO)
			}
		}
		off += align(n, unix.RTA_ALIGNTO)
	}
	if family != unix.AF_INET && family != unix.AF_INET6 || dstLen != 0 || table != unix.RT_TABLE_MAIN ||
		typ != unix.RTN_UNICAST || flags&unix.RTM_F_CLONED != 0 {
		return nil, nil
	}
	for _, index := range hops {
		if index > 0 && !slices.Contains(oifs, index) {
			oifs = append(oifs, index)
		}
	}
	return oifs, nil
}
