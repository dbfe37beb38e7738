package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/swctl/swctl/stp"
)

// TestParseSTP checks the spanning tree statements of a bridge block.
func TestParseSTP(t *testing.T) {
	def, defPort := DefaultSTP(), DefaultPortSTP()
	with := func(f func(s *STP)) *STP { s := def; f(&s); return &s }
	withPort := func(f func(s *PortSTP)) *PortSTP { s := defPort; f(&s); return &s }
	tests := []struct {
		name     string
		text     string
		wantSTP  *STP
		wantMask uint16
		wantPort *PortSTP
	}{
		{"none", "port eth1", nil, 0, nil},
		{"on", "stp on", with(func(s *STP) { s.On = true }), 0, nil},
		{"off with the defaults is the default", "stp off proto rstp priority 32768", nil, 0, nil},
		{"off keeps settings", "stp off priority 4096", with(func(s *STP) { s.Priority = 4096 }), 0, nil},
		{"every option", "stp on proto stp priority 61440 hellotime 1 fwddelay 4 maxage 6 holdcnt 10", &STP{
			On: true, Proto: stp.STP, Priority: 61440, HelloTime: 1, FwdDelay: 4, MaxAge: 6, HoldCount: 10,
		}, 0, nil},
		{"fwd-mask in hex", "fwd-mask 0x4008", nil, 0x4008, nil},
		{"fwd-mask in decimal", "fwd-mask 16384", nil, 0x4000, nil},
		{"port: explicit defaults", "port eth1 stp -edge autoedge ptp auto ifpriority 128 ifcost 0", nil, 0, nil},
		{"port: every setting", "port eth1 -stp edge -autoedge ptp off ifpriority 0 ifcost 200000000", nil, 0,
			&PortSTP{Edge: true, PTP: stp.PTPOff, Cost: stp.MaxPathCost}},
		{"port: mixed with flags", "port eth1 -learning ifcost 2000 stack ptp on", nil, 0,
			withPort(func(s *PortSTP) { s.Cost, s.PTP = 2000, stp.PTPOn })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(strings.NewReader("bridge b1 {\n "+tt.text+"\n}\n"), "swctl.conf")
			if err != nil {
				t.Fatalf("expected no error, got %v", err)
			}
			b := c.Bridge("b1")
			if !reflect.DeepEqual(b.STP, tt.wantSTP) {
				t.Errorf("STP: expected %+v, got %+v", tt.wantSTP, b.STP)
			}
			if b.FwdMask != tt.wantMask {
				t.Errorf("FwdMask: expected 0x%04x, got 0x%04x", tt.wantMask, b.FwdMask)
			}
			var gotPort *PortSTP
			if len(b.Ports) > 0 {
				gotPort = b.Ports[0].STP
			}
			if !reflect.DeepEqual(gotPort, tt.wantPort) {
				t.Errorf("port STP: expected %+v, got %+v", tt.wantPort, gotPort)
			}
			again, err := Parse(strings.NewReader(string(c.Format())), "again")
			if err != nil || !reflect.DeepEqual(again, c) {
				t.Errorf("Format did not round-trip (err %v):\n%s", err, c.Format())
			}
		})
	}
}

