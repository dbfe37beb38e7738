package regress

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/swctl/swctl/internal/stats"
)

// make bench's table: per metric, one line per row (BenchSetups) with the
// median over the runs, the min–max spread, the ratios of the medians to
// the kernel bridge's and to OVS userspace's (without TSO), and notes.
// benchSamples makes its values from the forwarding-rate samples and the
// ping and iperf3 tests; docs/BENCH.md says how to read it.

// The table's metric IDs. The hidden ones feed other metrics' notes and
// have no line of their own.
const (
	// Max64 is 64-byte frames (60 on veth) delivered per second at
	// maximum offered load.
	Max64 = "max64"
	// Max64Loss is the loss in percent of that run (hidden).
	Max64Loss = "max64_loss"
	// Max1518 is 1518-byte frames (1514 on veth) delivered per second at
	// maximum offered load.
	Max1518 = "max1518"
	// Max1518Loss is the loss in percent of that run (hidden).
	Max1518Loss = "max1518_loss"
	// ZeroLoss64 is the RFC 2544 zero-loss rate of 64-byte frames.
	ZeroLoss64 = "zeroloss64"
	// CPUNet is the CPU ns per forwarded frame at the fixed paced load
	// net of the baseline's (NetCPU).
	CPUNet = "cpu_net"
	// CPUGross is the CPU ns per frame of the row itself (hidden).
	CPUGross = "cpu_gross"
	// CPUUser is the whole machine's user percentage during that load
	// (hidden, as CPUSys and CPUSoftirq: in the notes of CPUNet).
	CPUUser = "cpu_user"
	// CPUSys is the system percentage.
	CPUSys = "cpu_sys"
	// CPUSoftirq is the softirq percentage.
	CPUSoftirq = "cpu_softirq"
	// TCPOff is iperf3 TCP h1 -> h2 in Gb/s, offloads off on the hosts.
	TCPOff = "tcp_off"
	// TCPOn is the same with the hosts' default offloads.
	TCPOn = "tcp_on"
	// RTT is the average ping round-trip time in ms at light load.
	RTT = "rtt"
)

// benchMetric is one line group of the table.
type benchMetric struct {
	// id is one of the metric IDs.
	id string
	// label is the metric's name in the table, with its unit.
	label string
	// format formats a value of the metric.
	format func(float64) string
	// notes are other metrics shown, as their medians, in this metric's
	// notes column: metric ID and a fmt format with one %s verb.
	notes [][2]string
}

// benchMetrics are the table's lines in order. cpuLoad is the paced load
// of the CPU metric in frames/s and pings the number of pings, for the
// labels.
func benchMetrics(cpuLoad float64, pings int) []benchMetric {
	return []benchMetric{
		{Max64, "64 B frames/s, max load", FormatRate, [][2]string{{Max64Loss, "loss %s%%"}}},
		{Max1518, "1518 B frames/s, max load", FormatRate, [][2]string{{Max1518Loss, "loss %s%%"}}},
		{ZeroLoss64, "64 B zero-loss rate, frames/s", FormatRate, nil},
		{CPUNet, fmt.Sprintf("CPU ns/frame at %s/s, net", FormatRate(cpuLoad)), fixed(0), [][2]string{
			{CPUGross, "gross %s ns"}, {CPUUser, "user %s%%"}, {CPUSys, "sys %s%%"}, {CPUSoftirq, "softirq %s%%"}}},
		{TCPOff, "TCP Gb/s, host offloads off", fixed(2), nil},
		{TCPOn, "TCP Gb/s, default offloads", fixed(2), nil},
		{RTT, fmt.Sprintf("ping RTT avg ms (%d, 200 ms)", pings), fixed(3), nil},
	}
}

// noteFormat formats a companion figure: percentages with one decimal,
// nanoseconds with none.
func noteFormat(metric string) func(float64) string {
	if metric == CPUGross {
		return fixed(0)
	}
	return fixed(1)
}

// benchSample is one value of one metric on one row in one run.
type benchSample struct {
	// Row is the row's setup name.
	Row string `json:"row"`
	// Run is the run number, from 1.
	Run int `json:"run"`
	// Metric is the metric ID.
	Metric string `json:"metric"`
	// Value is the measured value in the metric's unit.
	Value float64 `json:"value"`
	// Note, when not empty, qualifies the value (such as "sender-bound"
	// or "no transfer: ..."); the table lists distinct notes.
	Note string `json:"note,omitempty"`
	// Err, when not empty, says why this run has no value; Value is
	// then meaningless and left out of the statistics.
	Err string `json:"error,omitempty"`
}

// benchCell is the summary of one metric on one row over the runs.
type benchCell struct {
	// Summary is the values' (package stats).
	stats.Summary
	// Notes are the distinct sample notes, each followed by the number
	// of runs that had it: "sender-bound (2 runs)".
	Notes []string
	// Errs are the distinct errors of runs without a value, with counts.
	Errs []string
}

