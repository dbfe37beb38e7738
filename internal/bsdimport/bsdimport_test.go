package bsdimport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/config"
)

// input is one file given to an Importer.
type input struct {
	// path is the file's name; "rc.conf" names are read with RCConf,
	// others with HostnameIf.
	path string
	// text is its content.
	text string
}

// runImport imports the inputs and returns the configuration without
// Format's header comment, the notes as strings, and Result's error.
func runImport(t *testing.T, inputs ...input) (string, []string, error) {
	t.Helper()
	im := New()
	for _, in := range inputs {
		read := im.HostnameIf
		if strings.HasPrefix(in.path, "rc.conf") {
			read = im.RCConf
		}
		if err := read(strings.NewReader(in.text), in.path); err != nil {
			t.Fatalf("reading %s: %v", in.path, err)
		}
	}
	c, notes, err := im.Result()
	var got []string
	for _, n := range notes {
		got = append(got, n.String())
	}
	if err != nil {
		return "", got, err
	}
	checkRoundTrip(t, c)
	text := string(c.Format())
	_, body, _ := strings.Cut(text, "\n\n")
	return body, got, nil
}

// checkRoundTrip checks that the daemon reads the formatted configuration
// back as it is.
func checkRoundTrip(t testing.TB, c *config.Config) {
	t.Helper()
	text := c.Format()
	back, err := config.Parse(bytes.NewReader(text), "imported")
	if err != nil {
		t.Fatalf("the daemon refuses the translation: %v\n%s", err, text)
	}
	if again := back.Format(); !bytes.Equal(again, text) {
		t.Fatalf("the translation does not read back as written:\nwritten\n%s\nread back\n%s", text, again)
	}
}

func hostname(name, text string) input { return input{"hostname." + name, text} }

