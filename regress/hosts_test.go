package regress

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseHostsConfigExample(t *testing.T) {
	c, err := LoadHostsConfig(filepath.Join("testdata", "example.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		what, got, want string
	}{
		{"dut transport", c.DUT.Transport, "ssh"},
		{"dut host", c.DUT.Host, "root@dut1"},
		{"dut os", c.DUT.OS, "openbsd"},
		{"dut arch", c.DUT.Arch, "amd64"},
		{"dut interfaces", strings.Join(c.DUT.Interfaces, ","), "em1,em2"},
		{"dut addr (none: rate needs none)", strconv.FormatBool(c.DUT.Addr.IsValid()), "false"},
		{"dut workdir", c.DUT.Workdir, "/tmp"},
		{"peer os", c.Peer.OS, "linux"},
		{"peer workdir (default)", c.Peer.Workdir, "/tmp"},
		{"peer interfaces", strings.Join(c.Peer.Interfaces, ","), "ix0,ix1"},
		{"peer arch", c.Peer.Arch, "amd64"},
		// An OpenBSD DUT runs the rate test only (example.conf says why).
		{"tests", strings.Join(c.Tests, ","), "rate"},
	}
	for _, x := range cases {
		if x.got != x.want {
			t.Errorf("example.conf: %s = %q, want %q", x.what, x.got, x.want)
		}
	}
}

func TestParseHostsConfigErrors(t *testing.T) {
	const ok = "[dut]\ntransport = netns\nhost = d\ninterfaces = d0\naddr = 10.0.0.2/24\n[peer]\ntransport = netns\nhost = p\ninterfaces = p0\naddr = 10.0.0.1/24\n"
	// two: two test interfaces on each host, as the rate test needs.
	const two = "[dut]\ntransport = netns\nhost = d\ninterfaces = d0 d1\naddr = 10.0.0.2/24\n[peer]\ntransport = netns\nhost = p\ninterfaces = p0 p1\naddr = 10.0.0.1/24\n"
	cases := []struct {
		name, text string
		wantErr    string // substring; "" = valid
	}{
		{"minimal", ok, ""},
		{"tests order", ok + "[tests]\nrun = bridge0 plain\n", ""},
		{"unknown section", ok + "[switch]\n", "x.conf:11: section [switch]: unknown"},
		{"bad header", "[dut\n", "x.conf:1: section header \"[dut\": missing ']'"},
		{"outside section", "host = d\n", "x.conf:1: key \"host\" outside a section"},
		{"no equals", "[dut]\nhost d\n", "x.conf:2: \"host d\": want key = value"},
		{"unknown key", "[dut]\nuser = root\n", "x.conf:2: [dut] user: unknown key"},
		{"duplicate key", "[dut]\nhost = a\nhost = b\n", "x.conf:3: [dut] host: already given on line 2"},
		{"duplicate section", ok + "[dut]\n", "x.conf:11: section [dut]: already given on line 1"},
		{"bad transport", "[dut]\ntransport = telnet\n", "x.conf:2: [dut] transport \"telnet\": unknown (have ssh, netns)"},
		{"bad os", "[dut]\nos = plan9\n", "x.conf:2: [dut] os \"plan9\": unknown"},
		{"bad addr", "[dut]\naddr = 10.0.0.2\n", "x.conf:2: [dut] addr \"10.0.0.2\": want an IPv4 address with prefix"},
		{"relative workdir", "[dut]\nworkdir = tmp\n", "x.conf:2: [dut] workdir \"tmp\": want an absolute path"},
		{"empty value", "[dut]\nhost =\n", "x.conf:2: [dut] host: empty value"},
		{"unknown test", ok + "[tests]\nrun = plain lacp\n", "x.conf:12: [tests] run: test \"lacp\": unknown (have plain, bridge0, rate)"},
		{"rate", two + "[tests]\nrun = rate\n", ""},
		{"rate without addresses", strings.NewReplacer("addr = 10.0.0.2/24\n", "", "addr = 10.0.0.1/24\n", "").Replace(two) + "[tests]\nrun = rate\n", ""},
		{"rate, one peer interface", strings.Replace(two, "p0 p1", "p0", 1) + "\n[tests]\nrun = plain rate\n", "x.conf:13: [tests] run: test rate: needs two test interfaces on each host"},
		{"rate, one dut interface", ok + "[tests]\nrun = rate\n", "([dut] has 1, [peer] has 1)"},
		{"rate, no peer", strings.Split(two, "[peer]")[0] + "[tests]\nrun = rate\n", "x.conf: section [peer] missing"},
		{"promisc needs addr", strings.Replace(two, "addr = 10.0.0.1/24\n", "", 1) + "[tests]\nrun = rate bridge0\n", "x.conf: [peer] addr: missing"},
		{"missing peer", strings.Split(ok, "[peer]")[0], "x.conf: section [peer] missing"},
		{"missing key", strings.Replace(ok, "host = p\n", "", 1), "x.conf: [peer] host: missing"},
		{"other subnets", strings.Replace(ok, "10.0.0.1/24", "10.0.1.1/24", 1), "want two addresses in one subnet"},
		{"same address", strings.Replace(ok, "10.0.0.1/24", "10.0.0.2/24", 1), "want two addresses in one subnet"},
	}
	for _, c := range cases {
		_, err := ParseHostsConfig("x.conf", strings.NewReader(c.text))
		checkErr(t, c.name, err, c.wantErr)
	}
}

func TestParseHostsConfigDefaultTests(t *testing.T) {
	const conf = "[dut]\ntransport = netns\nhost = d\ninterfaces = %s\naddr = 10.0.0.2/24\n[peer]\ntransport = netns\nhost = p\ninterfaces = %s\naddr = 10.0.0.1/24\n"
	cases := []struct {
		dut, peer, want string
	}{
		{"d0", "p0", "plain,bridge0"},
		{"d0 d1", "p0", "plain,bridge0"},
		{"d0 d1", "p0 p1", "plain,bridge0,rate"},
	}
	for _, c := range cases {
		hc, err := ParseHostsConfig("x.conf", strings.NewReader(fmt.Sprintf(conf, c.dut, c.peer)))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(hc.Tests, ","); got != c.want {
			t.Errorf("no [tests], dut interfaces %q, peer interfaces %q: tests %s, want %s", c.dut, c.peer, got, c.want)
		}
	}
}

func TestParseCPTime(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		goos, file string
		want       CPUTimes
	}{
		// sysctl kern.cp_time on OpenBSD: user,nice,sys,spin,intr,idle.
		{"openbsd", "kern_cp_time_openbsd.txt", CPUTimes{User: 2134118, Nice: 1523, System: 876544 + 12301, IRQ: 45612, Idle: 98765432}},
		// sysctl -n kern.cp_time on OpenBSD: no name.
		{"openbsd", "kern_cp_time_openbsd_n.txt", CPUTimes{User: 2134200, Nice: 1523, System: 876610 + 12305, IRQ: 45620, Idle: 98765690}},
		// sysctl kern.cp_time on FreeBSD: user nice sys intr idle.
		{"freebsd", "kern_cp_time_freebsd.txt", CPUTimes{User: 1188417, Nice: 427, System: 1096440, IRQ: 28427, Idle: 183093592}},
	}
	for _, c := range cases {
		got, err := ParseCPTime(c.goos, read(c.file))
		if err != nil || got != c.want {
			t.Errorf("ParseCPTime(%s, %s) = %+v, %v; want %+v", c.goos, c.file, got, err, c.want)
		}
	}
	// Two OpenBSD readings give percentages like /proc/stat's.
	a, _ := ParseCPTime("openbsd", read("kern_cp_time_openbsd.txt"))
	b, _ := ParseCPTime("openbsd", read("kern_cp_time_openbsd_n.txt"))
	d := CPUDelta(a, b)
	if d.Ticks != 82+66+4+8+258 || d.Interrupts == 0 || d.System == 0 {
		t.Errorf("CPUDelta of two kern.cp_time readings = %+v, want 418 ticks with system and interrupt time", d)
	}
	for _, bad := range []struct{ goos, text, wantErr string }{
		{"openbsd", "1,2,3,4,5", "5 fields"},
		{"freebsd", "1 2 3 4 5 6", "6 fields"},
		{"openbsd", "1,2,x,4,5,6", `field 3 "x"`},
	} {
		if _, err := ParseCPTime(bad.goos, bad.text); err == nil || !strings.Contains(err.Error(), bad.wantErr) {
			t.Errorf("ParseCPTime(%s, %q): error %v, want one containing %q", bad.goos, bad.text, err, bad.wantErr)
		}
	}
}

