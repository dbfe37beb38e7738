package config

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

const lbConf = `bridge br0 {
    port eth2
}

lb web {
    iface eth1
    vip 192.0.2.100
    vip 2001:db8::100
    method maglev
    health http:80/healthz interval 1s timeout 500ms rise 3 fall 4
    source 192.0.2.1
    backend 192.0.2.11 weight 2
    backend 192.0.2.12 drain
    backend 2001:db8::11
}

lb onbridge {
    bridge br0
    vip 198.51.100.10
    method roundrobin
    health none
}
`

func TestLBBlocksRoundTrip(t *testing.T) {
	c, err := Parse(strings.NewReader(lbConf), "swctl.conf")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := LB{Name: "web", Iface: "eth1",
		VIPs:   []netip.Addr{netip.MustParseAddr("192.0.2.100"), netip.MustParseAddr("2001:db8::100")},
		Method: "maglev", Health: "http:80/healthz", Interval: time.Second, Timeout: 500 * time.Millisecond, Rise: 3, Fall: 4,
		Sources: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
		Backends: []LBBackend{{Addr: netip.MustParseAddr("192.0.2.11"), Weight: 2},
			{Addr: netip.MustParseAddr("192.0.2.12"), Weight: 1, Drain: true}, {Addr: netip.MustParseAddr("2001:db8::11"), Weight: 1}}}
	if len(c.LBs) != 2 || !reflect.DeepEqual(c.LBs[0], want) {
		t.Fatalf("lbs %+v; want two, the first %+v", c.LBs, want)
	}
	again, err := Parse(strings.NewReader(string(c.Format())), "formatted")
	if err != nil {
		t.Fatalf("Parse(Format()): %v\n%s", err, c.Format())
	}
	if !reflect.DeepEqual(again, c) {
		t.Errorf("Parse(Format(c)) differs from c:\n%s", c.Format())
	}
	if err := c.Clone().Validate(); err != nil {
		t.Errorf("Validate of a parsed file: %v", err)
	}
}

func TestLBBlockErrors(t *testing.T) {
	block := func(body string) string { return "lb web {\n    iface eth1\n" + body + "}\n" }
	cases := []struct{ name, conf, want string }{
		{"malformed vip", block("    vip 192.0.2.300\n"), `swctl.conf:3: vip "192.0.2.300": not an IPv4 or IPv6 address`},
		{"duplicate vip", block("    vip 192.0.2.100\n    vip 192.0.2.100\n"), "vip 192.0.2.100: given twice"},
		{"multicast vip", block("    vip 224.0.0.5\n"), "vip 224.0.0.5: not a unicast address"},
		{"no vip", block(""), "lb web: no vip"},
		{"malformed backend", block("    vip 192.0.2.100\n    backend 192.0.2.x\n"), `backend "192.0.2.x": not an IPv4 or IPv6 address`},
		{"duplicate backend", block("    vip 192.0.2.100\n    backend 192.0.2.11\n    backend 192.0.2.11\n"), "backend 192.0.2.11: listed twice"},
		{"backend is the source", block("    vip 192.0.2.100\n    source 192.0.2.1\n    backend 192.0.2.1\n"), "backend 192.0.2.1: is the lb's own (source) address"},
		{"backend is a vip", block("    vip 192.0.2.100\n    backend 192.0.2.100\n"), "backend 192.0.2.100: is a vip of this lb"},
		{"bad weight", block("    vip 192.0.2.100\n    backend 192.0.2.11 weight 0\n"), "backend 192.0.2.11: weight \"0\": want 1 to 1000"},
		{"bad method", block("    vip 192.0.2.100\n    method random\n"), `lb method "random"`},
		{"bad health", block("    vip 192.0.2.100\n    health udp:53\n"), `health check "udp:53"`},
		{"timeout over interval", block("    vip 192.0.2.100\n    health tcp:80 interval 1s timeout 2s\n"), "health timeout 2s: want 10ms to the interval (1s)"},
		{"iface and bridge", block("    vip 192.0.2.100\n    bridge br0\n"), "want exactly one of iface and bridge"},
		{"unknown bridge", "lb web {\n    bridge br9\n    vip 192.0.2.100\n}\n", "lb web: bridge br9: no such bridge"},
		{"iface is a bridge port", "bridge br0 {\n    port eth1\n}\n" + block("    vip 192.0.2.100\n"), "lb web: iface eth1: is a port of br0"},
		{"two lbs on one iface", block("    vip 192.0.2.100\n") + "lb web2 {\n    iface eth1\n    vip 192.0.2.101\n}\n", "lb web2: iface eth1: already the interface of lb web"},
		{"declared twice", block("    vip 192.0.2.100\n") + block("    vip 192.0.2.101\n"), "lb web: declared twice"},
		{"unknown setting", block("    vip 192.0.2.100\n    port eth3\n"), `unknown setting "port" in lb web`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.conf), "swctl.conf")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse error %v; want one containing %q", err, c.want)
			}
		})
	}
}

