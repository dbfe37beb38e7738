package integration

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/netnstest"
)

// stpTimers are the short timers every spanning tree test runs: hello 1 s,
// max age 6 s, forward delay 4 s, the shortest 802.1D-2004 allows.
var stpTimers = []string{"--hellotime", "1", "--maxage", "6", "--fwddelay", "4"}

// stpShow returns bridge show's view of bridge0.
func (tb *testbed) stpShow() api.BridgeInfo {
	tb.t.Helper()
	var bs []api.BridgeInfo
	tb.swctlJSON(&bs, "bridge", "show", "bridge0")
	if len(bs) != 1 {
		tb.t.Fatalf("bridge show bridge0: want 1 bridge, got %d", len(bs))
	}
	return bs[0]
}

// stpPorts returns the spanning tree state of bridge0's members by name
// ("role/state"), and the bridge's designated root ("" without a tree).
func (tb *testbed) stpPorts() (map[string]string, string) {
	b := tb.stpShow()
	ports := map[string]string{}
	for _, p := range b.Ports {
		if p.STP != nil {
			ports[p.Name] = p.STP.Role + "/" + p.STP.State
		}
	}
	if b.STP == nil {
		return ports, ""
	}
	return ports, b.STP.Root
}

// txPackets reads the kernel's count of frames sent on dev in ns.
func txPackets(t *testing.T, ns *netnstest.NS, dev string) uint64 {
	t.Helper()
	out := ns.Run("cat", "/sys/class/net/"+dev+"/statistics/tx_packets")
	n, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("%s tx_packets: %v", dev, err)
	}
	return n
}

// link is one end of a cable between two bridges: an interface in a
// namespace.
type link struct {
	ns  *netnstest.NS
	dev string
}

// checkNoStorm sends n broadcast test frames from each of stations, and
// checks that every other station gets each exactly once (a loop would
// deliver copies again and again) and that no link carried more than a
// few hundred frames meanwhile. id0 numbers the frames.
func checkNoStorm(t *testing.T, links []link, id0 uint32, stations ...*station) {
	t.Helper()
	const n = 20
	before := make([]uint64, len(links))
	for i, l := range links {
		before[i] = txPackets(t, l.ns, l.dev)
	}
	id := id0
	for _, from := range stations {
		others := slices.DeleteFunc(slices.Clone(stations), func(s *station) bool { return s == from })
		first := id
		for range n {
			from.send(t, testFrame(frame.Broadcast, from.mac, id, 0))
			id++
		}
		from.barrier(t, id, others...)
		id++
		for _, o := range others {
			for i := first; i < first+n; i++ {
				if got := len(o.received(func(x uint32) bool { return x == i })); got != 1 {
					t.Errorf("broadcast %d from %s: %s got %d copies, want exactly 1", i, from.h.Name, o.h.Name, got)
				}
			}
		}
	}
	for i, l := range links {
		// The test's broadcasts and barriers, BPDUs each second, and the
		// hosts' own frames: far below what a loop would carry.
		if d := txPackets(t, l.ns, l.dev) - before[i]; d > 300 {
			t.Errorf("%s sent %d frames during the broadcast check: a loop?", l.dev, d)
		}
	}
}

// stpNode is a swctl bridge of the triangle: a daemon in its own
// namespace and a host on its member "host".
type stpNode struct {
	name string
	tb   *testbed
	h    *host
}

// stpTriangle is three swctl bridges a, b and c cabled to each other (a's
// "ab" to b's "ba", and so on), each with a host, running RSTP with the
// short timers; a has priority 4096, b 8192 and c 32768, so a is the
// root and c's port to b is the one that blocks.
type stpTriangle struct {
	a, b, c *stpNode
}

func newSTPTriangle(t *testing.T) *stpTriangle {
	netnstest.Require(t)
	subnetCounter++
	subnet := subnetCounter%250 + 1
	var nodes []*stpNode
	for i, name := range []string{"a", "b", "c"} {
		tb := newTestbed(t, 0)
		tb.start()
		h := &host{NS: netnstest.New(t, "h"+name), mac: fmt.Sprintf("02:00:00:%02x:01:%02x", subnet, i+1), ip: fmt.Sprintf("10.66.%d.%d", subnet, i+1)}
		netnstest.Veth(t, h.NS, "eth0", h.mac, tb.dut, "host", "")
		h.Run("ip", "addr", "add", h.ip+"/24", "dev", "eth0")
		nodes = append(nodes, &stpNode{name: name, tb: tb, h: h})
	}
	for i, x := range nodes {
		for _, y := range nodes[i+1:] {
			netnstest.Veth(t, x.tb.dut, x.name+y.name, "", y.tb.dut, y.name+x.name, "")
		}
	}
	for i, x := range nodes {
		tb := x.tb
		tb.swctl("bridge", "create", "bridge0")
		tb.swctl(append([]string{"bridge", "stp", "bridge0", "on", "--priority", []string{"4096", "8192", "32768"}[i]}, stpTimers...)...)
		args := []string{"bridge", "add", "bridge0", "host"}
		for _, y := range nodes {
			if y != x {
				args = append(args, x.name+y.name)
			}
		}
		tb.swctl(args...)
		tb.swctl("bridge", "port", "bridge0", "host", "--edge", "on")
	}
	return &stpTriangle{a: nodes[0], b: nodes[1], c: nodes[2]}
}

