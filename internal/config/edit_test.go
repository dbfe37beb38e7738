package config

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/swctl/swctl/stp"
)

// tableHost is a Host whose interfaces are a map from name to MAC.
type tableHost map[string]net.HardwareAddr

func (h tableHost) Exists(name string) bool { _, ok := h[name]; return ok }

func (h tableHost) DefaultRouteIfaces() ([]string, error) { return nil, nil }

func (h tableHost) HardwareAddr(name string) (net.HardwareAddr, error) {
	hw, ok := h[name]
	if !ok {
		return nil, errors.New("no such interface")
	}
	return hw, nil
}

// editHost has eth1 to eth9, each with MAC 02:00:00:00:00:0N.
var editHost = func() tableHost {
	h := tableHost{}
	for i := 1; i <= 9; i++ {
		h["eth"+string(rune('0'+i))] = net.HardwareAddr{2, 0, 0, 0, 0, byte(i)}
	}
	return h
}()

// editBase is the configuration every edit case starts from: bridge0
// (local TAP) with eth1, eth2, span eth3, a static entry on eth1 in two
// VLANs and trunk1 as a member; br1 empty; trunk0 with eth4; trunk1 with
// eth5.
func editBase() *Config {
	b0 := NewBridge("bridge0")
	b0.Local, b0.LocalMAC = true, mac("02:5e:00:00:00:01")
	b0.Ports = []Port{NewPort("eth1"), NewPort("eth2"), NewPort("trunk1")}
	b0.Spans = []string{"eth3"}
	b0.Statics = []Static{{MAC: mac("02:aa:00:00:00:01"), Port: "eth1"}, {MAC: mac("02:aa:00:00:00:01"), VLAN: 10, Port: "eth2"}}
	t0, t1 := NewTrunk("trunk0"), NewTrunk("trunk1")
	t0.LLAddr, t0.Ports = mac("02:00:00:00:00:04"), []TrunkPort{NewTrunkPort("eth4")}
	t1.LLAddr, t1.Ports = mac("02:00:00:00:00:05"), []TrunkPort{NewTrunkPort("eth5")}
	return &Config{Bridges: []Bridge{b0, NewBridge("br1")}, Trunks: []Trunk{t0, t1}}
}

func ptr[T any](v T) *T { return &v }

