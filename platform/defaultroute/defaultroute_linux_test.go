package defaultroute

import (
	"encoding/binary"
	"net"
	"reflect"
	"slices"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/netnstest"
)

// route is an rtmsg's fields that decide what a route is.
type route struct {
	family, dstLen, table, typ uint8
	flags                      uint32
}

// v4Default is the main table's IPv4 default route.
var v4Default = route{family: unix.AF_INET, table: unix.RT_TABLE_MAIN, typ: unix.RTN_UNICAST}

// routeMsg builds the body of a route message: an rtmsg, then attrs.
func routeMsg(r route, attrs ...*nl.RtAttr) []byte {
	m := &nl.RtMsg{RtMsg: unix.RtMsg{Family: r.family, Dst_len: r.dstLen, Table: r.table, Type: r.typ, Flags: r.flags}}
	b := m.Serialize()
	for _, a := range attrs {
		b = append(b, a.Serialize()...)
	}
	return b
}

func u32(t uint16, v uint32) *nl.RtAttr { return nl.NewRtAttr(int(t), nl.Uint32Attr(v)) }
func oif(i uint32) *nl.RtAttr           { return u32(unix.RTA_OIF, i) }
func gw(ip string) *nl.RtAttr {
	a := net.ParseIP(ip)
	if v4 := a.To4(); v4 != nil {
		a = v4
	}
	return nl.NewRtAttr(unix.RTA_GATEWAY, a)
}

// multipath is an RTA_MULTIPATH with one next hop per interface index,
// each with a gateway attribute of its own.
func multipath(indexes ...int32) *nl.RtAttr {
	var v []byte
	for _, i := range indexes {
		g := gw("192.0.2.1").Serialize()
		hop := make([]byte, unix.SizeofRtNexthop, unix.SizeofRtNexthop+len(g))
		binary.NativeEndian.PutUint16(hop, uint16(unix.SizeofRtNexthop+len(g)))
		binary.NativeEndian.PutUint32(hop[4:], uint32(i))
		v = append(v, append(hop, g...)...)
	}
	return nl.NewRtAttr(unix.RTA_MULTIPATH, v)
}

// kernelShaped are route messages as the kernel sends them, with the
// interfaces of the default ones.
var kernelShaped = []struct {
	name string
	body []byte
	want []int
}{
	{"IPv4 default", routeMsg(v4Default, u32(unix.RTA_TABLE, unix.RT_TABLE_MAIN), gw("192.0.2.254"), oif(3)), []int{3}},
	{"IPv6 default", routeMsg(route{family: unix.AF_INET6, table: unix.RT_TABLE_MAIN, typ: unix.RTN_UNICAST}, u32(unix.RTA_TABLE, unix.RT_TABLE_MAIN), gw("2001:db8::fe"), oif(5), u32(unix.RTA_PRIORITY, 1024)), []int{5}},
	{"multipath default", routeMsg(v4Default, u32(unix.RTA_TABLE, unix.RT_TABLE_MAIN), multipath(3, 4, 3)), []int{3, 4}},
	{"table id only in RTA_TABLE", routeMsg(route{family: unix.AF_INET, table: unix.RT_TABLE_COMPAT, typ: unix.RTN_UNICAST}, u32(unix.RTA_TABLE, unix.RT_TABLE_MAIN), oif(3)), []int{3}},
	{"a subnet", routeMsg(route{family: unix.AF_INET, dstLen: 24, table: unix.RT_TABLE_MAIN, typ: unix.RTN_UNICAST}, nl.NewRtAttr(unix.RTA_DST, []byte{192, 0, 2, 0}), oif(3)), nil},
	{"default of another table", routeMsg(route{family: unix.AF_INET, table: unix.RT_TABLE_COMPAT, typ: unix.RTN_UNICAST}, u32(unix.RTA_TABLE, 100), oif(3)), nil},
	{"unreachable default", routeMsg(route{family: unix.AF_INET6, table: unix.RT_TABLE_MAIN, typ: unix.RTN_UNREACHABLE}, oif(1)), nil},
	{"cached clone", routeMsg(route{family: unix.AF_INET, table: unix.RT_TABLE_MAIN, typ: unix.RTN_UNICAST, flags: unix.RTM_F_CLONED}, oif(3)), nil},
	{"MPLS", routeMsg(route{family: unix.AF_MPLS, table: unix.RT_TABLE_MAIN, typ: unix.RTN_UNICAST}, oif(3)), nil},
}

