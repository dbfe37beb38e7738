package benchtable

import (
	"slices"
	"testing"
)

func TestSummarize(t *testing.T) {
	samples := []Sample{
		{Row: RowKernel, Run: 1, Metric: Max64, Value: 700e3},
		{Row: RowKernel, Run: 2, Metric: Max64, Value: 760e3, Note: "sender-bound"},
		{Row: RowKernel, Run: 3, Metric: Max64, Value: 740e3, Note: "sender-bound"},
		{Row: RowOVS, Run: 1, Metric: Max64, Err: "start: OVS: timeout"},
		{Row: RowOVS, Run: 2, Metric: Max64, Value: 400e3},
	}
	cells := Summarize(samples)
	k := cells[Key{RowKernel, Max64}]
	if k.N != 3 || k.Median != 740e3 || k.Min != 700e3 || k.Max != 760e3 {
		t.Errorf("kernel cell = %+v, want n 3, median 740000, min 700000, max 760000", k)
	}
	if want := []string{"sender-bound (2 runs)"}; !slices.Equal(k.Notes, want) {
		t.Errorf("kernel notes = %q, want %q", k.Notes, want)
	}
	o := cells[Key{RowOVS, Max64}]
	if o.N != 1 || o.Median != 400e3 {
		t.Errorf("OVS cell = %+v, want the one value 400000: a failed run is left out", o)
	}
	if want := []string{"start: OVS: timeout (1 run)"}; !slices.Equal(o.Errs, want) {
		t.Errorf("OVS errors = %q, want %q", o.Errs, want)
	}
	if _, ok := cells[Key{RowDirect, Max64}]; ok {
		t.Errorf("a cell for a row without samples exists")
	}
}

func TestNetCPU(t *testing.T) {
	in := []Sample{
		{Row: RowDirect, Run: 1, Metric: CPUGross, Value: 1000},
		{Row: RowDirect, Run: 2, Metric: CPUGross, Value: 1200},
		{Row: RowKernel, Run: 1, Metric: CPUGross, Value: 1300},
		{Row: RowKernel, Run: 2, Metric: CPUGross, Value: 1400},
		{Row: RowKernel, Run: 3, Metric: CPUGross, Value: 1600}, // run 3 has no direct value: the median, 1100
		{Row: RowOVS, Run: 1, Metric: CPUGross, Err: "no frame delivered"},
		{Row: RowSwctl1, Run: 1, Metric: Max64, Value: 5},
	}
	got := NetCPU(in)
	want := map[[2]any]Sample{
		{RowDirect, 1}: {Value: 0},
		{RowDirect, 2}: {Value: 0},
		{RowKernel, 1}: {Value: 300},
		{RowKernel, 2}: {Value: 200},
		{RowKernel, 3}: {Value: 500},
		{RowOVS, 1}:    {Err: "no frame delivered"},
	}
	n := 0
	for _, s := range got[len(in):] {
		if s.Metric != CPUNet {
			t.Errorf("NetCPU added a %s sample, want only %s", s.Metric, CPUNet)
			continue
		}
		n++
		w, ok := want[[2]any{s.Row, s.Run}]
		if !ok {
			t.Errorf("unexpected %s run %d", s.Row, s.Run)
			continue
		}
		if s.Value != w.Value || s.Err != w.Err {
			t.Errorf("%s run %d: net %v (error %q), want %v (error %q)", s.Row, s.Run, s.Value, s.Err, w.Value, w.Err)
		}
	}
	if n != len(want) {
		t.Errorf("%d net samples, want %d", n, len(want))
	}
	if !slices.Equal(got[:len(in)], in) {
		t.Errorf("NetCPU changed its input samples")
	}

	none := NetCPU([]Sample{{Row: RowKernel, Run: 1, Metric: CPUGross, Value: 1}})
	if len(none) != 2 || none[1].Err == "" {
		t.Errorf("without a direct-veth value: %+v, want a net sample with an error", none)
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct {
		name   string
		a, b   Cell
		want   float64
		wantOK bool
	}{
		{"plain", Cell{N: 3, Median: 2}, Cell{N: 3, Median: 4}, 0.5, true},
		{"reference zero", Cell{N: 3, Median: 2}, Cell{N: 3, Median: 0}, 0, false},
		{"row negative (net CPU within the noise)", Cell{N: 3, Median: -2}, Cell{N: 3, Median: 4}, 0, false},
		{"row zero", Cell{N: 3, Median: 0}, Cell{N: 3, Median: 4}, 0, true},
		{"reference unmeasured", Cell{N: 3, Median: 2}, Cell{}, 0, false},
		{"row unmeasured", Cell{}, Cell{N: 1, Median: 4}, 0, false},
	} {
		got, ok := Ratio(c.a, c.b)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: Ratio = %v, %v; want %v, %v", c.name, got, ok, c.want, c.wantOK)
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