func TestEditRefusals(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *Config) error
		want string
	}{
		{"create: bad name", func(c *Config) error { return c.CreateBridge("a/b", false, editHost) }, `bridge name "a/b" contains '/'`},
		{"create: exists", func(c *Config) error { return c.CreateBridge("br1", false, editHost) }, "br1: bridge exists"},
		{"create: a trunk's name", func(c *Config) error { return c.CreateBridge("trunk0", false, editHost) }, "trunk0: a trunk has that name"},
		{"create: a member trunk's name", func(c *Config) error { return c.CreateBridge("trunk1", true, editHost) }, "trunk1: a trunk has that name"},
		{"create: a member's name", func(c *Config) error { return c.CreateBridge("eth1", false, editHost) }, "eth1: is a port of bridge bridge0"},
		{"create: a trunk port's name", func(c *Config) error { return c.CreateBridge("eth4", false, editHost) }, "eth4: is a port of trunk trunk0"},
		{"create --local: interface exists", func(c *Config) error { return c.CreateBridge("eth9", true, editHost) }, "eth9: create --local: an interface named eth9 exists"},
		{"destroy: no such bridge", func(c *Config) error { return c.DestroyBridge("nope") }, "nope: no such bridge"},
		{"add: nothing", func(c *Config) error { return c.AddPorts("br1", nil, editHost) }, "br1: add: no interface given"},
		{"add: no such bridge", func(c *Config) error { return c.AddPorts("nope", []string{"eth9"}, editHost) }, "nope: no such bridge"},
		{"add: given twice", func(c *Config) error { return c.AddPorts("br1", []string{"eth9", "eth9"}, editHost) }, "br1: add eth9: given twice"},
		{"add: bad name", func(c *Config) error { return c.AddPorts("br1", []string{"a b"}, editHost) }, `br1: add a b: interface name "a b" contains whitespace or a control character`},
		{"add: the local TAP", func(c *Config) error { return c.AddPorts("br1", []string{"bridge0"}, editHost) }, "br1: add bridge0: is the TAP of swctl bridge bridge0 and cannot be a member"},
		{"add: own member", func(c *Config) error { return c.AddPorts("bridge0", []string{"eth1"}, editHost) }, "bridge0: add eth1: already a port of this bridge"},
		{"add: another bridge's span", func(c *Config) error { return c.AddPorts("br1", []string{"eth3"}, editHost) }, "br1: add eth3: already a port of bridge bridge0"},
		{"add: a trunk's port", func(c *Config) error { return c.AddPorts("br1", []string{"eth4"}, editHost) }, "br1: add eth4: already a port of trunk trunk0"},
		{"add: a trunk in another bridge", func(c *Config) error { return c.AddPorts("br1", []string{"trunk1"}, editHost) }, "br1: add trunk1: already a port of bridge bridge0"},
		{"add: no such interface", func(c *Config) error { return c.AddPorts("br1", []string{"eth8", "eth0"}, editHost) }, "br1: add eth0: no such interface"},
		{"add: a list in one name", func(c *Config) error { return c.AddPorts("br1", []string{"eth8,eth0"}, editHost) },
			"br1: add eth8,eth0: no such interface (members are separate arguments: eth8 eth0)"},
		{"trunk create: a list in one name", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{}, TrunkCreation{Ports: []string{"sw5,sw6,"}}, editHost)
		}, "t9: add sw5,sw6,: no such interface (members are separate arguments: sw5 sw6)"},
		{"del: nothing", func(c *Config) error { return c.DelPorts("br1", nil) }, "br1: del: no interface given"},
		{"del: given twice", func(c *Config) error { return c.DelPorts("bridge0", []string{"eth1", "eth1"}) }, "bridge0: del eth1: given twice"},
		{"del: not a member", func(c *Config) error { return c.DelPorts("bridge0", []string{"eth1", "eth3"}) }, "bridge0: del eth3: a span port, not a member"},
		{"static: not a member", func(c *Config) error {
			return c.AddStatic("bridge0", Static{MAC: mac("02:aa:00:00:00:09"), Port: "eth3"})
		}, "bridge0: static 02:aa:00:00:00:09: eth3 is a span port, not a member"},
		{"static: already on another member", func(c *Config) error {
			return c.AddStatic("bridge0", Static{MAC: mac("02:aa:00:00:00:01"), Port: "eth2"})
		}, "bridge0: static 02:aa:00:00:00:01: already static on eth1 (give --replace to move it to eth2)"},
		{"static: already on another member in a VLAN", func(c *Config) error {
			return c.AddStatic("bridge0", Static{MAC: mac("02:aa:00:00:00:01"), VLAN: 10, Port: "eth1"})
		}, "bridge0: static 02:aa:00:00:00:01 vlan 10: already static on eth2 (give --replace to move it to eth1)"},
		{"static: not a member, not a span", func(c *Config) error {
			return c.AddStatic("bridge0", Static{MAC: mac("02:aa:00:00:00:09"), Port: "eth9"})
		}, "bridge0: static 02:aa:00:00:00:09: eth9 is not a member"},
		{"deladdr: no such bridge", func(c *Config) error { return c.DelStatics("nope", mac("02:aa:00:00:00:01"), nil) }, "nope: no such bridge"},
		{"flush: no such bridge", func(c *Config) error { return c.Flush("nope", "", true) }, "nope: no such bridge"},
		{"flush --port: not a member", func(c *Config) error { return c.Flush("bridge0", "eth3", true) }, "bridge0: flush --port eth3: a span port, not a member"},
		{"set: nothing", func(c *Config) error { return c.SetBridge("br1", nil, nil, nil) }, "br1: set: nothing to change (give --timeout, --maxaddr or --fwd-mask)"},
		{"set: bad timeout", func(c *Config) error { return c.SetBridge("br1", ptr(-1), nil, nil) }, "br1: set: timeout -1 out of range (0 to 1000000 seconds, 0 = never age)"},
		{"set: bad maxaddr", func(c *Config) error { return c.SetBridge("br1", nil, ptr(0), nil) }, "br1: set: maxaddr 0 out of range (1 to 16777216)"},
		{"port: nothing", func(c *Config) error { return c.SetPort("bridge0", "eth1", PortChange{}) }, "bridge0: port eth1: nothing to change"},
		{"port: not a member", func(c *Config) error { return c.SetPort("bridge0", "eth3", PortChange{Stack: ptr(true)}) }, "bridge0: port eth3: a span port, not a member"},
		{"port: not a member, not a span", func(c *Config) error { return c.SetPort("bridge0", "eth9", PortChange{Stack: ptr(true)}) }, "bridge0: port eth9: not a member"},
		{"addspan: a trunk", func(c *Config) error { return c.AddSpan("br1", "trunk0", editHost) }, "br1: addspan trunk0: a trunk cannot be a span port"},
		{"addspan: a member", func(c *Config) error { return c.AddSpan("br1", "eth2", editHost) }, "br1: addspan eth2: already a port of bridge bridge0"},
		{"delspan: not a span", func(c *Config) error { return c.DelSpan("bridge0", "eth1") }, "bridge0: delspan eth1: not a span port"},
		{"trunk create: exists", func(c *Config) error { return c.CreateTrunk("trunk0", TrunkSettings{}, TrunkCreation{}, editHost) }, "trunk0: trunk exists"},
		{"trunk create: a bridge's name", func(c *Config) error { return c.CreateTrunk("br1", TrunkSettings{}, TrunkCreation{}, editHost) }, "br1: a bridge has that name"},
		{"trunk create: interface exists", func(c *Config) error { return c.CreateTrunk("eth9", TrunkSettings{}, TrunkCreation{}, editHost) }, "eth9: create: an interface named eth9 exists"},
		{"trunk create: bad hash", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{Hash: ptr("l7")}, TrunkCreation{}, editHost)
		}, `t9: hash "l7": unknown field "l7" (want a comma-separated list of l2, l3, l4)`},
		{"trunk create: port given twice", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{}, TrunkCreation{Ports: []string{"eth8", "eth8"}}, editHost)
		}, "t9: add eth8: given twice"},
		{"trunk create: a trunk as port", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{}, TrunkCreation{Ports: []string{"trunk0"}}, editHost)
		}, "t9: add trunk0: is a swctl trunk; a trunk's ports are interfaces"},
		{"trunk destroy: in a bridge", func(c *Config) error { return c.DestroyTrunk("trunk1") }, "trunk1: destroy: a member of bridge bridge0 (swctl bridge del bridge0 trunk1 first)"},
		{"trunk destroy: no such trunk", func(c *Config) error { return c.DestroyTrunk("nope") }, "nope: no such trunk"},
		{"trunk add: a bridge", func(c *Config) error { return c.AddTrunkPorts("trunk0", []string{"br1"}, nil, nil, editHost) }, "trunk0: add br1: is a swctl bridge"},
		{"trunk add: the local TAP", func(c *Config) error {
			return c.AddTrunkPorts("trunk0", []string{"bridge0"}, nil, nil, editHost)
		}, "trunk0: add bridge0: is a swctl bridge"},
		{"trunk add: own port", func(c *Config) error { return c.AddTrunkPorts("trunk0", []string{"eth4"}, nil, nil, editHost) }, "trunk0: add eth4: already a port"},
		{"trunk add: another trunk's port", func(c *Config) error {
			return c.AddTrunkPorts("trunk0", []string{"eth5"}, nil, nil, editHost)
		}, "trunk0: add eth5: already a port of trunk trunk1"},
		{"trunk add: a bridge member", func(c *Config) error {
			return c.AddTrunkPorts("trunk0", []string{"eth1"}, nil, nil, editHost)
		}, "trunk0: add eth1: already a port of bridge bridge0"},
		{"trunk add: no such interface", func(c *Config) error {
			return c.AddTrunkPorts("trunk0", []string{"eth0"}, nil, nil, editHost)
		}, "trunk0: add eth0: no such interface"},
		{"trunk del: not a port", func(c *Config) error { return c.DelTrunkPorts("trunk0", []string{"eth5"}) }, "trunk0: del eth5: not a port"},
		{"trunk set: nothing", func(c *Config) error { return c.SetTrunk("trunk0", TrunkSettings{}) }, "trunk0: set: nothing to change"},
		{"trunk set: bad hash", func(c *Config) error {
			return c.SetTrunk("trunk0", TrunkSettings{Hash: ptr("")})
		}, `trunk0: set: hash "": empty (want a comma-separated list of l2, l3, l4)`},
		{"trunk set: bad updelay after good settings", func(c *Config) error {
			return c.SetTrunk("trunk0", TrunkSettings{Proto: ptr("lacp"), MinLinks: ptr(2), UpDelay: ptr(-5)})
		}, "trunk0: set: updelay -5 out of range (0 to 3600000 ms, 0 = at once)"},
		{"trunk set: bad downdelay", func(c *Config) error {
			return c.SetTrunk("trunk0", TrunkSettings{DownDelay: ptr(MaxDelay + 1)})
		}, "trunk0: set: downdelay 3600001 out of range (0 to 3600000 ms, 0 = at once)"},
		{"trunk set: bad min-links", func(c *Config) error {
			return c.SetTrunk("trunk0", TrunkSettings{MinLinks: ptr(65)})
		}, "trunk0: set: min-links 65 out of range (0 to 64)"},
		{"trunk create: bad min-links", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{MinLinks: ptr(-1)}, TrunkCreation{}, editHost)
		}, "t9: min-links -1 out of range (0 to 64)"},
		{"trunk create: bad queue", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{}, TrunkCreation{Queue: TrunkQueue{TxQueueDelay: 1001}}, editHost)
		}, "t9: tx-queue-delay 1001 out of range (0 to 1000 ms, 0 = 20 ms)"},
		{"trunk port: nothing", func(c *Config) error { return c.SetTrunkPort("trunk0", "eth4", nil, nil) }, "trunk0: port eth4: nothing to change (give --priority or --lacp-port-priority)"},
		{"trunk port: no such trunk", func(c *Config) error { return c.SetTrunkPort("nope", "eth4", ptr(1), nil) }, "nope: no such trunk"},
		{"trunk port: not a port", func(c *Config) error { return c.SetTrunkPort("trunk0", "eth5", ptr(1), nil) }, "trunk0: port eth5: not a port"},
		{"trunk port: priority too large", func(c *Config) error {
			return c.SetTrunkPort("trunk0", "eth4", ptr(65536), nil)
		}, "trunk0: port eth4: priority 65536 out of range (0 to 65535)"},
		{"trunk port: LACP port priority too large, with a good priority", func(c *Config) error {
			return c.SetTrunkPort("trunk0", "eth4", ptr(1), ptr(65536))
		}, "trunk0: port eth4: lacp-port-priority 65536 out of range (0 to 65535)"},
		{"stp: nothing", func(c *Config) error { return c.SetSTP("br1", STPChange{}) }, "br1: stp: nothing to change (give on, off or an option)"},
		{"stp: no such bridge", func(c *Config) error { return c.SetSTP("nope", STPChange{On: ptr(true)}) }, "nope: no such bridge"},
		{"stp: bad proto", func(c *Config) error { return c.SetSTP("br1", STPChange{Proto: ptr("mstp")}) }, `br1: stp: protocol "mstp": want rstp or stp`},
		{"stp: priority", func(c *Config) error { return c.SetSTP("br1", STPChange{Priority: ptr(100)}) }, "br1: stp: priority 100: want 0-61440 in steps of 4096"},
		{"stp: maxage against fwddelay", func(c *Config) error { return c.SetSTP("br1", STPChange{MaxAge: ptr(30)}) },
			"br1: stp: maxage 30 with fwddelay 15: want maxage <= 2 x (fwddelay - 1) = 28"},
		{"stp: fwddelay against maxage", func(c *Config) error { return c.SetSTP("br1", STPChange{FwdDelay: ptr(4)}) },
			"br1: stp: maxage 20 with fwddelay 4: want maxage <= 2 x (fwddelay - 1) = 6"},
		{"port: bad ptp", func(c *Config) error {
			return c.SetPort("bridge0", "eth1", PortChange{STP: PortSTPChange{PTP: ptr("yes")}})
		}, `bridge0: port eth1: stp: ptp "yes": want auto, on or off`},
		{"port: ifpriority", func(c *Config) error {
			return c.SetPort("bridge0", "eth1", PortChange{Stack: ptr(true), STP: PortSTPChange{IfPriority: ptr(8)}})
		}, "bridge0: port eth1: ifpriority 8: want 0-240 in steps of 16"},
		{"port: storm-limit", func(c *Config) error {
			return c.SetPort("bridge0", "eth1", PortChange{BPDUGuard: ptr(true), StormLimit: ptr(100000001)})
		}, "bridge0: port eth1: storm-limit 100000001: want 0 (off) to 100000000 packets per second"},
		{"port: ifcost", func(c *Config) error {
			return c.SetPort("bridge0", "eth1", PortChange{STP: PortSTPChange{IfCost: ptr(-5)}})
		}, "bridge0: port eth1: ifcost -5: want 1-200000000, or 0 for the cost of the link speed"},
		{"set: fwd-mask LACP", func(c *Config) error { return c.SetBridge("br1", ptr(10), nil, ptr(uint16(0x0004))) },
			"br1: set: fwd-mask 0x0004: bit 2 (slow protocols: LACP and marker, 01:80:c2:00:00:02) cannot be forwarded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := editBase()
			err := tt.edit(c)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("expected error %q, got %v", tt.want, err)
			}
			if !reflect.DeepEqual(c, editBase()) {
				t.Errorf("a refused edit changed the configuration:\nexpected %+v\ngot      %+v", editBase(), c)
			}
		})
	}
}