func TestImport(t *testing.T) {
	tests := []struct {
		name      string
		inputs    []input
		wantConf  string
		wantNotes []string
	}{
		{
			name: "OpenBSD bridge members and port flags",
			inputs: []input{hostname("bridge0", `add em0
add em1 add em2 # more members
blocknonip em1
-learn em1
-discover em2
-learn em0 learn em0
`)},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    port em1 -learning blocknonip\n    port em2 -discover\n}\n",
		},
		{
			name:      "OpenBSD del, addspan, span and delspan",
			inputs:    []input{hostname("bridge0", "add em0\nadd em1\ndel em0\naddspan em3\nspan em4\ndelspan em3\n")},
			wantConf:  "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em1\n    span em4\n}\n",
			wantNotes: nil,
		},
		{
			name:     "maxaddr and timeout: decimal, hexadecimal, out of range, not a number",
			inputs:   []input{hostname("bridge0", "maxaddr 0x100 timeout 0\nmaxaddr 0\ntimeout abc\ntimeout 1000001\n")},
			wantConf: "bridge bridge0 {\n    timeout 0\n    maxaddr 256\n}\n",
			wantNotes: []string{
				"hostname.bridge0:2: maxaddr 0: not translated: maxaddr 0 out of range (1 to 16777216)",
				`hostname.bridge0:3: timeout abc: not translated: timeout: "abc" is not a number`,
				"hostname.bridge0:4: timeout 1000001: not translated: timeout 1000001 out of range (0 to 1000000 seconds, 0 = never age)",
			},
		},
		{
			name:     "OpenBSD static: interface then address, as ether_aton reads it",
			inputs:   []input{hostname("bridge0", "add em0\nstatic em0 0:1b:21:3a:4c:5e\nstatic em9 02:00:00:00:00:01\nstatic em0 01:00:5e:00:00:01\nstatic em0 nonsense\n")},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    static 00:1b:21:3a:4c:5e em0\n}\n",
			wantNotes: []string{
				"hostname.bridge0:3: static em9 02:00:00:00:00:01: not translated: em9 is not a port of bridge0 here",
				"hostname.bridge0:4: static em0 01:00:5e:00:00:01: not translated: 01:00:5e:00:00:01 is not a station's address",
				`hostname.bridge0:5: static em0 nonsense: not translated: "nonsense" is not a MAC address`,
			},
		},
		{
			name:      "a flag for an interface that is not a port",
			inputs:    []input{hostname("bridge0", "blocknonip em9\nadd em9\n")},
			wantConf:  "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em9\n}\n",
			wantNotes: []string{"hostname.bridge0:1: blocknonip em9: not translated: em9 is not a port of bridge0 here"},
		},
		{
			name:     "spanning tree words are named and their arguments skipped",
			inputs:   []input{hostname("bridge0", "add em0 stp em0 ifcost em0 55 add em1 spanpriority 0 proto rstp\n-stp em1 ifpriority em1 128 fwddelay 4 hellotime 2 maxage 6 holdcnt 6 edge em1 -autoptp em1\n")},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    port em1\n}\n",
			wantNotes: []string{
				"hostname.bridge0:1: stp em0: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:1: ifcost em0 55: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:1: spanpriority 0: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:1: proto rstp: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: -stp em1: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: ifpriority em1 128: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: fwddelay 4: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: hellotime 2: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: maxage 6: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: holdcnt 6: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: edge em1: not supported yet: swctl has no spanning tree",
				"hostname.bridge0:2: -autoptp em1: not supported yet: swctl has no spanning tree",
			},
		},
		{
			name:      "an unknown word ends the line",
			inputs:    []input{hostname("bridge0", "add em0 frobnicate em1 add em2\nadd em3\n")},
			wantConf:  "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    port em3\n}\n",
			wantNotes: []string{"hostname.bridge0:1: frobnicate em1 add em2: " + reasonUnknown},
		},
		{
			name:     "a host address on a bridge gives it a local TAP; the words after it are read",
			inputs:   []input{hostname("bridge0", "inet 192.0.2.1 255.255.255.0 NONE add em0\ninet6 2001:db8::1 prefixlen 64 alias\n")},
			wantConf: "bridge bridge0 {\n    local\n    timeout 240\n    maxaddr 8192\n    port em0\n}\n",
			wantNotes: []string{
				"hostname.bridge0:1: inet 192.0.2.1 255.255.255.0 NONE: not translated: a host address; swctl gives the host the TAP bridge0 (local): put the address on it with the system's network configuration",
				"hostname.bridge0:2: inet6 2001:db8::1 prefixlen 64 alias: not translated: a host address; swctl gives the host the TAP bridge0 (local): put the address on it with the system's network configuration",
			},
		},
		{
			name:     "shell commands, quotes, missing arguments, descriptions, down, filter rules",
			inputs:   []input{hostname("bridge0", "!/sbin/route add -host 192.0.2.9 127.0.0.1\ndescription \"office LAN\"\nadd 'em0\nadd\ndown\nrule pass in on em0 src 02:00:00:00:00:01\nlink1 up\n")},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n}\n",
			wantNotes: []string{
				"hostname.bridge0:1: !/sbin/route add -host 192.0.2.9 127.0.0.1: not translated: a shell command, run by netstart(8)",
				`hostname.bridge0:2: description "office LAN": ` + reasonDescr,
				"hostname.bridge0:3: add 'em0: not translated: unterminated ' quote",
				"hostname.bridge0:4: add: not translated: add wants 1 more words",
				"hostname.bridge0:5: down: " + reasonDown,
				"hostname.bridge0:6: rule pass in on em0 src 02:00:00:00:00:01: " + reasonRules,
				"hostname.bridge0:7: link1: " + reasonLinkFlags,
			},
		},
		{
			name:     "veb with addlocal",
			inputs:   []input{hostname("veb0", "add em0\naddlocal vport0\n")},
			wantConf: "bridge veb0 {\n    local\n    timeout 240\n    maxaddr 8192\n    port em0\n}\n",
			wantNotes: []string{
				"hostname.veb0:2: addlocal vport0: partly translated: swctl gives the host the TAP veb0 (local) instead of vport0; put vport0's addresses on veb0",
			},
		},
		{
			name: "OpenBSD trunk: protocol, ports, LACP settings, lladdr",
			inputs: []input{hostname("trunk0", `trunkproto lacp trunkport em0 trunkport em1
trunkport em2 -trunkport em1
lacpmode passive lacptimeout fast
lladdr 2:0:0:0:0:7
trunkproto bonding
lacptimeout 3s
lladdr ff:ff:ff:ff:ff:ff
`)},
			wantConf: "trunk trunk0 {\n    proto lacp\n    lladdr 02:00:00:00:00:07\n    hash l2,l3,l4\n    lacp-mode passive\n    lacp-timeout fast\n    lacp-system-priority 32768\n    lacp-key 0\n    port em0\n    port em2\n}\n",
			wantNotes: []string{
				`hostname.trunk0:5: trunkproto bonding: not translated: proto "bonding": want failover, roundrobin, loadbalance, broadcast, lacp or none`,
				`hostname.trunk0:6: lacptimeout 3s: not translated: lacp-timeout "3s": want slow or fast`,
				"hostname.trunk0:7: lladdr ff:ff:ff:ff:ff:ff: not translated: ff:ff:ff:ff:ff:ff is not a station's address",
			},
		},
		{
			name:     "aggr is a lacp trunk",
			inputs:   []input{hostname("aggr0", "trunkport em0 trunkport em1\nlacptimeout fast\ninet 192.0.2.7/24\n")},
			wantConf: "trunk aggr0 {\n    proto lacp\n    hash l2,l3,l4\n    lacp-mode active\n    lacp-timeout fast\n    lacp-system-priority 32768\n    lacp-key 0\n    port em0\n    port em1\n}\n",
			wantNotes: []string{
				"hostname.aggr0:3: inet 192.0.2.7/24: not translated: a host address; put it on the trunk's TAP aggr0 with the system's network configuration",
			},
		},
		{
			name:     "an interface that is not a bridge or trunk: every line noted",
			inputs:   []input{hostname("em0", "up\n# comment\ninet 192.0.2.2/24\n"), hostname("bridge0", "add em0\n")},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n}\n",
			wantNotes: []string{
				"hostname.em0:1: up: not translated: em0 is not a bridge(4), veb(4), trunk(4) or aggr(4) interface",
				"hostname.em0:3: inet 192.0.2.2/24: not translated: em0 is not a bridge(4), veb(4), trunk(4) or aggr(4) interface",
			},
		},
		{
			name:     "an interface in two objects, and swctl's own interfaces as members",
			inputs:   []input{hostname("bridge0", "add em0\nadd trunk0\nadd bridge1\n"), hostname("trunk0", "trunkport em0\ntrunkport em1\ntrunkport bridge0\n"), hostname("bridge1", "add em2\n")},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    port trunk0\n}\n\nbridge bridge1 {\n    timeout 240\n    maxaddr 8192\n    port em2\n}\n\ntrunk trunk0 {\n    proto failover\n    hash l2,l3,l4\n    port em1\n}\n",
			wantNotes: []string{
				"hostname.bridge0:3: bridge1: not translated: bridge bridge1 is swctl's own interface, it cannot be a port of bridge bridge0",
				"hostname.trunk0:1: trunkport em0: not translated: em0 is already a port of bridge bridge0 (hostname.bridge0:1)",
				"hostname.trunk0:3: bridge0: not translated: bridge bridge0 is swctl's own interface, it cannot be a port of trunk trunk0",
			},
		},
		{
			name:      "a static entry whose port left the bridge",
			inputs:    []input{hostname("bridge0", "add em0\nadd em1\nstatic em1 02:00:00:00:00:01\ndel em1\n")},
			wantConf:  "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n}\n",
			wantNotes: []string{"hostname.bridge0:3: static em1 02:00:00:00:00:01: not translated: em1 is no longer a port of bridge0"},
		},
		{
			name: "FreeBSD bridge and lagg",
			inputs: []input{{"rc.conf", `cloned_interfaces="bridge0 lagg0"
ifconfig_lagg0="laggproto loadbalance laggport em2 laggport em3 lagghash l4,l3 use_flowid -lacp_fast_timeout ether 02:00:00:00:00:09 up"
ifconfig_bridge0="addm em0 addm lagg0 span em4 -span em4 static em0 02:00:00:00:00:01 vlan 10 static em0 02:00:00:00:00:02 discover em0 up"
`}},
			wantConf:  "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    port lagg0\n    static 02:00:00:00:00:01 em0 vlan 10\n    static 02:00:00:00:00:02 em0\n}\n\ntrunk lagg0 {\n    proto loadbalance\n    lladdr 02:00:00:00:00:09\n    hash l3,l4\n    port em2\n    port em3\n}\n",
			wantNotes: []string{"rc.conf:2: use_flowid: " + reasonFlowID},
		},
		{
			name: "sh: quotes, expansions, escapes, continuations; a later file wins",
			inputs: []input{
				{"rc.conf", `members='addm em0'
more="addm \
em1"
cloned_interfaces=bridge0
ifconfig_bridge0="${members} $more" # a comment
ifconfig_lagg0="laggport em5
laggport em6 \"up\""
create_args_lagg0='laggproto $proto'
`},
				{"rc.conf.local", "cloned_interfaces=\"$cloned_interfaces lagg0\"\nifconfig_bridge0=\"$ifconfig_bridge0 -learn em1\"\n"},
			},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n    port em1 -learning\n}\n\ntrunk lagg0 {\n    proto failover\n    hash l2,l3,l4\n    port em5\n    port em6\n}\n",
			wantNotes: []string{
				`rc.conf:6: "up": ` + reasonUnknown,
				`rc.conf:8: laggproto $proto: not translated: proto "$proto": want failover, roundrobin, loadbalance, broadcast, lacp or none`,
			},
		},
		{
			name:     "sh the import does not follow is noted where it matters",
			inputs:   []input{{"rc.conf", "ifconfig_em0=`cat /etc/em0`\ncloned_interfaces=\"bridge0\"\nifconfig_bridge0=\"addm $(ls)\"\nif true; then ifconfig_bridge1=up; fi\nifconfig_bridge2=\"addm em3\"; echo\ncreate_args_bridge3=\"addm em4\"\nsshd_enable=YES\n"}},
			wantConf: "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n}\n\nbridge bridge2 {\n    timeout 240\n    maxaddr 8192\n}\n\nbridge bridge3 {\n    timeout 240\n    maxaddr 8192\n    port em4\n}\n",
			wantNotes: []string{
				`rc.conf:3: ifconfig_bridge0="addm $(ls)": not translated: the sh expansion "$(ls)\"", which swctl config import does not follow`,
				"rc.conf:4: if true; then ifconfig_bridge1=up; fi: not translated: sh code, which swctl config import does not run",
				`rc.conf:5: ifconfig_bridge2="addm em3"; echo: not translated: more sh code after the assignment, which swctl config import does not run`,
			},
		},
		{
			name: "FreeBSD rename, alias, descr, autobridge, non-bridge clones",
			inputs: []input{{"rc.conf", `cloned_interfaces="bridge0 tap0 vlan5"
ifconfig_bridge0_name="lan0"
ifconfig_bridge0="addm em9"
ifconfig_lan0="addm em0 sticky em0 ifmaxaddr em0 10 vlanfilter"
ifconfig_lan0_alias0="inet 192.0.2.1/24"
ifconfig_lan0_descr="LAN"
autobridge_interfaces="lan0"
autobridge_lan0="tap*"
`}},
			wantConf: "bridge lan0 {\n    local\n    timeout 240\n    maxaddr 8192\n    port em0\n}\n",
			wantNotes: []string{
				"rc.conf:1: tap0: not translated: not a bridge or lagg; swctl does not create other interfaces",
				"rc.conf:1: vlan5: not translated: not a bridge or lagg; swctl does not create other interfaces",
				`rc.conf:3: ifconfig_bridge0="addm em9": not read: FreeBSD reads the settings of a renamed interface under its new name`,
				"rc.conf:4: sticky em0: " + reasonSticky,
				"rc.conf:4: ifmaxaddr em0 10: " + reasonPortMax,
				"rc.conf:4: vlanfilter: " + reasonVLAN,
				`rc.conf:5: ifconfig_lan0_alias0="inet 192.0.2.1/24": not translated: a host address; swctl gives the host the TAP lan0 (local): put the address on it with the system's network configuration`,
				`rc.conf:6: ifconfig_lan0_descr="LAN": ` + reasonDescr,
				`rc.conf:7: autobridge_interfaces="lan0": not supported: swctl adds members by name, not by pattern; list them in the bridge`,
				`rc.conf:8: autobridge_lan0="tap*": not supported: swctl adds members by name, not by pattern; list them in the bridge`,
			},
		},
		{
			name:     "a lagg with a bare address",
			inputs:   []input{{"rc.conf", "ifconfig_lagg0=\"laggproto lacp laggport em0 lacp_fast_timeout 192.0.2.5/24 rr_limit 4\"\n"}},
			wantConf: "trunk lagg0 {\n    proto lacp\n    hash l2,l3,l4\n    lacp-mode active\n    lacp-timeout fast\n    lacp-system-priority 32768\n    lacp-key 0\n    port em0\n}\n",
			wantNotes: []string{
				"rc.conf:1: 192.0.2.5/24: not translated: a host address; put it on the trunk's TAP lagg0 with the system's network configuration",
				"rc.conf:1: rr_limit 4: " + reasonRRLimit,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, notes, err := runImport(t, tt.inputs...)
			if err != nil {
				t.Fatalf("Result: %v (notes %q)", err, notes)
			}
			if conf != tt.wantConf {
				t.Errorf("configuration:\nexpected\n%s\ngot\n%s", tt.wantConf, conf)
			}
			if strings.Join(notes, "\n") != strings.Join(tt.wantNotes, "\n") {
				t.Errorf("notes:\nexpected\n%s\ngot\n%s", strings.Join(tt.wantNotes, "\n"), strings.Join(notes, "\n"))
			}
		})
	}
}

