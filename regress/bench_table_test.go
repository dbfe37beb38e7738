package regress

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/stats"
)

// benchRates is a recorded-style forwarding-rate sample of make bench:
// size-byte frames delivered at fps in a max-load run of 1 s (loss
// percent lost); for 64 bytes also a search whose one passing trial was
// paced at zero and sent sent frames/s, and the CPU run's gross ns per
// frame.
func benchRates(row string, run, size int, fps, loss, zero, sent, gross float64) RateSample {
	s := RateSample{Setup: row, Run: run, Role: RolePatch, Size: size, Converged: true,
		Max: RateRun{Result: gen.Result{Seconds: 1, Sent: uint64(fps / (1 - loss/100)), Received: uint64(fps), PacketsPerSecond: fps, LossPercent: loss, SentPerSecond: fps / (1 - loss/100)}}}
	if size != 64 {
		s.classify()
		return s
	}
	s.Trials = []RateRun{{Result: gen.Result{Rate: zero, Seconds: 1, Sent: uint64(sent), Received: uint64(sent), SentPerSecond: sent}}}
	s.ZeroLossTrialRate = zero
	s.ZeroLoss, s.SenderBound = gen.SearchRate(s.trialResults(), zero)
	s.CPU = &CPURun{RateRun: RateRun{Result: gen.Result{Rate: 200e3, Seconds: 1, Sent: 200e3, Received: 200e3, SentPerSecond: 200e3}},
		Cost: cpustat.Cost{NsPerFrame: gross, User: 10, System: 20, SoftIRQ: 30}}
	s.classify()
	return s
}

// goldenBench is three runs of five rows (OVS with TSO skipped, the
// second swctl row's first start failed and its ping failed after), with
// a sender-bound search, a zero-loss rate above the max-load rate, a TCP
// test without transfer and lost pings.
func goldenBench() ([]RateSpec, []RateSample, []benchRun) {
	rows := benchRows([]string{"direct", "kernel", "swctl-w1", "swctl-w2", "ovs", "ovs-tso"}, "")
	rows[5].Skip = "not installed"
	var rates []RateSample
	var runs []benchRun
	for run := 1; run <= 3; run++ {
		d := float64(run-2) * 10e3
		rates = append(rates,
			benchRates("direct", run, 64, 1.09e6+d, 0, 1.0e6, 1.0e6, 1100+100*float64(run-2)),
			benchRates("kernel", run, 64, 760e3+d, 0.1, 700e3, 700e3, 1600+d/100),
			benchRates("swctl-w1", run, 64, 1.05e6+d, 3, 900e3, 850e3, 2200),
			benchRates("ovs", run, 64, 410e3+d, 41, 450e3, 450e3, 5100),
			benchRates("direct", run, 1518, 800e3, 0, 0, 0, 0),
			benchRates("kernel", run, 1518, 600e3+d, 0, 0, 0, 0),
			benchRates("swctl-w1", run, 1518, 700e3, 0.5, 0, 0, 0),
			benchRates("ovs", run, 1518, 300e3, 2, 0, 0, 0),
		)
		ping := func(avg float64) *pingStats { return &pingStats{Sent: 20, Received: 20, Avg: avg} }
		runs = append(runs,
			benchRun{Row: "direct", Run: run, Ping: ping(0.061), TCP: []tcpRecord{{Offloads: "off", Gbps: 9.5}, {Offloads: "default", Gbps: 19.2}}},
			benchRun{Row: "kernel", Run: run, Ping: ping(0.080), TCP: []tcpRecord{{Offloads: "off", Gbps: 9.0}, {Offloads: "default", Gbps: 18.1}}},
			benchRun{Row: "swctl-w1", Run: run, Ping: &pingStats{Sent: 20, Received: 19, Avg: 0.138}, TCP: []tcpRecord{{Offloads: "off", Gbps: 6.1}, {Offloads: "default", Gbps: 13}}},
			benchRun{Row: "ovs", Run: run, Ping: ping(0.321), TCP: []tcpRecord{{Offloads: "off", Gbps: 3}, {Offloads: "default", Error: "iperf3: unable to connect to server: Connection timed out"}}},
		)
		if run == 1 {
			runs = append(runs, benchRun{Row: "swctl-w2", Run: run, Error: "start: swctl daemon exited at start: bind: address in use"})
		} else {
			rates = append(rates, benchRates("swctl-w2", run, 64, 0.9e6, 1, 800e3, 800e3, 2000), benchRates("swctl-w2", run, 1518, 650e3, 0, 0, 0, 0))
			runs = append(runs, benchRun{Row: "swctl-w2", Run: run, Failed: map[string]string{RTT: "ping h1 -> h2: no \"packets transmitted\" line"}})
		}
	}
	NetCPU(rows, rates)
	return rows, rates, runs
}

