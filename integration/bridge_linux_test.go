package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
)

// bridged returns a running testbed with n hosts whose p<i> are members of
// bridge0.
func bridged(t *testing.T, n int, createArgs ...string) *testbed {
	tb := newTestbed(t, n)
	tb.start()
	tb.swctl(append([]string{"bridge", "create", "bridge0"}, createArgs...)...)
	args := []string{"bridge", "add", "bridge0"}
	for i := 1; i <= n; i++ {
		args = append(args, fmt.Sprintf("p%d", i))
	}
	tb.swctl(args...)
	return tb
}

func TestIntegrationBridgeHostsPingAcross(t *testing.T) {
	tb := bridged(t, 3)
	h := tb.hosts
	mustPing(t, h[0], h[1].ip)
	mustPing(t, h[0], h[2].ip)
	mustPing(t, h[1], h[2].ip)
	for i, hh := range h {
		if got, want := tb.portOf("bridge0", hh.mac), fmt.Sprintf("p%d", i+1); got != want {
			t.Errorf("bridge addr: %s learned on %q, want %q", hh.mac, got, want)
		}
	}
	p1 := tb.port("p1")
	if p1.Link != "up" || !p1.Promisc || p1.RxPackets == 0 || p1.TxPackets == 0 {
		t.Errorf("port show p1: want link up, promisc, rx and tx counted; got %+v", p1)
	}
}

func TestIntegrationBridgeLearnsThenStopsFlooding(t *testing.T) {
	tb := bridged(t, 3)
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, tb.hosts[2])

	// s2 is unknown: a frame to it floods to both other hosts.
	s1.send(t, testFrame(s2.mac, s1.mac, 1, 0))
	s2.waitFor(t, 1, "unknown unicast to h2")
	s3.waitFor(t, 1, "unknown unicast flooded to h3")

	// s2 speaks: the bridge learns it on p2.
	s2.send(t, testFrame(s1.mac, s2.mac, 2, 0))
	s1.waitFor(t, 2, "h2 -> h1 (h1 known)")
	if s3.has(2) {
		t.Errorf("frame to h1, learned on p1, also reached h3")
	}
	netnstest.Eventually(t, 5*time.Second, "h2 learned on p2", func() bool { return tb.portOf("bridge0", s2.mac.String()) == "p2" })

	// Now known unicast to s2 reaches s2 only.
	s1.send(t, testFrame(s2.mac, s1.mac, 3, 0))
	s2.waitFor(t, 3, "known unicast to h2")
	s1.barrier(t, 100, s2, s3)
	if s3.has(3) {
		t.Errorf("known unicast to h2 was flooded to h3")
	}
}

func TestIntegrationBridgeStationMoves(t *testing.T) {
	tb := bridged(t, 3)
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, tb.hosts[2])
	roaming := hwaddr("02:aa:00:00:00:01")
	s1.send(t, testFrame(frame.Broadcast, roaming, 1, 0))
	s2.waitFor(t, 1, "roaming station's broadcast")
	netnstest.Eventually(t, 5*time.Second, "roaming station on p1", func() bool { return tb.portOf("bridge0", roaming.String()) == "p1" })
	s3.send(t, testFrame(frame.Broadcast, roaming, 2, 0))
	s2.waitFor(t, 2, "roaming station's broadcast from p3")
	netnstest.Eventually(t, 5*time.Second, "roaming station re-learned on p3", func() bool { return tb.portOf("bridge0", roaming.String()) == "p3" })
	s2.send(t, testFrame(roaming, s2.mac, 3, 0))
	s3.waitFor(t, 3, "unicast to the station's new port")
	s2.barrier(t, 101, s1, s3)
	if s1.has(3) {
		t.Errorf("unicast to the moved station still went to its old port")
	}
}

