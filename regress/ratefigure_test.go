package regress

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/cpustat"
)

func TestRateFigures(t *testing.T) {
	run := func(rate, sentPerSecond float64, sent, received uint64) gen.Result {
		return gen.Result{Rate: rate, Seconds: 0.5, Sent: sent, Received: received, SentPerSecond: sentPerSecond}
	}
	cases := []struct {
		name string
		got  RateFigure
		want RateFigure
	}{
		{"max-rate run with loss: the device's limit",
			MaxFigure(run(0, 400_000, 200_000, 150_000)), RateFigure{Achieved: 400_000, Delivered: 300_000}},
		{"max-rate run without loss: the generator's",
			MaxFigure(run(0, 400_000, 200_000, 200_000)), RateFigure{Achieved: 400_000, Delivered: 400_000, TesterBound: true, Why: WhyMaxNoLoss}},
		{"max-rate run that sent nothing",
			MaxFigure(run(0, 0, 0, 0)), RateFigure{}},
		{"paced run on its rate",
			PacedFigure(run(200_000, 200_000, 100_000, 100_000)), RateFigure{Offered: 200_000, Achieved: 200_000, Delivered: 200_000}},
		{"paced run 1% short: within the tolerance",
			PacedFigure(run(200_000, 198_000, 99_000, 99_000)), RateFigure{Offered: 200_000, Achieved: 198_000, Delivered: 198_000}},
		{"paced run 2% short: tester-bound",
			PacedFigure(run(200_000, 196_000, 98_000, 98_000)), RateFigure{Offered: 200_000, Achieved: 196_000, Delivered: 196_000, TesterBound: true, Why: WhyShort}},
		{"paced run short and lossy: tester-bound all the same",
			PacedFigure(run(200_000, 150_000, 75_000, 70_000)), RateFigure{Offered: 200_000, Achieved: 150_000, Delivered: 140_000, TesterBound: true, Why: WhyShort}},
	}
	trials := []gen.Result{run(400_000, 400_000, 200_000, 180_000), run(200_000, 200_000, 100_000, 100_000), run(300_000, 290_000, 145_000, 145_000)}
	cases = append(cases, []struct {
		name string
		got  RateFigure
		want RateFigure
	}{
		{"zero loss below the bound, on rate",
			ZeroLossFigure(trials, 200_000, 400_000), RateFigure{Offered: 200_000, Achieved: 200_000, Delivered: 200_000}},
		{"zero loss whose trial fell short",
			ZeroLossFigure(trials, 300_000, 400_000), RateFigure{Offered: 300_000, Achieved: 290_000, Delivered: 290_000, TesterBound: true, Why: WhyShort}},
		{"zero loss at the search's upper bound",
			ZeroLossFigure(trials[1:2], 200_000, 200_000), RateFigure{Offered: 200_000, Achieved: 200_000, Delivered: 200_000, TesterBound: true, Why: WhyAtBound}},
		{"no trial passed", ZeroLossFigure(trials, 0, 400_000), RateFigure{}},
		{"the rate of a failed trial", ZeroLossFigure(trials, 400_000, 400_000), RateFigure{}},
	}...)
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\ngot  %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
}

