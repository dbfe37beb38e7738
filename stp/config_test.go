package stp

import (
	"strings"
	"testing"
)

// TestConfigValidate checks the ranges of 802.1D-2004 table 17-1 and the
// relation of 17.14, and that each error names the setting at fault.
func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *Config)
		want string // "" for valid; else a part of the error
	}{
		{"defaults", func(c *Config) {}, ""},
		{"priority 0", func(c *Config) { c.Priority = 0 }, ""},
		{"priority 61440", func(c *Config) { c.Priority = 61440 }, ""},
		{"priority not a multiple of 4096", func(c *Config) { c.Priority = 4097 }, "priority 4097: want 0-61440 in steps of 4096"},
		{"priority 65535", func(c *Config) { c.Priority = 65535 }, "priority 65535"},
		{"hellotime 0", func(c *Config) { c.HelloTime = 0 }, "hellotime 0: want 1-10 s"},
		{"hellotime 11", func(c *Config) { c.HelloTime, c.MaxAge, c.ForwardDelay = 11, 40, 30 }, "hellotime 11: want 1-10 s"},
		{"maxage 5", func(c *Config) { c.MaxAge = 5 }, "maxage 5: want 6-40 s"},
		{"maxage 41", func(c *Config) { c.MaxAge = 41 }, "maxage 41: want 6-40 s"},
		{"fwddelay 3", func(c *Config) { c.ForwardDelay = 3 }, "fwddelay 3: want 4-30 s"},
		{"fwddelay 31", func(c *Config) { c.ForwardDelay = 31 }, "fwddelay 31: want 4-30 s"},
		{"holdcnt 0", func(c *Config) { c.HoldCount = 0 }, "holdcnt 0: want 1-10"},
		{"holdcnt 11", func(c *Config) { c.HoldCount = 11 }, "holdcnt 11: want 1-10"},
		{"protocol 7", func(c *Config) { c.Protocol = 7 }, "protocol 7: want rstp or stp"},
		{"two errors at once", func(c *Config) { c.HelloTime, c.HoldCount = 0, 0 }, "hellotime 0: want 1-10 s\nstp: holdcnt 0"},
		{"maxage = 2 x (fwddelay - 1)", func(c *Config) { c.MaxAge, c.ForwardDelay = 28, 15 }, ""},
		{"maxage > 2 x (fwddelay - 1)", func(c *Config) { c.MaxAge, c.ForwardDelay = 30, 15 },
			"maxage 30 with fwddelay 15: want maxage <= 2 x (fwddelay - 1) = 28"},
		{"maxage = 2 x (hellotime + 1)", func(c *Config) { c.MaxAge, c.HelloTime = 6, 2 }, ""},
		{"maxage < 2 x (hellotime + 1)", func(c *Config) { c.MaxAge, c.HelloTime = 10, 5 },
			"maxage 10 with hellotime 5: want maxage >= 2 x (hellotime + 1) = 12"},
		{"fastest legal timers", func(c *Config) { c.HelloTime, c.MaxAge, c.ForwardDelay = 1, 6, 4 }, ""},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: got error %q, want none", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.want)
		case err != nil && !strings.HasPrefix(err.Error(), "stp: "):
			t.Errorf("%s: error %q does not start with \"stp: \"", tc.name, err)
		}
	}
}

