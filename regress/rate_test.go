package regress

import (
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/gen"
)

func TestRateTableGolden(t *testing.T) {
	with := func(t Table, notes []string, rows ...Row) Table {
		t.Rows, t.Notes = rows, notes
		return t
	}
	cases := []struct {
		file  string
		table Table
	}{
		// The default sizes on veth with the CPU pair: both lengths in
		// the label, a significant difference, tester-bound and lossy
		// flags, an unmeasured zero-loss pair, and the notes.
		{"rate_table_veth.golden", with(rateTable("Forwarding rate (CPU ns/frame at 200000 frames/s paced, net of direct veth; frames/s; loss %)", MethodCounting, true),
			[]string{testerBoundLegend, lossyLegend},
			pairRow(rateLabel(64), rateFormats, Cell{Value: 1234.4}, Cell{Value: 1301, Flags: "t"}, Cell{Value: 273867.4}, Cell{Value: 225086}, Cell{Value: 159945, Marked: true}, Cell{Value: 219611, Flags: "t"}, Cell{Value: 46.371}, Cell{Value: 67.82}),
			pairRow(rateLabel(1518), rateFormats, Cell{Value: 2456, Flags: "l", Marked: true}, Cell{Value: -12}, Cell{Value: 81234, Flags: "t"}, Cell{Value: 81000, Flags: "t"}, Cell{NA: true}, Cell{NA: true}, Cell{Value: 0}, Cell{Value: 0.004}))},
		// A real NIC without the CPU pair (real test hosts): sizes as RFC
		// 2544 counts them, a figure wider than its column.
		{"rate_table_nic.golden", with(rateTable("Forwarding rate (frames/s, loss %)", MethodReceiving, false), nil,
			pairRow("128", rateFormats[1:], Cell{Value: 123456789012}, Cell{Value: 1}, Cell{Value: 2}, Cell{Value: 3}, Cell{Value: 100}, Cell{Value: 99.999}))},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			var b strings.Builder
			if err := RenderTable(&b, c.table); err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, b.String())
		})
	}
}

// rateSetups returns the forwarding-rate setups named, in table order.
func rateSetups(t *testing.T, names ...string) []RateSpec {
	t.Helper()
	s, err := FindRateSetups(names)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRatePlanInterleavesABBA(t *testing.T) {
	plan := RatePlan(RateSetups, 4)
	if n := len(plan); n != 3*4*2 {
		t.Fatalf("plan has %d instances, want 24 (3 setups x 4 runs x 2 roles)", n)
	}
	if plan[0].Setup != "direct" {
		t.Errorf("first instance %s, want the baseline, direct, first", plan[0])
	}
	var got []string
	for _, in := range plan {
		if in.Setup == "trunk0" {
			got = append(got, in.Role)
		}
	}
	want := []string{RolePatch, RoleNoPatch, RoleNoPatch, RolePatch, RolePatch, RoleNoPatch, RoleNoPatch, RolePatch}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("trunk0 order:\ngot  %v\nwant %v", got, want)
	}
}

func TestFindRateSetups(t *testing.T) {
	cases := []struct {
		names   []string
		want    string // names in order, comma-separated
		wantErr string // substring of the error; "" = none
	}{
		{nil, "direct,bridge0,trunk0", ""},
		{[]string{"trunk0", "bridge0"}, "bridge0,trunk0", ""},
		{[]string{"trunk0"}, "trunk0", ""},
		{[]string{"veth"}, "", `"veth"`},
	}
	for _, c := range cases {
		s, err := FindRateSetups(c.names)
		var got []string
		for _, x := range s {
			got = append(got, x.Name)
		}
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("FindRateSetups(%v): err = %v, want one containing %s", c.names, err, c.wantErr)
		case c.wantErr == "" && (err != nil || strings.Join(got, ",") != c.want):
			t.Errorf("FindRateSetups(%v) = %v, %v; want %s", c.names, got, err, c.want)
		}
	}
}

