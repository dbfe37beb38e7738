package integration

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// packetSocketsOn counts the receiving AF_PACKET sockets bound to dev in
// ns, from /proc/net/packet (columns: sk RefCnt Type Proto Iface R Rmem
// User Inode): those bound to a protocol, not a TX ring's send-only
// socket (protocol 0).
func packetSocketsOn(t *testing.T, tb *testbed, dev string) int {
	t.Helper()
	ifindex := strings.TrimSpace(tb.dut.Run("cat", "/sys/class/net/"+dev+"/ifindex"))
	n := 0
	for _, line := range strings.Split(tb.dut.Run("cat", "/proc/net/packet"), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 5 && f[4] == ifindex && f[3] != "0000" {
			n++
		}
	}
	return n
}

// TestIntegrationBridgeWorkersFanout runs the daemon with --workers 2:
// every bridge member is opened with two receive sockets in one
// PACKET_FANOUT group, and several TCP flows at once, with the hosts'
// default offloads, arrive intact in both directions.
func TestIntegrationBridgeWorkersFanout(t *testing.T) {
	tb := newTestbed(t, 2)
	tb.daemonArgs = []string{"--workers", "2"}
	tb.start()
	if n := packetSocketsOn(t, tb, "p1"); n != 0 {
		t.Fatalf("p1 has %d packet sockets before it is a member, want 0", n)
	}
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	for _, dev := range []string{"p1", "p2"} {
		if n := packetSocketsOn(t, tb, dev); n != 2 {
			t.Errorf("%s has %d packet sockets with --workers 2, want 2 receive sockets (one fanout group of two)", dev, n)
		}
	}
	h1, h2 := tb.hosts[0], tb.hosts[1]
	mustPing(t, h1, h2.ip)

	// Four flows (distinct ports, so distinct flow hashes) at once, two
	// each way: whichever socket the kernel hands a flow to, every byte
	// must arrive, in order, with good checksums.
	var wg sync.WaitGroup
	for i := range 4 {
		from, to := h1, h2
		if i%2 == 1 {
			from, to = h2, h1
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sendOver(from.NS, to.NS, to.ip+":"+strconv.Itoa(5101+i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()

	// Taking a member out closes both of its sockets.
	tb.swctl("bridge", "del", "bridge0", "p2")
	if n := packetSocketsOn(t, tb, "p2"); n != 0 {
		t.Errorf("p2 has %d packet sockets after bridge del, want 0", n)
	}
	if t.Failed() {
		t.Logf("bridge stats: %v", tb.bridgeStatsRaw())
		t.Logf("dut /proc/net/packet:\n%s", tb.dut.Run("cat", "/proc/net/packet"))
	}
}

// TestIntegrationBridgeBusyPoll runs the daemon with --busy-poll and one
// worker: its readers never sleep, and pings and TCP with the hosts'
// default offloads still cross intact both ways; control commands still
// answer while the readers spin, and the daemon stops cleanly.
func TestIntegrationBridgeBusyPoll(t *testing.T) {
	tb := newTestbed(t, 2)
	tb.daemonArgs = []string{"--workers", "1", "--busy-poll"}
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	h1, h2 := tb.hosts[0], tb.hosts[1]
	mustPing(t, h1, h2.ip)
	mustPing(t, h2, h1.ip)
	for i, dir := range [][2]*host{{h1, h2}, {h2, h1}} {
		if err := sendOver(dir[0].NS, dir[1].NS, dir[1].ip+":"+strconv.Itoa(5201+i)); err != nil {
			t.Error(err)
		}
	}
	if out := tb.swctl("bridge", "show", "bridge0"); !strings.Contains(out, "p2") {
		t.Errorf("bridge show while polling: %q, want member p2", out)
	}
	if t.Failed() {
		t.Logf("bridge stats: %v", tb.bridgeStatsRaw())
	}
}

// TestIntegrationBridgeQdiscBypass puts a blackhole qdisc on both
// members, which drops everything sent through it: with --qdisc-bypass
// the daemon's frames skip it and pings cross; without, they do not.
func TestIntegrationBridgeQdiscBypass(t *testing.T) {
	for _, bypass := range []bool{true, false} {
		t.Run(fmt.Sprintf("bypass %v", bypass), func(t *testing.T) {
			tb := newTestbed(t, 2)
			if bypass {
				tb.daemonArgs = []string{"--qdisc-bypass"}
			}
			tb.start()
			tb.swctl("bridge", "create", "bridge0")
			tb.swctl("bridge", "add", "bridge0", "p1", "p2")
			h1, h2 := tb.hosts[0], tb.hosts[1]
			mustPing(t, h1, h2.ip) // the path works before the blackholes
			for _, dev := range []string{"p1", "p2"} {
				tb.dut.Run("tc", "qdisc", "add", "dev", dev, "root", "blackhole")
			}
			got := ping(h1, h2.ip, 3)
			switch {
			case bypass && got == 0:
				t.Errorf("--qdisc-bypass: no ping answered through blackhole qdiscs; want the daemon's frames to skip them")
			case !bypass && got > 0:
				t.Errorf("no bypass: %d pings answered through blackhole qdiscs; want none (the qdisc drops them)", got)
			}
		})
	}
}
