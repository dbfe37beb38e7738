package regress

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// TestIntegrationBenchShortest runs the harness in its shortest form
// (one run, trials of a few hundred ms) over the direct veth, the kernel
// bridge and a swctl bridge, and checks the report and the cleanup.
func TestIntegrationBenchShortest(t *testing.T) {
	netnstest.Require(t)
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			reason := "needs " + tool + " (make deps)"
			if os.Getenv("SWCTL_REQUIRE_NETNS") == "1" {
				t.Fatalf("SWCTL_REQUIRE_NETNS=1 but %s", reason)
			}
			t.Skip(reason)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "swctl")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/swctl/swctl/cmd/swctl").CombinedOutput(); err != nil {
		t.Fatalf("go build swctl: %v\n%s", err, out)
	}
	cfg := BenchConfig{
		Swctl: bin, Runs: 1, Out: filepath.Join(dir, "out"),
		Rows: []string{"direct", "kernel", "swctl-w1"},
		RateConfig: RateConfig{Sizes: []int{64, 1518}, Flows: 16, MaxTrial: 300 * time.Millisecond, Trial: 200 * time.Millisecond, MaxTrials: 3, Resolution: 0.1,
			CPURate: 20000, CPUTrial: 500 * time.Millisecond},
		TCPSeconds: 1, Pings: 3,
	}
	start := time.Now()
	if err := RunBench(cfg); err != nil {
		t.Fatalf("bench: %v", err)
	}
	t.Logf("shortest bench took %v", time.Since(start).Round(time.Second))

	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), fmt.Sprintf("swb%d", os.Getpid()%100000)) {
		t.Errorf("namespaces left after the bench:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.Out, "*", "results.json"))
	if len(files) != 1 {
		t.Fatalf("results.json files: %q, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if res.Version != ResultsVersion || res.Bench == nil || len(res.Commands) == 0 {
		t.Fatalf("results.json: version %d, bench %v, %d commands; want version %d, the bench, the commands", res.Version, res.Bench != nil, len(res.Commands), ResultsVersion)
	}
	rep := res.Bench
	if v := rep.Programs["swctl"]; !strings.HasPrefix(v, "swctl ") || strings.Contains(v, "unknown") {
		t.Errorf("programs: swctl %q, want the binary's version line", v)
	}
	if len(rep.Runs) != len(cfg.Rows) || len(res.RateSamples) != 2*len(cfg.Rows) {
		t.Errorf("%d row runs and %d rate samples in results.json, want %d and %d", len(rep.Runs), len(res.RateSamples), len(cfg.Rows), 2*len(cfg.Rows))
	}
	for _, row := range cfg.Rows {
		for _, m := range []string{Max64, Max1518, ZeroLoss64, RTT, TCPOff} {
			if c, _, _ := benchCell(rep.Samples, row, m); c.N != 1 || c.Median <= 0 {
				t.Errorf("%s %s: %+v, want one positive value", row, m, c)
			}
		}
		if c, _, _ := benchCell(rep.Samples, row, CPUNet); (c.N != 1) != (row == "direct") {
			t.Errorf("%s %s: %+v, want one value (none on the baseline)", row, CPUNet, c)
		}
	}
	for _, r := range BenchSetups[:3] {
		if !strings.Contains(rep.Table, r.Label) {
			t.Errorf("table lacks row %q:\n%s", r.Label, rep.Table)
		}
	}
}
