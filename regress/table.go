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
	var b strings.Builder
	line := func(label string, cols [4]string) {
		s := fmt.Sprintf("%-9s", label)
		for _, c := range cols {
			// A figure wider than its column still gets one blank.
			s += fmt.Sprintf("%-10s", c+" ")
		}
		b.WriteString(strings.TrimRight(s, " "))
		b.WriteByte('\n')
	}
	b.WriteString(t.Title)
	b.WriteByte('\n')
	line("", [4]string{"PROMISC", "PROMISC", "-PROMISC", "-PROMISC"})
	line("", [4]string{"patch", "no patch", "patch", "no patch"})
	for _, r := range t.Rows {
		var cols [4]string
		for i, c := range r.Cells {
			switch {
			case c.NA:
				cols[i] = "n/a"
			case c.Marked:
				cols[i] = fmt.Sprintf("%.2f*", c.Value)
			default:
				cols[i] = fmt.Sprintf("%.2f", c.Value)
			}
		}
		line(r.Label, cols)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
