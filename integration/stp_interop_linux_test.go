package integration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
)

// kernelBridge is a Linux bridge with the kernel's spanning tree (802.1D)
// in its own namespace, with the short timers in centiseconds.
type kernelBridge struct {
	ns *netnstest.NS
}

func newKernelBridge(t *testing.T) *kernelBridge {
	kb := &kernelBridge{ns: netnstest.New(t, "kbr")}
	kb.ns.Run("ip", "link", "add", "br0", "type", "bridge", "stp_state", "1",
		"forward_delay", "400", "hello_time", "100", "max_age", "600")
	kb.ns.Run("ip", "link", "set", "br0", "up")
	return kb
}

// attach makes dev a port of br0.
func (kb *kernelBridge) attach(dev string) { kb.ns.Run("ip", "link", "set", dev, "master", "br0") }

// read returns a file of br0's sysfs directory, trimmed.
func (kb *kernelBridge) read(t *testing.T, file string) string {
	t.Helper()
	return strings.TrimSpace(kb.ns.Run("cat", "/sys/class/net/br0/"+file))
}

// portState names the kernel's state of port dev as swctl does.
func (kb *kernelBridge) portState(t *testing.T, dev string) string {
	t.Helper()
	switch s := kb.read(t, "brif/"+dev+"/state"); s {
	case "0":
		return "disabled"
	case "1":
		return "listening"
	case "2":
		return "learning"
	case "3":
		return "forwarding"
	case "4":
		return "discarding" // 802.1D's blocking
	default:
		return "state " + s
	}
}

