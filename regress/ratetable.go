package regress

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/swctl/swctl/gen"
)

// RateTable is the forwarding-rate table of one setup: a row per frame
// size; columns CPU ns per frame at the paced CPU load (when measured),
// max rate, zero-loss rate and loss %, patch beside no patch; the tester
// method above, the marks and every zero-loss rate above its max rate
// explained below.
type RateTable struct {
	// Title is the first line.
	Title string
	// Head are the lines after the title: the tester method.
	Head []string
	// Veth says the ports carry frames without FCS: the row labels then
	// say both lengths (64/60).
	Veth bool
	// CPU shows the ns/frame column pair, first.
	CPU bool
	// Rows are the frame sizes in order.
	Rows []RateRow
	// Notes are the lines after the rows.
	Notes []string
}

// RateRow is one frame size of a RateTable.
type RateRow struct {
	// Size is the RFC 2544 frame size.
	Size int
	// Cells are ns/frame patch, ns/frame no patch, max rate patch, max
	// rate no patch, zero-loss patch, zero-loss no patch, loss % patch,
	// loss % no patch.
	Cells [8]Cell
}

// rateLabel is a frame size's row label: both lengths on veth (64/60).
func rateLabel(size int, veth bool) string {
	if veth {
		return strconv.Itoa(size) + "/" + strconv.Itoa(gen.FrameSize(size))
	}
	return strconv.Itoa(size)
}

// RenderRateTable writes t: a 10-character label column (frame size),
// 12-character value columns; ns/frame and frames/s without decimals,
// loss % with two; a cell's flags after its value ("t", "l"), '*' after
// a patch cell that differs significantly from no patch; then the notes.
func RenderRateTable(w io.Writer, t RateTable) error {
	pt := PairTable{Title: t.Title, Head: t.Head, Label: "bytes",
		Cols: []string{"ns/frame", "max fps", "0-loss fps", "loss %"}, Formats: []string{"%.0f", "%.0f", "%.0f", "%.2f"}}
	if !t.CPU {
		pt.Cols, pt.Formats = pt.Cols[1:], pt.Formats[1:]
	}
	for _, r := range t.Rows {
		pt.Rows = append(pt.Rows, PairRow{Label: rateLabel(r.Size, t.Veth), Cells: r.Cells[8-2*len(pt.Cols):]})
	}
	var b strings.Builder
	RenderPairTable(&b, pt)
	for _, n := range t.Notes {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
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

// methodLine is the table's line naming the tester method.
func methodLine(method string) string {
	switch method {
	case MethodCounting:
		return "method: counting: send-only generator; delivered = frames the receiving interface's rx_packets counted"
	case MethodReceiving:
		return "method: receiving: the generator's receiver reads every frame at the far end"
	}
	return "method: " + method
}

// ZeroLossNote explains a zero-loss rate above the max-rate run's
// delivered rate, which RFC 2544 allows: a device can deliver more when
// paced than when overloaded.
func ZeroLossNote(label, role string, zero, max float64) string {
	return fmt.Sprintf("%s %s: 0-loss fps %.0f above max fps %.0f: paced, the device delivered every frame at the higher rate; at max load it delivers less, spending CPU on frames it then drops while the generator's sending competes for the same cores",
		label, role, zero, max)
}

// RateTables builds the table of setup s from cells, one row per size;
// cpuRate is the CPU-cost run's load (for the title).
func RateTables(s RateSpec, sizes []int, cpuRate float64, cells []RateCell) RateTable {
	metrics := []string{"cpu_net", "max_rate", "zero_loss", "loss"} // the column pairs
	if s.Baseline {
		metrics[0] = "cpu_gross"
	}
	t := RateTable{Head: []string{methodLine(s.Method)}, Veth: true}
	seen := "" // the flags of every cell
	for _, size := range sizes {
		r := RateRow{Size: size}
		for k := range r.Cells {
			r.Cells[k].NA = true
		}
		for _, c := range cells {
			k := 2*slices.Index(metrics, c.Metric) + slices.Index(bothRoles[:], c.Role) // below 0: no column
			if c.Setup != s.Name || c.Size != size || k < 0 {
				continue
			}
			cell := Cell{Value: c.Summary.Mean, NA: c.NA, Marked: c.Role == RolePatch && c.Significant}
			if f := c.Figure; f != nil && !c.NA {
				for i, n := range []int{f.TesterBound, f.Lossy, f.Saturated} {
					if n > 0 {
						cell.Flags += rateFlags[i][0]
					}
				}
				seen += cell.Flags
			}
			t.CPU = t.CPU || (k < 2 && !c.NA)
			r.Cells[k] = cell
		}
		t.Rows = append(t.Rows, r)
	}
	switch {
	case !t.CPU:
		t.Title = "Forwarding rate (frames/s, loss %)"
	case s.Baseline:
		t.Title = fmt.Sprintf("Forwarding rate, no device under test (CPU ns/frame at %.0f frames/s paced: the tester's own, the baseline; frames/s; loss %%)", cpuRate)
	default:
		t.Title = fmt.Sprintf("Forwarding rate (CPU ns/frame at %.0f frames/s paced, net of direct veth; frames/s; loss %%)", cpuRate)
	}
	for _, f := range rateFlags {
		if strings.Contains(seen, f[0]) {
			t.Notes = append(t.Notes, f[1])
		}
	}
	for _, r := range t.Rows {
		for i, role := range []string{RolePatch, RoleNoPatch} {
			max, zero := r.Cells[2+i], r.Cells[4+i]
			if !max.NA && !zero.NA && zero.Value > max.Value {
				t.Notes = append(t.Notes, ZeroLossNote(rateLabel(r.Size, t.Veth), role, zero.Value, max.Value))
			}
		}
	}
	return t
}

// PrintRateTables writes the table of every forwarding-rate setup, a
// header line naming each.
func PrintRateTables(w io.Writer, setups []RateSpec, rc RateConfig, cells []RateCell) error {
	var b strings.Builder
	for i, s := range setups {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "== forwarding rate: %s ==\n", s.Name)
		RenderRateTable(&b, RateTables(s, rc.Sizes, rc.CPURate, cells))
	}
	_, err := io.WriteString(w, b.String())
	return err
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
