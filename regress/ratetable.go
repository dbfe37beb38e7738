package regress

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/swctl/swctl/gen"
)

// rateLabel is a frame size's row label: both lengths on veth (64/60).
func rateLabel(size int) string {
	return strconv.Itoa(size) + "/" + strconv.Itoa(gen.FrameSize(size))
}

// rateFormats format the forwarding-rate table's column pairs: ns/frame
// and frames/s without decimals, loss % with two.
var rateFormats = []string{"%.0f", "%.0f", "%.0f", "%.2f"}

// rateTable is the forwarding-rate table's frame: title, the tester
// method's line, a 10-character label column (frame size) and
// 12-character value columns; with cpu the ns/frame pair first, then max
// rate, zero-loss rate and loss %, patch beside no patch.
func rateTable(title, method string, cpu bool) Table {
	cols := []string{"ns/frame", "max fps", "0-loss fps", "loss %"}
	if !cpu {
		cols = cols[1:]
	}
	return pairTable([]string{title, methodLine(method)}, "bytes", cols...)
}

// Legends of the forwarding-rate table's flags.
var (
	// testerBoundLegend explains "t".
	testerBoundLegend = fmt.Sprintf("t = tester-bound in some run: the generator fell short of its offer, so the figure is the tester's limit and a lower bound of the device's (max fps: no frame lost at the generator's top rate; 0-loss fps: no loss at the search's upper bound, or the generator below %.0f%% of the paced rate; ns/frame: the generator below %.0f%% of the CPU load)", 100*(1-gen.PaceTolerance), 100*(1-gen.PaceTolerance))
	// lossyLegend explains "l".
	lossyLegend = "l = frames lost at the CPU load in some run: the device did not carry it, so ns/frame is at overload"
	// saturatedLegend explains "s".
	saturatedLegend = fmt.Sprintf("s = the machine was saturated during the CPU load in some run (idle below %.0f%%): other work shared it, so ns/frame is not the path's alone", 100*SaturatedIdle)
)

// rateFlags are the flags of a rate cell, in the order they are written,
// with their legends.
var rateFlags = [][2]string{{"t", testerBoundLegend}, {"l", lossyLegend}, {"s", saturatedLegend}}

// methodTexts describe the tester methods, for the tables' method line.
var methodTexts = map[string]string{
	MethodCounting:  "counting: send-only generator; delivered = frames the receiving interface's rx_packets counted",
	MethodReceiving: "receiving: the generator's receiver reads every frame at the far end",
}

// methodLine is the table's line naming the tester method.
func methodLine(method string) string { return "method: " + cmp.Or(methodTexts[method], method) }

// ZeroLossNote explains a zero-loss rate above the max-rate run's
// delivered rate, which RFC 2544 allows: a device can deliver more when
// paced than when overloaded.
func ZeroLossNote(label, role string, zero, max float64) string {
	return fmt.Sprintf("%s %s: 0-loss fps %.0f above max fps %.0f: paced, the device delivered every frame at the higher rate; at max load it delivers less, spending CPU on frames it then drops while the generator's sending competes for the same cores",
		label, role, zero, max)
}

// rateRows are the rows of setup s's forwarding-rate table from cells,
// one per size with all eight cells (ns/frame first, n/a where not
// measured), whether a ns/frame cell was measured, and the flags of
// every cell.
func rateRows(s RateSpec, sizes []int, cells []RoleCell) (rows []Row, cpu bool, flags string) {
	metrics := []string{"cpu_net", "max_rate", "zero_loss", "loss"} // the column pairs
	if s.Baseline {
		metrics[0] = "cpu_gross"
	}
	for _, size := range sizes {
		at := RoleCell{Setup: s.Name, Size: size}
		r := pairRow(rateLabel(size), rateFormats, pairCells(cells, at, metrics...)...)
		for k := range r.Cells {
			at.Metric, at.Role = metrics[k/2], bothRoles[k%2] // pairCells' order
			if c := findCell(cells, at); c != nil && !c.NA && c.Figure != nil {
				for i, n := range []int{c.Figure.TesterBound, c.Figure.Lossy, c.Figure.Saturated} {
					if n > 0 {
						r.Cells[k].Flags += rateFlags[i][0]
					}
				}
				flags += r.Cells[k].Flags
			}
		}
		cpu = cpu || !r.Cells[0].NA || !r.Cells[1].NA
		rows = append(rows, r)
	}
	return rows, cpu, flags
}