func TestIntegrationBridgeAgeing(t *testing.T) {
	tb := bridged(t, 2)
	tb.swctl("bridge", "set", "bridge0", "--timeout", "1")
	mustPing(t, tb.hosts[0], tb.hosts[1].ip)
	if tb.portOf("bridge0", tb.hosts[0].mac) != "p1" {
		t.Fatalf("h1 not learned after ping")
	}
	netnstest.Eventually(t, 10*time.Second, "h1's entry aged out after 1s of silence", func() bool {
		return tb.portOf("bridge0", tb.hosts[0].mac) == ""
	})
}

func TestIntegrationBridgeStaticEntries(t *testing.T) {
	tb := bridged(t, 3)
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, tb.hosts[2])
	station := "02:bb:00:00:00:02"
	tb.swctl("bridge", "static", "bridge0", station, "p2")
	s1.send(t, testFrame(hwaddr(station), s1.mac, 1, 0))
	s2.waitFor(t, 1, "frame to a static address")
	s1.barrier(t, 100, s2, s3)
	if s3.has(1) {
		t.Errorf("frame to a static address on p2 was flooded to h3")
	}
	// A static entry never moves.
	s3.send(t, testFrame(frame.Broadcast, hwaddr(station), 2, 0))
	s1.waitFor(t, 2, "broadcast from the static address on another port")
	if got := tb.portOf("bridge0", station); got != "p2" {
		t.Errorf("static entry moved to %q, want it to stay on p2", got)
	}
	// flush keeps it, flush --all removes it.
	tb.swctl("bridge", "flush", "bridge0")
	if got := tb.portOf("bridge0", station); got != "p2" {
		t.Errorf("after flush: static entry on %q, want p2", got)
	}
	tb.swctl("bridge", "flush", "bridge0", "--all")
	if got := tb.portOf("bridge0", station); got != "" {
		t.Errorf("after flush --all: static entry still on %q", got)
	}
}

func TestIntegrationBridgeFlushPort(t *testing.T) {
	tb := bridged(t, 2)
	s1, s2 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1])
	// Stations only these frames come from, so nothing learns them again.
	a, b := "02:ee:00:00:00:01", "02:ee:00:00:00:02"
	s1.send(t, testFrame(frame.Broadcast, hwaddr(a), 1, 0))
	s2.send(t, testFrame(frame.Broadcast, hwaddr(b), 2, 0))
	netnstest.Eventually(t, 10*time.Second, "both stations learned", func() bool {
		return tb.portOf("bridge0", a) == "p1" && tb.portOf("bridge0", b) == "p2"
	})
	tb.swctl("bridge", "flush", "bridge0", "--port", "p1")
	if got := tb.portOf("bridge0", a); got != "" {
		t.Errorf("after flush --port p1: %s still learned on %q", a, got)
	}
	if got := tb.portOf("bridge0", b); got != "p2" {
		t.Errorf("after flush --port p1: %s on %q, want it kept on p2", b, got)
	}
}

