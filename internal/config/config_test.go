package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/swctl/swctl/frame"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func mac(s string) frame.MAC {
	m, err := frame.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// sample is a configuration using every feature.
func sample() *Config {
	return &Config{Bridges: []Bridge{
		{
			Name: "bridge0", Local: true, LocalMAC: mac("02:5e:00:12:34:56"),
			Timeout: 240, MaxAddr: 8192,
			Ports: []Port{
				{Name: "eth1", Learning: true, Discover: true},
				{Name: "eth2", Learning: false, Discover: true, BlockNonIP: true, Stack: true},
				{Name: "eth4", Learning: true, Discover: false},
			},
			Spans: []string{"eth3"},
			Statics: []Static{
				{MAC: mac("02:00:00:00:00:01"), Port: "eth1"},
				{MAC: mac("02:00:00:00:00:01"), VLAN: 10, Port: "eth2"},
			},
		},
		{Name: "br1", Local: true, Timeout: 0, MaxAddr: 100, Ports: []Port{{Name: "veth-a", Learning: true, Discover: true}}},
		{Name: "empty", Timeout: 240, MaxAddr: 8192},
	}}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want *Config
	}{
		{"empty file", "", &Config{}},
		{"only comments", "# nothing\n   # here\n\n", &Config{}},
		{"defaults", "bridge b0 {\n}\n", &Config{Bridges: []Bridge{NewBridge("b0")}}},
		{"one line", "bridge b0 { timeout 10; maxaddr 5 }", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 10, MaxAddr: 5}}}},
		{"brace attached", "bridge b0{\nport eth1}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}}}}},
		{"local without MAC", "bridge b0 {\n local\n}", &Config{Bridges: []Bridge{{Name: "b0", Local: true, Timeout: 240, MaxAddr: 8192}}}},
		{"timeout 0 means never", "bridge b0 {\n timeout 0\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 0, MaxAddr: 8192}}}},
		{"explicit default flags", "bridge b0 {\n port eth1 learning discover -blocknonip -stack\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}}}}},
		{"flags off and on", "bridge b0 {\n port eth1 -learning -discover blocknonip stack\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{{Name: "eth1", BlockNonIP: true, Stack: true}}}}}},
		{"static before its port", "bridge b0 {\n static 02:00:00:00:00:01 eth1 vlan 0\n port eth1\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}, Statics: []Static{{MAC: mac("02:00:00:00:00:01"), Port: "eth1"}}}}}},
		{"static in dash notation with vlan", "bridge b0 {\n port eth1\n static 02-00-00-00-00-01 eth1 vlan 4094\n}", &Config{Bridges: []Bridge{{Name: "b0", Timeout: 240, MaxAddr: 8192, Ports: []Port{NewPort("eth1")}, Statics: []Static{{MAC: mac("02:00:00:00:00:01"), VLAN: 4094, Port: "eth1"}}}}}},
		{"canonical sample", string(sample().Format()), sample()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.text), "swctl.conf")
			if err != nil {
				t.Fatalf("Parse: expected no error, got %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse:\nexpected %+v\ngot      %+v", tt.want, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"unknown statement", "trunk t0 {\n}", `swctl.conf:1: unknown statement "trunk" (want bridge)`},
		{"bridge without block", "bridge b0\n", `swctl.conf:1: want "bridge NAME {", got "bridge b0"`},
		{"bridge without name", "bridge {\n}", `swctl.conf:1: want "bridge NAME {", got "bridge"`},
		{"unclosed block", "\nbridge b0 {\n port eth1\n", `swctl.conf:2: block opened here is not closed by "}"`},
		{"stray close", "}\n", `swctl.conf:1: "}" without a block to close`},
		{"stray open", "{\n}\n", `swctl.conf:1: "{" without a statement before it`},
		{"nested block", "bridge b0 {\n port eth1 {\n }\n}", `swctl.conf:2: port: unexpected block inside bridge b0`},
		{"bridge name too long", "bridge abcdefghijklmnop {\n}", `swctl.conf:1: bridge name "abcdefghijklmnop" is 16 bytes long (at most 15)`},
		{"bridge name with slash", "bridge a/b {\n}", `swctl.conf:1: bridge name "a/b" contains '/'`},
		{"bridge twice", "bridge b0 {\n}\nbridge b0 {\n}", `swctl.conf:3: bridge b0: declared twice (line 1)`},
		{"unknown setting", "bridge b0 {\n learn eth1\n}", `swctl.conf:2: unknown setting "learn" in bridge b0 (want local, timeout, maxaddr, port, span or static)`},
		{"unknown flag", "bridge b0 {\n port eth1\n port eth2 -learning blocknonipp\n}", `swctl.conf:3: port eth2: unknown flag "blocknonipp" (want learning, discover, blocknonip, stack, each optionally prefixed by "-")`},
		{"flag twice", "bridge b0 {\n port eth1 learning -learning\n}", `swctl.conf:2: port eth1: flag learning given twice`},
		{"port without name", "bridge b0 {\n port\n}", `swctl.conf:2: want "port IFACE [FLAG...]"`},
		{"port name too long", "bridge b0 {\n port eth0123456789abc\n}", `swctl.conf:2: port: interface name "eth0123456789abc" is 16 bytes long (at most 15)`},
		{"port twice in a bridge", "bridge b0 {\n port eth1\n port eth1\n}", `swctl.conf:3: port eth1: listed twice (line 2)`},
		{"port in two bridges", "bridge b0 {\n port eth1\n}\nbridge b1 {\n port eth1\n}", `swctl.conf:5: port eth1: already a port of bridge b0 (line 2)`},
		{"port and span", "bridge b0 {\n port eth1\n span eth1\n}", `swctl.conf:3: span eth1: already a port of this bridge (line 2)`},
		{"span then port elsewhere", "bridge b0 {\n span eth1\n}\nbridge b1 {\n port eth1\n}", `swctl.conf:5: port eth1: already a span of bridge b0 (line 2)`},
		{"span with two names", "bridge b0 {\n span eth1 eth2\n}", `swctl.conf:2: want "span IFACE", got "span eth1 eth2"`},
		{"local TAP as a member", "bridge b0 {\n local\n}\nbridge b1 {\n port b0\n}", `swctl.conf:5: bridge b1: port b0: is the local TAP of bridge b0, swctl's own interface`},
		{"local twice", "bridge b0 {\n local\n local\n}", `swctl.conf:3: local given twice (first on line 2)`},
		{"local bad MAC", "bridge b0 {\n local 02:00:00:00:00\n}", `swctl.conf:2: local: "02:00:00:00:00" is not a MAC address (want aa:bb:cc:dd:ee:ff)`},
		{"local multicast MAC", "bridge b0 {\n local 01:00:5e:00:00:01\n}", `swctl.conf:2: local: 01:00:5e:00:00:01 is a multicast or broadcast MAC, not a station address`},
		{"local two words", "bridge b0 {\n local 02:00:00:00:00:01 x\n}", `swctl.conf:2: want "local [MAC]", got "local 02:00:00:00:00:01 x"`},
		{"timeout not a number", "bridge b0 {\n timeout 4m\n}", `swctl.conf:2: timeout: "4m" is not a number`},
		{"timeout negative", "bridge b0 {\n timeout -1\n}", `swctl.conf:2: timeout -1 out of range (0 to 1000000 seconds, 0 = never age)`},
		{"timeout too large", "bridge b0 {\n timeout 1000001\n}", `swctl.conf:2: timeout 1000001 out of range (0 to 1000000 seconds, 0 = never age)`},
		{"timeout twice", "bridge b0 {\n timeout 1\n timeout 2\n}", `swctl.conf:3: timeout given twice (first on line 2)`},
		{"timeout without value", "bridge b0 {\n timeout\n}", `swctl.conf:2: want "timeout NUMBER", got "timeout"`},
		{"maxaddr zero", "bridge b0 {\n maxaddr 0\n}", `swctl.conf:2: maxaddr 0 out of range (1 to 16777216)`},
		{"static bad MAC", "bridge b0 {\n port eth1\n static 02:00:00:00:00:0g eth1\n}", `swctl.conf:3: static: "02:00:00:00:00:0g" is not a MAC address (want aa:bb:cc:dd:ee:ff)`},
		{"static multicast", "bridge b0 {\n port eth1\n static 01:00:00:00:00:01 eth1\n}", `swctl.conf:3: static 01:00:00:00:00:01: 01:00:00:00:00:01 is a multicast or broadcast MAC, not a station address`},
		{"static broadcast", "bridge b0 {\n port eth1\n static ff:ff:ff:ff:ff:ff eth1\n}", `swctl.conf:3: static ff:ff:ff:ff:ff:ff: ff:ff:ff:ff:ff:ff is a multicast or broadcast MAC, not a station address`},
		{"static zero", "bridge b0 {\n port eth1\n static 00:00:00:00:00:00 eth1\n}", `swctl.conf:3: static 00:00:00:00:00:00: the all-zero MAC is not a station address`},
		{"static vlan out of range", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1 vlan 4095\n}", `swctl.conf:3: static 02:00:00:00:00:01: vlan 4095 out of range (0 for untagged, 1 to 4094)`},
		{"static vlan not a number", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1 vlan x\n}", `swctl.conf:3: static 02:00:00:00:00:01: vlan "x" is not a number`},
		{"static wrong shape", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1 10\n}", `swctl.conf:3: want "static MAC IFACE [vlan N]", got "static 02:00:00:00:00:01 eth1 10"`},
		{"static twice", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth1\n static 02:00:00:00:00:01 eth1 vlan 0\n}", `swctl.conf:4: static 02:00:00:00:00:01 vlan 0: listed twice (line 3)`},
		{"static on a non-member", "bridge b0 {\n port eth1\n static 02:00:00:00:00:01 eth2\n}", `swctl.conf:3: static 02:00:00:00:00:01: eth2 is not a port of this bridge`},
		{"static on a span", "bridge b0 {\n port eth1\n span eth3\n static 02:00:00:00:00:01 eth3\n}", `swctl.conf:4: static 02:00:00:00:00:01: eth3 is not a port of this bridge`},
		{"line too long", "bridge b0 {\n" + strings.Repeat("x", maxLineLen+1) + "\n}", `swctl.conf:2: line longer than 65536 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(strings.NewReader(tt.text), "swctl.conf")
			if err == nil {
				t.Fatalf("Parse: expected error %q, got none (config %+v)", tt.want, c)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse error:\nexpected %s\ngot      %s", tt.want, err)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("Parse error: expected an *Error, got %T", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		want   string // "" for no error
	}{
		{"sample is valid", func(c *Config) {}, ""},
		{"empty is valid", func(c *Config) { c.Bridges = nil }, ""},
		{"bad bridge name", func(c *Config) { c.Bridges[2].Name = "with space" }, `bridge name "with space" contains whitespace or a control character`},
		{"duplicate bridge", func(c *Config) { c.Bridges[2].Name = "br1" }, `bridge br1: declared twice`},
		{"local MAC without local", func(c *Config) { c.Bridges[2].LocalMAC = mac("02:00:00:00:00:09") }, `bridge empty: local MAC 02:00:00:00:00:09 set without local`},
		{"bad timeout", func(c *Config) { c.Bridges[0].Timeout = -5 }, `bridge bridge0: timeout -5 out of range (0 to 1000000 seconds, 0 = never age)`},
		{"bad maxaddr", func(c *Config) { c.Bridges[0].MaxAddr = 0 }, `bridge bridge0: maxaddr 0 out of range (1 to 16777216)`},
		{"port in two bridges", func(c *Config) { c.Bridges[2].Ports = []Port{NewPort("eth1")} }, `bridge empty: port eth1: already a port of bridge bridge0`},
		{"span is a port", func(c *Config) { c.Bridges[0].Spans = []string{"eth2"} }, `bridge bridge0: span eth2: already a port of this bridge`},
		{"static on a non-member", func(c *Config) { c.Bridges[0].Statics[0].Port = "eth9" }, `bridge bridge0: static 02:00:00:00:00:01: eth9 is not a port of this bridge`},
		{"local TAP as a member", func(c *Config) { c.Bridges[2].Ports = []Port{NewPort("br1")} }, `bridge empty: port br1: is the local TAP of bridge br1, swctl's own interface`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sample()
			tt.modify(c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate:\nexpected %q\ngot      %q", tt.want, got)
			}
		})
	}
}

func TestFormatGolden(t *testing.T) {
	golden := filepath.Join("testdata", "sample.conf")
	got := sample().Format()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("Format: expected (%s)\n%s\ngot\n%s", golden, want, got)
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    *Config
	}{
		{"empty", &Config{}},
		{"sample", sample()},
		{"every flag combination", func() *Config {
			b := NewBridge("flags")
			for i := range 16 {
				b.Ports = append(b.Ports, Port{Name: "p" + string(rune('a'+i)), Learning: i&1 != 0, Discover: i&2 != 0, BlockNonIP: i&4 != 0, Stack: i&8 != 0})
			}
			return &Config{Bridges: []Bridge{b}}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.c.Format()
			got, err := Parse(strings.NewReader(string(text)), "x.conf")
			if err != nil {
				t.Fatalf("Parse(Format(c)): expected no error, got %v\n%s", err, text)
			}
			if !reflect.DeepEqual(got, tt.c) {
				t.Errorf("Parse(Format(c)):\nexpected %+v\ngot      %+v", tt.c, got)
			}
			if again := got.Format(); string(again) != string(text) {
				t.Errorf("Format(Parse(Format(c))) differs:\nexpected\n%s\ngot\n%s", text, again)
			}
		})
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "none", "swctl.conf"))
	if err != nil {
		t.Fatalf("Load: expected no error for a missing file, got %v", err)
	}
	if len(c.Bridges) != 0 {
		t.Errorf("Load: expected an empty config, got %+v", c)
	}
}

func TestLoadNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "swctl.conf")
	if err := os.WriteFile(path, []byte("bridge b0 {\n bogus\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	want := path + `:2: unknown setting "bogus" in bridge b0 (want local, timeout, maxaddr, port, span or static)`
	if err == nil || err.Error() != want {
		t.Errorf("Load: expected error %q, got %v", want, err)
	}
}

func TestWriteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc", "swctl")
	path := filepath.Join(dir, "swctl.conf")
	for i, c := range []*Config{sample(), {Bridges: []Bridge{NewBridge("b9")}}} {
		if err := c.WriteFile(path); err != nil {
			t.Fatalf("WriteFile #%d: expected no error, got %v", i, err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatalf("Load after WriteFile #%d: %v", i, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("Load after WriteFile #%d:\nexpected %+v\ngot      %+v", i, c, got)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode != 0o644 {
		t.Errorf("mode: expected 0644, got %#o", mode)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory: expected only swctl.conf, got %v", names)
	}
}

func TestWriteFileRefusesInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "swctl.conf")
	c := &Config{Bridges: []Bridge{NewBridge("b0"), NewBridge("b0")}}
	err := c.WriteFile(path)
	want := path + ": not written: bridge b0: declared twice"
	if err == nil || err.Error() != want {
		t.Errorf("WriteFile: expected error %q, got %v", want, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFile: expected no file after a refused write, got stat error %v", err)
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"eth0", ""},
		{"abcdefghijklmno", ""},
		{"veth-a.10@x", ""},
		{"", `interface name is empty`},
		{"abcdefghijklmnop", `interface name "abcdefghijklmnop" is 16 bytes long (at most 15)`},
		{"a b", `interface name "a b" contains whitespace or a control character`},
		{"a\tb", `interface name "a\tb" contains whitespace or a control character`},
		{"a\x01", `interface name "a\x01" contains whitespace or a control character`},
		{"a/b", `interface name "a/b" contains '/'`},
		{"eth0:1", `interface name "eth0:1" contains ':'`},
		{"a#b", `interface name "a#b" contains '#'`},
		{"a{", `interface name "a{" contains '{'`},
		{".", `interface name "." is not allowed`},
		{"..", `interface name ".." is not allowed`},
		{"\xff", `interface name "\xff" contains whitespace or a control character`},
	}
	for _, tt := range tests {
		err := CheckName("interface", tt.name)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckName(%q): expected %q, got %q", tt.name, tt.want, got)
		}
	}
}
