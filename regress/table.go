package regress

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// The harness's tables share one model: a Table of Rows of Cells, under
// lines of text and column headers, over notes, printed by RenderTable
// or written into report.md by writeMarkdown. Each suite builds its
// tables from its cells (Tables, RateTables, BulkTable, LBTable, make
// bench's benchTable ...); reportParts puts them in the order printed.

// Cell is one cell of a table: a figure, or a text.
type Cell struct {
	// Value is the figure shown (the mean of the cell's samples).
	Value float64
	// Format is the fmt verb Value is shown with ("%.2f"); without one
	// the cell shows Text.
	Format string
	// Text is what a cell without a Format shows.
	Text string
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

// String is c as the table shows it: "n/a" when not measured, else its
// text, or its value with its flags and mark.
func (c Cell) String() string {
	switch {
	case c.NA:
		return "n/a"
	case c.Format == "":
		return c.Text
	case c.Marked:
		return fmt.Sprintf(c.Format, c.Value) + c.Flags + "*"
	}
	return fmt.Sprintf(c.Format, c.Value) + c.Flags
}

// mean is c as a table shows it: the mean, a patch cell marked when it
// differs significantly; n/a when not measured (nil: no such cell).
func (c *RoleCell) mean() Cell {
	if c == nil {
		return Cell{NA: true}
	}
	return Cell{Value: c.Summary.Mean, NA: c.NA, Marked: c.Role == RolePatch && c.Significant}
}

// texts are cells showing ss.
func texts(ss ...string) []Cell {
	out := make([]Cell, len(ss))
	for i, s := range ss {
		out[i].Text = s
	}
	return out
}

// Row is one line of a table under its headers.
type Row struct {
	// Label is the row's name, in the first column.
	Label string
	// Cells are the row's other columns, in order.
	Cells []Cell
}

// Table is a printed table.
type Table struct {
	// Head are the lines above the column headers: the title first,
	// then such as the tester method.
	Head []string
	// Columns are the header lines, each with the label column's
	// header first.
	Columns [][]string
	// Rows are the lines after the header.
	Rows []Row
	// Notes are the lines under the rows.
	Notes []string
	// Widths, when set, are the label column's least width (it widens
	// to its longest label and a blank) and every value column's; nil
	// fits every column to its widest cell and two blanks.
	Widths []int
}

// RenderTable writes t: its head lines, its columns, each cell padded
// to its column's width (a cell as wide or wider pushes the rest of its
// line right), no trailing blanks, then its notes.
func RenderTable(w io.Writer, t Table) error {
	lines := append(slices.Clone(t.Columns), t.rowLines()...)
	widths := fitWidths(lines, 2)
	if t.Widths != nil {
		widths = []int{max(t.Widths[0], fitWidths(lines, 1)[0]), t.Widths[1]}
	}
	text := slices.Clone(t.Head)
	for _, l := range lines {
		var s string
		for i, c := range l {
			s += fmt.Sprintf("%-*s", widths[min(i, len(widths)-1)], c+" ")
		}
		text = append(text, strings.TrimRight(s, " "))
	}
	_, err := io.WriteString(w, strings.Join(append(text, t.Notes...), "\n")+"\n")
	return err
}

// writeMarkdown writes t as a markdown table: its last header line, then
// its rows; a cell may span columns ("n/a | |").
func writeMarkdown(b *strings.Builder, t Table) {
	for i, l := range append([][]string{t.Columns[len(t.Columns)-1]}, t.rowLines()...) {
		b.WriteString("| " + strings.Join(l, " | ") + " |\n")
		if i == 0 {
			b.WriteString(strings.Repeat("|---", len(l)) + "|\n")
		}
	}
}

// rowLines are t's rows as text: the label, then each cell as shown.
func (t Table) rowLines() [][]string {
	var lines [][]string
	for _, r := range t.Rows {
		line := []string{r.Label}
		for _, c := range r.Cells {
			line = append(line, c.String())
		}
		lines = append(lines, line)
	}
	return lines
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
			w[i] = max(w[i], utf8.RuneCountInString(c)+gap)
		}
	}
	return w
}

// pairTable is a table under the lines head whose value columns come in
// pairs, patch beside no patch: a label column headed by label, at least
// 10 characters wide, and 12-character value columns; titles, when
// given, title the pairs on a first header line (without, the table has
// one pair and one header line, "patch  no patch").
func pairTable(head []string, label string, titles ...string) Table {
	if len(titles) == 0 {
		return Table{Head: head, Widths: []int{10, 12}, Columns: [][]string{{label, "patch", "no patch"}}}
	}
	top, roles := []string{label}, []string{""}
	for _, c := range titles {
		top, roles = append(top, c, c), append(roles, "patch", "no patch")
	}
	return Table{Head: head, Widths: []int{10, 12}, Columns: [][]string{top, roles}}
}

// pairRow is a row of a pair table: cells are 2 per pair, patch then no
// patch, each pair's figures shown with its format in formats.
func pairRow(label string, formats []string, cells ...Cell) Row {
	for i := range cells {
		cells[i].Format = formats[i/2]
	}
	return Row{Label: label, Cells: cells}
}

// seedTable builds a table in the shape of the original OpenBSD tables,
// the promisc suite's three per setup:
//
//	Throughput (Mb/s)
//	         PROMISC   PROMISC   -PROMISC  -PROMISC
//	         patch     no patch  patch     no patch
//	Receive  880.50    883.75    884.40    883.50
//
// A 9-character label column, 10-character value columns, two decimals;
// rows are labelled at most 8 characters to keep the shape, their cells
// PROMISC patch, PROMISC no patch, -PROMISC patch, -PROMISC no patch.
func seedTable(title string, rows ...Row) Table {
	for i := range rows {
		rows[i] = pairRow(rows[i].Label, []string{"%.2f", "%.2f"}, rows[i].Cells...)
	}
	t := pairTable([]string{title}, "", "PROMISC", "-PROMISC")
	t.Rows, t.Widths = rows, []int{9, 10}
	return t
}
