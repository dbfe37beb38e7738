package regress

import (
	"fmt"
	"math"
	"strings"
)

// sigItems lists the cells of cells (both roles) where the patch cell
// differs significantly from its no-patch partner (findCell: the same
// place): the label, both means, the difference, absolute and relative,
// and p. A cell whose label is "" is left out.
func sigItems(cells []RoleCell, label func(RoleCell) string) []string {
	var out []string
	for _, c := range cells {
		if c.Role != RolePatch || c.NA || !c.Significant || label(c) == "" {
			continue
		}
		key := c
		key.Role = RoleNoPatch
		if o := findCell(cells, key); o != nil && !o.NA {
			pm, nm := c.Summary.Mean, o.Summary.Mean
			rel := ""
			if nm != 0 {
				rel = fmt.Sprintf(", %+.1f%%", 100*(pm-nm)/math.Abs(nm))
			}
			out = append(out, fmt.Sprintf("%s: %.2f against %.2f (%+.2f%s; p %.3g)", label(c), pm, nm, pm-nm, rel, c.P))
		}
	}
	return out
}

// cellSetup is a RoleCell's setup, for ofSetup.
func cellSetup(c RoleCell) string { return c.Setup }

// summaryMarkdown writes report.md's opening summary: per every-cell
// table of r (reportParts) the cells where patch and no patch differ
// significantly and by how much (sigItems), then the forwarding rate's
// summary with CPU per frame first.
func summaryMarkdown(b *strings.Builder, r *Results) {
	b.WriteString("## Summary\n\n")
	fmt.Fprintf(b, "Cells where patch differs significantly from no patch (Mann-Whitney p < %.3g), per table: patch mean against no patch mean (difference, relative to no patch; p).", r.Alpha)
	if r.Mode == "A/A" {
		b.WriteString(" This is an A/A run: a difference here is noise (about one cell in 1/alpha shows one by chance).")
	}
	b.WriteString("\n\n")
	for _, p := range reportParts(r) {
		if p.name == "" {
			continue // no every-cell table
		}
		if items := sigItems(p.cells, p.label); len(items) > 0 {
			fmt.Fprintf(b, "- %s:\n  - %s\n", p.name, strings.Join(items, "\n  - "))
		} else {
			fmt.Fprintf(b, "- %s: none\n", p.name)
		}
	}
	b.WriteString("\n")
	rateSummaryMarkdown(b, r)
}
