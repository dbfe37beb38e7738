// Package stats summarises a cell's samples (mean, median, min, max,
// standard deviation) and compares two cells with a Mann-Whitney U test
// (golang.org/x/perf/benchmath): the statistics of make regress's tables
// and make bench's medians.
package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Summary describes one cell's samples.
type Summary struct {
	// N is the number of samples.
	N int `json:"n"`
	// Mean is the arithmetic mean, the figure the tables show.
	Mean float64 `json:"mean"`
	// Median is the middle sample (the mean of the two middle ones for an
	// even count).
	Median float64 `json:"median"`
	// Min is the smallest sample.
	Min float64 `json:"min"`
	// Max is the largest sample.
	Max float64 `json:"max"`
	// Stddev is the sample standard deviation (n-1 in the denominator);
	// 0 for fewer than two samples.
	Stddev float64 `json:"stddev"`
}

// Summarize returns the summary of values; values is not modified. The
// summary of no values is all zero.
func Summarize(values []float64) Summary {
	n := len(values)
	if n == 0 {
		return Summary{}
	}
	v := slices.Sorted(slices.Values(values))
	s := Summary{N: n, Min: v[0], Max: v[n-1], Median: (v[(n-1)/2] + v[n/2]) / 2}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	s.Mean = sum / float64(n)
	ss := 0.0 // 0 for one sample, which is the mean
	for _, x := range v {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.Stddev = math.Sqrt(ss / float64(max(n-1, 1)))
	return s
}

// Compare runs a two-sided Mann-Whitney U test (benchmath's
// AssumeNothing) on samples a and b and reports the p-value and whether
// it is below alpha. Neither slice is modified. With fewer than one sample
// on either side p is 1.
func Compare(a, b []float64, alpha float64) (p float64, significant bool) {
	if len(a) == 0 || len(b) == 0 {
		return 1, false
	}
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th))
	return c.P, c.P < alpha
}

// MinP is the smallest two-sided p-value a Mann-Whitney U test can give
// for samples of n1 and n2 values without ties: 2 / C(n1+n2, n1), capped
// at 1. With 4 runs a side it is 2/70 = 0.029.
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}
