package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// quiet keeps the hosts from sending anything but what the test sends:
// no IPv6 (router and neighbour solicitations, MLD) and static ARP
// entries for each other.
func (tb *testbed) quiet() {
	for _, h := range tb.hosts {
		h.Run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1", "net.ipv6.conf.eth0.disable_ipv6=1")
		for _, o := range tb.hosts {
			if o != h {
				h.Run("ip", "neigh", "replace", o.ip, "lladdr", o.mac, "dev", "eth0", "nud", "permanent")
			}
		}
	}
}

// captureValue returns a bridge0 capture sample from swctl stats.
func (tb *testbed) captureValue(name string, labels map[string]string) float64 {
	tb.t.Helper()
	return tb.stats()[sampleKey(name, labels)]
}

// TestIntegrationCaptureTshark captures ten frames of a bridge under a
// ping, once as pcapng piped into tshark -r - and once as pcap written
// to a file, and checks that tshark reads exactly ten frames, every one
// an ICMP echo decoded.
func TestIntegrationCaptureTshark(t *testing.T) {
	requireTshark(t)
	tb := bridged(t, 2)
	tb.quiet()
	h := tb.hosts
	mustPing(t, h[0], h[1].ip)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pinger := h[0].Command(ctx, "ping", "-i", "0.05", "-q", h[1].ip)
	if err := pinger.Start(); err != nil {
		t.Fatalf("start ping: %v", err)
	}
	defer func() { pinger.Process.Kill(); pinger.Wait() }()

	fields := []string{"-T", "fields", "-e", "frame.interface_name", "-e", "frame.protocols", "-e", "icmp.type"}
	check := func(what, out string) {
		t.Helper()
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) != 10 {
			t.Errorf("%s: tshark read %d frames, want exactly 10:\n%s", what, len(lines), out)
		}
		for _, l := range lines {
			f := strings.Split(l, "\t")
			if len(f) != 3 || !strings.HasSuffix(f[1], ":ip:icmp:data") || (f[2] != "8" && f[2] != "0") {
				t.Errorf("%s: frame %q: want ICMP echo (type 8 or 0) decoded", what, l)
			}
		}
	}

	// pcapng on the standard output, straight into tshark.
	capture := exec.CommandContext(ctx, swctlBin, "--socket", tb.socket(), "capture", "bridge0", "-c", "10")
	var capErr bytes.Buffer
	capture.Stderr = &capErr
	shark := exec.CommandContext(ctx, "tshark", append([]string{"-r", "-"}, fields...)...)
	pipe, err := capture.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	shark.Stdin = pipe
	var sharkOut, sharkErr bytes.Buffer
	shark.Stdout, shark.Stderr = &sharkOut, &sharkErr
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	if err := shark.Start(); err != nil {
		t.Fatal(err)
	}
	if err := capture.Wait(); err != nil {
		t.Fatalf("swctl capture bridge0 -c 10: %v\n%s", err, capErr.String())
	}
	if err := shark.Wait(); err != nil {
		t.Fatalf("tshark -r -: %v\n%s", err, sharkErr.String())
	}
	check("pcapng | tshark -r -", sharkOut.String())
	if got, want := capErr.String(), "capture bridge0: 10 frames, 0 dropped (the capture's queue was full)\n"; got != want {
		t.Errorf("capture's summary: expected %q, got %q", want, got)
	}
	for _, l := range strings.Split(strings.TrimRight(sharkOut.String(), "\n"), "\n") {
		if name, _, _ := strings.Cut(l, "\t"); name != "p1" && name != "p2" {
			t.Errorf("pcapng interface %q: want the port, p1 or p2", name)
		}
	}

	// pcap to a file.
	file := filepath.Join(tb.dir, "p1.pcap")
	tb.swctl("capture", "p1", "--direction", "in", "--pcap", "-c", "10", "-w", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 4 || !bytes.Equal(b[:4], []byte{0x4d, 0x3c, 0xb2, 0xa1}) {
		t.Fatalf("%s: not a nanosecond pcap file (magic % x)", file, b[:min(4, len(b))])
	}
	out, err := exec.CommandContext(ctx, "tshark", append([]string{"-r", file}, fields...)...).Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", file, err)
	}
	check("pcap file", string(out))
}

// TestIntegrationCaptureSlowReader runs a capture whose output nobody
// reads while two hosts ping each other with large frames: the capture
// drops and counts, every ping is forwarded all the while, and after the
// stream's stall time the daemon cuts the capture and counts that too.
func TestIntegrationCaptureSlowReader(t *testing.T) {
	tb := bridged(t, 2)
	h := tb.hosts
	mustPing(t, h[0], h[1].ip)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The capture writes into a pipe nobody reads.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	capture := exec.CommandContext(ctx, swctlBin, "--socket", tb.socket(), "capture", "bridge0", "--direction", "both")
	capture.Stdout = w
	var capErr bytes.Buffer
	capture.Stderr = &capErr
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() { capture.Process.Kill(); capture.Wait() }()
	bridge := map[string]string{"bridge": "bridge0"}
	netnstest.Eventually(t, 10*time.Second, "the capture runs", func() bool {
		return tb.captureValue("swctl_bridge_capture_sessions", bridge) == 1
	})

	const pings = 1000
	answered := pingLarge(h[0], h[1].ip, pings)
	if answered < pings*95/100 {
		t.Errorf("pings answered while the capture stalls: %d of %d, want (nearly) all", answered, pings)
	}
	dropped := tb.captureValue("swctl_bridge_capture_frames_total", with(bridge, "fate", "dropped"))
	queued := tb.captureValue("swctl_bridge_capture_frames_total", with(bridge, "fate", "queued"))
	t.Logf("%d of %d pings answered; the capture queued %v frames and dropped %v", answered, pings, queued, dropped)
	if dropped == 0 || queued == 0 {
		t.Errorf("a capture nobody reads: expected frames queued and frames dropped, got %v queued, %v dropped", queued, dropped)
	}
	netnstest.Eventually(t, 30*time.Second, "the stalled capture cut after the stream's stall time", func() bool {
		return tb.captureValue("swctl_bridge_capture_streams_cut_total", bridge) == 1 &&
			tb.captureValue("swctl_bridge_capture_sessions", bridge) == 0
	})
	mustPing(t, h[0], h[1].ip)
}

// pingLarge sends count pings of 1400 bytes from h to ip, 2 ms apart, and
// returns how many came back.
func pingLarge(h *host, ip string, count int) int {
	out, _ := h.Try("ping", "-c", strconv.Itoa(count), "-i", "0.002", "-s", "1400", "-W", "1", "-q", ip)
	m := regexp.MustCompile(`(\d+) received`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