func TestParsePsCputime(t *testing.T) {
	cases := []struct {
		text    string
		want    uint64
		wantErr bool
	}{
		{"0:00.00\n", 0, false},
		{"  0:01.23", 123, false},
		{"12:34.5", (12*60+34)*100 + 50, false},
		{"1:02:03", (3600 + 2*60 + 3) * 100, false},
		{"2-01:00:00.01", (2*86400+3600)*100 + 1, false},
		{"17", 0, true},
		{"a:b", 0, true},
	}
	for _, c := range cases {
		got, err := ParsePsCputime(c.text)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParsePsCputime(%q) = %d, %v; want %d (error %v)", c.text, got, err, c.want, c.wantErr)
		}
	}
}

func TestHostCommands(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		kind, host string
		args       []string
		want       string
	}{
		{"netns", "swr1dut", []string{"cat", "/proc/stat"}, "ip netns exec swr1dut cat /proc/stat"},
		{"ssh", "root@dut1", []string{"cat", "/proc/stat"}, "ssh -o BatchMode=yes -T root@dut1 -- cat /proc/stat"},
		{"ssh", "dut1", []string{"sh", "-c", `echo $$; exec "$@"`, "it's"}, `ssh -o BatchMode=yes -T dut1 -- sh -c 'echo $$; exec "$@"' 'it'\''s'`},
	}
	for _, c := range cases {
		h := &Host{Conf: HostConfig{Role: "dut", Transport: c.kind, Host: c.host}, cmds: &Commands{}}
		cmd := h.Command(ctx, c.args...)
		got := strings.Join(append([]string{filepath.Base(cmd.Path)}, cmd.Args[1:]...), " ")
		if got != c.want {
			t.Errorf("%s %s: command\ngot  %s\nwant %s", c.kind, c.host, got, c.want)
		}
	}
	if _, err := ParseHostsConfig("x.conf", strings.NewReader("[dut]\ntransport = rsh\nhost = h\n")); err == nil || !strings.Contains(err.Error(), `"rsh"`) {
		t.Errorf("regress.conf with transport rsh: error %v, want one naming rsh", err)
	}
}

