package benchtable

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Table is what Render prints.
type Table struct {
	// Header lines come first, each as is.
	Header []string
	// Rows are the paths, in order; skipped ones print their reason.
	Rows []Row
	// Metrics are the metrics, in order; hidden ones only feed notes.
	Metrics []Metric
	// Samples are every row's, run's and metric's values, CPUNet
	// included (see NetCPU).
	Samples []Sample
}

// maxNote is the most runes of one note cell; the JSON has the rest.
const maxNote = 90

// Render writes t: per metric, one line per row with the median, the
// min–max spread over the runs, the ratios of the medians to the kernel
// bridge's and to OVS userspace's (without TSO), and notes.
func Render(w io.Writer, t Table) error {
	for _, h := range t.Header {
		if _, err := fmt.Fprintln(w, h); err != nil {
			return err
		}
	}
	cells := Summarize(t.Samples)
	skipped := map[string]bool{}
	for _, r := range t.Rows {
		if r.Skip != "" {
			skipped[r.ID] = true
		}
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tpath\tmedian\tmin–max\tvs kernel\tvs OVS\tnotes")
	first := true
	for _, m := range t.Metrics {
		if m.Hidden {
			continue
		}
		if !first {
			fmt.Fprintln(tw, "\t\t\t\t\t\t")
		}
		first = false
		kernel, ovs := cells[Key{RowKernel, m.ID}], cells[Key{RowOVS, m.ID}]
		for i, r := range t.Rows {
			label := ""
			if i == 0 {
				label = m.Label
			}
			if r.Skip != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t–\t–\t–\t\n", label, r.Label, r.Skip)
				continue
			}
			c := cells[Key{r.ID, m.ID}]
			med, spread := "–", "–"
			switch {
			case c.N > 0:
				med = m.Format(c.Median)
				spread = m.Format(c.Min) + "–" + m.Format(c.Max)
				if c.N == 1 {
					spread = "(1 run)"
				}
			case len(c.Errs) > 0:
				med = "failed"
			}
			vk, vo := ratio(c, kernel, skipped[RowKernel]), ratio(c, ovs, skipped[RowOVS])
			var notes []string
			for _, n := range m.Notes {
				if nc := cells[Key{r.ID, n.Metric}]; nc.N > 0 {
					notes = append(notes, fmt.Sprintf(n.Format, n.Fmt(nc.Median)))
				}
			}
			notes = append(notes, c.Notes...)
			for _, e := range c.Errs {
				notes = append(notes, "failed: "+e)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", label, r.Label, med, spread, vk, vo, clip(strings.Join(notes, "; ")))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(buf.String()) {
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	return nil
}

// ratio formats a cell's median over a reference's, or "–".
func ratio(c, ref Cell, refSkipped bool) string {
	v, ok := Ratio(c, ref)
	switch {
	case !ok || refSkipped:
		return "–"
	case v >= 10:
		return fmt.Sprintf("%.1fx", v)
	case v >= 0.1 || v == 0:
		return fmt.Sprintf("%.2fx", v)
	default:
		return fmt.Sprintf("%.3fx", v)
	}
}

// clip cuts s to maxNote runes, marking the cut; a note is one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxNote {
		return s
	}
	r := []rune(s)
	return string(r[:maxNote-1]) + "…"
}