func TestLBEdits(t *testing.T) {
	host := tableHost{"eth1": nil}
	c := &Config{}
	web := LB{Name: "web", Iface: "eth1", VIPs: []netip.Addr{netip.MustParseAddr("192.0.2.100")}, Sources: []netip.Addr{netip.MustParseAddr("192.0.2.1")}}
	steps := []struct {
		name string
		edit func() error
		want string // "" for success, else part of the error
	}{
		{"create", func() error { return c.CreateLB(web, host) }, ""},
		{"create again", func() error { return c.CreateLB(web, host) }, "web: lb exists"},
		{"create on a missing interface", func() error {
			l := web
			l.Name, l.Iface = "x", "eth9"
			return c.CreateLB(l, host)
		}, "x: create --iface eth9: no such interface"},
		{"add", func() error { return c.AddLBBackend("web", netip.MustParseAddr("192.0.2.11"), 2) }, ""},
		{"add again", func() error { return c.AddLBBackend("web", netip.MustParseAddr("192.0.2.11"), 2) }, "already a backend with weight 2"},
		{"add the source", func() error { return c.AddLBBackend("web", netip.MustParseAddr("192.0.2.1"), 1) }, "backend 192.0.2.1: is the lb's own (source) address"},
		{"add to a missing lb", func() error { return c.AddLBBackend("nope", netip.MustParseAddr("192.0.2.11"), 1) }, "nope: no such lb"},
		{"drain", func() error { return c.DrainLBBackend("web", netip.MustParseAddr("192.0.2.11")) }, ""},
		{"drain a stranger", func() error { return c.DrainLBBackend("web", netip.MustParseAddr("192.0.2.99")) }, "not a backend"},
		{"add undrains", func() error { return c.AddLBBackend("web", netip.MustParseAddr("192.0.2.11"), 2) }, ""},
		{"del", func() error { return c.DelLBBackend("web", netip.MustParseAddr("192.0.2.11")) }, ""},
		{"del again", func() error { return c.DelLBBackend("web", netip.MustParseAddr("192.0.2.11")) }, "not a backend"},
		{"destroy", func() error { return c.DestroyLB("web") }, ""},
		{"destroy again", func() error { return c.DestroyLB("web") }, "web: no such lb"},
	}
	for _, s := range steps {
		err := s.edit()
		switch {
		case s.want == "" && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.want != "" && (err == nil || !strings.Contains(err.Error(), s.want)):
			t.Fatalf("%s: error %v; want one containing %q", s.name, err, s.want)
		}
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("%s: Validate after the edit: %v", s.name, verr)
			}
		}
		if s.name == "add undrains" && (c.LBs[0].Backends[0].Drain || c.LBs[0].Backends[0].Weight != 2) {
			t.Errorf("after add of a drained backend: %+v; want serving, weight 2", c.LBs[0].Backends[0])
		}
	}
}