// A change whose command fails is not put back, unless the run's context
// ended while it ran: then it may have taken effect before the command
// was killed, and its undo is recorded all the same.
func TestHostBedChangeInterrupted(t *testing.T) {
	h := &Host{Conf: HostConfig{Role: "dut", Transport: "netns", Host: "swctl-no-such-ns", OS: "linux"}, cmds: &Commands{}}
	b := &testbed{}
	if err := b.change(context.Background(), h.run, []string{"true"}, []string{"false"}); err == nil || len(b.changes) != 0 {
		t.Errorf("failed change: error %v, %d undo steps recorded; want an error and none", err, len(b.changes))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.change(ctx, h.run, []string{"true"}, []string{"false"}); err == nil || len(b.changes) != 1 {
		t.Errorf("interrupted change: error %v, %d undo steps recorded; want an error and one", err, len(b.changes))
	}
}

// promiscuity reads the count from ip -d link show on the host and
// leaves out links without a readable count; a host that is not Linux
// has none. The commands run a stand-in for ip.
func TestPromiscuity(t *testing.T) {
	bin := t.TempDir()
	script := `#!/bin/sh
case "$*" in
*"show d0") echo '2: d0@if3: <BROADCAST,MULTICAST,PROMISC,UP> mtu 1500
    link/ether 02:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 1 allmulti 0 minmtu 68
    veth addrgenmode eui64' ;;
*"show d1") echo '3: d1@if4: <BROADCAST,MULTICAST,UP> mtu 1500
    link/ether 02:00:00:00:00:02 brd ff:ff:ff:ff:ff:ff promiscuity 0 allmulti 0' ;;
*"show d2") echo '4: d2: <BROADCAST,MULTICAST,UP> mtu 1500' ;; # no count
*) echo "Cannot find device" >&2; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "ip"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	links := []string{"d0", "d1", "d2", "gone"}
	h := &Host{Conf: HostConfig{Transport: "netns", Host: "d", OS: "linux"}, cmds: &Commands{}}
	b := &testbed{dutHost: h, links: links}
	got := b.promiscuity(context.Background())
	if want := map[string]int{"d0": 1, "d1": 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("promiscuity = %v, want %v (links without a readable count left out)", got, want)
	}
	h.Conf.OS = "openbsd"
	if got := b.promiscuity(context.Background()); got != nil {
		t.Errorf("promiscuity on openbsd = %v, want nil", got)
	}
}

// TestSuitesHostSetups: with real test hosts, -setups names the
// real-host setups (plain, bridge0), not the netns testbed's.
func TestSuitesHostSetups(t *testing.T) {
	cfg := Config{Runs: 1, Seconds: 1, Alpha: 0.05, Setups: []string{"plain"}, Stderr: io.Discard,
		Hosts: &HostsConfig{Tests: []string{"plain", "bridge0"}}}
	suites, err := cfg.suites()
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != 1 {
		t.Fatalf("%d suites, want the real-host suite alone", len(suites))
	}
	hs, ok := suites[0].(hostsSuite)
	if !ok || len(hs.setups) != 1 || hs.setups[0].Name != "plain" {
		t.Errorf("suite %+v, want the real-host suite with setup plain", suites[0])
	}
	cfg.Setups = []string{"veth"}
	if _, err := cfg.suites(); err == nil || !strings.Contains(err.Error(), `setup "veth": not a real-host test`) {
		t.Errorf("setup veth with real hosts: error %v, want it named as not a real-host test", err)
	}
}
