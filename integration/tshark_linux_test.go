package integration

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// requireTshark skips without tshark, or fails under SWCTL_REQUIRE_NETNS=1
// (scripts/install-deps.sh installs it).
func requireTshark(t *testing.T) {
	t.Helper()
	netnstest.RequireTool(t, "tshark", "tshark")
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lacpCounters returns a trunk port's LACPDU counters from trunk show.
func lacpCounters(tb *testbed, port string) (rx, tx uint64) {
	tb.t.Helper()
	var ts []struct {
		Ports []struct {
			Name string `json:"name"`
			LACP *struct {
				Rx uint64 `json:"rx_lacpdus"`
				Tx uint64 `json:"tx_lacpdus"`
			} `json:"lacp"`
		} `json:"ports"`
	}
	tb.swctlJSON(&ts, "trunk", "show", "trunk0")
	for _, p := range ts[0].Ports {
		if p.Name == port && p.LACP != nil {
			return p.LACP.Rx, p.LACP.Tx
		}
	}
	tb.t.Fatalf("trunk show trunk0: no LACP counters for %s", port)
	return 0, 0
}

func TestIntegrationLACPDUsDecodeCleanlyInTshark(t *testing.T) {
	netnstest.Require(t)
	requireTshark(t)
	tp := newTrunkPair(t, 2)
	pcap := filepath.Join(t.TempDir(), "a1.pcapng")

	// Capture every frame on A's a1 (both directions) from before the
	// trunks exist, so the whole negotiation is in the file.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	capture := tp.a.dut.Command(ctx, "tshark", "-i", "a1", "-q", "-w", pcap)
	capLog := &lockedBuffer{}
	capture.Stdout, capture.Stderr = capLog, capLog
	if err := capture.Start(); err != nil {
		t.Fatalf("start tshark: %v", err)
	}
	captureDone := make(chan error, 1)
	go func() { captureDone <- capture.Wait() }()
	stopCapture := func() {
		// ip netns exec execs tshark: the pid is tshark's. SIGINT makes
		// it stop dumpcap and finish the file.
		capture.Process.Signal(syscall.SIGINT)
		select {
		case <-captureDone:
		case <-time.After(15 * time.Second):
			capture.Process.Kill()
			<-captureDone
			t.Errorf("tshark did not stop on SIGINT within 15s:\n%s", capLog.String())
		}
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stopCapture()
		}
	})
	netnstest.Eventually(t, 30*time.Second, "tshark capturing on a1", func() bool {
		select {
		case err := <-captureDone:
			stopped = true
			t.Fatalf("tshark exited before capturing: %v\n%s", err, capLog.String())
		default:
		}
		return strings.Contains(capLog.String(), "Capturing on")
	})

	tp.createTrunks(t, "--proto", "lacp", "--lacp-timeout", "fast")
	netnstest.Eventually(t, 10*time.Second, "LACP collecting+distributing on both ends", func() bool {
		return tp.a.distributing(2) && tp.b.distributing(2)
	})
	// Both ends distribute: the LACPDUs each way across a1 from now on
	// say so. Wait for two more sent and two more received on a1 (1 s
	// apart with fast timers), then stop the capture: the first may have
	// been counted as the state changed, and the last may still be on its
	// way into the capture file when it stops.
	rx0, tx0 := lacpCounters(tp.a, "a1")
	netnstest.Eventually(t, 10*time.Second, "two LACPDUs each way across a1 after both ends distribute", func() bool {
		rx, tx := lacpCounters(tp.a, "a1")
		return rx >= rx0+2 && tx >= tx0+2
	})
	stopCapture()
	stopped = true

	// Decode: the full tree (for warnings) and one line of fields per
	// slow-protocols frame (for counting).
	tree, err := netnstest.Try("tshark", "-r", pcap, "-V", "-Y", "slow")
	if err != nil {
		t.Fatalf("tshark -r -V: %v\n%s", err, tree)
	}
	for _, bad := range []string{"Malformed", "Expert Info (Warning", "Expert Info (Error", "[Error"} {
		if strings.Contains(tree, bad) {
			t.Errorf("tshark's decode of the captured LACPDUs contains %q:\n%s", bad, excerpt(tree, bad))
		}
	}
	fields, err := netnstest.Try("tshark", "-r", pcap, "-Y", "slow", "-T", "fields", "-E", "separator=/t",
		"-e", "eth.src", "-e", "slow.subtype", "-e", "lacp.version", "-e", "lacp.actor.sysid", "-e", "lacp.actor.state")
	if err != nil {
		t.Fatalf("tshark -r -T fields: %v\n%s", err, fields)
	}
	const stCollecting, stDistributing = 0x10, 0x20
	lacpdus := 0
	sysDistributing := map[string]bool{} // actor system -> seen collecting+distributing
	for _, line := range strings.Split(strings.TrimSpace(fields), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			continue
		}
		if f[1] != "1" && f[1] != "0x01" {
			continue // a marker, not an LACPDU
		}
		lacpdus++
		if v, err := strconv.ParseUint(f[2], 0, 8); err != nil || v != 1 {
			t.Errorf("LACPDU from %s: version %q, want 1", f[0], f[2])
		}
		st, err := strconv.ParseUint(f[4], 0, 8)
		if err != nil {
			t.Errorf("LACPDU from %s: actor state %q: %v", f[0], f[4], err)
			continue
		}
		if st&stCollecting != 0 && st&stDistributing != 0 {
			sysDistributing[f[3]] = true
		} else if _, ok := sysDistributing[f[3]]; !ok {
			sysDistributing[f[3]] = false
		}
	}
	t.Logf("captured on a1: %d LACPDUs, actor systems (true = seen collecting+distributing): %v", lacpdus, sysDistributing)
	if lacpdus < 2 {
		t.Fatalf("want at least 2 LACPDUs decoded, got %d:\n%s", lacpdus, fields)
	}
	if len(sysDistributing) != 2 {
		t.Errorf("want LACPDUs from 2 actor systems (A and B), got %v", sysDistributing)
	}
	for sys, ok := range sysDistributing {
		if !ok {
			t.Errorf("no LACPDU from actor %s shows collecting and distributing:\n%s", sys, fields)
		}
	}
	if !strings.Contains(tree, "Link Aggregation Control Protocol") {
		t.Errorf("tshark -V shows no Link Aggregation Control Protocol layer:\n%s", tree)
	}
}

// excerpt returns the lines around the first occurrence of s in text.
func excerpt(text, s string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, s) {
			lo, hi := max(0, i-15), min(len(lines), i+5)
			return strings.Join(lines[lo:hi], "\n")
		}
	}
	return fmt.Sprintf("(%q not found)", s)
}
