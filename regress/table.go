package regress

import (
	"fmt"
	"io"
	"strings"
)

// Cell is one figure of a table.
type Cell struct {
	// Value is the figure shown (the mean of the cell's samples).
	Value float64
	// NA marks a cell that was not measured; it shows "n/a".
	NA bool
	// Marked flags a patch cell that differs significantly from its no
	// patch neighbour; it shows a '*' after the value.
	Marked bool
	// Flags are marks shown right after the value, before any '*' (the
	// forwarding-rate table's "t", tester-bound); the table explains
	// them below its rows.
	Flags string
}

// format formats c's value with the fmt verb f, then its flags and
// mark; "n/a" when not measured.
func (c Cell) format(f string) string {
	switch {
	case c.NA:
		return "n/a"
	case c.Marked:
		return fmt.Sprintf(f, c.Value) + c.Flags + "*"
	}
	return fmt.Sprintf(f, c.Value) + c.Flags
}

// TableRow is one line of a table: Receive, Transmit or Forward.
type TableRow struct {
	// Label is the row's name, at most 8 characters to keep the shape.
	Label string
	// Cells are PROMISC patch, PROMISC no patch, -PROMISC patch,
	// -PROMISC no patch, in that order.
	Cells [4]Cell
}

// Table is one of the three tables of a setup.
type Table struct {
	// Title is the first line, e.g. "Throughput (Mb/s)".
	Title string
	// Rows are the table's lines after the two header lines.
	Rows []TableRow
}

// RenderTable writes t in the shape of the original OpenBSD tables:
//
//	Throughput (Mb/s)
//	         PROMISC   PROMISC   -PROMISC  -PROMISC
//	         patch     no patch  patch     no patch
//	Receive  880.50    883.75    884.40    883.50
//
// A 9-character label column, 10-character value columns, two decimals,
// no trailing blanks.
func RenderTable(w io.Writer, t Table) error {
	pt := PairTable{Title: t.Title, Cols: []string{"PROMISC", "-PROMISC"}, Formats: []string{"%.2f", "%.2f"}, LabelWidth: 9, ColWidth: 10}
	for _, r := range t.Rows {
		pt.Rows = append(pt.Rows, PairRow{Label: r.Label, Cells: r.Cells[:]})
	}
	return RenderPairTable(w, pt)
}

// writeColumns writes lines as columns of text, one line each without
// trailing blanks: every cell, then a blank, padded to its column's width
// in widths (the last width serves every column after it). A cell as wide
// as its column or wider pushes the rest of its line right.
func writeColumns(b *strings.Builder, widths []int, lines ...[]string) {
	for _, l := range lines {
		var s string
		for i, c := range l {
			s += fmt.Sprintf("%-*s", widths[min(i, len(widths)-1)], c+" ")
		}
		b.WriteString(strings.TrimRight(s, " ") + "\n")
	}
}

// fitWidths returns the width of each column of lines: its widest cell
// plus gap blanks.
func fitWidths(lines [][]string, gap int) []int {
	var w []int
	for _, l := range lines {
		for i, c := range l {
			if i == len(w) {
				w = append(w, 0)
			}
			w[i] = max(w[i], len(c)+gap)
		}
	}
	return w
}