// summarizeBench groups samples by row and metric.
func summarizeBench(samples []benchSample) map[[2]string]benchCell {
	by := map[[2]string][]benchSample{}
	for _, s := range samples {
		k := [2]string{s.Row, s.Metric}
		by[k] = append(by[k], s)
	}
	out := map[[2]string]benchCell{}
	for k, ss := range by {
		var vals []float64
		var notes, errs []string
		for _, s := range ss {
			if s.Err != "" {
				errs = append(errs, s.Err)
				continue
			}
			vals = append(vals, s.Value)
			if s.Note != "" {
				notes = append(notes, s.Note)
			}
		}
		out[k] = benchCell{Summary: stats.Summarize(vals), Notes: counted(notes), Errs: counted(errs)}
	}
	return out
}

// counted lists the distinct strings of ss in first-seen order, each
// with the number of runs that had it.
func counted(ss []string) []string {
	n := map[string]int{}
	var order []string
	for _, s := range ss {
		if n[s] == 0 {
			order = append(order, s)
		}
		n[s]++
	}
	for i, s := range order {
		runs := "runs"
		if n[s] == 1 {
			runs = "run"
		}
		order[i] = fmt.Sprintf("%s (%d %s)", s, n[s], runs)
	}
	return order
}

// benchRatio returns a's median over b's and whether it means anything:
// both measured, b's above 0 and a's not negative (a net CPU cost below
// 0 is noise around the baseline).
func benchRatio(a, b benchCell) (float64, bool) {
	if a.N == 0 || b.N == 0 || b.Median <= 0 || a.Median < 0 {
		return 0, false
	}
	return a.Median / b.Median, true
}

// maxNote is the most runes of one note cell; the JSON has the rest.
const maxNote = 90

// renderBench writes the header lines, then the table of samples over
// rows (skipped ones print their reason), every line without trailing
// blanks.
func renderBench(w io.Writer, header []string, rows []RateSpec, metrics []benchMetric, samples []benchSample) error {
	cells := summarizeBench(samples)
	skipped := map[string]bool{}
	for _, r := range rows {
		skipped[r.Name] = r.Skip != ""
	}
	var buf bytes.Buffer
	for _, h := range header {
		buf.WriteString(h + "\n")
	}
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tpath\tmedian\tmin–max\tvs kernel\tvs OVS\tnotes")
	for mi, m := range metrics {
		if mi > 0 {
			fmt.Fprintln(tw, "\t\t\t\t\t\t")
		}
		kernel, ovs := cells[[2]string{"kernel", m.id}], cells[[2]string{"ovs", m.id}]
		for i, r := range rows {
			label := ""
			if i == 0 {
				label = m.label
			}
			if r.Skip != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t–\t–\t–\t\n", label, r.Label, r.Skip)
				continue
			}
			c := cells[[2]string{r.Name, m.id}]
			med, spread := "–", "–"
			switch {
			case c.N == 1:
				med, spread = m.format(c.Median), "(1 run)"
			case c.N > 1:
				med, spread = m.format(c.Median), m.format(c.Min)+"–"+m.format(c.Max)
			case len(c.Errs) > 0:
				med = "failed"
			}
			var notes []string
			for _, n := range m.notes {
				if nc := cells[[2]string{r.Name, n[0]}]; nc.N > 0 {
					notes = append(notes, fmt.Sprintf(n[1], noteFormat(n[0])(nc.Median)))
				}
			}
			notes = append(notes, c.Notes...)
			for _, e := range c.Errs {
				notes = append(notes, "failed: "+e)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", label, r.Label, med, spread,
				ratioText(c, kernel, skipped["kernel"]), ratioText(c, ovs, skipped["ovs"]), clip(strings.Join(notes, "; ")))
		}
	}
	tw.Flush()
	out := ""
	for line := range strings.Lines(buf.String()) {
		out += strings.TrimRight(line, " \n") + "\n"
	}
	_, err := io.WriteString(w, out)
	return err
}

// ratioText formats a cell's median over a reference's, or "–".
func ratioText(c, ref benchCell, refSkipped bool) string {
	v, ok := benchRatio(c, ref)
	switch {
	case !ok || refSkipped:
		return "–"
	case v >= 10:
		return fmt.Sprintf("%.1fx", v)
	case v >= 0.1 || v == 0:
		return fmt.Sprintf("%.2fx", v)
	default:
		return fmt.Sprintf("%.3fx", v)
	}
}

// clip cuts s to maxNote runes, marking the cut; a note is one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxNote {
		return s
	}
	r := []rune(s)
	return string(r[:maxNote-1]) + "…"
}

// FormatRate formats frames/s with a k or M suffix: 1.09 M, 412 k.
func FormatRate(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.0f k", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// fixed returns a formatter with prec decimals.
func fixed(prec int) func(float64) string {
	return func(v float64) string { return fmt.Sprintf("%.*f", prec, v) }
}