// TestPortConfigValidate checks the port priority and path cost ranges,
// and that AddPort and SetPortConfig name the port in their errors and
// change nothing.
func TestPortConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *PortConfig)
		want string
	}{
		{"defaults", func(c *PortConfig) {}, ""},
		{"priority 0", func(c *PortConfig) { c.Priority = 0 }, ""},
		{"priority 240", func(c *PortConfig) { c.Priority = 240 }, ""},
		{"priority 250", func(c *PortConfig) { c.Priority = 250 }, "port priority 250: want 0-240 in steps of 16"},
		{"priority 100", func(c *PortConfig) { c.Priority = 100 }, "port priority 100"},
		{"path cost 200,000,000", func(c *PortConfig) { c.PathCost = MaxPathCost }, ""},
		{"path cost 200,000,001", func(c *PortConfig) { c.PathCost = MaxPathCost + 1 },
			"path cost 200000001: want 1-200000000, or 0 for the cost of the link speed"},
		{"ptp 3", func(c *PortConfig) { c.PointToPoint = 3 }, "ptp 3: want auto, on or off"},
	}
	for _, tc := range tests {
		c := DefaultPortConfig()
		tc.edit(&c)
		err := c.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got error %v, want %q", tc.name, err, tc.want)
		}
	}
	r := newRig(t, DefaultConfig())
	bad := DefaultPortConfig()
	bad.Priority = 250
	if err := r.b.AddPort(1, "eth1", mac(1), up, bad); err == nil || err.Error() != "stp: add port eth1: port priority 250: want 0-240 in steps of 16" {
		t.Errorf("AddPort with priority 250: got %v", err)
	}
	if len(r.b.Ports()) != 0 {
		t.Errorf("AddPort failed but added a port")
	}
	r.addPort(1, DefaultPortConfig())
	if err := r.b.SetPortConfig(1, bad); err == nil || err.Error() != "stp: set port p1: port priority 250: want 0-240 in steps of 16" {
		t.Errorf("SetPortConfig with priority 250: got %v", err)
	}
	if got := r.port(1).PortID; got != NewPortID(128, 1) {
		t.Errorf("port ID after a refused change: got %s, want 8001", got)
	}
	if err := r.b.SetPortConfig(9, DefaultPortConfig()); err == nil || err.Error() != "stp: set port id 9: not a port" {
		t.Errorf("SetPortConfig of an unknown port: got %v", err)
	}
	if err := r.b.AddPort(1, "again", mac(2), up, DefaultPortConfig()); err == nil || !strings.Contains(err.Error(), "already a port") {
		t.Errorf("AddPort of an existing ID: got %v", err)
	}
}

// TestPathCostForSpeed checks the recommended values of 802.1D-2004
// table 17-3.
func TestPathCostForSpeed(t *testing.T) {
	tests := []struct {
		mbps uint64
		want uint32
	}{
		{0, 2_000_000}, // unknown: as 10 Mb/s
		{1, 20_000_000},
		{10, 2_000_000},
		{100, 200_000},
		{1000, 20_000},
		{10_000, 2_000},
		{25_000, 800},
		{100_000, 200},
		{1_000_000, 20},
		{10_000_000, 2},
		{100_000_000, 1}, // beyond the table: never 0
	}
	for _, tc := range tests {
		if got := PathCostForSpeed(tc.mbps); got != tc.want {
			t.Errorf("PathCostForSpeed(%d Mb/s): got %d, want %d", tc.mbps, got, tc.want)
		}
	}
}

// TestParse checks the settings' parsers and their errors.
func TestParse(t *testing.T) {
	if p, err := ParseProtocol("stp"); p != STP || err != nil {
		t.Errorf("ParseProtocol(stp): got %s, %v", p, err)
	}
	if p, err := ParseProtocol("rstp"); p != RSTP || err != nil {
		t.Errorf("ParseProtocol(rstp): got %s, %v", p, err)
	}
	if _, err := ParseProtocol("mstp"); err == nil || err.Error() != `stp: protocol "mstp": want rstp or stp` {
		t.Errorf("ParseProtocol(mstp): got %v", err)
	}
	for s, want := range map[string]PointToPoint{"auto": PTPAuto, "on": PTPOn, "off": PTPOff} {
		if got, err := ParsePointToPoint(s); got != want || err != nil || got.String() != s {
			t.Errorf("ParsePointToPoint(%s): got %s, %v", s, got, err)
		}
	}
	if _, err := ParsePointToPoint("yes"); err == nil || err.Error() != `stp: ptp "yes": want auto, on or off` {
		t.Errorf("ParsePointToPoint(yes): got %v", err)
	}
}
