package regress

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/cpustat"
)

func TestParseWrk(t *testing.T) {
	for _, c := range []struct {
		file string
		want WrkResult
	}{
		{"wrk_keepalive.txt", WrkResult{Threads: 1, Connections: 16, Requests: 3462, Seconds: 1.17, RequestsPerSec: 2965.88,
			LatencyAvg: 14360, LatencyMax: 121340, P50: 4260, P75: 21160, P90: 40580, P99: 105040}},
		{"wrk_close.txt", WrkResult{Threads: 1, Connections: 16, Requests: 887, Seconds: 1.01, RequestsPerSec: 882.37,
			LatencyAvg: 20070, LatencyMax: 106030, P50: 13660, P75: 32050, P90: 50320, P99: 87400}},
		{"wrk_non2xx.txt", WrkResult{Threads: 2, Connections: 64, Requests: 1961, Seconds: 1.04, RequestsPerSec: 1881.52,
			LatencyAvg: 31880, LatencyMax: 160040, P50: 25670, P75: 48010, P90: 76080, P99: 112820, Non2xx: 1961}},
		// Built from wrk.c's format strings: a socket errors line, and
		// latencies in us and s.
		{"wrk_socket_errors.txt", WrkResult{Threads: 1, Connections: 16, Requests: 708977, Seconds: 10, RequestsPerSec: 70894.19,
			LatencyAvg: 208.04, LatencyMax: 1.02e6, P50: 191, P75: 220, P90: 263, P99: 549, ReadErrors: 12, WriteErrors: 1, Timeouts: 3}},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseWrk(b)
			if err != nil {
				t.Fatal(err)
			}
			if !wrkNear(got, c.want) {
				t.Errorf("ParseWrk:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// wrkNear compares two results, times to within a nanosecond (they are
// scaled from decimals).
func wrkNear(a, b WrkResult) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-3*math.Max(1, math.Abs(y))*1e-3 }
	for _, p := range [][2]float64{{a.Seconds, b.Seconds}, {a.RequestsPerSec, b.RequestsPerSec}, {a.LatencyAvg, b.LatencyAvg}, {a.LatencyMax, b.LatencyMax},
		{a.P50, b.P50}, {a.P75, b.P75}, {a.P90, b.P90}, {a.P99, b.P99}} {
		if !near(p[0], p[1]) {
			return false
		}
	}
	a.Seconds, a.RequestsPerSec, a.LatencyAvg, a.LatencyMax, a.P50, a.P75, a.P90, a.P99 = b.Seconds, b.RequestsPerSec, b.LatencyAvg, b.LatencyMax, b.P50, b.P75, b.P90, b.P99
	return a == b
}

func TestParseWrkRejects(t *testing.T) {
	good, err := os.ReadFile("testdata/wrk_keepalive.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(good)
	for _, c := range []struct {
		name, out, want string
	}{
		{"empty", "", "no threads line"},
		{"could not connect", "unable to connect to 10.80.0.100:http Connection refused\n", "no threads line"},
		{"no Requests/sec", strings.Replace(text, "Requests/sec:   2965.88\n", "", 1), "no Requests/sec line"},
		{"no 99th percentile", strings.Replace(text, "     99%  105.04ms\n", "", 1), "no 99% percentile"},
		{"no --latency", strings.Replace(text, "  Latency Distribution\n", "", 1), "no latency distribution"},
		{"percentile twice", strings.Replace(text, "     99%  105.04ms\n", "     99%  105.04ms\n     99%  105.04ms\n", 1), "99% percentile twice"},
		{"Requests/sec twice", text + "Requests/sec:   1.00\n", "Requests/sec line twice"},
		{"falling percentiles", strings.Replace(text, "     99%  105.04ms", "     99%    1.00us", 1), "do not rise"},
		{"time without unit", strings.Replace(text, "     50%    4.26ms", "     50%    4.26", 1), "no unit"},
		{"negative time", strings.Replace(text, "     50%    4.26ms", "     50%   -4.26ms", 1), "at least 0"},
		{"NaN rate", strings.Replace(text, "2965.88", "NaN", 1), "finite"},
		{"short socket errors", strings.Replace(text, "Requests/sec:", "  Socket errors: connect 0, read 1\nRequests/sec:", 1), "want 10"},
		{"misnamed socket error", strings.Replace(text, "Requests/sec:", "  Socket errors: connect 0, read 1, write 0, timeouts 0\nRequests/sec:", 1), `want "timeout"`},
		{"zero threads", strings.Replace(text, "1 threads and", "0 threads and", 1), "positive count"},
		{"huge", text + strings.Repeat("x", maxWrkOutput), "more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseWrk([]byte(c.out))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "wrk output") {
				t.Errorf("ParseWrk: error %v; want one starting \"wrk output\" that says %q", err, c.want)
			}
		})
	}
}

func TestParseStubStatus(t *testing.T) {
	got, err := ParseStubStatus([]byte("Active connections: 1 \nserver accepts handled requests\n 11807 11807 46872 \nReading: 0 Writing: 1 Waiting: 0 \n"))
	if err != nil || got != 46872 {
		t.Errorf("ParseStubStatus: %d, %v; want 46872 (the third count)", got, err)
	}
	for _, bad := range []string{"", "server accepts handled requests\n", "server accepts handled requests\n 1 2\n", "server accepts handled requests\n 1 2 x\n",
		"server accepts handled requests\n1 2 3\n" + strings.Repeat(" ", maxStubStatus)} {
		if n, err := ParseStubStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStubStatus(%q) = %d; want an error", bad, n)
		}
	}
}

