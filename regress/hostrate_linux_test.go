package regress

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// TestIntegrationRegressHostsRateNetns runs the forwarding-rate test of
// the real-host code path end to end in its shortest form (one run, one
// size, 200 ms trials, at most 3 search trials) against two namespaces
// reached through the netns transport: a DUT whose two interfaces are
// cabled to the peer's two, where the peer's swctl bench sends on p0 and
// counts on p1 across the DUT's bridge. It checks the table, results.json
// and the chart, that CPU was read through the DUT's transport, and that
// the "hosts" are as they were afterwards, also after a run interrupted
// in the middle of a search.
func TestIntegrationRegressHostsRateNetns(t *testing.T) {
	netnstest.Require(t)
	if testing.Short() {
		t.Skip("-short: the hosts rate run takes about 20 s")
	}
	dut, peer := netnstest.New(t, "rrd"), netnstest.New(t, "rrp")
	netnstest.Veth(t, dut, "d0", "02:54:00:02:00:02", peer, "p0", "02:54:00:02:00:01")
	netnstest.Veth(t, dut, "d1", "02:54:00:02:01:02", peer, "p1", "02:54:00:02:01:01")
	hosts := hostsFixture{dut: dut, peer: peer, workdir: t.TempDir()}
	before := hosts.settled(t)
	hc := hosts.load(t, "[dut]\ntransport = netns\nhost = %[1]s\ninterfaces = d0 d1\nworkdir = %[3]s\n\n[peer]\ntransport = netns\nhost = %[2]s\ninterfaces = p0 p1\nworkdir = %[3]s\n\n[tests]\nrun = rate\n")
	rc := RateConfig{Sizes: []int{64}, Trial: 200 * time.Millisecond, MaxTrials: 3, Resolution: 0.05, Flows: 4,
		Latency: true, WindowDuration: 200 * time.Millisecond, WindowSize: DefaultWindowSize, Window: DefaultWindow}
	var stdout strings.Builder
	stderr := &syncWriter{w: new(strings.Builder)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, dir, err := Run(ctx, Config{
		AB: ABSpec{Repo: ".."}, Runs: 1, Seconds: 1, Alpha: 0.05, Hosts: hc, Rate: &rc,
		OutRoot: t.TempDir(), Stdout: &stdout, Stderr: stderr,
	})
	t.Logf("hosts rate run took %v\nstderr:\n%s\nstdout:\n%s", time.Since(start).Round(time.Second), stderr.String(), stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	for _, want := range []string{"== forwarding rate: bridge0 ==\nForwarding rate (frames/s, loss %)\nmethod: receiving: the generator's receiver reads every frame at the far end\nbytes     max fps", "\n64/60     ", "== window benchmark: bridge0 ==", "\npackets/s "} {
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks %q:\n%s", want, text)
		}
	}
	if n := len(res.WindowSamples); n != 2 || res.WindowSamples[0].Sent == 0 || res.WindowSamples[0].Window != DefaultWindow {
		t.Errorf("%d window samples (%+v), want 2 with frames sent, window %d", n, res.WindowSamples, DefaultWindow)
	}
	if strings.Contains(text, "== plain ==") {
		t.Errorf("stdout has a promisc table or an n/a cell; want only the measured rate table:\n%s", text)
	}
	// One size, one run, two roles.
	if n := len(res.RateSamples); n != 2 {
		t.Errorf("%d forwarding-rate samples, want 2", n)
	}
	for _, s := range res.RateSamples {
		switch {
		case s.Setup != "bridge0" || s.Size != 64 || s.FrameLen != 60:
			t.Errorf("sample of %s size %d/%d, want bridge0 64/60", s.Setup, s.Size, s.FrameLen)
		case s.Max.PacketsPerSecond <= 0 || s.Max.Size != 60 || s.Max.Flows != 4:
			t.Errorf("max-rate run without frames, or not 60-byte frames of 4 flows: %+v", s.Max.Result)
		case s.Max.CPU.Ticks == 0 || s.Max.EngineCPU == nil:
			t.Errorf("max-rate run without the DUT's or the engine's CPU: %+v", s.Max)
		case s.ZeroLoss > 0 && (s.Latency == nil || s.Latency.Result.Latency == nil):
			t.Errorf("no latency run at the zero-loss rate %v", s.ZeroLoss)
		case s.SearchBound <= 0:
			t.Errorf("search: no upper bound from swctl bench --search's own max-rate run: %+v", s)
		case s.ZeroLoss < 0 || s.ZeroLoss > s.SearchBound*1.01 || len(s.Trials) == 0 || len(s.Trials) > 3:
			// Three trials may all lose frames on a busy machine: 0 is
			// a valid outcome. The bound is the search's own max-rate
			// run (bench --search makes one), not the separate max run.
			t.Errorf("search: zero-loss rate %v after %d trials; want one between 0 and the search's max-rate run's sent rate %v after 1-3 trials", s.ZeroLoss, len(s.Trials), s.SearchBound)
		}
	}
	log := strings.Join(res.Commands, "\n")
	for _, want := range []string{
		"[netns " + dut.Name + "] cat /proc/stat",
		"[netns " + dut.Name + "] cat /proc/",
		"bridge static bridge0 02:54:00:02:00:01 d0",
		"bridge static bridge0 02:54:00:02:01:01 d1",
		"[netns " + peer.Name + "] " + hosts.workdir,
		"/swctl bench p0 p1 --size 60 --flows 4 --window 0 --duration 200ms -o json --quiet",
		"/swctl bench p0 p1 --size 60 --flows 4 --search --trial 200ms --max-trials 3 --resolution ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("commands lack %q:\n%s", want, log)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		RateSetups  []RateSpec   `json:"rate_setups"`
		RateSamples []RateSample `json:"rate_samples"`
		RateCells   []RoleCell   `json:"rate_cells"`
		Hosts       *HostsConfig `json:"hosts"`
		Method      []string     `json:"method"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(js.RateSetups) != 1 || len(js.RateSamples) != 2 || len(js.RateCells) == 0 || js.Hosts == nil || !strings.Contains(strings.Join(js.Method, "\n"), "swctl bench --search") {
		t.Errorf("results.json: %d rate setups, %d samples, %d cells, hosts %v; want 1, 2, some, set, and the method", len(js.RateSetups), len(js.RateSamples), len(js.RateCells), js.Hosts)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || !strings.Contains(string(md), "== forwarding rate: bridge0 ==") {
		t.Errorf("report.md missing or without the rate table: %v", err)
	}
	if f, err := os.Open(filepath.Join(dir, "rate-bridge0.svg")); err != nil {
		t.Error(err)
	} else {
		var root xml.StartElement
		if err := xml.NewDecoder(f).Decode(&root); err != nil {
			t.Errorf("rate-bridge0.svg: %v", err)
		}
		f.Close()
	}
	hosts.checkBack(t, "after a run", before)

	// Interrupted (as by Ctrl-C) while the peer's swctl bench searches:
	// bench is stopped on the peer and everything is put back.
	stderr2 := &syncWriter{w: new(strings.Builder)}
	ictx, icancel := context.WithCancel(context.Background())
	defer icancel()
	go func() {
		for ictx.Err() == nil {
			pids, _ := netnstest.Try("ip", "netns", "pids", peer.Name)
			for _, pid := range strings.Fields(pids) {
				if cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmd), "--search") {
					icancel()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_, _, err = Run(ictx, Config{
		AB: ABSpec{Repo: ".."}, Runs: 1, Seconds: 1, Alpha: 0.05, Hosts: hc, Rate: &rc,
		OutRoot: t.TempDir(), Stdout: io.Discard, Stderr: stderr2,
	})
	t.Logf("interrupted run: %v\nstderr:\n%s", err, stderr2.String())
	if err == nil || !strings.Contains(err.Error(), "--search") {
		t.Errorf("interrupted run: error %v, want one naming the search", err)
	}
	hosts.checkBack(t, fmt.Sprintf("after an interrupted run (%v)", err), before)
}
