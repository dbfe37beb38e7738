package regress

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// TestIntegrationRegressLBSmoke runs every row of the load-balancing
// suite (direct, swctl lb built from this tree, nftables, HAProxy) once,
// for 1 s per mode, and checks that wrk's requests reached every backend
// through each balancer, that the tables and results.json come out, and
// that no namespace or process is left behind.
func TestIntegrationRegressLBSmoke(t *testing.T) {
	netnstest.Require(t)
	for _, tool := range [][2]string{{"wrk", "wrk"}, {"nginx", "nginx-light"}, {"haproxy", "haproxy"}, {"nft", "nftables"}, {"curl", "curl"}} {
		netnstest.RequireTool(t, tool[0], tool[1])
	}
	if testing.Short() {
		t.Skip("-short: the load-balancing smoke run takes about 30 s")
	}
	lc := DefaultLBConfig(true)
	lc.Rows, lc.Runs, lc.Seconds = []string{LBSwctl, LBNftables, LBHAProxy}, 1, 1
	var stdout, stderr strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, dir, err := Run(ctx, Config{
		AB: ABSpec{Repo: ".."}, Runs: 1, Seconds: 1, Alpha: 0.05, NoPromisc: true, LB: &lc,
		OutRoot: t.TempDir(), Stdout: &stdout, Stderr: &stderr,
	})
	t.Logf("lb smoke run took %v\nstderr:\n%s\nstdout:\n%s", time.Since(start).Round(time.Second), stderr.String(), stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	for _, mode := range LBModes {
		want := fmt.Sprintf("== HTTP load balancing: %s ==\nHTTP load balancing, %s: median of 1 runs [min..max]\nrow", mode, lbModeTitle[mode])
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks the %s table in the shape wanted:\n%s", mode, text)
		}
	}
	for _, row := range []string{"direct ", "swctl ", "nftables ", "haproxy "} {
		if strings.Count(text, "\n"+row) != 2 {
			t.Errorf("stdout lacks the %q row in both tables:\n%s", row, text)
		}
	}
	if got := len(res.LB.Samples); got != 4*len(LBModes) {
		t.Fatalf("%d samples, want 8 (direct, swctl, nftables, haproxy; two modes)", got)
	}
	for _, s := range res.LB.Samples {
		if s.Wrk.Requests == 0 || s.Wrk.SocketErrors()+s.Wrk.Non2xx > 0 || s.Machine.Total() == 0 {
			t.Errorf("%s %s: %d requests, %d socket errors, %d non-2xx, %d ticks; want requests, no error, CPU ticks",
				s.Row, s.Mode, s.Wrk.Requests, s.Wrk.SocketErrors(), s.Wrk.Non2xx, s.Machine.Total())
		}
		reached := 0
		for _, n := range s.BackendRequests {
			if n > 0 {
				reached++
			}
		}
		want := map[string]int{LBDirect: 1, LBSwctl: 3, LBNftables: 3, LBHAProxy: 3}[s.Row]
		if reached != want || s.BackendRequests[0] == 0 {
			t.Errorf("%s %s: backends served %v; want %d of them to serve requests", s.Row, s.Mode, s.BackendRequests, want)
		}
		if (s.BalancerTicks != nil) != (s.Row == LBSwctl || s.Row == LBHAProxy) {
			t.Errorf("%s %s: balancer ticks %v; want them for swctl and HAProxy only (processes)", s.Row, s.Mode, s.BalancerTicks)
		}
	}
	for _, c := range res.LB.Cells {
		if c.Metric == "balancer_us" && c.NA != (c.Row == LBDirect) {
			t.Errorf("%s %s balancer CPU: n/a %v; want a figure for every balancer, none for direct", c.Row, c.Mode, c.NA)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		LB *struct {
			Samples []json.RawMessage `json:"samples"`
			Cells   []json.RawMessage `json:"cells"`
		} `json:"lb"`
	}
	if err := json.Unmarshal(b, &js); err != nil || js.LB == nil || len(js.LB.Samples) != 8 || len(js.LB.Cells) == 0 {
		t.Errorf("results.json: %v; want an lb section with 8 samples and the cells", err)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || !strings.Contains(string(md), "### HTTP load balancing") {
		t.Errorf("report.md missing or without the load-balancing section: %v", err)
	}
	// Nothing left behind: the namespaces, nginx, HAProxy, swctl.
	out, _ := exec.Command("ip", "netns", "list").Output()
	tag := fmt.Sprintf("swl%d", os.Getpid()%100000)
	if slices.ContainsFunc(strings.Fields(string(out)), func(ns string) bool { return strings.HasPrefix(ns, tag) }) {
		t.Errorf("namespaces %s* left behind:\n%s", tag, out)
	}
}

// TestLBBalancerConfigs checks that the nftables rules and the HAProxy
// configuration send the VIP's port 80 to every backend, and that
// served nets out the status requests themselves.
func TestLBBalancerConfigs(t *testing.T) {
	nft := nftRules()
	if !strings.Contains(nft, "ip daddr 10.80.0.100 tcp dport 80 dnat to numgen inc mod 3 map { 0 : 10.80.0.11, 1 : 10.80.0.12, 2 : 10.80.0.13 }") ||
		!strings.Contains(nft, "type nat hook prerouting priority dstnat") {
		t.Errorf("nftables rules do not DNAT the VIP to the three backends in turn:\n%s", nft)
	}
	hap := haproxyConf()
	for _, want := range []string{"mode tcp", "bind 10.80.0.100:80", "balance roundrobin", "server b1 10.80.0.11:80", "server b2 10.80.0.12:80", "server b3 10.80.0.13:80", "nbthread 1"} {
		if !strings.Contains(hap, want) {
			t.Errorf("HAProxy configuration lacks %q:\n%s", want, hap)
		}
	}
	if got := served([]uint64{10, 20, 30}, []uint64{111, 21, 30}); !slices.Equal(got, []uint64{100, 0, 0}) {
		t.Errorf("served: %v; want [100 0 0] (each later count includes its own status request; a count that did not move served nothing)", got)
	}
}