func TestIntegrationBridgePortFlags(t *testing.T) {
	tb := bridged(t, 3)
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, tb.hosts[2])

	t.Run("learning off", func(t *testing.T) {
		tb.swctl("bridge", "port", "bridge0", "p1", "--learning", "off")
		s1.send(t, testFrame(frame.Broadcast, s1.mac, 10, 0))
		s2.waitFor(t, 10, "broadcast from h1")
		if got := tb.portOf("bridge0", s1.mac.String()); got != "" {
			t.Errorf("learning off on p1, but h1 was learned on %q", got)
		}
		tb.swctl("bridge", "port", "bridge0", "p1", "--learning", "on")
	})
	t.Run("discover off", func(t *testing.T) {
		tb.swctl("bridge", "port", "bridge0", "p3", "--discover", "off")
		unknown := hwaddr("02:cc:00:00:00:09")
		s1.send(t, testFrame(unknown, s1.mac, 20, 0))
		s2.waitFor(t, 20, "unknown unicast to a discover port")
		s1.barrier(t, 21, s2, s3)
		if s3.has(20) {
			t.Errorf("discover off on p3, but unknown unicast reached h3")
		}
		tb.swctl("bridge", "port", "bridge0", "p3", "--discover", "on")
	})
	t.Run("blocknonip", func(t *testing.T) {
		tb.swctl("bridge", "port", "bridge0", "p3", "--blocknonip", "on")
		s1.send(t, testFrame(frame.Broadcast, s1.mac, 30, 0))
		s2.waitFor(t, 30, "non-IP broadcast to an open port")
		mustPing(t, tb.hosts[0], tb.hosts[2].ip) // IP and ARP still cross
		if s3.has(30) {
			t.Errorf("blocknonip on p3, but a non-IP frame reached h3")
		}
		var shown []struct {
			Ports []struct {
				Name  string   `json:"name"`
				Flags []string `json:"flags"`
			} `json:"ports"`
		}
		tb.swctlJSON(&shown, "bridge", "show", "bridge0")
		if got := strings.Join(shown[0].Ports[2].Flags, ","); got != "learning,discover,blocknonip" {
			t.Errorf("bridge show p3 flags = %q, want learning,discover,blocknonip", got)
		}
	})
}

func TestIntegrationBridgeSpanPort(t *testing.T) {
	tb := bridged(t, 2)
	h3 := tb.addHost(3)
	tb.swctl("bridge", "addspan", "bridge0", "p3")
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, h3)
	s2.send(t, testFrame(frame.Broadcast, s2.mac, 1, 0)) // h2 learned
	s1.waitFor(t, 1, "broadcast from h2")
	s1.send(t, testFrame(s2.mac, s1.mac, 2, 0))
	s2.waitFor(t, 2, "unicast h1 -> h2")
	s3.waitFor(t, 2, "span copy of unicast h1 -> h2")
	// The span port is never learned from and never forwards into the bridge.
	s3.send(t, testFrame(frame.Broadcast, s3.mac, 3, 0))
	s1.barrier(t, 4, s2)
	if s1.has(3) || s2.has(3) {
		t.Errorf("a frame sent by the span host was forwarded into the bridge")
	}
	if got := tb.portOf("bridge0", s3.mac.String()); got != "" {
		t.Errorf("span host learned on %q", got)
	}
}

func TestIntegrationBridgeTaggedFrameKeepsItsTag(t *testing.T) {
	tb := bridged(t, 2)
	s1, s2 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1])
	sent := testFrame(frame.Broadcast, s1.mac, 1, 100)
	s1.send(t, sent)
	s2.waitFor(t, 1, "tagged broadcast")
	got := s2.received(func(id uint32) bool { return id == 1 })[0]
	if !bytes.Equal(got, sent) {
		t.Errorf("tagged frame changed crossing the bridge:\nsent %x\ngot  %x", sent, got)
	}
	netnstest.Eventually(t, 5*time.Second, "h1 learned in VLAN 100", func() bool {
		for _, a := range tb.addrs("bridge0") {
			if a.MAC == s1.mac.String() && a.VLAN == 100 && a.Port == "p1" {
				return true
			}
		}
		return false
	})
}