// TestIntegrationSTPInteropWithLinuxBridge joins a swctl bridge and a
// Linux bridge running the kernel's 802.1D spanning tree with two links:
// swctl's ports must fall back to 802.1D, both sides must agree on the
// root and block exactly one port, whichever side the priorities make the
// root, and hosts on either side must reach each other with broadcasts
// delivered once.
func TestIntegrationSTPInteropWithLinuxBridge(t *testing.T) {
	tb := newTestbed(t, 1)
	tb.start()
	kb := newKernelBridge(t)
	netnstest.Veth(t, tb.dut, "k1", "", kb.ns, "s1", "")
	netnstest.Veth(t, tb.dut, "k2", "", kb.ns, "s2", "")
	hk := &host{NS: netnstest.New(t, "hk"), mac: fmt.Sprintf("02:00:00:%02x:00:09", tb.subnet), ip: fmt.Sprintf("10.66.%d.9", tb.subnet)}
	netnstest.Veth(t, hk.NS, "eth0", hk.mac, kb.ns, "s3", "")
	hk.Run("ip", "addr", "add", hk.ip+"/24", "dev", "eth0")
	for _, dev := range []string{"s1", "s2", "s3"} {
		kb.attach(dev)
	}
	if got := kb.read(t, "bridge/forward_delay"); got != "400" {
		t.Fatalf("kernel bridge forward_delay: want 400 (4 s in centiseconds), got %s", got)
	}
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl(append([]string{"bridge", "stp", "bridge0", "on", "--priority", "4096"}, stpTimers...)...)
	tb.swctl("bridge", "add", "bridge0", "p1", "k1", "k2")
	tb.swctl("bridge", "port", "bridge0", "p1", "--edge", "on")

	// agree waits until both sides name the same root, exactly one of the
	// four ports between them blocks and the others forward, and swctl's
	// ports speak 802.1D.
	agree := func(phase, wantRoot, wantBlocked string) {
		t.Helper()
		var desc string
		start := time.Now()
		deadline := start.Add(40 * time.Second)
		for {
			b := tb.stpShow()
			states := map[string]string{"s1": kb.portState(t, "s1"), "s2": kb.portState(t, "s2")}
			protos := map[string]string{}
			for _, p := range b.Ports {
				if p.STP != nil && (p.Name == "k1" || p.Name == "k2") {
					states[p.Name], protos[p.Name] = p.STP.State, p.STP.Protocol
				}
			}
			kroot, root := kb.read(t, "bridge/root_id"), ""
			if b.STP != nil {
				root = b.STP.Root
			}
			blocked := 0
			ok := root == kroot && kroot == wantRoot
			for name, st := range states {
				switch {
				case st == "discarding":
					blocked++
					ok = ok && name == wantBlocked
				case st != "forwarding":
					ok = false
				}
			}
			ok = ok && blocked == 1 && protos["k1"] == "stp" && protos["k2"] == "stp"
			desc = fmt.Sprintf("swctl root %s, kernel root_id %s, states %v, swctl protocols %v", root, kroot, states, protos)
			if ok {
				t.Logf("%s: agreed after %v: %s", phase, time.Since(start).Round(100*time.Millisecond), desc)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: want root %s on both sides and only %s blocking; after 40 s: %s", phase, wantRoot, wantBlocked, desc)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// swctl (priority 4096) is the root: the kernel's root port is s1,
	// towards swctl's lower port identifier; s2 blocks.
	agree("swctl the root", tb.stpShow().STP.BridgeID, "s2")
	mustPing(t, tb.hosts[0], hk.ip)
	s1, s2 := openStation(t, tb.hosts[0]), openStation(t, hk)
	links := []link{{tb.dut, "k1"}, {tb.dut, "k2"}, {kb.ns, "s1"}, {kb.ns, "s2"}}
	checkNoStorm(t, links, 900, s1, s2)

	// The kernel bridge (priority 0) becomes the root: swctl's root port
	// is k1, towards the kernel's lower port identifier; k2 blocks.
	kb.ns.Run("ip", "link", "set", "br0", "type", "bridge", "priority", "0")
	kid := kb.read(t, "bridge/bridge_id")
	if !strings.HasPrefix(kid, "0000.") {
		t.Fatalf("kernel bridge_id after priority 0: %s", kid)
	}
	agree("the kernel the root", kid, "k2")
	mustPing(t, hk, tb.hosts[0].ip)
	checkNoStorm(t, links, 950, s1, s2)
}

// TestIntegrationSTPForwardMaskAndRestart checks that --fwd-mask lets
// LLDP cross a bridge and refuses BPDUs, and that a restarted daemon
// keeps the mask and every spanning tree setting.
func TestIntegrationSTPForwardMaskAndRestart(t *testing.T) {
	tb := bridged(t, 3)
	s1, s2, s3 := openStation(t, tb.hosts[0]), openStation(t, tb.hosts[1]), openStation(t, tb.hosts[2])
	lldp := frame.MAC{0x01, 0x80, 0xc2, 0, 0, 0x0e}
	s1.send(t, testFrame(lldp, s1.mac, 801, 0))
	s1.barrier(t, 802, s2, s3)
	if s2.has(801) || s3.has(801) {
		t.Errorf("an LLDP frame crossed the bridge without --fwd-mask")
	}
	tb.swctl("bridge", "set", "bridge0", "--fwd-mask", "0x4000")
	s1.send(t, testFrame(lldp, s1.mac, 803, 0))
	s2.waitFor(t, 803, "LLDP with --fwd-mask 0x4000")
	s3.waitFor(t, 803, "LLDP with --fwd-mask 0x4000")
	for _, c := range []struct{ mask, want string }{
		{"01", "bit 0 (BPDUs, 01:80:c2:00:00:00: they follow the spanning tree setting) cannot be forwarded"},
		{"0x4004", "bit 2 (slow protocols: LACP and marker, 01:80:c2:00:00:02) cannot be forwarded"},
	} {
		if _, err := tb.try("bridge", "set", "bridge0", "--fwd-mask", c.mask); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bridge set --fwd-mask %s: want an error with %q, got %v", c.mask, c.want, err)
		}
	}
	const relation = "maxage 40 with fwddelay 4: want maxage <= 2 x (fwddelay - 1) = 6"
	if _, err := tb.try("bridge", "stp", "bridge0", "--maxage", "40", "--fwddelay", "4"); err == nil || !strings.Contains(err.Error(), relation) {
		t.Errorf("bridge stp --maxage 40 --fwddelay 4: want an error with %q, got %v", relation, err)
	}

	tb.swctl(append([]string{"bridge", "stp", "bridge0", "on", "--priority", "4096", "--holdcnt", "3"}, stpTimers...)...)
	tb.swctl("bridge", "port", "bridge0", "p2", "--ifcost", "1234", "--ptp", "off", "--autoedge", "off", "--ifpriority", "64")
	tb.swctl("bridge", "port", "bridge0", "p3", "--stp", "off")
	want := func(what string) {
		t.Helper()
		b := tb.stpShow()
		s := b.STP
		if b.FwdMask != 0x4000 || s == nil || s.Priority != 4096 || s.HelloTime != 1 || s.MaxAge != 6 || s.FwdDelay != 4 || s.HoldCount != 3 || s.Proto != "rstp" {
			t.Fatalf("%s: want fwd-mask 0x4000 and stp rstp priority 4096 hello 1 maxage 6 fwddelay 4 holdcnt 3, got mask 0x%04x, stp %+v", what, b.FwdMask, s)
		}
		for _, p := range b.Ports {
			ps := p.STP
			switch {
			case ps == nil:
				t.Errorf("%s: %s has no spanning tree port", what, p.Name)
			case p.Name == "p2" && (ps.Cost != 1234 || ps.PathCost != 1234 || ps.PTP != "off" || ps.PointToPoint || ps.AutoEdge || ps.Priority != 64 || !strings.HasPrefix(ps.PortID, "4")):
				t.Errorf("%s: p2: want cost 1234, ptp off, autoedge off, priority 64, got %+v", what, *ps)
			case p.Name == "p3" && (ps.Enabled || ps.State != "forwarding"):
				t.Errorf("%s: p3: want out of the spanning tree and forwarding, got %+v", what, *ps)
			case p.Name == "p1" && (!ps.Enabled || ps.PathCost != 2000 || !ps.PointToPoint):
				t.Errorf("%s: p1: want in the tree, the cost of a veth's 10 Gb/s (2000), point-to-point, got %+v", what, *ps)
			}
		}
	}
	want("before the restart")
	tb.stop(syscall.SIGTERM)
	tb.start()
	want("after the restart")
	// p1 forwards once autoedge made it an edge port; LLDP still crosses.
	netnstest.Eventually(t, 10*time.Second, "p1 forwarding after the restart", func() bool {
		ports, _ := tb.stpPorts()
		return ports["p1"] == "designated/forwarding"
	})
	s1.send(t, testFrame(lldp, s1.mac, 804, 0))
	s3.waitFor(t, 804, "LLDP after the restart")
}

// TestIntegrationSTPBPDUsDecodeCleanlyInTshark captures the BPDUs a swctl
// bridge sends, RST BPDUs and then, with --proto stp, Configuration
// BPDUs, and has tshark decode them: no malformed frame, no expert
// warning, and the bridge identifier bridge show gives.
func TestIntegrationSTPBPDUsDecodeCleanlyInTshark(t *testing.T) {
	requireTshark(t)
	tb := bridged(t, 1)
	tb.swctl(append([]string{"bridge", "stp", "bridge0", "on"}, stpTimers...)...)
	id := tb.stpShow().STP.BridgeID
	for _, c := range []struct {
		proto         string
		version, kind string
	}{{"rstp", "2", "0x02"}, {"stp", "0", "0x00"}} {
		tb.swctl("bridge", "stp", "bridge0", "--proto", c.proto)
		pcap := t.TempDir() + "/bpdus.pcapng"
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := tb.hosts[0].Command(ctx, "tshark", "-i", "eth0", "-c", "2", "-f", "ether dst 01:80:c2:00:00:00", "-w", pcap).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: tshark capture: %v\n%s", c.proto, err, out)
		}
		tree, err := netnstest.Try("tshark", "-r", pcap, "-V")
		if err != nil {
			t.Fatalf("%s: tshark -r -V: %v\n%s", c.proto, err, tree)
		}
		for _, bad := range []string{"Malformed", "Expert Info (Warning", "Expert Info (Error", "[Error"} {
			if strings.Contains(tree, bad) {
				t.Errorf("%s: tshark's decode contains %q:\n%s", c.proto, bad, excerpt(tree, bad))
			}
		}
		fields, err := netnstest.Try("tshark", "-r", pcap, "-T", "fields", "-E", "separator=/t",
			"-e", "stp.protocol", "-e", "stp.version", "-e", "stp.type", "-e", "stp.root.prio", "-e", "stp.root.hw")
		if err != nil {
			t.Fatalf("%s: tshark -T fields: %v\n%s", c.proto, err, fields)
		}
		// Combined output: drop tshark's notes on stderr ("Running as
		// user root").
		lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(fields), "\n"), func(l string) bool { return !strings.HasPrefix(l, "0x") })
		if len(lines) != 2 {
			t.Fatalf("%s: want 2 BPDUs decoded, got:\n%s", c.proto, fields)
		}
		for _, l := range lines {
			f := strings.Split(l, "\t")
			if len(f) != 5 {
				t.Errorf("%s: want 5 fields, got %q", c.proto, l)
				continue
			}
			prio, _ := strconv.Atoi(f[3])
			root := fmt.Sprintf("%04x.%s", prio, strings.ReplaceAll(f[4], ":", ""))
			if f[0] != "0x0000" || f[1] != c.version || f[2] != c.kind || root != id {
				t.Errorf("%s: want protocol 0x0000, version %s, type %s, root %s; tshark decoded %q (root %s)", c.proto, c.version, c.kind, id, l, root)
			}
		}
	}
}