func TestEdits(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *Config) error
		// want changes editBase() into the expected result.
		want func(c *Config)
	}{
		{"create", func(c *Config) error { return c.CreateBridge("br2", false, editHost) }, func(c *Config) {
			c.Bridges = append(c.Bridges, NewBridge("br2"))
		}},
		{"destroy", func(c *Config) error { return c.DestroyBridge("bridge0") }, func(c *Config) {
			c.Bridges = c.Bridges[1:]
		}},
		{"add an interface and a trunk", func(c *Config) error { return c.AddPorts("br1", []string{"eth8", "trunk0"}, editHost) }, func(c *Config) {
			c.Bridges[1].Ports = []Port{NewPort("eth8"), NewPort("trunk0")}
		}},
		{"del takes the member's statics", func(c *Config) error { return c.DelPorts("bridge0", []string{"eth1", "trunk1"}) }, func(c *Config) {
			c.Bridges[0].Ports = []Port{NewPort("eth2")}
			c.Bridges[0].Statics = c.Bridges[0].Statics[1:]
		}},
		{"static move replaces the same address and VLAN", func(c *Config) error {
			return c.MoveStatic("bridge0", Static{MAC: mac("02:aa:00:00:00:01"), VLAN: 10, Port: "eth1"})
		}, func(c *Config) {
			c.Bridges[0].Statics[1].Port = "eth1"
		}},
		{"static again on the same member changes nothing", func(c *Config) error {
			return c.AddStatic("bridge0", Static{MAC: mac("02:aa:00:00:00:01"), VLAN: 10, Port: "eth2"})
		}, func(c *Config) {}},
		{"deladdr in one VLAN", func(c *Config) error {
			return c.DelStatics("bridge0", mac("02:aa:00:00:00:01"), ptr(uint16(10)))
		}, func(c *Config) {
			c.Bridges[0].Statics = c.Bridges[0].Statics[:1]
		}},
		{"deladdr in every VLAN", func(c *Config) error { return c.DelStatics("bridge0", mac("02:aa:00:00:00:01"), nil) }, func(c *Config) {
			c.Bridges[0].Statics = []Static{}
		}},
		{"deladdr of a learned address changes nothing", func(c *Config) error {
			return c.DelStatics("bridge0", mac("02:aa:00:00:00:09"), nil)
		}, func(c *Config) {}},
		{"flush keeps statics", func(c *Config) error { return c.Flush("bridge0", "", false) }, func(c *Config) {}},
		{"flush --all", func(c *Config) error { return c.Flush("bridge0", "", true) }, func(c *Config) {
			c.Bridges[0].Statics = nil
		}},
		{"flush --port keeps statics", func(c *Config) error { return c.Flush("bridge0", "eth2", false) }, func(c *Config) {}},
		{"flush --all --port", func(c *Config) error { return c.Flush("bridge0", "eth2", true) }, func(c *Config) {
			c.Bridges[0].Statics = c.Bridges[0].Statics[:1]
		}},
		{"set", func(c *Config) error { return c.SetBridge("br1", ptr(0), ptr(16), nil) }, func(c *Config) {
			c.Bridges[1].Timeout, c.Bridges[1].MaxAddr = 0, 16
		}},
		{"port flags", func(c *Config) error {
			return c.SetPort("bridge0", "eth2", PortChange{Learning: ptr(false), BlockNonIP: ptr(true), Stack: ptr(true), Promisc: ptr(false)})
		}, func(c *Config) {
			p := &c.Bridges[0].Ports[1]
			p.Learning, p.BlockNonIP, p.Stack, p.NoPromisc = false, true, true, true
		}},
		{"port storm-limit and bpdu-guard", func(c *Config) error {
			return c.SetPort("bridge0", "eth2", PortChange{StormLimit: ptr(500), BPDUGuard: ptr(true)})
		}, func(c *Config) {
			p := &c.Bridges[0].Ports[1]
			p.StormLimit, p.BPDUGuard = 500, true
		}},
		{"addspan", func(c *Config) error { return c.AddSpan("br1", "eth8", editHost) }, func(c *Config) {
			c.Bridges[1].Spans = []string{"eth8"}
		}},
		{"delspan", func(c *Config) error { return c.DelSpan("bridge0", "eth3") }, func(c *Config) {
			c.Bridges[0].Spans = []string{}
		}},
		{"trunk create takes its first port's MAC", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{Proto: ptr("lacp"), Hash: ptr("l4,l2")}, TrunkCreation{Promisc: true, Ports: []string{"eth7", "eth8"}}, editHost)
		}, func(c *Config) {
			t := NewTrunk("t9")
			t.Proto, t.Hash, t.Promisc, t.LLAddr = "lacp", "l2,l4", true, mac("02:00:00:00:00:07")
			t.Ports = []TrunkPort{NewTrunkPort("eth7"), NewTrunkPort("eth8")}
			c.Trunks = append(c.Trunks, t)
		}},
		{"trunk create with its MAC, LACP settings and port priorities", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{Proto: ptr("lacp"), LACPSystemPriority: ptr(0), LACPKey: ptr(7)},
				TrunkCreation{LLAddr: mac("02:5e:00:00:00:09"), Ports: []string{"eth7", "eth8"}, Priority: ptr(5), LACPPortPriority: ptr(100)}, editHost)
		}, func(c *Config) {
			t := NewTrunk("t9")
			t.Proto, t.LACPSystemPriority, t.LACPKey, t.LLAddr = "lacp", 0, 7, mac("02:5e:00:00:00:09")
			t.Ports = []TrunkPort{{Name: "eth7", Priority: 5, LACPPortPriority: 100}, {Name: "eth8", Priority: 5, LACPPortPriority: 100}}
			c.Trunks = append(c.Trunks, t)
		}},
		{"trunk destroy", func(c *Config) error { return c.DestroyTrunk("trunk0") }, func(c *Config) {
			c.Trunks = c.Trunks[1:]
		}},
		{"trunk add with priorities", func(c *Config) error {
			return c.AddTrunkPorts("trunk0", []string{"eth8"}, ptr(10), ptr(0), editHost)
		}, func(c *Config) {
			c.Trunks[0].Ports = append(c.Trunks[0].Ports, TrunkPort{Name: "eth8", Priority: 10})
		}},
		{"trunk del", func(c *Config) error { return c.DelTrunkPorts("trunk0", []string{"eth4"}) }, func(c *Config) {
			c.Trunks[0].Ports = []TrunkPort{}
		}},
		{"trunk set", func(c *Config) error {
			return c.SetTrunk("trunk0", TrunkSettings{LACPMode: ptr("passive"), LACPTimeout: ptr("fast"), LACPSystemPriority: ptr(1), LACPKey: ptr(2)})
		}, func(c *Config) {
			t := &c.Trunks[0]
			t.LACPMode, t.LACPTimeout, t.LACPSystemPriority, t.LACPKey = "passive", "fast", 1, 2
		}},
		{"trunk create with a link policy", func(c *Config) error {
			return c.CreateTrunk("t9", TrunkSettings{UpDelay: ptr(100), DownDelay: ptr(50), MinLinks: ptr(2), Preempt: ptr(false)}, TrunkCreation{Ports: []string{"eth7"}}, editHost)
		}, func(c *Config) {
			t := NewTrunk("t9")
			t.LLAddr, t.Ports = mac("02:00:00:00:00:07"), []TrunkPort{NewTrunkPort("eth7")}
			t.UpDelay, t.DownDelay, t.MinLinks, t.NoPreempt = 100, 50, 2, true
			c.Trunks = append(c.Trunks, t)
		}},
		{"trunk set link policy", func(c *Config) error {
			return c.SetTrunk("trunk0", TrunkSettings{UpDelay: ptr(MaxDelay), DownDelay: ptr(0), MinLinks: ptr(MaxMinLinks), Preempt: ptr(false)})
		}, func(c *Config) {
			t := &c.Trunks[0]
			t.UpDelay, t.MinLinks, t.NoPreempt = MaxDelay, MaxMinLinks, true
		}},
		{"trunk set preempt on again", func(c *Config) error {
			c.Trunks[0].NoPreempt = true
			return c.SetTrunk("trunk0", TrunkSettings{Preempt: ptr(true)})
		}, func(c *Config) {}},
		{"trunk port priority", func(c *Config) error { return c.SetTrunkPort("trunk0", "eth4", ptr(65535), nil) }, func(c *Config) {
			c.Trunks[0].Ports[0].Priority = 65535
		}},
		{"trunk port LACP port priority 0", func(c *Config) error { return c.SetTrunkPort("trunk0", "eth4", nil, ptr(0)) }, func(c *Config) {
			c.Trunks[0].Ports[0].LACPPortPriority = 0
		}},
		{"stp on", func(c *Config) error { return c.SetSTP("br1", STPChange{On: ptr(true)}) }, func(c *Config) {
			s := DefaultSTP()
			s.On = true
			c.Bridges[1].STP = &s
		}},
		{"stp options keep it off", func(c *Config) error {
			return c.SetSTP("br1", STPChange{Proto: ptr("stp"), Priority: ptr(0), HelloTime: ptr(1), FwdDelay: ptr(4), MaxAge: ptr(6), HoldCount: ptr(1)})
		}, func(c *Config) {
			c.Bridges[1].STP = &STP{Proto: stp.STP, Priority: 0, HelloTime: 1, FwdDelay: 4, MaxAge: 6, HoldCount: 1}
		}},
		{"stp back to the defaults", func(c *Config) error {
			if err := c.SetSTP("br1", STPChange{On: ptr(true), Priority: ptr(4096)}); err != nil {
				return err
			}
			return c.SetSTP("br1", STPChange{On: ptr(false), Priority: ptr(32768)})
		}, func(c *Config) {}},
		{"port stp settings", func(c *Config) error {
			return c.SetPort("bridge0", "eth2", PortChange{STP: PortSTPChange{
				STP: ptr(false), Edge: ptr(true), AutoEdge: ptr(false), PTP: ptr("off"), IfPriority: ptr(240), IfCost: ptr(1),
			}})
		}, func(c *Config) {
			c.Bridges[0].Ports[1].STP = &PortSTP{Edge: true, PTP: stp.PTPOff, Priority: 240, Cost: 1}
		}},
		{"port stp and flags at once", func(c *Config) error {
			return c.SetPort("bridge0", "trunk1", PortChange{Stack: ptr(true), STP: PortSTPChange{IfCost: ptr(20000)}})
		}, func(c *Config) {
			p := &c.Bridges[0].Ports[2]
			p.Stack = true
			p.STP = &PortSTP{Enabled: true, AutoEdge: true, Priority: 128, Cost: 20000}
		}},
		{"fwd-mask", func(c *Config) error { return c.SetBridge("br1", nil, nil, ptr(uint16(0x4008))) }, func(c *Config) {
			c.Bridges[1].FwdMask = 0x4008
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := editBase(), editBase()
			if err := tt.edit(got); err != nil {
				t.Fatalf("expected no error, got %v", err)
			}
			tt.want(want)
			if got.Validate() != nil {
				t.Errorf("the edited configuration does not validate: %v", got.Validate())
			}
			if string(got.Format()) != string(want.Format()) {
				t.Errorf("expected:\n%s\ngot:\n%s", want.Format(), got.Format())
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := editBase()
	n := c.Clone()
	if !reflect.DeepEqual(c, n) {
		t.Fatalf("Clone:\nexpected %+v\ngot      %+v", c, n)
	}
	n.Bridges[0].Ports[0].Learning = false
	n.Bridges[0].Spans[0] = "x"
	n.Bridges[0].Statics[0].VLAN = 3
	n.Trunks[0].Ports[0].Priority = 9
	if !reflect.DeepEqual(c, editBase()) {
		t.Errorf("changing the clone changed the original: %+v", c)
	}
}

func TestChooseAddrs(t *testing.T) {
	c := editBase()
	c.Trunks[0].LLAddr, c.Bridges[0].LocalMAC = [6]byte{}, [6]byte{}
	if !c.ChooseAddrs(editHost) {
		t.Fatalf("ChooseAddrs with a trunk and a TAP without MAC: expected true, got false")
	}
	if got := c.Trunks[0].LLAddr; got != mac("02:00:00:00:00:04") {
		t.Errorf("trunk0's MAC: expected its first port's 02:00:00:00:00:04, got %s", got)
	}
	if got := c.Bridges[0].LocalMAC; got.IsZero() || got.IsMulticast() || got[0]&0x02 == 0 {
		t.Errorf("bridge0's TAP MAC: expected a locally administered unicast MAC, got %s", got)
	}
	if c.ChooseAddrs(editHost) {
		t.Errorf("ChooseAddrs with every MAC chosen: expected false, got true")
	}
}

func TestPending(t *testing.T) {
	old, next := &Config{Bridges: []Bridge{NewBridge("old")}}, &Config{Bridges: []Bridge{NewBridge("new")}}
	tests := []struct {
		name string
		// finish commits or discards the pending file.
		finish  func(p *Pending) error
		wantErr bool
		want    *Config
	}{
		{"commit", (*Pending).Commit, false, next},
		{"discard", func(p *Pending) error { p.Discard(); return nil }, false, old},
		{"rename fails", func(p *Pending) error {
			// A directory where the file was: the rename fails.
			if err := os.Remove(p.path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(p.path, 0o755); err != nil {
				t.Fatal(err)
			}
			err := p.Commit()
			if errors.Is(err, ErrDirSync) {
				t.Errorf("a failed rename reported as a failed directory sync: %v", err)
			}
			os.Remove(p.path)
			if err := old.WriteFile(p.path); err != nil {
				t.Fatal(err)
			}
			return err
		}, true, old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "swctl.conf")
			if err := old.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			p, err := next.WritePending(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := Load(path); err != nil || !reflect.DeepEqual(got, old) {
				t.Errorf("before Commit: expected the old file, got %+v (%v)", got, err)
			}
			if err := tt.finish(p); (err != nil) != tt.wantErr {
				t.Errorf("expected an error: %v, got %v", tt.wantErr, err)
			}
			if got, err := Load(path); err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("file: expected %+v, got %+v (%v)", tt.want, got, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory: expected only swctl.conf, got %d entries", len(entries))
			}
		})
	}
}

// A renamed interface keeps its place under its new name; a rename that
// would clash with a name in use is not followed.
func TestRenameIface(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		// want changes editBase() into the expected result; nil when the
		// rename is not followed.
		want func(c *Config)
	}{
		{"member and its static", "eth1", "up1", func(c *Config) {
			c.Bridges[0].Ports[0].Name = "up1"
			c.Bridges[0].Statics[0].Port = "up1"
		}},
		{"span port", "eth3", "mirror0", func(c *Config) { c.Bridges[0].Spans[0] = "mirror0" }},
		{"trunk port", "eth4", "lag0a", func(c *Config) { c.Trunks[0].Ports[0].Name = "lag0a" }},
		{"not configured", "eth9", "up9", nil},
		{"to a member's name", "eth1", "eth2", nil},
		{"to a trunk port's name", "eth1", "eth4", nil},
		{"to a bridge's name", "eth1", "br1", nil},
		{"to a trunk's name", "eth1", "trunk0", nil},
		{"a trunk itself", "trunk1", "lag1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, want := editBase(), editBase()
			if tt.want != nil {
				tt.want(want)
			}
			if got := c.RenameIface(tt.old, tt.new); got != (tt.want != nil) {
				t.Fatalf("RenameIface(%s, %s) = %v, want %v", tt.old, tt.new, got, tt.want != nil)
			}
			if !reflect.DeepEqual(c, want) {
				t.Errorf("after RenameIface(%s, %s):\n got  %s\n want %s", tt.old, tt.new, c.Format(), want.Format())
			}
			if err := c.Validate(); err != nil {
				t.Errorf("the renamed configuration does not validate: %v", err)
			}
		})
	}
}
