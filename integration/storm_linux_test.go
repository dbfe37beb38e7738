package integration

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

// sysfsCounter reads a kernel counter of dev in ns
// (/sys/class/net/DEV/statistics/NAME).
func sysfsCounter(t *testing.T, ns *netnstest.NS, dev, name string) uint64 {
	t.Helper()
	out := ns.Run("cat", "/sys/class/net/"+dev+"/statistics/"+name)
	n, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("%s %s: %v", dev, name, err)
	}
	return n
}

// TestIntegrationStormControl makes a loop on purpose: three links
// between a swctl bridge and a Linux bridge, both without a spanning
// tree, so that every broadcast a host sends doubles at each hop. With
// --storm-limit on the looped members, the storm each link carries from
// swctl stays bounded by the limit (each member floods at most the limit,
// and a link carries what two others flood), yet is a storm (well above
// what the host sends), the daemon answers bridge show within a second
// all along, and the storm ends when the loop is broken.
func TestIntegrationStormControl(t *testing.T) {
	const limit = 1000
	tb := newTestbed(t, 1)
	tb.start()
	far := netnstest.New(t, "far")
	far.Run("ip", "link", "add", "br0", "type", "bridge", "stp_state", "0")
	far.Run("ip", "link", "set", "br0", "up")
	links := []string{"l1", "l2", "l3"}
	for i, l := range links {
		s := fmt.Sprintf("s%d", i+1)
		netnstest.Veth(t, tb.dut, l, "", far, s, "")
		far.Run("ip", "link", "set", s, "master", "br0")
	}
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl(append([]string{"bridge", "add", "bridge0", "p1"}, links...)...)
	for _, l := range links {
		tb.swctl("bridge", "port", "bridge0", l, "--storm-limit", strconv.Itoa(limit))
	}
	if got := tb.stpShow().Ports[1].Flags; !slices.Contains(got, "storm-limit=1000") {
		t.Fatalf("bridge show: l1 flags %q, want storm-limit=1000 among them", got)
	}

	// A host keeps sending a few broadcasts (inject a second), each of
	// which the loop multiplies until the storm limits drop it: without
	// them a storm limited below what the loop turns around in one round
	// trip dies out at once.
	const inject = 200
	st := openStation(t, tb.hosts[0])
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second / inject)
		defer tick.Stop()
		for id := uint32(0); ; id++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				_, _ = st.port.WriteBatch(platform.Batch{Frames: [][]byte{testFrame(frame.Broadcast, st.mac, id, 0)}})
			}
		}
	}()
	stopInjecting := func() {
		select {
		case <-stop:
		default:
			close(stop)
			<-stopped
		}
	}
	t.Cleanup(stopInjecting)
	// reading is a link's tx counter and when it was read: the middle of
	// the read, which runs a process and takes tens of milliseconds on a
	// busy machine, so each link's rate is taken over its own interval.
	type reading struct {
		n  uint64
		at time.Time
	}
	tx := func() []reading {
		var r []reading
		for _, l := range links {
			t0 := time.Now()
			n := sysfsCounter(t, tb.dut, l, "tx_packets")
			r = append(r, reading{n, t0.Add(time.Since(t0) / 2)})
		}
		return r
	}
	// Each member floods at most limit frames a second once its burst is
	// spent: a link carries what the two others flood, and the host's
	// broadcasts. The bound allows a quarter more for the bursts and the
	// measurement.
	maxPerSecond := float64(2*limit*5/4 + inject)
	first := tx()
	prev := first
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		for range 5 {
			t0 := time.Now()
			tb.stpShow()
			if d := time.Since(t0); d > time.Second {
				t.Errorf("bridge show answered after %v during the storm, want within 1 s", d)
			}
			time.Sleep(200 * time.Millisecond)
		}
		cur := tx()
		for i := range links {
			secs := cur[i].at.Sub(prev[i].at).Seconds()
			if rate := float64(cur[i].n-prev[i].n) / secs; rate > maxPerSecond {
				t.Errorf("%s carried %.0f frames/s from swctl, want at most %.0f under a storm limit of %d", links[i], rate, maxPerSecond, limit)
			} else {
				t.Logf("%s carried %.0f frames/s from swctl (at most %.0f)", links[i], rate, maxPerSecond)
			}
		}
		prev = cur
	}
	stopInjecting()
	// The loop must really storm, or the bound above proves nothing: far
	// more than the host's broadcasts alone, the limit a second per link.
	var stormed uint64
	for i := range links {
		stormed += prev[i].n - first[i].n
	}
	if secs := prev[0].at.Sub(first[0].at).Seconds(); float64(stormed) < 3*limit*secs {
		t.Fatalf("the loop carried %d frames from swctl in %.1f s, want a storm of at least %.0f", stormed, secs, 3*limit*secs)
	}
	if b := tb.stpShow(); b.Dropped == 0 {
		t.Errorf("bridge show: %d frames dropped after a storm over the limit, want some", b.Dropped)
	}

	// Breaking the loop ends the storm.
	far.Run("ip", "link", "del", "br0")
	netnstest.Eventually(t, 5*time.Second, "storm over after the loop is broken", func() bool {
		a := tx()
		time.Sleep(200 * time.Millisecond)
		b := tx()
		var d uint64
		for i := range b {
			d += b[i].n - a[i].n
		}
		return d < 10
	})
}

