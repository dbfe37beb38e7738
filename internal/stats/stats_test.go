package stats

import (
	"math"
	"testing"
)

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func TestSummarize(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{5}, Summary{N: 1, Mean: 5, Median: 5, Min: 5, Max: 5}},
		// The seed's Receive PROMISC patch cell: 4 runs, mean 880.50.
		{"even", []float64{878, 883, 879, 882}, Summary{N: 4, Mean: 880.5, Median: 880.5, Min: 878, Max: 883, Stddev: math.Sqrt(17.0 / 3)}},
		{"odd", []float64{2, 4, 4, 4, 5, 5, 7, 9, 1}, Summary{N: 9, Mean: 41.0 / 9, Median: 4, Min: 1, Max: 9, Stddev: 2.4037009}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]float64(nil), c.in...)
			got := Summarize(c.in)
			if got.N != c.want.N || !near(got.Mean, c.want.Mean, 1e-9) || !near(got.Median, c.want.Median, 1e-9) ||
				got.Min != c.want.Min || got.Max != c.want.Max || !near(got.Stddev, c.want.Stddev, 1e-6) {
				t.Errorf("Summarize(%v) = %+v, want %+v", c.in, got, c.want)
			}
			for i := range in {
				if in[i] != c.in[i] {
					t.Fatalf("Summarize reordered its input: %v, was %v", c.in, in)
				}
			}
		})
	}
}

func TestCompareMannWhitney(t *testing.T) {
	cases := []struct {
		name  string
		a, b  []float64
		alpha float64
		wantP float64
		sig   bool
	}{
		// Fully separated samples of 4: the smallest p there is, 2/70.
		{"separated 4+4", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.05, 2.0 / 70, true},
		// Fully separated samples of 6: 2/924.
		{"separated 6+6", []float64{1, 2, 3, 4, 5, 6}, []float64{7, 8, 9, 10, 11, 12}, 0.05, 2.0 / 924, true},
		// Separated, but alpha stricter than 4 runs can reach.
		{"separated 4+4 alpha 0.01", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.01, 2.0 / 70, false},
		// Interleaved: U = 8 of 16, no difference at all.
		{"interleaved", []float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}, 0.05, 1, false},
		// One overlap in 3+3: U = 1, exact two-sided p = 4/20.
		{"one swap 3+3", []float64{1, 2, 4}, []float64{3, 5, 6}, 0.05, 0.2, false},
		{"empty side", nil, []float64{1}, 0.05, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, sig := Compare(c.a, c.b, c.alpha)
			if !near(p, c.wantP, 1e-9) || sig != c.sig {
				t.Errorf("Compare(%v, %v, %v) = p %.6f significant %v, want p %.6f significant %v", c.a, c.b, c.alpha, p, sig, c.wantP, c.sig)
			}
		})
	}
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		want   float64
	}{{4, 4, 2.0 / 70}, {6, 6, 2.0 / 924}, {1, 1, 1}, {3, 3, 0.1}, {0, 4, 1}} {
		if got := MinP(c.n1, c.n2); !near(got, c.want, 1e-12) {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
	}
	// The figure the report quotes for RUNS=4.
	if got := MinP(4, 4); got < 0.0285 || got > 0.0286 {
		t.Errorf("MinP(4, 4) = %v, want 0.029 rounded", got)
	}
}