func TestLBConfigRows(t *testing.T) {
	names := func(c LBConfig) []string {
		rows, err := c.rows()
		if err != nil {
			t.Fatalf("rows %v: %v", c.Rows, err)
		}
		var n []string
		for _, r := range rows {
			n = append(n, r.Name)
		}
		return n
	}
	if got := names(LBConfig{}); !slices.Equal(got, []string{LBDirect, LBSwctl, LBNftables, LBHAProxy}) {
		t.Errorf("no rows named: %v; want every row in table order", got)
	}
	if got := names(LBConfig{Rows: []string{LBHAProxy, LBNftables}}); !slices.Equal(got, []string{LBDirect, LBNftables, LBHAProxy}) {
		t.Errorf("nftables without direct: %v; want direct added (nftables is netted against it), table order", got)
	}
	if got := names(LBConfig{Rows: []string{LBSwctl}}); !slices.Equal(got, []string{LBSwctl}) {
		t.Errorf("swctl alone: %v; want just swctl", got)
	}
	if _, err := (LBConfig{Rows: []string{"ipvs"}}).rows(); err == nil || !strings.Contains(err.Error(), `"ipvs"`) {
		t.Errorf("unknown row: %v; want an error naming it", err)
	}
	c := DefaultLBConfig(false)
	c.Connections = 0
	if err := c.check(); err == nil {
		t.Error("0 connections accepted")
	}
}

func TestLBPlanInterleaves(t *testing.T) {
	rows := []LBRowSpec{LBRows[0], LBRows[1], LBRows[3]}
	plan := LBPlan(rows, []string{RolePatch, RoleNoPatch}, 2)
	var got []string
	for _, in := range plan {
		got = append(got, in.String()+" "+strings.Join(in.Modes, ","))
	}
	want := []string{
		"load balancing direct run 1 close,keepalive",
		"load balancing swctl patch run 1 close,keepalive",
		"load balancing swctl no patch run 1 close,keepalive",
		"load balancing haproxy run 1 close,keepalive",
		"load balancing haproxy run 2 keepalive,close",
		"load balancing swctl no patch run 2 keepalive,close",
		"load balancing swctl patch run 2 keepalive,close",
		"load balancing direct run 2 keepalive,close",
	}
	if !slices.Equal(got, want) {
		t.Errorf("LBPlan:\n got %q\nwant %q", got, want)
	}
}

