package regress

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Environment describes the machine and tools of a run.
type Environment struct {
	// Kernel is the kernel's release (uname -r).
	Kernel string `json:"kernel"`
	// OS is GOOS/GOARCH of the harness.
	OS string `json:"os"`
	// CPUModel is the processor's model name.
	CPUModel string `json:"cpu_model"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
	// GoVersion is the Go toolchain that built the harness and binaries.
	GoVersion string `json:"go_version"`
	// Iperf3 is iperf3's version line.
	Iperf3 string `json:"iperf3"`
	// Hostname is the machine's name.
	Hostname string `json:"hostname"`
	// LoadStart is /proc/loadavg at the start: other work on the
	// machine makes the figures noisy.
	LoadStart string `json:"load_start,omitempty"`
	// LoadEnd is /proc/loadavg at the end.
	LoadEnd string `json:"load_end,omitempty"`
}

// ResultsVersion is results.json's format version. From version 8 every
// suite's cells have one layout (RoleCell: setup, row, promisc, mode,
// metric, size, percent, role, na, summary, values, p, significant,
// figure), the fields a suite does not use left out; version 7's iperf3
// cells always had promisc, and its load-balancing cells had no p or
// significant (now 0 and false: that suite compares nothing). Version 6's bench
// config named its search settings search_trial_ns, search_max_trials
// and search_resolution; from version 7 it holds the forwarding-rate
// settings under the rate config's names (trial_ns, max_trials,
// resolution, with sizes and latency). Version 5's bench
// part held make bench's own rate records (max64, search, cpu per row
// run); from version 6 its rates are rate_samples, its rows
// rate_setups. Version 4 had no bench (make bench wrote bench.json). Version 3 had no bulk suite
// (bulk, bulk_samples, bulk_cells; the row of a RoleCell). Version 2 had no tester
// method, figures (offered, achieved, delivered, tester-bound) or CPU
// per frame in the forwarding rate, and its rates came from the
// receiving tester; version 1 had no forwarding rate.
const ResultsVersion = 8

// Results is everything a run of regress or make bench produced:
// results.json.
type Results struct {
	// Version is ResultsVersion.
	Version int `json:"version"`
	// Started is when the suite began.
	Started time.Time `json:"started"`
	// Finished is when it ended.
	Finished time.Time `json:"finished"`
	// Mode is "A/A", "patch" or "base".
	Mode string `json:"mode"`
	// Quick says the short form ran.
	Quick bool `json:"quick"`
	// Runs is the number of runs per cell and role.
	Runs int `json:"runs"`
	// Seconds is the length of one iperf3 test.
	Seconds int `json:"seconds"`
	// Alpha is the significance level.
	Alpha float64 `json:"alpha"`
	// MinP is the smallest p-value Runs runs a side can give.
	MinP float64 `json:"min_p"`
	// Environment describes the machine.
	Environment Environment `json:"environment"`
	// Trees are the sources and binaries of both roles.
	Trees *Trees `json:"trees"`
	// Hosts is the real test hosts' configuration; nil on the netns
	// testbed.
	Hosts *HostsConfig `json:"hosts,omitempty"`
	// Setups are the setups that ran.
	Setups []SetupSpec `json:"setups"`
	// Method describes pinning, offloads and CPU accounting in words.
	Method []string `json:"method"`
	// Instances are the daemon starts in the order they ran, with the
	// kernel's promiscuity counts seen on the links of each.
	Instances []InstanceRecord `json:"instances"`
	// Samples are every iperf3 test in the order they ran.
	Samples []Sample `json:"samples"`
	// Cells are the summaries per setup, metric, row, column and role.
	Cells []RoleCell `json:"cells"`
	// Rate is the forwarding-rate configuration; nil when that suite did
	// not run.
	Rate *RateConfig `json:"rate,omitempty"`
	// RateSetups are the forwarding-rate setups that ran.
	RateSetups []RateSpec `json:"rate_setups,omitempty"`
	// RateSamples are every forwarding-rate measurement (one per frame
	// size and instance) in the order they ran.
	RateSamples []RateSample `json:"rate_samples,omitempty"`
	// RateCells are the forwarding-rate summaries per setup, metric,
	// frame size and role.
	RateCells []RoleCell `json:"rate_cells,omitempty"`
	// LossRateCells are the frame-loss-rate summaries (Rate.LossRate)
	// per setup, metric, frame size, load and role; the trials are in
	// RateSamples (loss_rate).
	LossRateCells []RoleCell `json:"loss_rate_cells,omitempty"`
	// WindowSamples are every window-benchmark run in the order they ran.
	WindowSamples []WindowSample `json:"window_samples,omitempty"`
	// WindowCells are the window-benchmark summaries per setup, metric
	// and role.
	WindowCells []RoleCell `json:"window_cells,omitempty"`
	// MsgSize is the TCP-stream-by-message-size configuration; nil when
	// that suite did not run.
	MsgSize *MsgSizeConfig `json:"msgsize,omitempty"`
	// MsgSizeSamples are every message-size test in the order they ran.
	MsgSizeSamples []MsgSizeSample `json:"msgsize_samples,omitempty"`
	// MsgSizeCells are the message-size summaries per metric, size and
	// role.
	MsgSizeCells []RoleCell `json:"msgsize_cells,omitempty"`
	// Bulk is the bulk-transfer configuration; nil when that suite did
	// not run.
	Bulk *BulkConfig `json:"bulk,omitempty"`
	// BulkSamples are every bulk iperf3 client's test in the order they
	// ran.
	BulkSamples []BulkSample `json:"bulk_samples,omitempty"`
	// BulkCells are the bulk summaries per row, metric and role.
	BulkCells []RoleCell `json:"bulk_cells,omitempty"`
	// RFC2889 is the address-caching configuration; nil when that suite
	// did not run.
	RFC2889 *RFC2889Config `json:"rfc2889,omitempty"`
	// RFC2889Samples are every address-caching instance's searches, in
	// the order they ran.
	RFC2889Samples []RFC2889Sample `json:"rfc2889_samples,omitempty"`
	// RFC2889Cells are the address-caching summaries per metric and role.
	RFC2889Cells []RoleCell `json:"rfc2889_cells,omitempty"`
	// LB is the HTTP load-balancing suite's configuration, samples and
	// summaries; nil when that suite did not run.
	LB *LBResults `json:"lb,omitempty"`
	// Bench is make bench's comparison of paths; nil in a regress run.
	Bench *benchReport `json:"bench,omitempty"`
	// Commands are every command the harness ran, in order.
	Commands []string `json:"commands"`
}

// InstanceRecord is one Instance as it ran.
type InstanceRecord struct {
	Instance
	// Promiscuity is the kernel's promiscuity count of the device under
	// test's links while the instance ran (ip -d link show).
	Promiscuity map[string]int `json:"promiscuity"`
}

// WriteReport writes results.json, report.md and the SVG charts into dir.
func WriteReport(dir string, r *Results) error {
	if err := writeResults(dir, r); err != nil {
		return err
	}
	charts, err := WriteCharts(dir, r)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(Markdown(r, charts)), 0o644); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	return nil
}

// writeResults makes dir and writes r there as results.json.
func writeResults(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report %s: results.json: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	return nil
}

// Header is the lines printed above the tables and at the top of
// report.md: what was compared, and how often.
func Header(r *Results) []string {
	h := []string{"A/A run: \"patch\" and \"no patch\" are the same binary (no PATCH= or BASE= given); differences are noise."}
	if r.Mode != "A/A" {
		h = []string{fmt.Sprintf("patch: %s", r.Trees.Patch.Desc), fmt.Sprintf("no patch: %s", r.Trees.NoPatch.Desc)}
	}
	length := fmt.Sprintf(" of %d s", r.Seconds)
	if len(r.Setups) == 0 {
		length = "" // no iperf3 test ran
	}
	// The load-balancing suite alone compares balancers, not roles.
	if len(r.Setups) > 0 || r.Rate != nil || r.MsgSize != nil || r.Bulk != nil || r.RFC2889 != nil || r.LB == nil {
		h = append(h, fmt.Sprintf("%d run(s)%s per cell and role, interleaved A B B A; cells are means; * = Mann-Whitney U p < %.3g (smallest p possible with %d runs a side: %.3g).",
			r.Runs, length, r.Alpha, r.Runs, r.MinP))
	}
	if r.Rate != nil {
		h = append(h, rateHeader(*r.Rate))
	}
	if r.MsgSize != nil {
		h = append(h, fmt.Sprintf("TCP stream by message size: iperf3 -l SIZE, %d s per test, across bridge0 (peer to peer); Mb/s and CPU system %% by message size.", r.MsgSize.Seconds))
	}
	if r.Bulk != nil {
		h = append(h, fmt.Sprintf("Bulk transfer: iperf3 %d s per test across a four-port bridge0: TCP one pair alone, two pairs at once (each, sum, sum / one pair), UDP at %d Mb/s offered (received Mb/s, datagram loss); system %% is the whole machine's during the test.", r.Bulk.Seconds, r.Bulk.UDPMbps))
	}
	if r.Rate != nil && r.Rate.LossRate && len(r.LossRateCells) > 0 {
		h = append(h, fmt.Sprintf("Frame loss rate (RFC 2544 26.3): %v trials at 100%%, 90%%, ... of the max-rate run's sent rate until two successive trials lose nothing; n/a = a load that run did not reach (lossless by RFC 2544's rule).", r.Rate.Trial))
	}
	if r.Rate != nil && len(r.WindowSamples) > 0 {
		h = append(h, fmt.Sprintf("Window benchmark: %d-byte frames, window %d, %v per instance (BalanceNG's form).", r.Rate.WindowSize, r.Rate.Window, r.Rate.WindowDuration))
	}
	if r.RFC2889 != nil {
		h = append(h, rfc2889Header(r.RFC2889))
	}
	if r.LB != nil {
		h = append(h, lbHeader(r.LB))
	}
	return h
}

// Markdown renders report.md.
func Markdown(r *Results, charts []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# swctl regress report, %s\n\n", r.Started.Format(time.RFC3339))
	summaryMarkdown(&b, r)
	b.WriteString("## Comparison\n\n")
	for _, l := range Header(r) {
		fmt.Fprintf(&b, "%s\n\n", l)
	}
	if r.Runs <= 4 {
		fmt.Fprintf(&b, "With %d runs a side a Mann-Whitney two-sided p-value cannot go below %.3f; RUNS=6 (the default) can reach 0.002.\n\n", r.Runs, r.MinP)
	}
	e := r.Environment
	fmt.Fprintf(&b, "## Environment\n\n| | |\n|---|---|\n| kernel | %s |\n| OS | %s |\n| CPU | %s, %d logical CPUs |\n| Go | %s |\n| iperf3 | %s |\n| host | %s |\n| load average (start; end) | %s; %s |\n| mode | %s%s |\n",
		e.Kernel, e.OS, e.CPUModel, e.CPUs, e.GoVersion, e.Iperf3, e.Hostname, e.LoadStart, e.LoadEnd, r.Mode, map[bool]string{true: " (QUICK)", false: ""}[r.Quick])
	if r.Trees != nil {
		for _, t := range []Tree{r.Trees.Patch, r.Trees.NoPatch} {
			fmt.Fprintf(&b, "| %s | %s, revision %s, built from %s |\n", t.Role, t.Desc, t.Revision, t.Dir)
		}
	}
	b.WriteString("\n## Method\n\n")
	for _, m := range r.Method {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	for _, s := range r.Setups {
		fmt.Fprintf(&b, "- `%s`: %s.", s.Name, s.Desc)
		if s.NoPromiscNA != "" {
			fmt.Fprintf(&b, " -PROMISC: n/a, %s.", s.NoPromiscNA)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Tables\n\n```\n")
	printAllTables(&b, r)
	b.WriteString("```\n")
	for _, c := range charts {
		fmt.Fprintf(&b, "\n![%s](%s)\n", c, c)
	}
	b.WriteString("\n## Every cell\n\nIRQ and softirq are the two parts of \"interrupts\"; engine is the swctl daemon's own user+system CPU (percent of the whole machine).\n")
	for _, p := range reportParts(r) {
		if p.name != "" { // an every-cell table
			fmt.Fprintf(&b, "\n### %s\n\n%s", cmp.Or(p.heading, p.name), p.intro)
			writeMarkdown(&b, p.table)
		}
	}
	if r.RFC2889 != nil {
		rfc2889Trials(&b, r)
	}
	if r.LB != nil {
		lbMarkdown(&b, r)
	}
	if len(r.Instances) > 0 {
		b.WriteString("\n## Promiscuity seen by the kernel\n\nThe `promiscuity` count of the device under test's links (ip -d link show), per instance:\n\n")
		for _, in := range r.Instances {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(in.Promiscuity)) {
				parts = append(parts, fmt.Sprintf("%s=%d", k, in.Promiscuity[k]))
			}
			fmt.Fprintf(&b, "- %s: %s\n", in.Instance, strings.Join(parts, " "))
		}
	}
	fmt.Fprintf(&b, "\n## Commands\n\n%d commands ran; all of them are in results.json (`commands`).\n", len(r.Commands))
	return b.String()
}

// printAllTables writes the tables of every suite of r that ran, in the
// order printed (reportParts), a blank line between tables: what Run
// prints and report.md's Tables section. A section's first table has a
// header line naming it.
func printAllTables(w io.Writer, r *Results) {
	sep := "" // a blank line before every table but the first
	for _, p := range reportParts(r) {
		for _, t := range p.tables {
			io.WriteString(w, sep)
			RenderTable(w, t)
			sep = "\n"
		}
	}
}

// cellStats is the statistics columns of an every-cell table's line for
// c: n, mean, median, min, max, stddev, and p with a '*' when
// significant; n/a and blanks when c was not measured.
func cellStats(c Comparison) string {
	if c.NA {
		return "n/a | | | | | |"
	}
	sig := ""
	if c.Significant {
		sig = " *"
	}
	m := c.Summary
	return fmt.Sprintf("%d | %.2f | %.2f | %.2f | %.2f | %.2f | %.3g%s", m.N, m.Mean, m.Median, m.Min, m.Max, m.Stddev, c.P, sig)
}
