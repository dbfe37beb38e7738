package regress

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/iperf3"
)

func TestBulkConfig(t *testing.T) {
	cases := []struct {
		name    string
		cfg     BulkConfig
		wantErr string // substring; "" = valid
	}{
		{"default", DefaultBulkConfig(false, false), ""},
		{"quick", DefaultBulkConfig(true, false), ""},
		{"full", DefaultBulkConfig(false, true), ""},
		{"seconds", BulkConfig{UDPMbps: 1, UDPLen: 1472}, "seconds 0"},
		{"rate", BulkConfig{Seconds: 1, UDPLen: 1472}, "UDP rate 0 Mb/s"},
		{"datagram", BulkConfig{Seconds: 1, UDPMbps: 1, UDPLen: 70000}, "UDP datagram 70000 bytes"},
	}
	for _, c := range cases {
		err := c.cfg.check()
		checkErr(t, c.name+": check()", err, c.wantErr)
	}
	q, d, f := DefaultBulkConfig(true, false), DefaultBulkConfig(false, false), DefaultBulkConfig(false, true)
	if q.Seconds >= d.Seconds || d.Seconds >= f.Seconds {
		t.Errorf("seconds QUICK %d, default %d, FULL %d: want increasing", q.Seconds, d.Seconds, f.Seconds)
	}
	if got := strings.Join(d.udpArgs(), " "); got != "-u -b 300M -l 1472" {
		t.Errorf("UDP options %q, want -u -b 300M -l 1472", got)
	}
	var order []string
	for _, in := range BulkPlan(2) {
		order = append(order, fmt.Sprint(in.Role, in.Run))
	}
	if got := strings.Join(order, " "); got != "patch1 no patch1 no patch2 patch2" {
		t.Errorf("plan %q, want A B B A", got)
	}
}

// bulkInstance returns the samples of one bulk instance: pair 1 alone at
// one Mb/s, the two pairs at p1 and p2 sharing the CPU sys2, UDP with
// lost of 1000 datagrams.
func bulkInstance(role string, run int, one, sys1, p1, p2, sys2 float64, lost int) []BulkSample {
	s := func(test string, mbps, sys float64) BulkSample {
		return BulkSample{Test: test, Sample: Sample{Setup: BulkSetup, Row: RowForward, Role: role, Run: run, Mbps: mbps, CPU: CPUPercent{System: sys, Ticks: 100}}}
	}
	u := s(BulkUDP, 290, 20)
	u.UDP = &UDPResult{SentMbps: 300, UDP: iperf3.UDP{Datagrams: 1000, Lost: lost}}
	return []BulkSample{s(BulkOnePair, one, sys1), s(BulkPair1, p1, sys2), s(BulkPair2, p2, sys2), u}
}

func TestAnalyzeBulk(t *testing.T) {
	cfg := DefaultBulkConfig(false, false)
	var samples []BulkSample
	for run := 1; run <= 4; run++ {
		f := float64(run)
		// Two pairs share the bridge: each gets a bit over half of what
		// one pair alone gets with the patch, and a third without.
		samples = append(samples, bulkInstance(RolePatch, run, 1000+f, 40, 600+f, 600-f, 60, 10)...)
		samples = append(samples, bulkInstance(RoleNoPatch, run, 1000+f, 40, 330+f, 330-f, 50, 100)...)
	}
	cells := AnalyzeBulk(cfg, samples, 0.05)
	get := func(row, metric, role string) RoleCell {
		for _, c := range cells {
			if c.Row == row && c.Metric == metric && c.Role == role {
				return c
			}
		}
		t.Fatalf("no cell %s %s %s", row, metric, role)
		return RoleCell{}
	}
	for _, c := range []struct {
		row, metric, role string
		mean              float64
		significant       bool
	}{
		{BulkOnePair, "throughput", RolePatch, 1002.5, false},
		{BulkSum, "throughput", RolePatch, 1200, true},
		{BulkSum, "throughput", RoleNoPatch, 660, true},
		{BulkSum, "system", RolePatch, 60, true},
		{BulkRatio, "system", RolePatch, 1.5, true},
		{cfg.udpRow(), "loss", RolePatch, 1, true},
		{cfg.udpRow(), "loss", RoleNoPatch, 10, true},
		{cfg.udpRow(), "sent", RoleNoPatch, 300, false},
	} {
		got := get(c.row, c.metric, c.role)
		if math.Abs(got.Summary.Mean-c.mean) > 1e-9 || got.Significant != c.significant || got.Summary.N != 4 {
			t.Errorf("%s %s %s: mean %v (n %d, significant %v), want %v of 4 (significant %v)", c.row, c.metric, c.role, got.Summary.Mean, got.Summary.N, got.Significant, c.mean, c.significant)
		}
	}
	// The ratio is per instance: (600+f + 600-f) / (1000+f).
	r := get(BulkRatio, "throughput", RolePatch)
	for i, v := range r.Values {
		if want := 1200 / (1001 + float64(i)); math.Abs(v-want) > 1e-9 {
			t.Errorf("ratio of run %d: %v, want %v", i+1, v, want)
		}
	}
	var b strings.Builder
	RenderTable(&b, BulkTable(cfg, cells))
	b.WriteString("\n")
	RenderTable(&b, UDPLossTable(cfg, cells))
	golden(t, "bulk_table.golden", b.String())
}

// TestHeaderBulkWithLB: the bulk suite compares patch and no patch, so
// the header says how many runs per cell and role also when it runs
// beside the load-balancing suite alone.
func TestHeaderBulkWithLB(t *testing.T) {
	bc := DefaultBulkConfig(true, false)
	h := strings.Join(Header(&Results{Mode: "A/A", Runs: 2, Alpha: 0.05, Bulk: &bc, LB: &LBResults{}}), "\n")
	if !strings.Contains(h, "2 run(s) per cell and role") {
		t.Errorf("header without the runs line:\n%s", h)
	}
}