// lbSample is a sample of row in mode over 10 s on 2 CPUs at 100 ticks a
// second per CPU (2000 ticks): requests completed, busy and softirq
// ticks of the machine, and the balancer's ticks (-1: no process), a
// quarter of them system time.
func lbSample(row, mode string, run int, requests, busy, softirq uint64, balancer int, rps float64) LBSample {
	s := LBSample{Row: row, Mode: mode, Run: run, WallSeconds: 10, CPUs: 2,
		Machine: cpustat.Times{System: busy - softirq, SoftIRQ: softirq, Idle: 2000 - busy},
		Wrk:     WrkResult{Requests: requests, RequestsPerSec: rps, P50: 500, P99: 2000}}
	if balancer >= 0 {
		t, sys := uint64(balancer), uint64(balancer)/4
		s.BalancerTicks, s.BalancerSystemTicks = &t, &sys
	}
	return s
}

func TestAnalyzeLB(t *testing.T) {
	plan := LBPlan([]LBRowSpec{LBRows[0], LBRows[2], LBRows[3]}, []string{RolePatch}, 3)
	var samples []LBSample
	for run := 1; run <= 3; run++ {
		for _, mode := range LBModes {
			// 100000 requests in 10 s on 2 CPUs: 1 tick = 0.1 us/req.
			samples = append(samples,
				lbSample(LBDirect, mode, run, 100000, 1000, 100+uint64(run)*10, -1, 10000),
				lbSample(LBNftables, mode, run, 100000, 1200, 300+uint64(run)*10, -1, 9000+float64(run)),
				lbSample(LBHAProxy, mode, run, 100000, 1100, 100, 100*run, 8000))
		}
	}
	cells := AnalyzeLB(plan, samples)
	for _, c := range []struct {
		row, mode, metric string
		na                bool
		median, lo, hi    float64
	}{
		{LBDirect, LBClose, "balancer_us", true, 0, 0, 0},
		// Direct's kernel time: 11, 12, 13 us/req, median 12;
		// nftables': 31, 32, 33, so 19, 20, 21 net.
		{LBNftables, LBClose, "balancer_us", false, 20, 19, 21},
		{LBNftables, LBKeepAlive, "kernel_us", false, 32, 31, 33},
		{LBHAProxy, LBKeepAlive, "balancer_us", false, 20, 10, 30},
		{LBHAProxy, LBKeepAlive, "balancer_system_us", false, 5, 2.5, 7.5},
		{LBNftables, LBKeepAlive, "balancer_system_us", true, 0, 0, 0},
		{LBHAProxy, LBClose, "machine_us", false, 110, 110, 110},
		{LBNftables, LBClose, "rps", false, 9002, 9001, 9003},
		{LBDirect, LBClose, "p99_ms", false, 2, 2, 2},
	} {
		got := findCell(cells, RoleCell{Row: c.row, Mode: c.mode, Metric: c.metric})
		switch {
		case got == nil:
			t.Errorf("%s %s %s: no cell", c.row, c.mode, c.metric)
		case got.NA != c.na:
			t.Errorf("%s %s %s: n/a %v, want %v", c.row, c.mode, c.metric, got.NA, c.na)
		case !c.na && (math.Abs(got.Summary.Median-c.median) > 1e-9 || math.Abs(got.Summary.Min-c.lo) > 1e-9 || math.Abs(got.Summary.Max-c.hi) > 1e-9):
			t.Errorf("%s %s %s: median %v [%v-%v], want %v [%v-%v]", c.row, c.mode, c.metric, got.Summary.Median, got.Summary.Min, got.Summary.Max, c.median, c.lo, c.hi)
		}
	}
	// Without direct, nftables has no balancer figure.
	cells = AnalyzeLB(LBPlan([]LBRowSpec{LBRows[2]}, nil, 1), samples[3:4])
	if c := findCell(cells, RoleCell{Row: LBNftables, Mode: LBClose, Metric: "balancer_us"}); c == nil || !c.NA {
		t.Errorf("nftables without direct: %+v; want an n/a balancer cell", c)
	}
}