func TestImportNothing(t *testing.T) {
	tests := []struct {
		name      string
		inputs    []input
		wantNotes []string
	}{
		{"an rc.conf without bridges", []input{{"rc.conf", "sshd_enable=YES\nifconfig_em0=DHCP\n"}}, nil},
		{"only other interfaces", []input{hostname("vether0", "inet 192.0.2.1/24\n")}, []string{
			"hostname.vether0:1: inet 192.0.2.1/24: not translated: vether0 is not a bridge(4), veb(4), trunk(4) or aggr(4) interface",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, notes, err := runImport(t, tt.inputs...)
			if err == nil || !strings.HasPrefix(err.Error(), "no bridge or trunk to import") {
				t.Errorf("Result: expected the error \"no bridge or trunk to import ...\", got %v", err)
			}
			if strings.Join(notes, "\n") != strings.Join(tt.wantNotes, "\n") {
				t.Errorf("notes:\nexpected %q\ngot      %q", tt.wantNotes, notes)
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	long := strings.Repeat("a", MaxLineLen+1)
	tests := []struct {
		name string
		read func(*Importer) error
		want string
	}{
		{"not a hostname.if name", func(im *Importer) error { return im.HostnameIf(strings.NewReader(""), "/etc/bridge0.conf") },
			"/etc/bridge0.conf: not a hostname.if(5) file (want hostname.IFNAME, such as hostname.bridge0)"},
		{"hostname. without a name", func(im *Importer) error { return im.HostnameIf(strings.NewReader(""), "hostname.") },
			"hostname.: not a hostname.if(5) file (want hostname.IFNAME, such as hostname.bridge0)"},
		{"a hostname.if line too long", func(im *Importer) error {
			return im.HostnameIf(strings.NewReader("add em0\n"+long), "hostname.bridge0")
		},
			"hostname.bridge0:2: line longer than 65536 bytes"},
		{"an rc.conf line too long", func(im *Importer) error { return im.RCConf(strings.NewReader(long), "rc.conf") },
			"rc.conf:1: line longer than 65536 bytes"},
		{"an rc.conf statement too long", func(im *Importer) error {
			return im.RCConf(strings.NewReader("x=\""+strings.Repeat(strings.Repeat("b", 1000)+"\n", 70)), "rc.conf")
		}, "rc.conf:1: statement longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.read(New()); err == nil || err.Error() != tt.want {
				t.Errorf("expected the error %q, got %v", tt.want, err)
			}
		})
	}
}

// TestImportExpansionBound checks that sh expansions cannot grow a value
// past MaxLineLen: each doubling is read, the one past the bound noted.
func TestImportExpansionBound(t *testing.T) {
	var rc strings.Builder
	rc.WriteString("a=xxxxxxxxxxxxxxxx\n") // 16 bytes, doubled 11 times: 32 KiB
	for range 11 {
		rc.WriteString("a=\"$a$a\"\n")
	}
	rc.WriteString("cloned_interfaces=\"$a$a bridge0\"\nifconfig_bridge0=\"addm em0\"\n")
	conf, notes, err := runImport(t, input{"rc.conf", rc.String()})
	if err != nil {
		t.Fatalf("Result: %v", err)
	}
	if want := "bridge bridge0 {\n    timeout 240\n    maxaddr 8192\n    port em0\n}\n"; conf != want {
		t.Errorf("configuration:\nexpected\n%s\ngot\n%s", want, conf)
	}
	want := "rc.conf:13: cloned_interfaces=\"$a$a bridge0\": not translated: value longer than 65536 bytes after expansion"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes:\nexpected %q\ngot      %q", want, notes)
	}
}