// loadSamples reads recorded forwarding-rate samples from testdata.
func loadSamples(t *testing.T, name string) []RateSample {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var s []RateSample
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// classified are the samples of a QUICK run of direct and bridge0 with
// the counting tester, recorded on a shared 2-core machine whose load
// average was 14, classified and netted as Run does.
func classified(t *testing.T) ([]RateSpec, []RateSample) {
	t.Helper()
	samples := loadSamples(t, "rate_samples_counting.json")
	for i := range samples {
		samples[i].classify()
	}
	setups := rateSetups(t, "direct", "bridge0")
	NetCPU(setups, samples)
	return setups, samples
}

func TestClassifyRecorded(t *testing.T) {
	type want struct {
		maxBound  string // Why of the max-rate figure; "" = not tester-bound
		zeroBound string // Why of the zero-loss figure
		aboveMax  bool
		cpuBound  bool
		saturated bool
	}
	cases := map[[3]any]want{
		// Every max-rate run but one lost nothing: the generator, not
		// the engine, set the figure. Every CPU run fell more than 1%
		// short of 200 k frames/s, and the machine was never idle.
		{"direct", RolePatch, 64}:     {maxBound: WhyMaxNoLoss, cpuBound: true, saturated: true},
		{"direct", RoleNoPatch, 1518}: {maxBound: WhyMaxNoLoss, cpuBound: true, saturated: true},
		// The search passed at its upper bound (162432 frames/s), but
		// the generator reached only 127865 of it.
		{"bridge0", RolePatch, 64}: {maxBound: WhyMaxNoLoss, zeroBound: WhyShort, cpuBound: true, saturated: true},
		// Max rate: 440441 sent, 360426 delivered a second: the
		// engine's limit. The passing trial asked 426677 and got 402289,
		// which is above the max-rate run's delivered rate.
		{"bridge0", RolePatch, 1518}:   {zeroBound: WhyShort, aboveMax: true, cpuBound: true, saturated: true},
		{"bridge0", RoleNoPatch, 64}:   {maxBound: WhyMaxNoLoss, zeroBound: WhyShort, cpuBound: true, saturated: true},
		{"bridge0", RoleNoPatch, 1518}: {maxBound: WhyMaxNoLoss, zeroBound: WhyShort, cpuBound: true, saturated: true},
	}
	_, samples := classified(t)
	seen := 0
	for _, s := range samples {
		w, ok := cases[[3]any{s.Setup, s.Role, s.Size}]
		if !ok {
			continue
		}
		seen++
		got := want{maxBound: s.MaxRate.Why, zeroBound: s.ZeroLossRate.Why, aboveMax: s.ZeroLossAboveMax, cpuBound: s.CPU.Figure.TesterBound, saturated: s.CPU.saturated()}
		if got != w || s.MaxRate.TesterBound != (w.maxBound != "") || s.ZeroLossRate.TesterBound != (w.zeroBound != "") || s.CPU.lossy() {
			t.Errorf("%s %s %d: got %+v (lossy %v), want %+v not lossy", s.Setup, s.Role, s.Size, got, s.CPU.lossy(), w)
		}
	}
	if seen != len(cases) {
		t.Errorf("found %d of the %d samples checked", seen, len(cases))
	}
	// Net CPU: the bridge's own less the mean of direct's two at the
	// same size; direct itself has none.
	base64 := (10257.373661745843 + 11331.409641632603) / 2
	for _, s := range samples {
		switch {
		case s.Setup == "direct" && (s.CPU.Net != nil || s.CPU.Baseline != nil):
			t.Errorf("direct %s %d: net %v, baseline %v; want none on the baseline", s.Role, s.Size, s.CPU.Net, s.CPU.Baseline)
		case s.Setup == "bridge0" && s.Role == RolePatch && s.Size == 64:
			if s.CPU.Net == nil || math.Abs(*s.CPU.Net-(9012.09748019628-base64)) > 1e-6 || math.Abs(*s.CPU.Baseline-base64) > 1e-6 {
				t.Errorf("bridge0 patch 64: net %v, baseline %v; want %v less %v", deref(s.CPU.Net), deref(s.CPU.Baseline), 9012.09748019628, base64)
			}
		}
	}
}

// deref is *p, NaN for nil, for messages.
func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// A version-2 results.json (the receiving tester, no figures, no trial
// rate recorded) classifies the same way: its rates were all set by a
// generator that fell short.
func TestClassifyRecordedVersion2(t *testing.T) {
	samples := loadSamples(t, "rate_samples_receiving_v2.json")
	want := map[[2]any]struct {
		trialRate float64
		maxBound  bool
	}{
		// Fastest lossless trial of six: 346157 frames/s (the sender
		// reached 254888).
		{RolePatch, 64}:     {346157, false},
		{RolePatch, 1518}:   {230729, true},
		{RoleNoPatch, 64}:   {279399, true},
		{RoleNoPatch, 1518}: {362438, false},
	}
	for _, s := range samples {
		s.classify()
		w := want[[2]any{s.Role, s.Size}]
		if math.Round(s.ZeroLossTrialRate) != w.trialRate || s.MaxRate.TesterBound != w.maxBound ||
			!s.ZeroLossRate.TesterBound || s.ZeroLossRate.Why != WhyShort || s.ZeroLossRate.Achieved != s.ZeroLoss || s.ZeroLossAboveMax {
			t.Errorf("%s %d: trial rate %.0f, max %+v, zero loss %v %+v, above max %v; want trial rate %.0f, max tester-bound %v, the zero-loss trial short of its rate at %v, not above max",
				s.Role, s.Size, s.ZeroLossTrialRate, s.MaxRate, s.ZeroLoss, s.ZeroLossRate, s.ZeroLossAboveMax, w.trialRate, w.maxBound, s.ZeroLoss)
		}
	}
}

func TestRateTablesRecordedGolden(t *testing.T) {
	setups, samples := classified(t)
	rc := DefaultRateConfig(true, false)
	cells := AnalyzeRates(setups, rc.Sizes, samples, 0.05)
	var b strings.Builder
	printAllTables(&b, &Results{Rate: &rc, RateSetups: setups, RateCells: cells})
	golden(t, "rate_tables_recorded.golden", b.String())

	// report.md's summary, ns/frame first.
	var md strings.Builder
	rateSummaryMarkdown(&md, &Results{Alpha: 0.05, Rate: &rc, RateSetups: setups, RateCells: cells})
	golden(t, "rate_summary_recorded.golden", md.String())

	// results.json's parts that are new in version 3: one sample's
	// figures and CPU run, and the cells of one size with their figures.
	var part struct {
		Sample RateSample `json:"rate_sample"`
		Cells  []RoleCell `json:"rate_cells"`
	}
	for _, s := range samples {
		if s.Setup == "bridge0" && s.Role == RolePatch && s.Size == 1518 {
			part.Sample = s
			part.Sample.Trials = part.Sample.Trials[len(part.Sample.Trials)-1:] // the passing one
		}
	}
	for _, c := range cells {
		if c.Setup == "bridge0" && c.Size == 1518 && c.Role == RolePatch {
			part.Cells = append(part.Cells, c)
		}
	}
	js, err := json.MarshalIndent(part, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rate_json_recorded.golden", string(js)+"\n")
}

func TestRateTablesNotes(t *testing.T) {
	mk := func(role string, max, zero float64) RateSample {
		s := RateSample{Setup: "bridge0", Role: role, Size: 64, ZeroLoss: zero, ZeroLossTrialRate: zero, Trials: []RateRun{{Result: gen.Result{Rate: zero, Seconds: 1, Sent: uint64(zero), Received: uint64(zero), SentPerSecond: zero}}}}
		s.Max.Result = gen.Result{Seconds: 1, Sent: 500_000, Received: uint64(max), SentPerSecond: 500_000, PacketsPerSecond: max}
		s.classify()
		return s
	}
	setups := rateSetups(t, "bridge0")
	for _, c := range []struct {
		name      string
		patch     RateSample
		noPatch   RateSample
		wantNotes []string
	}{
		{"zero loss below max: no note", mk(RolePatch, 300_000, 250_000), mk(RoleNoPatch, 300_000, 250_000), nil},
		{"no patch's zero loss above its max: explained", mk(RolePatch, 300_000, 250_000), mk(RoleNoPatch, 297_000, 323_000),
			[]string{ZeroLossNote("64/60", RoleNoPatch, 323_000, 297_000)}},
	} {
		cells := AnalyzeRates(setups, []int{64}, []RateSample{c.patch, c.noPatch}, 0.05)
		tab := RateTables(setups[0], []int{64}, 0, cells)
		if strings.Join(tab.Notes, "\n") != strings.Join(c.wantNotes, "\n") {
			t.Errorf("%s: notes\n%q\nwant\n%q", c.name, tab.Notes, c.wantNotes)
		}
		if c.noPatch.ZeroLossAboveMax != (len(c.wantNotes) > 0) {
			t.Errorf("%s: no patch sample's ZeroLossAboveMax %v", c.name, c.noPatch.ZeroLossAboveMax)
		}
	}
	if n := ZeroLossNote("64/60", RoleNoPatch, 323_000, 297_000); !strings.HasPrefix(n, "64/60 no patch: 0-loss fps 323000 above max fps 297000: paced, the device delivered every frame") {
		t.Errorf("note %q", n)
	}
}

func TestNetCPU(t *testing.T) {
	cpu := func(setup string, size int, ns float64, err string) RateSample {
		return RateSample{Setup: setup, Size: size, CPU: &CPURun{Err: err, Cost: cpustat.Cost{NsPerFrame: ns}}}
	}
	samples := []RateSample{
		cpu("direct", 64, 1000, ""), cpu("direct", 64, 1200, ""), cpu("direct", 64, 99999, "CPU per frame: no frame delivered"),
		cpu("bridge0", 64, 1500, ""), cpu("bridge0", 1518, 2000, ""), cpu("bridge0", 64, 0, "CPU per frame: no frame delivered"),
		{Setup: "bridge0", Size: 64},
	}
	NetCPU(rateSetups(t, "direct", "bridge0"), samples)
	for i, c := range []struct {
		base, net float64 // NaN: none
	}{
		{math.NaN(), math.NaN()}, {math.NaN(), math.NaN()}, {math.NaN(), math.NaN()}, // the baseline itself
		{1100, 400},              // less the mean of direct's two good runs
		{math.NaN(), math.NaN()}, // no baseline at 1518
		{math.NaN(), math.NaN()}, // no cost of its own
	} {
		c0 := samples[i].CPU
		if got, want := c0.Baseline != nil, !math.IsNaN(c.base); got != want || (got && (*c0.Baseline != c.base || *c0.Net != c.net)) {
			t.Errorf("sample %d (%s %d): baseline %v net %v; want %v %v", i, samples[i].Setup, samples[i].Size, c0.Baseline, c0.Net, c.base, c.net)
		}
	}
}