func TestLBTable(t *testing.T) {
	plan := LBPlan([]LBRowSpec{LBRows[0], LBRows[1], LBRows[2], LBRows[3]}, []string{RolePatch, RoleNoPatch}, 3)
	var samples []LBSample
	for run := 1; run <= 3; run++ {
		r := uint64(run)
		samples = append(samples,
			lbSample(LBDirect, LBKeepAlive, run, 100000, 1000, 100+r, -1, 10000+float64(run)),
			lbSample(LBNftables, LBKeepAlive, run, 100000, 1200, 300, -1, 9000),
			lbSample(LBHAProxy, LBKeepAlive, run, 100000, 1100, 100, 100+run, 8000))
		for _, role := range []string{RolePatch, RoleNoPatch} {
			s := lbSample(LBSwctl, LBKeepAlive, run, 100000, 1050, 110, 50*run, 9500)
			s.Role = role
			if role == RoleNoPatch && run == 2 {
				s.Wrk.ReadErrors = 3
			}
			samples = append(samples, s)
		}
	}
	var b strings.Builder
	if err := RenderTable(&b, LBTable(DefaultLBConfig(false), plan, AnalyzeLB(plan, samples), LBKeepAlive, true)); err != nil {
		t.Fatal(err)
	}
	golden(t, "lb_table.golden", b.String())
}

// FuzzParseWrk feeds arbitrary text to the parsers of wrk's and nginx's
// output. Neither may panic; what ParseWrk accepts has positive thread
// and connection counts and finite, non-negative, rising percentiles.
func FuzzParseWrk(f *testing.F) {
	for _, name := range []string{"wrk_keepalive.txt", "wrk_close.txt", "wrk_non2xx.txt", "wrk_socket_errors.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	addStrings(f, "server accepts handled requests\n 1 2 3\n", "  Latency Distribution\n     50%  1.00m\n", "Requests/sec: 1e309\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseStubStatus(b)
		w, err := ParseWrk(b)
		if err != nil {
			return
		}
		ps := []float64{w.P50, w.P75, w.P90, w.P99}
		if w.Threads < 1 || w.Connections < 1 || !slices.IsSorted(ps) || ps[0] < 0 || math.IsInf(ps[3], 0) || math.IsNaN(w.RequestsPerSec) || w.RequestsPerSec < 0 {
			t.Fatalf("accepted %+v: want positive counts, finite non-negative rising percentiles and rate", w)
		}
	})
}

func TestPinningFor(t *testing.T) {
	for _, c := range []struct {
		ncpu int
		want lbPinning
	}{
		{1, lbPinning{"0", "0", "0"}},
		{2, lbPinning{"0", "1", "1"}},
		{3, lbPinning{"0", "1", "2"}},
		{8, lbPinning{"0", "1", "2-7"}},
	} {
		if got := pinningFor(c.ncpu); got != c.want {
			t.Errorf("%d CPUs: client %s, balancer %s, backends %s; want %s, %s, %s", c.ncpu, got.Client, got.Balancer, got.Backends, c.want.Client, c.want.Balancer, c.want.Backends)
		}
	}
}

// The load-balancing tables come after a blank line whenever any table
// was printed before them, the bulk tables included.
func TestLBTablesAfterOthers(t *testing.T) {
	cases := []struct {
		name  string
		r     *Results
		first bool
	}{
		{"alone", &Results{}, true},
		{"after bulk", &Results{Bulk: &BulkConfig{}, BulkCells: []RoleCell{{}}}, false},
		{"after address caching", &Results{RFC2889: &RFC2889Config{}, RFC2889Cells: []RoleCell{{}}}, false},
		{"after message sizes", &Results{MsgSize: &MsgSizeConfig{}, MsgSizeCells: []RoleCell{{}}}, false},
	}
	plan := LBPlan(LBRows[:1], nil, 1)
	for _, tc := range cases {
		tc.r.LB = &LBResults{Config: DefaultLBConfig(true), Plan: plan, Cells: AnalyzeLB(plan, nil)}
		var b strings.Builder
		printAllTables(&b, tc.r)
		header := "== HTTP load balancing: close ==\n"
		if first := strings.HasPrefix(b.String(), header); first != tc.first || !first && !strings.Contains(b.String(), "\n\n"+header) {
			t.Errorf("%s: the load-balancing tables first %v, want %v, and after a blank line otherwise:\n%s", tc.name, first, tc.first, b.String())
		}
	}
}