func TestIntegrationBridgeLocalTapAndNoARPFromMembers(t *testing.T) {
	tb := bridged(t, 2, "--local")
	tapIP := fmt.Sprintf("10.66.%d.100", tb.subnet)
	tb.dut.Run("ip", "addr", "add", tapIP+"/24", "dev", "bridge0")
	mustPing(t, tb.hosts[0], tapIP)

	var shown []struct {
		LocalMAC string `json:"local_mac"`
	}
	tb.swctlJSON(&shown, "bridge", "show", "bridge0")
	tapMAC := shown[0].LocalMAC
	// Only the TAP may answer ARP for its address: p1 and p2 are members
	// with no address, and their own stacks must not see bridged frames.
	out, _ := tb.hosts[0].Try("arping", "-c", "3", "-I", "eth0", tapIP)
	macs := regexp.MustCompile(`(?i)([0-9a-f]{2}(?::[0-9a-f]{2}){5})`).FindAllString(out, -1)
	answered := false
	for _, m := range macs {
		m = strings.ToLower(m)
		if m == tb.hosts[0].mac {
			continue // arping names its own interface
		}
		if m != tapMAC {
			t.Errorf("an ARP reply for %s came from %s, not from the TAP %s:\n%s", tapIP, m, tapMAC, out)
		}
		answered = true
	}
	if !answered {
		t.Errorf("no ARP reply from the TAP %s:\n%s", tapMAC, out)
	}
	// With --stack on, p1's own stack sees the frames again and answers
	// for the dut's address too, with p1's MAC.
	tb.swctl("bridge", "port", "bridge0", "p1", "--stack", "on")
	p1MAC := strings.TrimSpace(tb.dut.Run("cat", "/sys/class/net/p1/address"))
	netnstest.Eventually(t, 10*time.Second, "p1's stack answers ARP with --stack on", func() bool {
		out, _ := tb.hosts[0].Try("arping", "-c", "2", "-I", "eth0", tapIP)
		return strings.Contains(strings.ToLower(out), p1MAC)
	})
	tb.swctl("bridge", "port", "bridge0", "p1", "--stack", "off")
	// The TAP's MAC is kept across restarts.
	tb.stop(syscall.SIGTERM)
	tb.start()
	tb.swctlJSON(&shown, "bridge", "show", "bridge0")
	if shown[0].LocalMAC != tapMAC {
		t.Errorf("after restart the TAP's MAC is %s, want %s", shown[0].LocalMAC, tapMAC)
	}
	if _, err := tb.try("bridge", "add", "bridge0", "bridge0"); err == nil || !strings.Contains(err.Error(), "TAP") {
		t.Errorf("bridge add of the bridge's own TAP: want an error naming the TAP, got %v", err)
	}
}

func TestIntegrationBridgePromiscuityRestored(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			tb := bridged(t, 2)
			if got := promiscuity(t, tb.dut, "p1"); got != 1 {
				t.Fatalf("p1 promiscuity while a member = %d, want 1", got)
			}
			tb.stop(sig)
			netnstest.Eventually(t, 5*time.Second, "p1 promiscuity back to 0 after "+sig.String(), func() bool {
				return promiscuity(t, tb.dut, "p1") == 0
			})
		})
	}
	t.Run("bridge del", func(t *testing.T) {
		tb := bridged(t, 2)
		tb.swctl("bridge", "del", "bridge0", "p1")
		if got := promiscuity(t, tb.dut, "p1"); got != 0 {
			t.Errorf("p1 promiscuity after bridge del = %d, want 0", got)
		}
	})
}