// links returns every bridge-to-bridge interface.
func (tr *stpTriangle) links() []link {
	var out []link
	for _, n := range []*stpNode{tr.a, tr.b, tr.c} {
		for _, d := range []string{"ab", "ac", "ba", "bc", "ca", "cb"} {
			if d[0] == n.name[0] {
				out = append(out, link{n.tb.dut, d})
			}
		}
	}
	return out
}

// want says whether the triangle is in the state expected: a the root,
// blocked (if not "") alternate and discarding, rootPortOfC c's root
// port, the ports whose link is down disabled, every other port
// forwarding; it returns a description of the state for failure
// messages.
func (tr *stpTriangle) want(blocked, rootPortOfC string, down []string) (bool, string) {
	rootID := tr.a.tb.stpShow().STP.BridgeID
	ok := true
	var desc []string
	for _, n := range []*stpNode{tr.a, tr.b, tr.c} {
		ports, root := n.tb.stpPorts()
		desc = append(desc, fmt.Sprintf("%s: root %s %v", n.name, root, ports))
		if root != rootID {
			ok = false
		}
		for name, st := range ports {
			switch {
			case name == blocked:
				ok = ok && st == "alternate/discarding"
			case slices.Contains(down, name):
				ok = ok && st == "disabled/discarding"
			case n == tr.c && name == rootPortOfC:
				ok = ok && st == "root/forwarding"
			default:
				ok = ok && strings.HasSuffix(st, "/forwarding")
			}
		}
	}
	return ok, strings.Join(desc, "; ")
}

// converge waits for the state of want, failing after within.
func (tr *stpTriangle) converge(t *testing.T, within time.Duration, blocked, rootPortOfC string, down ...string) {
	t.Helper()
	var desc string
	deadline := time.Now().Add(within)
	for {
		var ok bool
		if ok, desc = tr.want(blocked, rootPortOfC, down); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: expected %s alternate and discarding, %s the root port of c, all else forwarding; got %s", within, blocked, rootPortOfC, desc)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replyTimes parses ping -D's replies: their timestamps in seconds.
var pingReply = regexp.MustCompile(`(?m)^\[(\d+\.\d+)\] \d+ bytes from `)

func replyTimes(out string) []float64 {
	var ts []float64
	for _, m := range pingReply.FindAllStringSubmatch(out, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			ts = append(ts, v)
		}
	}
	return ts
}

// outage pings to from from every 10 ms while cut runs, and returns the
// longest time without a reply: how long the path was broken.
func outage(t *testing.T, from *host, to string, cut func()) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := &lockedBuffer{}
	cmd := from.Command(ctx, "ping", "-D", "-n", "-i", "0.01", to)
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		<-done
	}()
	netnstest.Eventually(t, 10*time.Second, "ping answered before the cut", func() bool { return len(replyTimes(out.String())) >= 10 })
	cutAt := float64(time.Now().UnixNano()) / 1e9
	cut()
	netnstest.Eventually(t, 20*time.Second, "ping answered again after the cut", func() bool {
		after := 0
		for _, ts := range replyTimes(out.String()) {
			if ts > cutAt {
				after++
			}
		}
		return after >= 10
	})
	ts := replyTimes(out.String())
	var worst float64
	for i := 1; i < len(ts); i++ {
		worst = max(worst, ts[i]-ts[i-1])
	}
	return time.Duration(worst * float64(time.Second))
}

// TestIntegrationSTPTriangle runs three swctl bridges cabled in a loop:
// RSTP must block exactly one port, hosts must reach each other with each
// broadcast delivered once, and when the root port of c is cut, c's
// alternate port must take over within a fraction of the forward delay
// (point-to-point links: proposal and agreement, no timers).
func TestIntegrationSTPTriangle(t *testing.T) {
	tr := newSTPTriangle(t)
	start := time.Now()
	tr.converge(t, 20*time.Second, "cb", "ca")
	t.Logf("triangle converged %v after its last member was added", time.Since(start).Round(time.Millisecond))
	mustPing(t, tr.a.h, tr.b.h.ip)
	mustPing(t, tr.a.h, tr.c.h.ip)
	mustPing(t, tr.b.h, tr.c.h.ip)
	checkNoStorm(t, tr.links(), 700, openStation(t, tr.a.h), openStation(t, tr.b.h), openStation(t, tr.c.h))

	// Cut a-c, c's root port's link: c's alternate port to b takes over.
	var runs []time.Duration
	for range 5 {
		d := outage(t, tr.c.h, tr.a.h.ip, func() { tr.a.tb.dut.Run("ip", "link", "set", "ac", "down") })
		tr.converge(t, 10*time.Second, "", "cb", "ac", "ca")
		runs = append(runs, d)
		tr.a.tb.dut.Run("ip", "link", "set", "ac", "up")
		tr.converge(t, 10*time.Second, "cb", "ca")
	}
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	t.Logf("reconvergence after cutting the root port's link (ping every 10 ms, longest gap): median %v, range %v-%v, runs %v",
		median.Round(time.Millisecond), sorted[0].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), runs)
	if median > 2*time.Second {
		t.Errorf("reconvergence: median %v, want well under the forward delay (4 s): an alternate port becoming root port forwards at once", median)
	}
}
