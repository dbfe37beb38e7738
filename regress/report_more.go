package regress

import (
	"fmt"
	"slices"
)

// This file lists every suite's share of the report in order
// (reportParts): the tables printed and report.md's every-cell tables,
// which the summary reads too; and the analysis of every suite's samples
// (analyzeExtra).

// analyzeExtra fills the cells of every suite of r from its samples at
// significance level alpha, and the forwarding-rate samples' net CPU.
func analyzeExtra(r *Results, alpha float64) {
	r.Cells = Analyze(r.Setups, r.Samples, alpha)
	if r.Rate != nil {
		NetCPU(r.RateSetups, r.RateSamples)
		r.RateCells = AnalyzeRates(r.RateSetups, r.Rate.Sizes, r.RateSamples, alpha)
		r.LossRateCells = AnalyzeLossRate(r.RateSetups, r.Rate.Sizes, r.RateSamples, alpha)
		r.WindowCells = AnalyzeWindow(r.RateSetups, r.WindowSamples, alpha)
	}
	if r.MsgSize != nil {
		r.MsgSizeCells = AnalyzeMsgSize(r.MsgSize.Sizes, r.MsgSizeSamples, alpha)
	}
	if r.Bulk != nil {
		r.BulkCells = AnalyzeBulk(*r.Bulk, r.BulkSamples, alpha)
	}
	if r.RFC2889 != nil {
		r.RFC2889Cells = AnalyzeRFC2889(r.RFC2889Samples, alpha)
	}
	if r.LB != nil {
		r.LB.Cells = AnalyzeLB(r.LB.Plan, r.LB.Samples)
	}
}

// reportPart is a suite's share of the report for one setup: the
// tables printed, report.md's every-cell table and its entry in the
// summary (the cells of both roles).
type reportPart struct {
	// tables are the printed tables, the first under a header line.
	tables []Table
	// name names the every-cell table in the summary ("": there is
	// none); heading, when set, in report.md instead.
	name, heading string
	// intro is report.md's text above the table.
	intro string
	// table is report.md's table: a line per cell, its keys, its
	// statistics (cellStats) and any more.
	table Table
	// cells are the table's cells, of both roles.
	cells []RoleCell
	// label names a cell in the summary; "" leaves it out there.
	label func(RoleCell) string
}

// under returns p printing tables, the first under a header line naming
// section.
func (p reportPart) under(section string, tables ...Table) reportPart {
	tables[0].Head = append([]string{"== " + section + " =="}, tables[0].Head...)
	p.tables = tables
	return p
}

// everyCell is an every-cell table's frame: keys head the columns before
// the statistics (cellStats), more those after them.
func everyCell(keys []string, more ...string) Table {
	stats := []string{"n", "mean", "median", "min", "max", "stddev", "p (patch vs no patch)"}
	return Table{Columns: [][]string{slices.Concat(keys, stats, more)}}
}

// roleCellPart is a part of RoleCells, its columns metric, row (row) and
// role; label names a cell in the summary.
func roleCellPart(name, heading, intro string, cells []RoleCell, row, label func(RoleCell) string) reportPart {
	p := reportPart{name: name, heading: heading, intro: intro, table: everyCell([]string{"metric", "row", "role"}),
		cells: cells, label: label}
	for _, c := range cells {
		p.table.Rows = append(p.table.Rows, Row{Label: c.Metric, Cells: texts(row(c), c.Role, cellStats(c.Comparison))})
	}
	return p
}

// promiscLabel names a promisc cell of the printed tables in the summary
// ("Throughput (Mb/s), Receive PROMISC"); the other metrics' are "".
func promiscLabel(c RoleCell) string {
	if m := slices.IndexFunc(Metrics[:3], func(m Metric[Sample]) bool { return m.Key == c.Metric }); m >= 0 {
		return fmt.Sprintf("%s, %s %s", Metrics[m].Title, c.Row, colName(c.Promisc))
	}
	return ""
}

