package bsdimport

import (
	"bytes"
	"strings"
	"testing"
)

// checkResult checks what Result returns for any input: a configuration
// the daemon reads back as written, or an error; and notes that point at
// a line of a file that was read.
func checkResult(t *testing.T, im *Importer, lines map[string]int) {
	c, notes, err := im.Result()
	if err == nil {
		checkRoundTrip(t, c)
	}
	for _, n := range notes {
		max, ok := lines[n.File]
		if !ok || n.Line < 1 || n.Line > max {
			t.Fatalf("note %q: expected a line of a file read (%v)", n, lines)
		}
		if n.Reason == "" {
			t.Fatalf("note %q: expected a reason", n)
		}
	}
}

// lineCount counts the lines of data as bufio.Scanner does.
func lineCount(data []byte) int {
	return bytes.Count(data, []byte("\n")) + 1
}

// FuzzHostnameIf feeds arbitrary hostname.if files of every kind of
// interface to the importer.
func FuzzHostnameIf(f *testing.F) {
	for _, seed := range []struct{ name, text string }{
		{"bridge0", "add em0\nadd em1 blocknonip em1 -learn em1\nstatic em0 0:1:2:3:4:5\nstp em0\n"},
		{"veb1", "add em0 addlocal vport0 inet 192.0.2.1 255.255.255.0 NONE\nrule block in on em0\n"},
		{"trunk0", "trunkproto lacp trunkport em1 trunkport em2\nlacpmode passive lacptimeout fast\nlladdr 2:0:0:0:0:1\n"},
		{"aggr0", "trunkport em0 -trunkport em0\ndescription \"a b\" 'c\n!echo\n"},
		{"em0", "up\n"},
		{"bridge2", "maxaddr 0x10 timeout 077 add bridge2 add trunk0\ndel em9 delspan em9\n"},
	} {
		f.Add(seed.name, []byte(seed.text))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		im := New()
		path := "hostname." + name
		if err := im.HostnameIf(bytes.NewReader(data), path); err != nil {
			return
		}
		checkResult(t, im, map[string]int{path: lineCount(data)})
	})
}

// FuzzRCConf feeds arbitrary rc.conf files to the importer; a NUL byte
// splits the input into rc.conf and rc.conf.local.
func FuzzRCConf(f *testing.F) {
	for _, seed := range []string{
		"cloned_interfaces=\"bridge0 lagg0\"\nifconfig_bridge0=\"addm em0 addm lagg0 stp em0 up\"\nifconfig_lagg0=\"laggproto lacp laggport em1 laggport em2\"\n",
		"a='x'\nb=\"$a ${a} \\\" \\\nc\"\nifconfig_bridge1_name=lan0\nifconfig_lan0=\"addm em0 static em0 00:11:22:33:44:55 vlan 5\"\x00cloned_interfaces=\"$cloned_interfaces bridge1\"\n",
		"ifconfig_lagg0=\"laggport em0 192.0.2.1/24 lagghash l2 ether 02:00:00:00:00:01\"\nifconfig_lagg0_alias0=\"inet 192.0.2.2/32\"\nautobridge_interfaces=bridge0\n",
		"ifconfig_bridge0=`date`\nif x; then ifconfig_bridge0=up; fi\nx=\"unterminated\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		im := New()
		lines := map[string]int{}
		for i, part := range bytes.SplitN(data, []byte{0}, 2) {
			path := "rc.conf" + strings.Repeat(".local", i)
			if err := im.RCConf(bytes.NewReader(part), path); err != nil {
				return
			}
			lines[path] = lineCount(part)
		}
		checkResult(t, im, lines)
	})
}
