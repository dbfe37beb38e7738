package benchtable

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenSamples are three runs of every row, OVS with TSO skipped, with
// a failed start and notes.
func goldenSamples() []Sample {
	type v struct {
		row    string
		metric string
		vals   [3]float64
		note   string
	}
	var out []Sample
	for _, x := range []v{
		{RowDirect, Max64, [3]float64{1.08e6, 1.09e6, 1.10e6}, ""},
		{RowKernel, Max64, [3]float64{0.75e6, 0.76e6, 0.77e6}, ""},
		{RowSwctl1, Max64, [3]float64{1.0e6, 1.1e6, 1.05e6}, "tester's rx ring dropped frames"},
		{RowOVS, Max64, [3]float64{0.40e6, 0.41e6, 0.42e6}, ""},
		{RowDirect, Max64Loss, [3]float64{0, 0, 0}, ""},
		{RowKernel, Max64Loss, [3]float64{0, 0.1, 0}, ""},
		{RowSwctl1, Max64Loss, [3]float64{2, 3, 4}, ""},
		{RowOVS, Max64Loss, [3]float64{40, 41, 42}, ""},
		{RowDirect, CPUGross, [3]float64{1000, 1100, 1200}, ""},
		{RowKernel, CPUGross, [3]float64{1500, 1600, 1700}, ""},
		{RowSwctl1, CPUGross, [3]float64{2000, 2300, 2200}, ""},
		{RowOVS, CPUGross, [3]float64{5000, 5100, 5200}, ""},
		{RowKernel, CPUSys, [3]float64{40, 41, 42}, ""},
		{RowKernel, CPUSoftirq, [3]float64{20, 21, 22}, ""},
		{RowDirect, TCPOn, [3]float64{19.2, 19.0, 19.5}, ""},
		{RowKernel, TCPOn, [3]float64{18.1, 18.0, 18.3}, ""},
		{RowSwctl1, TCPOn, [3]float64{13, 12.5, 13.5}, ""},
		{RowOVS, TCPOn, [3]float64{0, 0, 0}, "no transfer: iperf3: unable to connect to server: Connection timed out"},
		{RowDirect, RTT, [3]float64{0.061, 0.060, 0.062}, ""},
		{RowKernel, RTT, [3]float64{0.080, 0.081, 0.079}, ""},
		{RowSwctl1, RTT, [3]float64{0.138, 0.140, 0.130}, ""},
		{RowOVS, RTT, [3]float64{0.321, 0.300, 0.330}, ""},
	} {
		for i, val := range x.vals {
			out = append(out, Sample{Row: x.row, Run: i + 1, Metric: x.metric, Value: val, Note: x.note})
		}
	}
	out = append(out,
		Sample{Row: RowSwctl2, Run: 1, Metric: Max64, Err: "start: swctl bridge, 2 workers: swctl daemon exited at start: bind: address in use"},
		Sample{Row: RowSwctl2, Run: 2, Metric: Max64, Value: 0.9e6},
	)
	return NetCPU(out)
}

func TestRenderGolden(t *testing.T) {
	rows := Rows()
	for i := range rows {
		if rows[i].ID == RowOVSTSO {
			rows[i].Skip = "not installed"
		}
	}
	var buf bytes.Buffer
	err := Render(&buf, Table{
		Header:  []string{"make bench: golden test", ""},
		Rows:    rows,
		Metrics: Metrics(200e3, 20),
		Samples: goldenSamples(),
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "table.golden")
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
