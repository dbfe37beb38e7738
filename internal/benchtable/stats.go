package benchtable

import (
	"fmt"
	"slices"

	"github.com/swctl/swctl/internal/stats"
)

// Cell is the summary of one metric on one row over the runs.
type Cell struct {
	// N is the number of runs with a value.
	N int `json:"n"`
	// Median, Min and Max summarise those values.
	Median float64 `json:"median"`
	// Min is the smallest value.
	Min float64 `json:"min"`
	// Max is the largest value.
	Max float64 `json:"max"`
	// Notes are the distinct sample notes, each followed by the number
	// of runs that had it: "sender-bound (2 runs)".
	Notes []string `json:"notes,omitempty"`
	// Errs are the distinct errors of runs without a value, each with
	// its count.
	Errs []string `json:"errors,omitempty"`
}

// Key names a cell.
type Key struct {
	// Row is the row ID.
	Row string
	// Metric is the metric ID.
	Metric string
}

// Summarize groups samples by row and metric.
func Summarize(samples []Sample) map[Key]Cell {
	vals := map[Key][]float64{}
	notes := map[Key]*counted{}
	errs := map[Key]*counted{}
	for _, s := range samples {
		k := Key{s.Row, s.Metric}
		if s.Err != "" {
			if errs[k] == nil {
				errs[k] = &counted{}
			}
			errs[k].add(s.Err)
			continue
		}
		vals[k] = append(vals[k], s.Value)
		if s.Note != "" {
			if notes[k] == nil {
				notes[k] = &counted{}
			}
			notes[k].add(s.Note)
		}
	}
	out := map[Key]Cell{}
	for k, vs := range vals {
		st := stats.Summarize(vs)
		out[k] = Cell{N: st.N, Median: st.Median, Min: st.Min, Max: st.Max}
	}
	for k, n := range notes {
		c := out[k]
		c.Notes = n.list()
		out[k] = c
	}
	for k, e := range errs {
		c := out[k]
		c.Errs = e.list()
		out[k] = c
	}
	return out
}

// counted keeps distinct strings in first-seen order with their counts.
type counted struct {
	// order is the strings in first-seen order.
	order []string
	// n counts each string.
	n map[string]int
}

func (c *counted) add(s string) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[s] == 0 {
		c.order = append(c.order, s)
	}
	c.n[s]++
}

func (c *counted) list() []string {
	out := make([]string, len(c.order))
	for i, s := range c.order {
		runs := "runs"
		if c.n[s] == 1 {
			runs = "run"
		}
		out[i] = fmt.Sprintf("%s (%d %s)", s, c.n[s], runs)
	}
	return out
}

// NetCPU returns samples with a CPUNet sample added for every CPUGross
// sample: the row's CPU ns per frame minus the direct-veth row's in the
// same run (the load's cost at the tester's ends, which every row has),
// or minus the direct row's median when that run has none. Without any
// direct-veth value the CPUNet samples carry an error.
func NetCPU(samples []Sample) []Sample {
	base := map[int]float64{}
	var all []float64
	for _, s := range samples {
		if s.Row == RowDirect && s.Metric == CPUGross && s.Err == "" {
			base[s.Run] = s.Value
			all = append(all, s.Value)
		}
	}
	out := slices.Clone(samples)
	for _, s := range samples {
		if s.Metric != CPUGross {
			continue
		}
		n := Sample{Row: s.Row, Run: s.Run, Metric: CPUNet}
		b, ok := base[s.Run]
		if !ok && len(all) > 0 {
			b, ok = stats.Summarize(all).Median, true
		}
		switch {
		case s.Err != "":
			n.Err = s.Err
		case !ok:
			n.Err = "no direct-veth baseline to subtract"
		default:
			n.Value = s.Value - b
		}
		out = append(out, n)
	}
	return out
}

// Ratio returns a / b and whether it means anything: both measured,
// b > 0 and a >= 0 (a net CPU cost below 0 is noise around the baseline,
// and no ratio of it means anything).
func Ratio(a, b Cell) (float64, bool) {
	if a.N == 0 || b.N == 0 || b.Median <= 0 || a.Median < 0 {
		return 0, false
	}
	return a.Median / b.Median, true
}