// TestParseSTPErrors checks that every bad spanning tree setting is
// refused with its line and its name.
func TestParseSTPErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"stp without on or off", "stp", `swctl.conf:2: want "stp on|off [OPTION VALUE]..."`},
		{"stp yes", "stp yes", `swctl.conf:2: stp: "yes": want on or off`},
		{"unknown option", "stp on speed 10", `swctl.conf:2: stp: unknown option "speed" (want proto, priority, hellotime, fwddelay, maxage or holdcnt)`},
		{"missing value", "stp on priority", `swctl.conf:2: stp: priority: missing value`},
		{"option twice", "stp on maxage 6 maxage 7", `swctl.conf:2: stp: maxage given twice`},
		{"not a number", "stp on hellotime 1s", `swctl.conf:2: stp: hellotime: "1s" is not a number`},
		{"bad proto", "stp on proto mstp", `swctl.conf:2: stp: protocol "mstp": want rstp or stp`},
		{"priority not a step", "stp on priority 4095", `swctl.conf:2: stp: priority 4095: want 0-61440 in steps of 4096`},
		{"priority too large", "stp on priority 65536", `swctl.conf:2: stp: priority 65536: want 0-61440 in steps of 4096`},
		{"hellotime out of range", "stp on hellotime 11", `swctl.conf:2: stp: hellotime 11: want 1-10 s`},
		{"holdcnt out of range", "stp on holdcnt 0", `swctl.conf:2: stp: holdcnt 0: want 1-10 BPDUs a second`},
		{"maxage beyond fwddelay", "stp on fwddelay 4", `swctl.conf:2: stp: maxage 20 with fwddelay 4: want maxage <= 2 x (fwddelay - 1) = 6`},
		{"maxage below hellotime", "stp on hellotime 10 maxage 20", `swctl.conf:2: stp: maxage 20 with hellotime 10: want maxage >= 2 x (hellotime + 1) = 22`},
		{"stp twice", "stp on\n stp off", `swctl.conf:3: stp given twice (first on line 2)`},
		{"fwd-mask bit 0", "fwd-mask 0x0001", `swctl.conf:2: fwd-mask 0x0001: bit 0 (BPDUs, 01:80:c2:00:00:00: they follow the spanning tree setting) cannot be forwarded`},
		{"fwd-mask bit 2", "fwd-mask 0x4004", `swctl.conf:2: fwd-mask 0x4004: bit 2 (slow protocols: LACP and marker, 01:80:c2:00:00:02) cannot be forwarded`},
		{"fwd-mask too wide", "fwd-mask 0x10000", `swctl.conf:2: fwd-mask "0x10000": want a 16-bit mask, such as 0x4000 (LLDP) or 0x0008 (802.1X)`},
		{"fwd-mask without value", "fwd-mask", `swctl.conf:2: want "fwd-mask MASK", got "fwd-mask"`},
		{"port: bad ptp", "port eth1 ptp yes", `swctl.conf:2: port eth1: stp: ptp "yes": want auto, on or off`},
		{"port: -ptp", "port eth1 -ptp", `swctl.conf:2: port eth1: ptp takes a value, not "-"`},
		{"port: ifcost without value", "port eth1 ifcost", `swctl.conf:2: port eth1: ifcost: missing value`},
		{"port: ifpriority not a step", "port eth1 ifpriority 100", `swctl.conf:2: port eth1: ifpriority 100: want 0-240 in steps of 16`},
		{"port: ifcost too large", "port eth1 ifcost 200000001", `swctl.conf:2: port eth1: ifcost 200000001: want 1-200000000, or 0 for the cost of the link speed`},
		{"port: ifcost negative", "port eth1 ifcost -1", `swctl.conf:2: port eth1: ifcost -1: want 1-200000000, or 0 for the cost of the link speed`},
		{"port: edge twice", "port eth1 edge -edge", `swctl.conf:2: port eth1: flag edge given twice`},
		{"port: ifcost not a number", "port eth1 ifcost fast", `swctl.conf:2: port eth1: ifcost: "fast" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader("bridge b0 {\n "+tt.text+"\n}\n"), "swctl.conf")
			if err == nil || err.Error() != tt.want {
				t.Errorf("expected error %q, got %v", tt.want, err)
			}
		})
	}
}

// TestValidateSTP checks that Validate refuses what Parse refuses in a
// configuration built in memory.
func TestValidateSTP(t *testing.T) {
	tests := []struct {
		name   string
		modify func(b *Bridge)
		want   string
	}{
		{"times out of relation", func(b *Bridge) { b.STP = &STP{Priority: 0, HelloTime: 2, FwdDelay: 15, MaxAge: 40, HoldCount: 6} },
			"bridge b0: stp: maxage 40 with fwddelay 15: want maxage <= 2 x (fwddelay - 1) = 28"},
		{"negative priority", func(b *Bridge) { b.STP = &STP{Priority: -4096, HelloTime: 2, FwdDelay: 15, MaxAge: 20, HoldCount: 6} },
			"bridge b0: stp: priority -4096: want 0-61440 in steps of 4096"},
		{"restricted fwd-mask", func(b *Bridge) { b.FwdMask = 0x0002 },
			"bridge b0: fwd-mask 0x0002: bit 1 (MAC control/pause, 01:80:c2:00:00:01) cannot be forwarded"},
		{"port priority", func(b *Bridge) { b.Ports[0].STP = &PortSTP{Enabled: true, Priority: 256} },
			"bridge b0: port eth1: ifpriority 256: want 0-240 in steps of 16"},
		{"port ptp", func(b *Bridge) { b.Ports[0].STP = &PortSTP{Enabled: true, PTP: 3} },
			"bridge b0: port eth1: ptp 3: want auto, on or off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBridge("b0")
			b.Ports = []Port{NewPort("eth1")}
			tt.modify(&b)
			c := &Config{Bridges: []Bridge{b}}
			if err := c.Validate(); err == nil || err.Error() != tt.want {
				t.Errorf("expected error %q, got %v", tt.want, err)
			}
		})
	}
}

// TestCloneCopiesSTP checks that an edit of a clone's spanning tree
// settings leaves the original alone.
func TestCloneCopiesSTP(t *testing.T) {
	c := editBase()
	c.Bridges[0].STP = &STP{On: true, Priority: 4096, HelloTime: 2, FwdDelay: 15, MaxAge: 20, HoldCount: 6}
	c.Bridges[0].Ports[0].STP = &PortSTP{Enabled: true, Priority: 16}
	n := c.Clone()
	n.Bridges[0].STP.Priority = 0
	n.Bridges[0].Ports[0].STP.Priority = 32
	if c.Bridges[0].STP.Priority != 4096 || c.Bridges[0].Ports[0].STP.Priority != 16 {
		t.Errorf("changing the clone changed the original: bridge priority %d (want 4096), port priority %d (want 16)",
			c.Bridges[0].STP.Priority, c.Bridges[0].Ports[0].STP.Priority)
	}
}
