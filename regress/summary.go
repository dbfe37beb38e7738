package regress

import (
	"fmt"
	"math"
	"strings"
)

// sigItems lists the cells of cells (both roles) where the patch cell
// differs significantly from its no-patch partner (same setup, row,
// metric, size and percent): the label, both means, the difference,
// absolute and relative, and p. A cell label names "" is left out.
func sigItems(cells []RoleCell, label func(RoleCell) string) []string {
	var out []string
	for _, c := range cells {
		if c.Role != RolePatch || c.NA || !c.Significant || label(c) == "" {
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
			out = append(out, fmt.Sprintf("%s: %.2f against %.2f (%+.2f%s; p %.3g)", label(c), pm, nm, pm-nm, rel, c.P))
		}
	}
	return out
}

// cellSetup is a RoleCell's setup, for ofSetup.
func cellSetup(c RoleCell) string { return c.Setup }

// summaryMarkdown writes report.md's opening summary: per table of r in
// the order printed, the cells where patch and no patch differ
// significantly and by how much (sigItems), then the forwarding rate's
// summary with CPU per frame first.
func summaryMarkdown(b *strings.Builder, r *Results) {
	b.WriteString("## Summary\n\n")
	fmt.Fprintf(b, "Cells where patch differs significantly from no patch (Mann-Whitney p < %.3g), per table: patch mean against no patch mean (difference, relative to no patch; p).", r.Alpha)
	if r.Mode == "A/A" {
		b.WriteString(" This is an A/A run: a difference here is noise (about one cell in 1/alpha shows one by chance).")
	}
	b.WriteString("\n\n")
	// table writes the line of the table name, whose cells (both roles)
	// label names.
	table := func(name string, cells []RoleCell, label func(RoleCell) string) {
		items := sigItems(cells, label)
		if len(items) == 0 {
			fmt.Fprintf(b, "- %s: none\n", name)
			return
		}
		fmt.Fprintf(b, "- %s:\n", name)
		for _, it := range items {
			fmt.Fprintf(b, "  - %s\n", it)
		}
	}
	for _, s := range r.Setups {
		var cells []RoleCell
		for _, m := range Metrics[:3] { // the printed tables
			for _, c := range r.Cells {
				if c.Setup == s.Name && c.Metric == m.Key {
					cells = append(cells, RoleCell{Setup: c.Setup, Row: c.Row + " " + colName(c.Promisc), Metric: m.Title, Role: c.Role, Comparison: c.Comparison})
				}
			}
		}
		table("promisc: "+s.Name, cells, func(c RoleCell) string { return c.Metric + ", " + c.Row })
	}
	if r.Rate != nil {
		titles := map[string]string{}
		for _, m := range RateMetrics {
			titles[m.Key] = m.Title
		}
		var rate []RoleCell
		for _, c := range r.RateCells {
			rate = append(rate, RoleCell{Setup: c.Setup, Metric: c.Metric, Size: c.Size, Role: c.Role, Comparison: c.Comparison})
		}
		for _, s := range r.RateSetups {
			table("forwarding rate: "+s.Name, ofSetup(rate, s.Name, cellSetup), func(c RoleCell) string {
				return fmt.Sprintf("%s, %d bytes", titles[c.Metric], c.Size)
			})
		}
	}
	for _, p := range roleParts(r) {
		table(p.name, p.cells, p.label)
	}
	if r.RFC2889 != nil && len(r.RFC2889Cells) > 0 {
		table("address caching (RFC 2889): "+RFC2889Setup, r.RFC2889Cells, func(c RoleCell) string { return c.Metric })
	}
	b.WriteString("\n")
	rateSummaryMarkdown(b, r)
}
