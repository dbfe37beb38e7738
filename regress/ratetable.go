package regress

import (
	"fmt"
	"io"
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
		Cols: []string{"max fps", "0-loss fps", "loss %"}, Formats: []string{"%.0f", "%.0f", "%.2f"}}
	first := 2
	if t.CPU {
		pt.Cols = append([]string{"ns/frame"}, pt.Cols...)
		pt.Formats = append([]string{"%.0f"}, pt.Formats...)
		first = 0
	}
	for _, r := range t.Rows {
		pt.Rows = append(pt.Rows, PairRow{Label: rateLabel(r.Size, t.Veth), Cells: r.Cells[first:]})
	}
	var b strings.Builder
	RenderPairTable(&b, pt)
	for _, n := range t.Notes {
		b.WriteString(n)
		b.WriteByte('\n')
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
	cpuMetric := "cpu_net"
	if s.Baseline {
		cpuMetric = "cpu_gross"
	}
	col := map[string]int{cpuMetric: 0, "max_rate": 1, "zero_loss": 2, "loss": 3}
	t := RateTable{Head: []string{methodLine(s.Method)}, Veth: true}
	seen := "" // the flags of every cell
	for _, size := range sizes {
		r := RateRow{Size: size}
		for k := range r.Cells {
			r.Cells[k].NA = true
		}
		for _, c := range cells {
			k, ok := col[c.Metric]
			if c.Setup != s.Name || c.Size != size || !ok {
				continue
			}
			k *= 2
			if c.Role == RoleNoPatch {
				k++
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
