package regress

import (
	"fmt"
	"math"
	"strings"
)

// sigItems lists the cells of cells (both roles) where the patch cell
// differs significantly from its no-patch partner (same setup, row,
// metric, size and percent): the label, both means, the difference,
// absolute and relative, and p. A cell without a label is left out.
func sigItems(cells []partCell) []string {
	var out []string
	for _, c := range cells {
		if c.Role != RolePatch || c.NA || !c.Significant || c.label == "" {
			continue
		}
		for _, o := range cells {
			if o.Role != RoleNoPatch || o.NA || o.Setup != c.Setup || o.Row != c.Row || o.Metric != c.Metric || o.Size != c.Size || o.Percent != c.Percent {
				continue
			}
			pm, nm := c.Summary.Mean, o.Summary.Mean
			rel := ""
			if nm != 0 {
				rel = fmt.Sprintf(", %+.1f%%", 100*(pm-nm)/math.Abs(nm))
			}
			out = append(out, fmt.Sprintf("%s: %.2f against %.2f (%+.2f%s; p %.3g)", c.label, pm, nm, pm-nm, rel, c.P))
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
		items := sigItems(p.cells)
		if len(items) == 0 {
			fmt.Fprintf(b, "- %s: none\n", p.name)
			continue
		}
		fmt.Fprintf(b, "- %s:\n", p.name)
		for _, it := range items {
			fmt.Fprintf(b, "  - %s\n", it)
		}
	}
	b.WriteString("\n")
	rateSummaryMarkdown(b, r)
}