// reportParts are r's parts in the order printed: per setup the promisc
// tables, per rate setup the forwarding rate, then the frame-loss-rate
// test and the window benchmark, the message-size and bulk suites,
// address caching and per mode the load-balancing tables, each of these
// when it has cells.
func reportParts(r *Results) []reportPart {
	var out []reportPart
	for _, s := range r.Setups {
		p := reportPart{name: "promisc: " + s.Name, heading: s.Name, table: everyCell([]string{"metric", "row", "column", "role"}),
			cells: ofSetup(r.Cells, s.Name, cellSetup), label: promiscLabel}
		for _, c := range p.cells {
			p.table.Rows = append(p.table.Rows, Row{Label: c.Metric, Cells: texts(c.Row, colName(c.Promisc), c.Role, cellStats(c.Comparison))})
		}
		out = append(out, p.under(s.Name, Tables(s, r.Cells)...))
	}
	if r.Rate != nil {
		for _, s := range r.RateSetups {
			out = append(out, rateCellPart(s, r.RateCells).under("forwarding rate: "+s.Name, RateTables(s, r.Rate.Sizes, r.Rate.CPURate, r.RateCells)))
		}
		for _, s := range r.RateSetups {
			if cells := ofSetup(r.LossRateCells, s.Name, cellSetup); len(cells) > 0 {
				out = append(out, roleCellPart("frame loss rate: "+s.Name, "", "Rows are frame size (FCS included) and offered load in percent of the max-rate run's sent rate; a load a run did not reach (two lossless trials above it) has no value there.\n\n", cells,
					func(c RoleCell) string { return fmt.Sprintf("%d %d%%", c.Size, c.Percent) }, func(c RoleCell) string { return fmt.Sprintf("%s, %d bytes at %d%%", c.Metric, c.Size, c.Percent) },
				).under("frame loss rate: "+s.Name, LossRateTable(s, r.Rate.Sizes, cells)))
			}
		}
		for _, s := range r.RateSetups {
			if cells := ofSetup(r.WindowCells, s.Name, cellSetup); len(cells) > 0 {
				out = append(out, roleCellPart("window benchmark: "+s.Name, "", "", cells, func(RoleCell) string { return "" }, func(c RoleCell) string { return c.Metric }).
					under("window benchmark: "+s.Name, WindowTable(s, *r.Rate, cells)))
			}
		}
	}
	if r.MsgSize != nil && len(r.MsgSizeCells) > 0 {
		names := map[string]string{"throughput": "Mb/s", "system": "system %"}
		out = append(out, roleCellPart("TCP stream by message size: "+MsgSizeSetup, "TCP stream by message size: "+MsgSizeSetup+" Forward",
			"Rows are iperf3's -l in bytes; throughput Mb/s, CPU % of the whole machine, engine = the swctl daemon's own CPU, retransmits per test.\n\n", r.MsgSizeCells,
			func(c RoleCell) string { return fmt.Sprint(c.Size) }, func(c RoleCell) string {
				if names[c.Metric] == "" {
					return ""
				}
				return fmt.Sprintf("%s, %d bytes", names[c.Metric], c.Size)
			}).under("TCP stream by message size: "+MsgSizeSetup+" Forward", MsgSizeTable(r.MsgSize.Sizes, r.MsgSizeCells)))
	}
	if r.Bulk != nil && len(r.BulkCells) > 0 {
		out = append(out, roleCellPart("bulk transfer: "+BulkSetup, "",
			"Throughput Mb/s (UDP: received), CPU % of the whole machine, engine = the swctl daemon's own CPU, loss = UDP datagrams lost %, sent = UDP Mb/s sent; the ratio row's figures are ratios.\n\n", r.BulkCells,
			func(c RoleCell) string { return c.Row }, func(c RoleCell) string {
				return c.Row + ", " + map[string]string{"throughput": "Mb/s", "system": "system %", "engine": "engine CPU %", "loss": "loss %", "sent": "sent Mb/s"}[c.Metric]
			}).under("bulk transfer: "+BulkSetup+", one pair, two pairs at once, UDP", BulkTable(*r.Bulk, r.BulkCells), UDPLossTable(*r.Bulk, r.BulkCells)))
	}
	if r.RFC2889 != nil && len(r.RFC2889Cells) > 0 {
		out = append(out, roleCellPart("address caching (RFC 2889): "+RFC2889Setup, "address caching: "+RFC2889Setup, "", r.RFC2889Cells,
			func(RoleCell) string { return "-" }, func(c RoleCell) string { return c.Metric }).under("address caching: "+RFC2889Setup, RFC2889Table(r.RFC2889Cells)))
	}
	if r.LB != nil && len(r.LB.Cells) > 0 {
		for _, mode := range LBModes {
			out = append(out, reportPart{}.under("HTTP load balancing: "+mode, LBTable(r.LB.Config, r.LB.Plan, r.LB.Cells, mode, r.Mode != "A/A")))
		}
	}
	return out
}
