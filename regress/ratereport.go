package regress

import (
	"fmt"
	"slices"
	"strings"
)

// This file reports the forwarding rate in report.md and the header:
// the summary that leads with the CPU per forwarded frame, and the
// every-cell section with each rate cell's offered, achieved and
// delivered rates.

// rateHeader is the forwarding rate's header line.
func rateHeader(c RateConfig) string {
	cpu := ""
	if c.CPUTrial > 0 {
		cpu = fmt.Sprintf("ns/frame = CPU per forwarded frame at %.0f frames/s paced, net of direct veth (it leads: on a small machine the rates are often the tester's); ", c.CPURate)
	}
	return fmt.Sprintf("Forwarding rate: %v runs and trials, sizes %v (FCS included; veth carries 4 bytes less); %smax fps = frames delivered per second at maximum offered rate, 0-loss fps = RFC 2544 throughput; t = tester-bound (the generator fell short of its offer).",
		c.Trial, c.Sizes, cpu)
}

// rateSummaryMarkdown writes report.md's summary of the forwarding rate:
// per setup and frame size the CPU per forwarded frame first, then the
// max and zero-loss rates, patch beside no patch, flags and marks as in
// the tables, and the tables' notes.
func rateSummaryMarkdown(b *strings.Builder, r *Results) {
	if r.Rate == nil || len(r.RateSetups) == 0 {
		return
	}
	c := *r.Rate
	b.WriteString("### Forwarding rate\n\n")
	if c.CPUTrial > 0 {
		fmt.Fprintf(b, "CPU per forwarded frame at %.0f frames/s paced, net of direct veth (the direct row: the tester's own, gross), leads: on a small machine the tester and the device under test share the cores, so the rates are often the tester's limit (t).", c.CPURate)
	} else {
		b.WriteString("No CPU-per-frame run: the rates alone, often the tester's limit on a small machine (t).")
	}
	fmt.Fprintf(b, " Means over the runs; * = patch differs from no patch (Mann-Whitney p < %.3g).\n\n", r.Alpha)
	b.WriteString("| setup | bytes | ns/frame, patch | ns/frame, no patch | max fps, patch | max fps, no patch | 0-loss fps, patch | 0-loss fps, no patch |\n|---|---|---|---|---|---|---|---|\n")
	var legends, notes []string
	for _, s := range r.RateSetups {
		t := RateTables(s, c.Sizes, c.CPURate, r.RateCells)
		name := s.Name
		if s.Baseline {
			name += " (baseline)"
		}
		for _, row := range t.Rows {
			cols := make([]string, 6)
			for i, cell := range row.Cells[:6] {
				cols[i] = cell.format("%.0f")
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", name, rateLabel(row.Size, t.Veth), strings.Join(cols, " | "))
		}
		for _, n := range t.Notes {
			switch {
			case n != testerBoundLegend && n != lossyLegend && n != saturatedLegend:
				notes = append(notes, s.Name+" "+n)
			case !slices.Contains(legends, n):
				legends = append(legends, n)
			}
		}
	}
	b.WriteString("\n")
	for _, n := range append(legends, notes...) {
		fmt.Fprintf(b, "- %s\n", n)
	}
	if len(legends)+len(notes) > 0 {
		b.WriteString("\n")
	}
}

// rateCellsMarkdown writes report.md's every-cell sections of the
// forwarding rate: the statistics of every metric, and for the rate
// cells what their runs offered, achieved and delivered.
func rateCellsMarkdown(b *strings.Builder, r *Results) {
	if r.Rate == nil {
		return
	}
	for _, s := range r.RateSetups {
		fmt.Fprintf(b, "\n### forwarding rate: %s\n\n%s. %s.\n\n", s.Name, s.Desc, strings.TrimPrefix(methodLine(s.Method), "method: "))
		b.WriteString("Offered is the rate asked of the generator (0: a max-rate run, as fast as its port takes frames), achieved what it sent, delivered what arrived (frames/s, means); t = the runs where the tester set the figure, l = the runs that lost frames at the CPU load, s = the runs whose machine was saturated during it.\n\n")
		b.WriteString("| metric | size | role | n | mean | median | min | max | stddev | p (patch vs no patch) | offered / achieved / delivered | t | l | s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range r.RateCells {
			if c.Setup != s.Name {
				continue
			}
			if c.NA {
				fmt.Fprintf(b, "| %s | %d | %s | %s | | | | |\n", c.Metric, c.Size, c.Role, cellStats(c.Comparison))
				continue
			}
			fig, t, l, sat := "", "", "", ""
			if f := c.Figure; f != nil {
				fig = fmt.Sprintf("%.0f / %.0f / %.0f", f.Offered, f.Achieved, f.Delivered)
				t, l, sat = fmt.Sprintf("%d of %d", f.TesterBound, f.Runs), fmt.Sprint(f.Lossy), fmt.Sprint(f.Saturated)
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", c.Metric, c.Size, c.Role, cellStats(c.Comparison), fig, t, l, sat)
		}
	}
}