// RateTables builds the table of setup s from cells, one row per size
// (the ns/frame pair only when measured); cpuRate is the CPU-cost run's
// load (for the title). The flags' legends and every zero-loss rate
// above its max rate are explained below the rows.
func RateTables(s RateSpec, sizes []int, cpuRate float64, cells []RoleCell) Table {
	rows, cpu, flags := rateRows(s, sizes, cells)
	title := fmt.Sprintf("Forwarding rate (CPU ns/frame at %.0f frames/s paced, net of direct veth; frames/s; loss %%)", cpuRate)
	switch {
	case !cpu:
		title = "Forwarding rate (frames/s, loss %)"
	case s.Baseline:
		title = fmt.Sprintf("Forwarding rate, no device under test (CPU ns/frame at %.0f frames/s paced: the tester's own, the baseline; frames/s; loss %%)", cpuRate)
	}
	t := rateTable(title, s.Method, cpu)
	for _, f := range rateFlags {
		if strings.Contains(flags, f[0]) {
			t.Notes = append(t.Notes, f[1])
		}
	}
	for _, r := range rows {
		for i, role := range bothRoles {
			max, zero := r.Cells[2+i], r.Cells[4+i]
			if !max.NA && !zero.NA && zero.Value > max.Value {
				t.Notes = append(t.Notes, ZeroLossNote(r.Label, role, zero.Value, max.Value))
			}
		}
		if !cpu {
			r.Cells = r.Cells[2:]
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// What follows reports the forwarding rate in report.md and the header:
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
	t := Table{Columns: [][]string{{"setup", "bytes", "ns/frame, patch", "ns/frame, no patch", "max fps, patch", "max fps, no patch", "0-loss fps, patch", "0-loss fps, no patch"}}}
	var legends, notes []string
	for _, s := range r.RateSetups {
		rows, _, _ := rateRows(s, c.Sizes, r.RateCells)
		name := s.Name
		if s.Baseline {
			name += " (baseline)"
		}
		for _, row := range rows {
			t.Rows = append(t.Rows, Row{Label: name, Cells: append(texts(row.Label), row.Cells[:6]...)})
		}
		for _, n := range RateTables(s, c.Sizes, c.CPURate, r.RateCells).Notes {
			switch {
			case n != testerBoundLegend && n != lossyLegend && n != saturatedLegend:
				notes = append(notes, s.Name+" "+n)
			case !slices.Contains(legends, n):
				legends = append(legends, n)
			}
		}
	}
	writeMarkdown(b, t)
	b.WriteString("\n")
	for _, n := range append(legends, notes...) {
		fmt.Fprintf(b, "- %s\n", n)
	}
	if len(legends)+len(notes) > 0 {
		b.WriteString("\n")
	}
}

// rateCellPart is report.md's every-cell table of rate setup s: the
// statistics of every metric, and for the rate cells what their runs
// offered, achieved and delivered; the summary names a cell by its
// metric's title and size.
func rateCellPart(s RateSpec, cells []RoleCell) reportPart {
	p := reportPart{name: "forwarding rate: " + s.Name, table: everyCell([]string{"metric", "size", "role"}, "offered / achieved / delivered", "t", "l", "s"),
		intro: fmt.Sprintf("%s. %s.\n\n", s.Desc, cmp.Or(methodTexts[s.Method], s.Method)) +
			"Offered is the rate asked of the generator (0: a max-rate run, as fast as its port takes frames), achieved what it sent, delivered what arrived (frames/s, means); t = the runs where the tester set the figure, l = the runs that lost frames at the CPU load, s = the runs whose machine was saturated during it.\n\n"}
	for _, c := range cells {
		if c.Setup != s.Name {
			continue
		}
		row := Row{Label: c.Metric, Cells: texts(strconv.Itoa(c.Size), c.Role, cellStats(c.Comparison)+" | | | |")} // n/a: the figures' columns blank
		if !c.NA {
			fig, t, l, sat := "", "", "", ""
			if f := c.Figure; f != nil {
				fig = fmt.Sprintf("%.0f / %.0f / %.0f", f.Offered, f.Achieved, f.Delivered)
				t, l, sat = fmt.Sprintf("%d of %d", f.TesterBound, f.Runs), fmt.Sprint(f.Lossy), fmt.Sprint(f.Saturated)
			}
			row.Cells = texts(strconv.Itoa(c.Size), c.Role, cellStats(c.Comparison), fig, t, l, sat)
		}
		p.table.Rows = append(p.table.Rows, row)
		p.cells = append(p.cells, c)
	}
	p.label = func(c RoleCell) string {
		i := slices.IndexFunc(RateMetrics, func(m Metric[RateSample]) bool { return m.Key == c.Metric })
		return fmt.Sprintf("%s, %d bytes", RateMetrics[i].Title, c.Size)
	}
	return p
}