func TestDecodeDefault(t *testing.T) {
	for _, tt := range kernelShaped {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeDefault(tt.body)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decodeDefault: expected %v, got %v (error %v)", tt.want, got, err)
			}
		})
	}
}

func TestDecodeDefaultRefusesMalformedMessages(t *testing.T) {
	valid := routeMsg(v4Default, oif(3))
	hop := multipath(3)
	tests := []struct {
		name    string
		body    []byte
		wantErr string
	}{
		{"shorter than rtmsg", valid[:11], "route message of 11 bytes: shorter than its rtmsg (12)"},
		{"attribute shorter than its header", append(routeMsg(v4Default), 3, 0, 4, 0), "route message: attribute at byte 12: length 3 out of range (4 to 4)"},
		{"attribute past the end", valid[:len(valid)-1], "route message: attribute at byte 12: length 8 out of range (4 to 7)"},
		{"short RTA_OIF", routeMsg(v4Default, nl.NewRtAttr(unix.RTA_OIF, []byte{3})), "route message: attribute 4 of 1 bytes, want 4"},
		{"short RTA_TABLE", routeMsg(v4Default, nl.NewRtAttr(unix.RTA_TABLE, []byte{254, 0})), "route message: attribute 15 of 2 bytes, want 4"},
		{"next hop shorter than rtnexthop", routeMsg(v4Default, nl.NewRtAttr(unix.RTA_MULTIPATH, []byte{4, 0, 0, 0, 3, 0, 0, 0})), "route message: next hop at byte 0 of RTA_MULTIPATH: length 4 out of range (8 to 8)"},
		{"next hop past its attribute", routeMsg(v4Default, nl.NewRtAttr(unix.RTA_MULTIPATH, hop.Data[:10])), "route message: next hop at byte 0 of RTA_MULTIPATH: length 16 out of range (8 to 10)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oifs, err := decodeDefault(tt.body)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("decodeDefault: expected error %q, got %v (%v)", tt.wantErr, err, oifs)
			}
		})
	}
}

// FuzzDecodeDefault feeds arbitrary route messages to the decoder of the
// kernel's route dump: it must never panic, and the interfaces it names
// are positive indexes, each once.
func FuzzDecodeDefault(f *testing.F) {
	for _, tt := range kernelShaped {
		f.Add(tt.body)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		oifs, err := decodeDefault(b)
		if err != nil && oifs != nil {
			t.Fatalf("decodeDefault: interfaces %v with error %v", oifs, err)
		}
		for i, index := range oifs {
			if index <= 0 || slices.Contains(oifs[:i], index) {
				t.Fatalf("decodeDefault: interfaces %v: expected positive indexes, each once", oifs)
			}
		}
	})
}

func TestIntegrationIfacesNamesTheDefaultRoutes(t *testing.T) {
	netnstest.Require(t)
	ns, far := netnstest.New(t, "dr"), netnstest.New(t, "drf")
	for _, l := range []string{"up1", "up2", "side"} {
		netnstest.Veth(t, ns, l, "", far, l, "")
	}
	ns.Run("ip", "addr", "add", "192.0.2.1/24", "dev", "up1")
	ns.Run("ip", "addr", "add", "198.51.100.1/24", "dev", "up2")
	ns.Run("ip", "addr", "add", "203.0.113.1/24", "dev", "side")
	check := func(what string, want []string) {
		t.Helper()
		var got []string
		var err error
		ns.Do(func() { got, err = Ifaces() })
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: Ifaces: expected %v, got %v (error %v)", what, want, got, err)
		}
	}
	check("no default route", nil)
	ns.Run("ip", "route", "add", "default", "via", "192.0.2.254", "dev", "up1")
	check("one default route", []string{"up1"})
	ns.Run("ip", "route", "replace", "default", "nexthop", "via", "192.0.2.254", "dev", "up1", "nexthop", "via", "198.51.100.254", "dev", "up2")
	check("multipath default route", []string{"up1", "up2"})
	ns.Run("ip", "route", "add", "10.0.0.0/8", "via", "203.0.113.254", "dev", "side")
	ns.Run("ip", "route", "add", "default", "via", "203.0.113.254", "dev", "side", "table", "100")
	check("other routes and tables", []string{"up1", "up2"})
}