// bpduFrame is a configuration BPDU's frame header from src: to
// 01:80:c2:00:00:00, an 802.3 length and the spanning tree LLC, zero
// padded to 60 bytes.
func bpduFrame(src frame.MAC) []byte {
	f := make([]byte, 60)
	copy(f[0:6], []byte{0x01, 0x80, 0xc2, 0, 0, 0})
	copy(f[6:12], src[:])
	binary.BigEndian.PutUint16(f[12:], 39)
	copy(f[14:17], []byte{0x42, 0x42, 0x03})
	return f
}

// TestIntegrationBPDUGuard checks that a BPDU received on a member with
// --bpdu-guard on disables it (no traffic crosses; bridge show says so)
// and that bridge port --enable brings it back.
func TestIntegrationBPDUGuard(t *testing.T) {
	tb := newTestbed(t, 2)
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	tb.swctl("bridge", "add", "bridge0", "p1", "p2")
	tb.swctl("bridge", "port", "bridge0", "p1", "--bpdu-guard", "on")
	h1, h2 := tb.hosts[0], tb.hosts[1]
	mustPing(t, h1, h2.ip)
	flags := func() []string { return tb.stpShow().Ports[0].Flags }
	if got := flags(); !slices.Contains(got, "bpdu-guard") {
		t.Fatalf("bridge show: p1 flags %q, want bpdu-guard among them", got)
	}

	st := openStation(t, h1)
	st.send(t, bpduFrame(st.mac))
	netnstest.Eventually(t, 5*time.Second, "p1 disabled by its BPDU guard", func() bool {
		return slices.Contains(flags(), "bpdu-guard: disabled")
	})
	if !strings.Contains(tb.log.String(), "bpdu guard") {
		t.Errorf("daemon log does not tell of the BPDU guard:\n%s", tb.log.String())
	}
	if n := ping(h1, h2.ip, 3); n != 0 {
		t.Errorf("%d of 3 pings crossed a member its BPDU guard disabled, want none", n)
	}
	if out := tb.swctl("bridge", "show", "bridge0"); !strings.Contains(out, "bpdu-guard: disabled") {
		t.Errorf("bridge show does not say p1 is disabled:\n%s", out)
	}

	tb.swctl("bridge", "port", "bridge0", "p1", "--enable")
	if got := flags(); slices.Contains(got, "bpdu-guard: disabled") || !slices.Contains(got, "bpdu-guard") {
		t.Errorf("after --enable: p1 flags %q, want bpdu-guard and not disabled", got)
	}
	mustPing(t, h1, h2.ip)
}