func TestRateConfigCheck(t *testing.T) {
	ok := DefaultRateConfig(false, false)
	cases := []struct {
		name    string
		change  func(c *RateConfig)
		wantErr string // substring; "" = valid
	}{
		{"default", func(c *RateConfig) {}, ""},
		{"quick", func(c *RateConfig) { *c = DefaultRateConfig(true, false) }, ""},
		{"full", func(c *RateConfig) { *c = DefaultRateConfig(false, true) }, ""},
		{"no sizes", func(c *RateConfig) { c.Sizes = nil }, "no frame sizes"},
		{"size too small", func(c *RateConfig) { c.Sizes = []int{60} }, "frame size 60"},
		{"short trial", func(c *RateConfig) { c.Trial = time.Millisecond }, "trial 1ms"},
		{"no trials", func(c *RateConfig) { c.MaxTrials = 0 }, "max trials 0"},
		{"resolution", func(c *RateConfig) { c.Resolution = 1 }, "resolution 1"},
		{"flows", func(c *RateConfig) { c.Flows = 0 }, "flows 0"},
	}
	for _, c := range cases {
		cfg := ok
		cfg.Sizes = append([]int(nil), ok.Sizes...)
		c.change(&cfg)
		err := cfg.check()
		checkErr(t, c.name+": check()", err, c.wantErr)
	}
	if full := DefaultRateConfig(false, true); len(full.Sizes) != len(gen.RFC2544Sizes) || !full.Latency {
		t.Errorf("FULL config = %+v, want every RFC 2544 size and latency", full)
	}
}

func TestAnalyzeRatesAndTable(t *testing.T) {
	mk := func(setup, role string, size int, max, zero, loss float64, lat time.Duration) RateSample {
		s := RateSample{Setup: setup, Role: role, Size: size, ZeroLoss: zero}
		s.Max.PacketsPerSecond, s.Max.LossPercent = max, loss
		if lat > 0 {
			s.Latency = &RateRun{Result: gen.Result{Latency: &gen.Latency{Samples: 1, Avg: lat, Max: lat}}}
		}
		return s
	}
	var samples []RateSample
	for i := 0; i < 4; i++ {
		f := float64(i)
		// Patch is clearly faster at 64 bytes: 4 runs a side give p = 0.029.
		samples = append(samples,
			mk("bridge0", RolePatch, 64, 1000+f, 900+f, 10, 0), mk("bridge0", RoleNoPatch, 64, 500+f, 400+f, 20, 0),
			mk("bridge0", RolePatch, 1518, 80+f, 70, 0, 0), mk("bridge0", RoleNoPatch, 1518, 81-f, 70, 0, 0))
	}
	setups := rateSetups(t, "bridge0")
	cells := AnalyzeRates(setups, []int{64, 1518}, samples, 0.05)
	get := func(metric string, size int, role string) *RoleCell {
		for i, c := range cells {
			if c.Metric == metric && c.Size == size && c.Role == role {
				return &cells[i]
			}
		}
		return nil
	}
	cases := []struct {
		metric   string
		size     int
		role     string
		wantMean float64
		wantSig  bool
	}{
		{"max_rate", 64, RolePatch, 1001.5, true},
		{"max_rate", 64, RoleNoPatch, 501.5, true},
		{"zero_loss", 64, RolePatch, 901.5, true},
		{"loss", 64, RoleNoPatch, 20, true},
		{"max_rate", 1518, RolePatch, 81.5, false},
		{"zero_loss", 1518, RoleNoPatch, 70, false},
	}
	for _, c := range cases {
		cell := get(c.metric, c.size, c.role)
		if cell == nil {
			t.Errorf("no cell %s %d %s", c.metric, c.size, c.role)
			continue
		}
		if cell.Summary.Mean != c.wantMean || cell.Significant != c.wantSig {
			t.Errorf("cell %s %d %s: mean %v significant %v, want %v %v (p %v)", c.metric, c.size, c.role, cell.Summary.Mean, cell.Significant, c.wantMean, c.wantSig, cell.P)
		}
	}
	if get("latency_avg_us", 64, RolePatch) != nil {
		t.Errorf("latency cells without any latency sample: want them left out")
	}
	// Without a CPU run the table has no ns/frame pair: max rate,
	// zero loss and loss %, patch beside no patch.
	tab := RateTables(setups[0], []int{64, 1518}, DefaultCPURate, cells)
	if len(tab.Rows) != 2 || !tab.Rows[0].Cells[0].Marked || tab.Rows[0].Cells[1].Marked || tab.Rows[1].Cells[0].Marked {
		t.Errorf("table marks: %+v; want only 64-byte patch cells marked", tab.Rows)
	}
	if len(tab.Columns[0]) != 7 || len(tab.Rows[0].Cells) != 6 {
		t.Errorf("samples without a CPU run: want no ns/frame pair, got %+v", tab)
	}
	if got := tab.Rows[1].Cells[2].Value; got != 70 {
		t.Errorf("table 1518 zero-loss patch = %v, want 70", got)
	}
	// With latency samples the latency metric appears.
	samples[0] = mk("bridge0", RolePatch, 64, 1000, 900, 10, 42*time.Microsecond)
	cells = AnalyzeRates(setups, []int{64, 1518}, samples, 0.05)
	if c := get("latency_avg_us", 64, RolePatch); c == nil || c.Summary.Mean != 42 {
		t.Errorf("latency_avg_us 64 patch = %+v, want mean 42", c)
	}
}