func TestIntegrationBridgeRestartRestoresConfig(t *testing.T) {
	tb := bridged(t, 3)
	tb.swctl("bridge", "set", "bridge0", "--timeout", "77", "--maxaddr", "500")
	tb.swctl("bridge", "port", "bridge0", "p2", "--learning", "off", "--blocknonip", "on")
	tb.swctl("bridge", "static", "bridge0", "02:dd:00:00:00:01", "p3")
	before := tb.swctl("bridge", "show", "-o", "json")
	tb.stop(syscall.SIGTERM)
	tb.start()
	after := tb.swctl("bridge", "show", "-o", "json")
	var b, a any
	json.Unmarshal([]byte(before), &b)
	json.Unmarshal([]byte(after), &a)
	strip := func(v any) string {
		// Counters restart from zero; compare the settings only.
		for _, br := range v.([]any) {
			m := br.(map[string]any)
			for _, k := range []string{"forwarded", "flooded", "dropped", "addresses", "exceeded"} {
				delete(m, k)
			}
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	if strip(b) != strip(a) {
		t.Errorf("bridge show after restart differs:\nbefore %s\nafter  %s", strip(b), strip(a))
	}
	if tb.portOf("bridge0", "02:dd:00:00:00:01") != "p3" {
		t.Errorf("static entry lost across restart")
	}
	mustPing(t, tb.hosts[0], tb.hosts[2].ip)
}

func TestIntegrationBridgeAbsentMemberAttachedWhenItAppears(t *testing.T) {
	tb := newTestbed(t, 1)
	// The configuration names p2 before it exists.
	conf := "bridge bridge0 {\n    port p1\n    port p2\n}\n"
	if err := os.WriteFile(tb.configPath(), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.start()
	if got := tb.port("p2").Link; got != "absent" {
		t.Fatalf("p2 before it exists: link %q, want absent", got)
	}
	tb.addHost(2)
	netnstest.Eventually(t, 10*time.Second, "p2 attached when it appeared", func() bool { return tb.port("p2").Link == "up" })
	mustPing(t, tb.hosts[0], tb.hosts[1].ip)
	// Deleted later: absent again, not an error.
	tb.dut.Run("ip", "link", "del", "p2")
	netnstest.Eventually(t, 10*time.Second, "p2 absent after deletion", func() bool { return tb.port("p2").Link == "absent" })
}

func TestIntegrationBridgeLinkDownFlushesAndSkips(t *testing.T) {
	tb := bridged(t, 3)
	mustPing(t, tb.hosts[0], tb.hosts[1].ip)
	tb.hosts[1].Run("ip", "link", "set", "eth0", "down")
	netnstest.Eventually(t, 5*time.Second, "p2 reported down", func() bool { return tb.port("p2").Link == "down" })
	netnstest.Eventually(t, 5*time.Second, "h2's address flushed on link down", func() bool {
		return tb.portOf("bridge0", tb.hosts[1].mac) == ""
	})
	tb.hosts[1].Run("ip", "link", "set", "eth0", "up")
	netnstest.Eventually(t, 5*time.Second, "p2 up again", func() bool { return tb.port("p2").Link == "up" })
	mustPing(t, tb.hosts[0], tb.hosts[1].ip)
}

func TestIntegrationBridgeBadInput(t *testing.T) {
	tb := bridged(t, 2)
	tb.swctl("bridge", "create", "bridge1")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bridge", "add", "bridge0", "eth9"}, "bridge0: add eth9: no such interface"},
		{[]string{"bridge", "add", "bridge1", "p1"}, "already a port of bridge bridge0"},
		{[]string{"bridge", "add", "nosuch", "p1"}, "nosuch: no such bridge"},
		{[]string{"bridge", "create", "bridge0"}, "bridge0"},
		{[]string{"bridge", "static", "bridge0", "02:00:00:00:00:zz", "p1"}, "MAC"},
		{[]string{"bridge", "create", "averyveryverylongname"}, "15"},
	}
	for _, c := range cases {
		_, err := tb.try(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("swctl %s: want an error containing %q, got %v", strings.Join(c.args, " "), c.want, err)
		}
	}
	// All or nothing: one bad interface, nothing added.
	h3 := tb.addHost(3)
	_ = h3
	if _, err := tb.try("bridge", "add", "bridge1", "p3", "eth9"); err == nil {
		t.Fatalf("bridge add with a missing interface succeeded")
	}
	var shown []struct {
		Ports []struct{ Name string } `json:"ports"`
	}
	tb.swctlJSON(&shown, "bridge", "show", "bridge1")
	if len(shown[0].Ports) != 0 {
		t.Errorf("a failed bridge add left members behind: %+v", shown[0].Ports)
	}
	if got := promiscuity(t, tb.dut, "p3"); got != 0 {
		t.Errorf("a failed bridge add left p3 promiscuous (%d)", got)
	}
	// JSON errors.
	_, err := tb.try("bridge", "show", "nosuch", "-o", "json")
	if err == nil || !strings.Contains(err.Error(), `{"error":`) {
		t.Errorf("bridge show nosuch -o json: want {\"error\": ...} on stderr, got %v", err)
	}
}

// TestIntegrationDaemonUnsavableDestroyKeepsTaps makes the configuration
// unwritable (a regular file where its directory was), then destroys a
// --local bridge and a trunk that carry host addresses on their TAPs: both
// are refused, and both TAPs and their addresses are still there.
func TestIntegrationDaemonUnsavableDestroyKeepsTaps(t *testing.T) {
	tb := newTestbed(t, 2)
	tb.start()
	tb.swctl("bridge", "create", "bridge0", "--local")
	tb.swctl("bridge", "add", "bridge0", "p1")
	tb.swctl("trunk", "create", "trunk0", "--port", "p2")
	addrs := map[string]string{
		"bridge0": fmt.Sprintf("10.77.%d.1/24", tb.subnet),
		"trunk0":  fmt.Sprintf("10.78.%d.1/24", tb.subnet),
	}
	for dev, a := range addrs {
		tb.dut.Run("ip", "addr", "add", a, "dev", dev)
	}
	dir := filepath.Dir(tb.configPath())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"bridge", "destroy", "bridge0"}, {"trunk", "destroy", "trunk0"}, {"bridge", "del", "bridge0", "p1"}} {
		if _, err := tb.try(args...); err == nil || !strings.Contains(err.Error(), "not changed: cannot save the configuration") {
			t.Errorf("swctl %s with the configuration unwritable: want \"not changed: cannot save the configuration\", got %v", strings.Join(args, " "), err)
		}
	}
	for dev, a := range addrs {
		if out := tb.dut.Run("ip", "-o", "addr", "show", "dev", dev); !strings.Contains(out, a) {
			t.Errorf("%s after a refused destroy: want address %s kept, got:\n%s", dev, a, out)
		}
	}
	var shown []struct {
		Ports []struct{ Name string } `json:"ports"`
	}
	tb.swctlJSON(&shown, "bridge", "show", "bridge0")
	if len(shown) != 1 || len(shown[0].Ports) != 1 || shown[0].Ports[0].Name != "p1" {
		t.Errorf("bridge0 after refused changes: want member p1, got %+v", shown)
	}
	// With the directory back, the same destroy goes through.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tb.swctl("bridge", "destroy", "bridge0")
	if _, err := tb.dut.Try("ip", "link", "show", "dev", "bridge0"); err == nil {
		t.Errorf("bridge0's TAP still exists after bridge destroy")
	}
}

