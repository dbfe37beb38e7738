package regress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// TestIntegrationRegressSmoke runs the suite in its shortest form (one run
// of 1 s per cell and role, the veth and bridge0 setups, three message
// sizes, the bulk tests: one pair, two pairs at once, UDP) as a PATCH run with a trivial patch, so that two binaries are
// built from two trees, and checks that every table, results.json and the
// charts come out well formed and that nothing is left behind.
func TestIntegrationRegressSmoke(t *testing.T) {
	netnstest.Require(t)
	if testing.Short() {
		t.Skip("-short: the smoke run takes about a minute")
	}
	patch := filepath.Join(t.TempDir(), "smoke.diff")
	os.WriteFile(patch, []byte("--- /dev/null\n+++ b/REGRESS_SMOKE_PATCH\n@@ -0,0 +1 @@\n+a trivial patch\n"), 0o644)
	out := t.TempDir()
	var stdout, stderr strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	res, dir, err := Run(ctx, Config{
		AB: ABSpec{Repo: "..", Patch: patch}, Runs: 1, Seconds: 1, Alpha: 0.05,
		Setups: []string{"veth", "bridge0"}, OutRoot: out, Stdout: &stdout, Stderr: io.MultiWriter(&stderr),
		MsgSize: &MsgSizeConfig{Sizes: []int{1, 1024, 65536}, Seconds: 1},
		Bulk:    &BulkConfig{Seconds: 1, UDPMbps: 100, UDPLen: 1472},
	})
	t.Logf("smoke run took %v\nstderr:\n%s", time.Since(start).Round(time.Second), stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Trees.Patch.Binary == res.Trees.NoPatch.Binary || res.Mode != "patch" {
		t.Errorf("PATCH run: want two binaries, got patch %s, no patch %s (mode %s)", res.Trees.Patch.Binary, res.Trees.NoPatch.Binary, res.Mode)
	}
	text := stdout.String()
	for _, setup := range []string{"veth", "bridge0"} {
		if !strings.Contains(text, "== "+setup+" ==") {
			t.Errorf("stdout lacks the %s tables:\n%s", setup, text)
		}
	}
	for _, title := range []string{"Throughput (Mb/s)", "CPU (system %)", "CPU (interrupts %)"} {
		if n := strings.Count(text, title+"\n         PROMISC   PROMISC   -PROMISC  -PROMISC\n         patch     no patch  patch     no patch\nReceive  "); n != 2 {
			t.Errorf("table %q appears %d times in the shape wanted, want 2 (one per setup):\n%s", title, n, text)
		}
	}
	if !strings.Contains(text, "Forward  ") {
		t.Errorf("bridge0 tables lack the Forward row:\n%s", text)
	}
	if strings.Contains(text, "n/a") {
		t.Errorf("a cell is n/a: on veth every column, bridge0 -PROMISC included (bridge port --promisc off), is measured:\n%s", text)
	}
	for _, s := range res.Samples {
		if s.Mbps <= 0 || s.CPU.Ticks == 0 {
			t.Errorf("sample without throughput or CPU: %+v", s)
		}
		if s.Setup == "bridge0" && s.EngineCPU == nil {
			t.Errorf("bridge0 sample without the engine's CPU: %+v", s)
		}
	}

	// results.json: valid JSON with the expected keys.
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	for _, k := range []string{"environment", "trees", "samples", "cells", "commands", "instances", "method", "runs", "alpha", "msgsize", "msgsize_samples", "msgsize_cells", "bulk", "bulk_samples", "bulk_cells"} {
		if _, ok := js[k]; !ok {
			t.Errorf("results.json lacks %q", k)
		}
	}
	// veth: 2 columns x 2 roles x 2 rows; bridge0: 2 columns x 2 roles x 3 rows.
	if n := len(js["samples"].([]any)); n != 2*2*2+2*2*3 {
		t.Errorf("results.json has %d samples, want 20", n)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || !strings.Contains(string(md), "```\n== veth ==") {
		t.Errorf("report.md missing or without the tables: %v", err)
	} else if !strings.Contains(string(md), "== TCP stream by message size: bridge0 Forward ==") || !strings.Contains(string(md), "### TCP stream by message size") {
		t.Errorf("report.md lacks the message-size table or its every-cell section")
	}
	checkMsgSize(t, text, res)
	checkBulk(t, text, res)
	checkSVG(t, filepath.Join(dir, "msgsize-bridge0.svg"))
	// Charts: every label inside the picture, no legend over data.
	for _, name := range []string{"veth-throughput.svg", "veth-cpu.svg", "bridge0-throughput.svg", "bridge0-cpu.svg", "bulk-bridge0.svg"} {
		checkSVG(t, filepath.Join(dir, name))
	}
	// Nothing left behind: no worktree, no temporary tree.
	if _, err := os.Stat(res.Trees.Patch.Dir); !os.IsNotExist(err) {
		t.Errorf("the patch worktree %s is still there (%v)", res.Trees.Patch.Dir, err)
	}
}

// TestIntegrationRegressRateSmoke runs the forwarding-rate suite alone
// in a short form (one run, 200 ms trials, at most 3 search trials, the
// direct baseline and both setups, FULL's latency trial and
// frame-loss-rate steps, a 500 ms window benchmark, a 500 ms CPU run)
// and checks its tables, results.json, charts and that no namespace is
// left behind.
func TestIntegrationRegressRateSmoke(t *testing.T) {
	netnstest.Require(t)
	if testing.Short() {
		t.Skip("-short: the rate smoke run takes about a minute")
	}
	rc := DefaultRateConfig(true, false)
	rc.Trial, rc.MaxTrials, rc.Latency = 200*time.Millisecond, 3, true // latency: FULL's extra trial
	rc.Sizes = []int{64, 1518}
	rc.LossRate, rc.WindowDuration = true, 500*time.Millisecond // FULL's frame loss rate; the window benchmark
	rc.CPUTrial = 500 * time.Millisecond
	out := t.TempDir()
	var stdout, stderr strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	res, dir, err := Run(ctx, Config{
		AB: ABSpec{Repo: ".."}, Runs: 1, Seconds: 1, Alpha: 0.05, NoPromisc: true, Rate: &rc,
		OutRoot: out, Stdout: &stdout, Stderr: &stderr,
	})
	t.Logf("rate smoke run took %v\nstderr:\n%s\nstdout:\n%s", time.Since(start).Round(time.Second), stderr.String(), stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	cols := "\nmethod: counting: send-only generator; delivered = frames the receiving interface's rx_packets counted\nbytes     ns/frame    ns/frame    max fps     max fps     0-loss fps  0-loss fps  loss %      loss %\n          patch       no patch    patch       no patch    patch       no patch    patch       no patch\n64/60     "
	for _, setup := range []string{"bridge0", "trunk0"} {
		want := "== forwarding rate: " + setup + " ==\nForwarding rate (CPU ns/frame at 200000 frames/s paced, net of direct veth; frames/s; loss %)" + cols
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks the %s forwarding-rate table in the shape wanted:\n%s", setup, text)
		}
	}
	if want := "== forwarding rate: direct ==\nForwarding rate, no device under test (CPU ns/frame at 200000 frames/s paced: the tester's own, the baseline; frames/s; loss %)" + cols; !strings.Contains(text, want) {
		t.Errorf("stdout lacks the direct baseline's table in the shape wanted:\n%s", text)
	}
	if strings.Contains(text, "Throughput (Mb/s)") {
		t.Errorf("NoPromisc run printed promisc tables:\n%s", text)
	}
	if n := len(res.RateSamples); n != 3*2*2 {
		t.Errorf("%d forwarding-rate samples, want 12 (3 setups x 2 roles x 2 sizes)", n)
	}
	for _, s := range res.RateSamples {
		// The whole machine's cost per frame is measured; less the
		// tester's own user time it may come to 0 on a quiet direct
		// veth (the two are read from /proc/stat and /proc/PID/stat,
		// in clock ticks), never below.
		if s.Method != MethodCounting || s.CPU == nil || s.CPU.Err != "" || s.CPU.Cost.WholeNsPerFrame <= 0 || s.CPU.Cost.NsPerFrame < 0 || s.CPU.Figure.Offered != rc.CPURate || s.CPU.Figure.Delivered <= 0 {
			t.Errorf("%s %s %d: method %q, CPU run %+v; want the counting method and a CPU run at %v frames/s with a cost per frame", s.Setup, s.Role, s.Size, s.Method, s.CPU, rc.CPURate)
		}
		if s.MaxRate.Achieved != s.Max.SentPerSecond || s.MaxRate.Delivered != s.Max.PacketsPerSecond || s.MaxRate.TesterBound != (s.Max.Lost == 0) {
			t.Errorf("%s %s %d: max-rate figure %+v does not match its run %+v", s.Setup, s.Role, s.Size, s.MaxRate, s.Max.Result)
		}
		if s.Setup == "direct" {
			if s.Max.Received == 0 || s.Max.EngineCPU != nil || len(s.Trials) != 0 || s.CPU.Net != nil || s.Latency != nil || s.LossRate != nil {
				t.Errorf("direct %s %d: the baseline runs the max-rate and CPU runs only, with no engine: %+v", s.Role, s.Size, s)
			}
			continue
		}
		if s.CPU.Net == nil || s.CPU.Baseline == nil || *s.CPU.Net != s.CPU.Cost.NsPerFrame-*s.CPU.Baseline {
			t.Errorf("%s %s %d: CPU run without a net figure against the direct baseline: %+v", s.Setup, s.Role, s.Size, s.CPU)
		}
		if s.Max.Received == 0 || s.Max.CPU.Ticks == 0 || s.Max.EngineCPU == nil || len(s.Trials) == 0 {
			t.Errorf("%s %s %d: max run without frames, CPU or engine CPU, or no trials: %+v", s.Setup, s.Role, s.Size, s)
		}
		// With 3 trials on a busy machine no trial may pass: the rate is
		// then 0, and must agree with the trials either way.
		passed := false
		for _, tr := range s.Trials {
			passed = passed || (tr.Sent > 0 && tr.Received >= tr.Sent)
		}
		if s.ZeroLoss > 0 && (s.Latency == nil || s.Latency.Result.Latency == nil) {
			t.Errorf("%s %s %d: zero-loss rate %v but no latency trial", s.Setup, s.Role, s.Size, s.ZeroLoss)
		}
		if (s.ZeroLoss > 0) != passed {
			t.Errorf("%s %s %d: zero-loss rate %v, but a trial without loss: %v", s.Setup, s.Role, s.Size, s.ZeroLoss, passed)
		}
		if s.ZeroLoss > 0 && (s.ZeroLossRate.Offered != s.ZeroLossTrialRate || s.ZeroLossRate.Achieved <= 0 || s.ZeroLossRate.Delivered < s.ZeroLossRate.Achieved) {
			t.Errorf("%s %s %d: zero-loss figure %+v; want the passing trial's (rate %v) with all it sent delivered", s.Setup, s.Role, s.Size, s.ZeroLossRate, s.ZeroLossTrialRate)
		}
		if s.ZeroLossAboveMax != (s.ZeroLoss > s.Max.PacketsPerSecond) {
			t.Errorf("%s %s %d: zero-loss %v, max %v: above-max flag %v", s.Setup, s.Role, s.Size, s.ZeroLoss, s.Max.PacketsPerSecond, s.ZeroLossAboveMax)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	for _, k := range []string{"rate", "rate_setups", "rate_samples", "rate_cells", "loss_rate_cells", "window_samples", "window_cells"} {
		if _, ok := js[k]; !ok {
			t.Errorf("results.json lacks %q", k)
		}
	}
	if v := js["version"]; v != float64(ResultsVersion) {
		t.Errorf("results.json version %v, want 4", v)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "```\n== forwarding rate: direct ==") || !strings.Contains(string(md), "\n== forwarding rate: bridge0 ==") {
		t.Errorf("report.md missing or without the forwarding-rate tables: %v", err)
	}
	// The summary leads, and leads with the CPU per frame.
	if i, j := strings.Index(string(md), "### Forwarding rate\n\nCPU per forwarded frame at 200000 frames/s paced, net of direct veth"), strings.Index(string(md), "## Environment"); !strings.Contains(string(md), "\n\n## Summary\n\n") || i < 0 || i > j ||
		!strings.Contains(string(md), "| setup | bytes | ns/frame, patch | ns/frame, no patch | max fps, patch") || !strings.Contains(string(md), "\n| bridge0 | 64/60 | ") {
		t.Errorf("report.md does not start with the summary, CPU per frame first:\n%s", md)
	}
	for _, name := range []string{"rate-direct.svg", "rate-bridge0.svg", "rate-trunk0.svg"} {
		checkSVG(t, filepath.Join(dir, name))
	}
	checkLossRateAndWindow(t, text, res)
	if nss, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(nss), fmt.Sprintf("swf%d", os.Getpid()%100000)) {
		t.Errorf("namespaces left behind:\n%s", nss)
	}
}

// checkSVG fails t unless path is a chart whose texts lie inside its
// view box and whose legend covers no data.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	for _, p := range chartProblems(parseSVG(t, path), chartNote(0.05)) {
		t.Errorf("%s: %s", filepath.Base(path), p)
	}
}

// checkMsgSize checks the message-size table on stdout and the samples
// behind it: one per size and role, each with throughput and CPU.
func checkMsgSize(t *testing.T, text string, res *Results) {
	t.Helper()
	want := "== TCP stream by message size: bridge0 Forward ==\nTCP stream by message size (Mb/s, CPU system %)\nbytes     Mb/s        Mb/s        system %    system %\n          patch       no patch    patch       no patch\n1         "
	if !strings.Contains(text, want) {
		t.Errorf("stdout lacks the message-size table in the shape wanted:\n%s", text)
	}
	for _, size := range []string{"\n1024      ", "\n65536     "} {
		if !strings.Contains(text, size) {
			t.Errorf("message-size table lacks the row %q:\n%s", strings.TrimSpace(size), text)
		}
	}
	if n := len(res.MsgSizeSamples); n != 3*2 {
		t.Errorf("%d message-size samples, want 6 (3 sizes x 2 roles)", n)
	}
	for _, s := range res.MsgSizeSamples {
		if s.Mbps <= 0 || s.CPU.Ticks == 0 || s.EngineCPU == nil || !strings.Contains(s.Command, fmt.Sprintf(" -l %d", s.Size)) {
			t.Errorf("message size %d %s: no throughput, CPU or engine CPU, or a command without -l: %+v", s.Size, s.Role, s)
		}
	}
	if len(res.MsgSizeCells) == 0 {
		t.Errorf("no message-size cells")
	}
}

// checkBulk checks the bulk tables on stdout and the samples behind
// them: per role, pair 1 alone, both pairs at once and the UDP stream,
// each with throughput and CPU, the UDP one with its datagram counts.
func checkBulk(t *testing.T, text string, res *Results) {
	t.Helper()
	want := "== bulk transfer: bridge0, one pair, two pairs at once, UDP ==\nBulk transfer: one pair, two pairs at once, UDP (Mb/s, CPU system %)\ntest                  Mb/s        Mb/s        system %    system %\n                      patch       no patch    patch       no patch\nTCP one pair          "
	if !strings.Contains(text, want) {
		t.Errorf("stdout lacks the bulk table in the shape wanted:\n%s", text)
	}
	for _, row := range []string{"\nTCP two pairs: pair 1 ", "\nTCP two pairs: pair 2 ", "\nTCP two pairs: sum    ", "\nTCP two pairs / one   ", "\nUDP 100 Mb/s offered  ", "\nUDP bulk: iperf3 -u -b 100M -l 1472, datagram loss\n          patch       no patch\nsent Mb/s ", "\nloss %    "} {
		if !strings.Contains(text, row) {
			t.Errorf("bulk tables lack the row %q:\n%s", strings.TrimSpace(row), text)
		}
	}
	tests := map[string]int{}
	for _, s := range res.BulkSamples {
		tests[s.Test+" "+s.Role]++
		if s.Mbps <= 0 || s.CPU.Ticks == 0 || s.EngineCPU == nil {
			t.Errorf("bulk %s %s: no throughput, CPU or engine CPU: %+v", s.Test, s.Role, s)
		}
		if (s.Test == BulkUDP) != (s.UDP != nil) || s.UDP != nil && (s.UDP.Datagrams == 0 || s.UDP.SentMbps <= 0) {
			t.Errorf("bulk %s %s: UDP counts %+v: want datagrams sent on the UDP test, none elsewhere", s.Test, s.Role, s.UDP)
		}
	}
	for _, test := range []string{BulkOnePair, BulkPair1, BulkPair2, BulkUDP} {
		for _, role := range []string{RolePatch, RoleNoPatch} {
			if n := tests[test+" "+role]; n != 1 {
				t.Errorf("bulk %s %s: %d samples, want 1", test, role, n)
			}
		}
	}
	// The two pairs ran at once: their clients started within a second.
	var starts []time.Time
	for _, s := range res.BulkSamples {
		if s.Role == RolePatch && (s.Test == BulkPair1 || s.Test == BulkPair2) {
			starts = append(starts, s.Start)
		}
	}
	if len(starts) == 2 && starts[1].Sub(starts[0]).Abs() > time.Second {
		t.Errorf("the two pairs started %v apart: not at once", starts[1].Sub(starts[0]))
	}
}

// checkLossRateAndWindow checks the frame-loss-rate and window-benchmark
// tables on stdout and the samples behind them.
func checkLossRateAndWindow(t *testing.T, text string, res *Results) {
	t.Helper()
	for _, setup := range []string{"bridge0", "trunk0"} {
		want := "== frame loss rate: " + setup + " ==\nFrame loss rate (RFC 2544 26.3: offered frames/s, loss %)\nmethod: counting: send-only generator; delivered = frames the receiving interface's rx_packets counted\nbytes     load offered fps offered fps loss %      loss %\n               patch       no patch    patch       no patch\n64/60     100% "
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks the %s frame-loss-rate table in the shape wanted:\n%s", setup, text)
		}
		want = "== window benchmark: " + setup + " ==\nWindow benchmark (BalanceNG: 1514-byte frames, 1518 with FCS, window 16, 500ms)\nmethod: receiving: the generator's receiver reads every frame at the far end\n          patch       no patch\nsent      "
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks the %s window-benchmark table in the shape wanted:\n%s", setup, text)
		}
	}
	for _, s := range res.RateSamples {
		if s.Setup == "direct" {
			continue // the baseline: no frame loss rate
		}
		n := len(s.LossRate)
		if n == 0 || s.LossRate[0].Percent != 100 {
			t.Errorf("%s %s %d: frame loss rate does not start at 100%%: %+v", s.Setup, s.Role, s.Size, s.LossRate)
			continue
		}
		// It ends after two lossless trials, or at 10%.
		last2 := n >= 2 && s.LossRate[n-1].Sent > 0 && s.LossRate[n-1].Lost == 0 && s.LossRate[n-2].Sent > 0 && s.LossRate[n-2].Lost == 0
		if !last2 && s.LossRate[n-1].Percent != LossRateStep {
			t.Errorf("%s %s %d: frame loss rate stopped at %d%% without two lossless trials: %+v", s.Setup, s.Role, s.Size, s.LossRate[n-1].Percent, s.LossRate)
		}
	}
	if n := len(res.WindowSamples); n != 2*2 {
		t.Errorf("%d window samples, want 4 (2 setups x 2 roles)", n)
	}
	for _, w := range res.WindowSamples {
		if w.Sent == 0 || w.Received == 0 || w.Window != DefaultWindow || w.Size != DefaultWindowSize || w.CPU.Ticks == 0 {
			t.Errorf("%s %s: window run without frames or CPU, or not window 16 of 1514 bytes: %+v", w.Setup, w.Role, w.Result)
		}
	}
}
