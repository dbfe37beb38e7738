package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// trunkCounters is the part of `trunk show -o json` the policy tests read:
// the trunk's state and each port's flags, link and transmit counter.
type trunkCounters struct {
	Active    bool   `json:"active"`
	Announced uint64 `json:"announced"`
	Ports     []struct {
		Name      string   `json:"name"`
		Link      string   `json:"link"`
		Flags     []string `json:"flags"`
		TxPackets uint64   `json:"tx_packets"`
	} `json:"ports"`
}

// trunkState reads trunk0's state and port counters.
func (tb *testbed) trunkState() trunkCounters {
	tb.t.Helper()
	var ts []trunkCounters
	tb.swctlJSON(&ts, "trunk", "show", "trunk0")
	return ts[0]
}

// port returns what trunk show says of port p.
func (tc trunkCounters) port(p string) (link string, flags []string, tx uint64) {
	for _, x := range tc.Ports {
		if x.Name == p {
			return x.Link, x.Flags, x.TxPackets
		}
	}
	return "", nil, 0
}

// carrier reads the kernel's carrier of dev in ns: "1", "0", or the
// error text.
func carrier(ns *netnstest.NS, dev string) string {
	out, err := ns.Try("cat", "/sys/class/net/"+dev+"/carrier")
	if err != nil {
		return "error: " + strings.TrimSpace(out)
	}
	return strings.TrimSpace(out)
}

func TestIntegrationTrunkMinLinks(t *testing.T) {
	tp := newTrunkPair(t, 2)
	_, ipB := tp.createTrunks(t, "--proto", "loadbalance", "--min-links", "2")
	noCarrier := func() bool { return strings.Contains(tp.a.dut.Run("ip", "link", "show", "trunk0"), "NO-CARRIER") }
	netnstest.Eventually(t, 10*time.Second, "trunk0's carrier up with both links", func() bool {
		return carrier(tp.a.dut, "trunk0") == "1" && !noCarrier()
	})
	mustPingNS(t, tp.a.dut, ipB)

	// One link of two: below min-links, the TAP loses its carrier.
	tp.a.dut.Run("ip", "link", "set", "a1", "down")
	netnstest.Eventually(t, 10*time.Second, "trunk0's carrier down with one link of two", func() bool {
		return carrier(tp.a.dut, "trunk0") == "0" && noCarrier()
	})
	if st := tp.a.trunkState(); st.Active {
		t.Errorf("trunk show with one link of two and min-links 2: expected not active, got active")
	}

	tp.a.dut.Run("ip", "link", "set", "a1", "up")
	netnstest.Eventually(t, 10*time.Second, "trunk0's carrier up again with both links", func() bool {
		return carrier(tp.a.dut, "trunk0") == "1" && !noCarrier()
	})
	mustPingNS(t, tp.a.dut, ipB)
}

func TestIntegrationTrunkNoPreempt(t *testing.T) {
	tp := newTrunkPair(t, 2)
	// Both ends without preemption: a failover trunk accepts frames on
	// its active port only, so both must stay on their backups.
	_, ipB := tp.createTrunks(t, "--proto", "failover", "--preempt", "off")
	mustPingNS(t, tp.a.dut, ipB)
	if _, flags, _ := tp.a.trunkState().port("a1"); !has(flags, "active") {
		t.Fatalf("before the cut: expected a1 active, got flags %v", flags)
	}

	tp.a.dut.Run("ip", "link", "set", "a1", "down")
	netnstest.Eventually(t, 10*time.Second, "a2 takes over", func() bool {
		_, flags, _ := tp.a.trunkState().port("a2")
		return has(flags, "active")
	})
	tp.a.dut.Run("ip", "link", "set", "a1", "up")
	netnstest.Eventually(t, 10*time.Second, "a1's link back up in trunk show", func() bool {
		link, _, _ := tp.a.trunkState().port("a1")
		return link == "up"
	})

	// The primary is back, but traffic stays on the backup: a2's
	// transmit counter grows with the pings, a1's does not move.
	before := tp.a.trunkState()
	_, _, tx1 := before.port("a1")
	_, _, tx2 := before.port("a2")
	sent, rcv, out := nsPing(tp.a.dut, ipB, "-c", "5", "-i", "0.2")
	if rcv == 0 {
		t.Fatalf("ping over the backup after the primary came back: no replies\n%s", out)
	}
	after := tp.a.trunkState()
	_, flags1, tx1After := after.port("a1")
	_, flags2, tx2After := after.port("a2")
	if tx1After != tx1 || tx2After < tx2+uint64(sent) {
		t.Errorf("%d pings sent: expected a1's tx to stay at %d and a2's to grow by at least %d from %d; got a1 %d, a2 %d",
			sent, tx1, sent, tx2, tx1After, tx2After)
	}
	if !has(flags1, "master") || has(flags1, "active") || !has(flags2, "active") {
		t.Errorf("without preemption: expected a1 master and not active, a2 active; got a1 %v, a2 %v", flags1, flags2)
	}

	// Preemption turned on in place: back to the primary at once.
	tp.a.swctl("trunk", "set", "trunk0", "--preempt", "on")
	netnstest.Eventually(t, 10*time.Second, "a1 active again once preemption is on", func() bool {
		_, flags, _ := tp.a.trunkState().port("a1")
		return has(flags, "active")
	})
}

func TestIntegrationTrunkGratuitousARPAfterFailover(t *testing.T) {
	netnstest.RequireTool(t, "tcpdump", "tcpdump")
	tp := newTrunkPair(t, 2)
	ipA, ipB := tp.createTrunks(t, "--proto", "failover")
	mustPingNS(t, tp.a.dut, ipB)
	mac := tp.a.trunk("trunk0").LLAddr

	// On B's end of the backup link, wait for one ARP request from A's
	// trunk whose sender and target addresses are the same: a gratuitous
	// ARP (arp[14:4] is the sender's address, arp[24:4] the target's).
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	filter := "arp and ether src " + mac + " and arp[6:2] = 1 and arp[14:4] = arp[24:4]"
	capture := tp.b.dut.Command(ctx, "tcpdump", "-i", "b2", "-n", "-e", "-l", "-c", "1", filter)
	out, errs := &lockedBuffer{}, &lockedBuffer{}
	capture.Stdout, capture.Stderr = out, errs
	if err := capture.Start(); err != nil {
		t.Fatalf("start tcpdump: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- capture.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	netnstest.Eventually(t, 15*time.Second, "tcpdump listening on b2", func() bool {
		return strings.Contains(errs.String(), "listening on")
	})
	select {
	case err := <-done:
		t.Fatalf("tcpdump exited before the failover (a gratuitous ARP without one?): %v\n%s%s", err, out.String(), errs.String())
	default:
	}

	tp.a.dut.Run("ip", "link", "set", "a1", "down")
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Fatalf("tcpdump: %v\n%s%s", err, out.String(), errs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no gratuitous ARP for %s from %s on b2 within 20 s of the failover:\n%s%s", ipA, mac, out.String(), errs.String())
	}
	if want := "Request who-has " + ipA + " tell " + ipA; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), mac) {
		t.Errorf("tcpdump on b2: expected a frame from %s with %q, got\n%s", mac, want, out.String())
	}
	if n := tp.a.trunkState().Announced; n == 0 {
		t.Errorf("trunk show after the failover: expected announcements counted, got 0")
	}
	mustPingNS(t, tp.a.dut, ipB)
}