func TestIntegrationDaemonRefusesABadConfig(t *testing.T) {
	tb := newTestbed(t, 1)
	conf := "bridge bridge0 {\n    port p1 -learning blocknonipp\n}\n"
	if err := os.WriteFile(tb.configPath(), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := tb.dut.Try(swctlBin, "daemon", "--socket", tb.socket(), "--config", tb.configPath(),
		"--state-dir", tb.dir+"/state")
	if err == nil {
		t.Fatalf("daemon started with a bad configuration:\n%s", out)
	}
	if !strings.Contains(out, "swctl.conf:2:") || !strings.Contains(out, "blocknonipp") {
		t.Errorf("daemon error: want the file, line 2 and the bad flag named, got:\n%s", out)
	}
	if got := promiscuity(t, tb.dut, "p1"); got != 0 {
		t.Errorf("a refused configuration left p1 promiscuous (%d)", got)
	}
	if _, err := os.Stat(tb.socket()); err == nil {
		t.Errorf("a refused configuration left a control socket")
	}
}

func TestIntegrationBridgePromiscOffForMeasurements(t *testing.T) {
	tb := bridged(t, 2)
	tb.swctl("bridge", "port", "bridge0", "p1", "--promisc", "off")
	if got := promiscuity(t, tb.dut, "p1"); got != 0 {
		t.Errorf("p1 with --promisc off: promiscuity %d, want 0", got)
	}
	if tb.port("p1").Promisc {
		t.Errorf("port show p1: promisc true after --promisc off")
	}
	mustPing(t, tb.hosts[0], tb.hosts[1].ip) // veth delivers every frame anyway
	tb.swctl("bridge", "port", "bridge0", "p1", "--promisc", "on")
	if got := promiscuity(t, tb.dut, "p1"); got != 1 {
		t.Errorf("p1 with --promisc on again: promiscuity %d, want 1", got)
	}
	// The setting is kept across restarts.
	tb.swctl("bridge", "port", "bridge0", "p2", "--promisc", "off")
	tb.stop(syscall.SIGTERM)
	tb.start()
	if got := promiscuity(t, tb.dut, "p2"); got != 0 {
		t.Errorf("p2 after restart: promiscuity %d, want 0 (-promisc kept in the configuration)", got)
	}
}

// TestIntegrationBridgeForwardsBPDUsWithSTPOff checks that a bridge that
// runs no spanning tree forwards BPDUs (01:80:c2:00:00:00) from one member
// to the others, as the Linux bridge with STP off does, and still keeps
// slow-protocol frames (01:80:c2:00:00:02) to the link.
func TestIntegrationBridgeForwardsBPDUsWithSTPOff(t *testing.T) {
	tb := bridged(t, 3)
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, tb.hosts[2])
	bpdu := frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0}
	slow := frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}
	s1.send(t, testFrame(slow, s1.mac, 501, 0), testFrame(bpdu, s1.mac, 502, 0))
	s2.waitFor(t, 502, "BPDU from h1")
	s3.waitFor(t, 502, "BPDU from h1")
	s1.barrier(t, 503, s2, s3)
	for _, s := range []*station{s2, s3} {
		if s.has(501) {
			t.Errorf("%s received the slow-protocols frame h1 sent: it must not cross the bridge", s.h.Name)
		}
	}
}