func TestBenchTableGolden(t *testing.T) {
	rows, rates, runs := goldenBench()
	var buf bytes.Buffer
	if err := RenderTable(&buf, benchTable([]string{"make bench: golden test", ""}, rows, benchMetrics(200e3, 20), benchSamples(rates, runs))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "bench_table.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("table differs from %s (go test -update rewrites it); got:\n%s", path, buf.Bytes())
	}
}

func TestBenchSamples(t *testing.T) {
	_, rates, runs := goldenBench()
	samples := benchSamples(rates, runs)
	for _, c := range []struct {
		row, metric string
		n           int
		median      float64
		notes, errs []string
	}{
		{"kernel", Max64, 3, 760e3, nil, nil},
		{"kernel", CPUNet, 3, 500, nil, nil}, // 1600 less the direct row's mean, 1100
		{"direct", CPUNet, 0, 0, nil, nil},   // the baseline has no net figure
		{"swctl-w1", ZeroLoss64, 3, 850e3, []string{"sender-bound (3 runs)"}, nil},
		{"ovs", ZeroLoss64, 3, 450e3, []string{"above the max-load rate: paced, the path delivered more than overloaded (3 runs)"}, nil},
		{"kernel", ZeroLoss64, 3, 700e3, nil, nil},
		{"swctl-w2", Max64, 2, 0.9e6, nil, []string{"start: swctl daemon exited at start: bind: address in use (1 run)"}},
		{"swctl-w2", RTT, 0, 0, nil, []string{"start: swctl daemon exited at start: bind: address in use (1 run)", "ping h1 -> h2: no \"packets transmitted\" line (2 runs)"}},
		{"swctl-w1", RTT, 3, 0.138, []string{"1 of 20 pings lost (3 runs)"}, nil},
		{"ovs", TCPOn, 3, 0, []string{"no transfer: iperf3: unable to connect to server: Connection timed out (3 runs)"}, nil},
		{"kernel", Max1518, 3, 600e3, nil, nil},
	} {
		got, notes, errs := benchCell(samples, c.row, c.metric)
		if got.N != c.n || got.Median != c.median || !slices.Equal(notes, c.notes) || !slices.Equal(errs, c.errs) {
			t.Errorf("%s %s: n %d, median %v, notes %q, errors %q; want n %d, median %v, notes %q, errors %q",
				c.row, c.metric, got.N, got.Median, notes, errs, c.n, c.median, c.notes, c.errs)
		}
	}
}

func TestBenchRatio(t *testing.T) {
	cell := func(n int, median float64) stats.Summary {
		return stats.Summary{N: n, Median: median}
	}
	for _, c := range []struct {
		name string
		a, b stats.Summary
		want string
	}{
		{"plain", cell(3, 2), cell(3, 4), "0.50x"},
		{"reference zero", cell(3, 2), cell(3, 0), "–"},
		{"row negative (net CPU within the noise)", cell(3, -2), cell(3, 4), "–"},
		{"row zero", cell(3, 0), cell(3, 4), "0.00x"},
		{"reference unmeasured", cell(3, 2), stats.Summary{}, "–"},
		{"row unmeasured", stats.Summary{}, cell(1, 4), "–"},
	} {
		if got := ratioText(c.a, c.b); got != c.want {
			t.Errorf("%s: ratioText = %q; want %q", c.name, got, c.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	for in, want := range map[float64]string{1.09e6: "1.09 M", 412345: "412 k", 999: "999", 0: "0"} {
		if got := FormatRate(in); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", in, got, want)
		}
	}
}