func TestIntegrationBridgeRefusesTheManagementInterface(t *testing.T) {
	tb := newTestbed(t, 3)
	// p1 is how the dut is reached: its default routes leave by it.
	tb.dut.Run("ip", "addr", "add", "192.0.2.1/24", "dev", "p1")
	tb.dut.Run("ip", "route", "add", "default", "via", "192.0.2.254", "dev", "p1")
	tb.dut.Run("sysctl", "-qw", "net.ipv6.conf.p2.disable_ipv6=0")
	tb.dut.Run("ip", "-6", "addr", "add", "2001:db8::1/64", "dev", "p2", "nodad")
	tb.dut.Run("ip", "-6", "route", "add", "default", "via", "2001:db8::fe", "dev", "p2")
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("trunk", "create", "trunk0")
	const held = "holds the host's default route, so taking it would cut the host off that network (give --force to add it anyway)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bridge", "add", "bridge0", "p3", "p1"}, "bridge0: add p1: " + held},
		{[]string{"bridge", "add", "bridge0", "p2"}, "bridge0: add p2: " + held},
		{[]string{"trunk", "create", "trunk1", "--port", "p1"}, "trunk1: add p1: " + held},
		{[]string{"trunk", "add", "trunk0", "p2"}, "trunk0: add p2: " + held},
	} {
		if _, err := tb.try(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("swctl %s: expected an error containing %q, got %v", strings.Join(c.args, " "), c.want, err)
		}
	}
	if got := tb.members("bridge0"); len(got) != 0 {
		t.Errorf("bridge0 after the refusals: expected no members, got %v", got)
	}
	tb.swctl("bridge", "add", "bridge0", "p3", "p1", "--force")
	if got := tb.members("bridge0"); !slices.Equal(got, []string{"p3", "p1"}) {
		t.Errorf("bridge0 after bridge add --force: expected [p3 p1], got %v", got)
	}
}
