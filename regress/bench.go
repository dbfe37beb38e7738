package regress

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/bgproc"
	"github.com/swctl/swctl/internal/stats"
)

// The comparison suite (make bench, cmd/swctl-bench): the forwarding-rate
// testbed h1 — dut — h2 once per row (BenchSetups: direct veth, the Linux
// kernel bridge, swctl bridges, a roundrobin swctl trunk, Open vSwitch's
// userspace datapath without and with userspace TSO), every row measured
// side by side, rows interleaved run by run, one table of medians,
// spreads and ratios (benchTable). Raw samples go to
// bench-out/<time>/results.json: the rates as rate_samples, ping and
// iperf3 in its "bench" part. docs/BENCH.md says how to read the table.
// This file holds its command line, rows, ping and ethtool parsers,
// results.json part, samples and table; bench_run_linux.go runs it.

// BenchConfig is the comparison suite's checked command line, as
// results.json's bench part records it.
type BenchConfig struct {
	// Swctl is the swctl binary the swctl rows run.
	Swctl string `json:"swctl"`
	// Runs is the number of runs; every row is measured once per run.
	Runs int `json:"runs"`
	// Quick shortens every trial (for a check in a few minutes).
	Quick bool `json:"quick"`
	// Out is the directory under which a <time>/ directory gets
	// results.json and table.txt.
	Out string `json:"-"`
	// Rows are the row IDs to measure, in table order.
	Rows []string `json:"rows"`
	// RateConfig is the forwarding rate of every row: Sizes 64 and 1518,
	// Flows, MaxTrial the max-load runs' length, Trial, MaxTrials and
	// Resolution the 64-byte zero-loss search's, CPURate and CPUTrial
	// the 64-byte CPU-per-frame run's (measureRow).
	RateConfig
	// TCPSeconds is the length of one iperf3 test.
	TCPSeconds int `json:"tcp_seconds"`
	// Pings is the number of light-load pings.
	Pings int `json:"pings"`
	// TesterCPU runs the harness (generator and receiver), iperf3 and
	// ping; "" = no pinning.
	TesterCPU string `json:"tester_cpu"`
	// ForwarderCPU runs swctl daemon and ovs-vswitchd; "" = no pinning.
	ForwarderCPU string `json:"forwarder_cpu"`
	// Keep keeps the work directory (daemon and OVS logs).
	Keep bool `json:"-"`
}

// ParseBenchFlags reads swctl-bench's command line (without the program
// name).
func ParseBenchFlags(args []string) (BenchConfig, error) {
	fs := flag.NewFlagSet("swctl-bench", flag.ContinueOnError)
	var c BenchConfig
	var rows string
	fs.StringVar(&c.Swctl, "swctl", "bin/swctl", "swctl `binary` of the swctl rows")
	fs.IntVar(&c.Runs, "runs", 3, "`N` runs; each measures every row once, rows interleaved")
	fs.BoolVar(&c.Quick, "quick", false, "short trials (1 s max load, 0.5 s search trials, 2 s CPU and TCP, 10 pings): a check in about 3 minutes")
	fs.StringVar(&c.Out, "out", "bench-out", "write results.json and table.txt under `DIR`/<time>/")
	fs.StringVar(&rows, "rows", "", "comma-separated row IDs to measure (default all: direct,kernel,swctl-w1,swctl-w2,swctl-trunk,ovs,ovs-tso)")
	fs.IntVar(&c.Flows, "flows", 64, "`N` flows in the generated frames")
	fs.Float64Var(&c.CPURate, "cpu-rate", 200000, "paced load of the CPU-per-frame measurement, `frames/s`")
	fs.StringVar(&c.TesterCPU, "tester-cpu", "0", "`CPU` of the generator, iperf3 and ping (empty: no pinning)")
	fs.StringVar(&c.ForwarderCPU, "forwarder-cpu", "1", "`CPU` of swctl daemon and ovs-vswitchd (empty: no pinning)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the work directory with daemon and OVS logs")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.Runs < 1:
		return c, fmt.Errorf("-runs %d: want at least 1", c.Runs)
	case c.Flows < 1:
		return c, fmt.Errorf("-flows %d: want at least 1", c.Flows)
	case c.CPURate <= 0:
		return c, fmt.Errorf("-cpu-rate %v: want frames/s > 0", c.CPURate)
	}
	c.Sizes, c.MaxTrial, c.Trial, c.MaxTrials, c.Resolution = []int{64, 1518}, 2*time.Second, time.Second, 8, 0.01
	c.CPUTrial, c.TCPSeconds, c.Pings = 5*time.Second, 5, 20
	if c.Quick {
		c.MaxTrial, c.Trial, c.MaxTrials, c.Resolution = time.Second, 500*time.Millisecond, 5, 0.05
		c.CPUTrial, c.TCPSeconds, c.Pings = 2*time.Second, 2, 10
	}
	var names []string
	if rows != "" {
		for n := range strings.SplitSeq(rows, ",") {
			names = append(names, strings.TrimSpace(n))
		}
	}
	specs, err := findNamed(BenchSetups, names, "-rows: row", func(s RateSpec) string { return s.Name })
	for _, s := range specs {
		c.Rows = append(c.Rows, s.Name)
	}
	return c, err
}

// BenchSetups are make bench's rows, in table order: setups of the
// forwarding-rate testbed (rateBed), the baseline first.
var BenchSetups = []RateSpec{
	{Name: "direct", Label: "direct veth (no dut)", Baseline: true, Method: MethodCounting,
		Desc: "no device under test: h1's eth0 cabled straight to h2's eth0"},
	{Name: "kernel", Label: "Linux kernel bridge", Forwarder: FwdKernel, Method: MethodCounting,
		Desc: "a Linux bridge br0 over p1 and p2"},
	{Name: "swctl-w1", Label: "swctl bridge, 1 worker", Forwarder: FwdSwctl, Workers: 1, Method: MethodCounting,
		Desc: "swctl daemon --workers 1, bridge0 over p1 and p2"},
	{Name: "swctl-w2", Label: "swctl bridge, 2 workers", Forwarder: FwdSwctl, Workers: 2, Method: MethodCounting,
		Desc: "swctl daemon --workers 2, bridge0 over p1 and p2"},
	{Name: "swctl-poll", Label: "swctl bridge, busy poll", Forwarder: FwdSwctl, Workers: 1, BusyPoll: true, Method: MethodCounting,
		Desc: "swctl daemon --workers 1 --busy-poll, bridge0 over p1 and p2"},
	{Name: "swctl-trunk", Label: "swctl trunk roundrobin x2", Forwarder: FwdSwctl, Workers: 1, Trunk: true, Method: MethodCounting,
		Desc: "swctl daemon --workers 1, bridge0 over p1 and a roundrobin trunk0 of a1, a2, whose peers are h2's Linux bridge br0"},
	{Name: "ovs", Label: "OVS userspace", Forwarder: FwdOVS, Method: MethodCounting,
		Desc: "Open vSwitch, datapath_type=netdev, p1 and p2 as ports"},
	{Name: "ovs-tso", Label: "OVS userspace + TSO", Forwarder: FwdOVS, TSO: true, Method: MethodCounting,
		Desc: "the same with other_config:userspace-tso-enable=true"},
}

// benchRows returns the rows named in ids, in table order; the OVS rows
// are skipped with ovsSkip when it is not empty.
func benchRows(ids []string, ovsSkip string) []RateSpec {
	var out []RateSpec
	for _, s := range BenchSetups {
		if slices.Contains(ids, s.Name) {
			if s.Forwarder == FwdOVS {
				s.Skip = ovsSkip
			}
			out = append(out, s)
		}
	}
	return out
}

// pingStats is what ping -q printed.
type pingStats struct {
	// Sent and Received count the echo requests and replies.
	Sent int `json:"sent"`
	// Received counts the replies.
	Received int `json:"received"`
	// Min, Avg and Max are round-trip times in ms.
	Min float64 `json:"min_ms"`
	// Avg is the mean round-trip time in ms.
	Avg float64 `json:"avg_ms"`
	// Max is the longest round-trip time in ms.
	Max float64 `json:"max_ms"`
}

var (
	pingCounts = regexp.MustCompile(`\d+ packets transmitted, \d+ (?:packets )?received`)
	pingRTT    = regexp.MustCompile(`= [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ ms`)
)

// parsePing reads the summary of iputils ping:
//
//	20 packets transmitted, 20 received, 0% packet loss, time 3803ms
//	rtt min/avg/max/mdev = 0.041/0.061/0.092/0.011 ms
func parsePing(out string) (pingStats, error) {
	var p pingStats
	counts := pingCounts.FindString(out)
	if counts == "" {
		return p, fmt.Errorf("ping: no \"packets transmitted\" line in %q", bgproc.Clip(out))
	}
	fmt.Sscanf(counts, "%d packets transmitted, %d", &p.Sent, &p.Received)
	if p.Received == 0 {
		return p, fmt.Errorf("ping: none of %d echo requests answered", p.Sent)
	}
	rtt := pingRTT.FindString(out)
	if rtt == "" {
		return p, fmt.Errorf("ping: no rtt line in %q", bgproc.Clip(out))
	}
	fmt.Sscanf(rtt, "= %g/%g/%g/", &p.Min, &p.Avg, &p.Max)
	return p, nil
}

// offloadFeatures maps the ethtool -k names of the offloads the bench
// turns off and back on to their ethtool -K keywords.
var offloadFeatures = []struct{ long, short string }{
	{"tx-checksumming", "tx"},
	{"scatter-gather", "sg"},
	{"tcp-segmentation-offload", "tso"},
	{"generic-segmentation-offload", "gso"},
}

// parseOffloads reads ethtool -k output and returns the ethtool -K
// arguments that set those offloads back as they are ("tx on sg on ...").
// Features ethtool marks [fixed] are left out.
func parseOffloads(out string) ([]string, error) {
	state := map[string]string{}
	for line := range strings.Lines(out) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			state[k] = strings.TrimSpace(v)
		}
	}
	var args []string
	for _, f := range offloadFeatures {
		v, ok := state[f.long]
		if !ok {
			return nil, fmt.Errorf("ethtool -k: no %s line", f.long)
		}
		if strings.Contains(v, "[fixed]") {
			continue
		}
		onoff, _, _ := strings.Cut(v, " ")
		if onoff != "on" && onoff != "off" {
			return nil, fmt.Errorf("ethtool -k: %s: %q, want on or off", f.long, v)
		}
		args = append(args, f.short, onoff)
	}
	return args, nil
}

// benchReport is make bench's part of results.json (bench): the
// configuration, the programs measured, every row's raw measurements per
// run, the samples the table was made from, and the table.
type benchReport struct {
	// Config is the configuration.
	Config BenchConfig `json:"config"`
	// Programs are the versions of swctl and Open vSwitch.
	Programs map[string]string `json:"programs"`
	// Runs are the ping and iperf3 measurements and the failures, one
	// per row and run, in the order measured; the rows are
	// Results.RateSetups and the rates Results.RateSamples.
	Runs []benchRun `json:"runs"`
	// Samples are the table's inputs (CPU net values included).
	Samples []benchSample `json:"samples"`
	// Table is the printed table.
	Table string `json:"table"`
}

// benchRun is one row measured in one run: what the forwarding-rate
// samples (Results.RateSamples, setup = row) do not hold.
type benchRun struct {
	// Row is the row ID.
	Row string `json:"row"`
	// Run is the run number, from 1.
	Run int `json:"run"`
	// Start is when the row's forwarder was started.
	Start time.Time `json:"start"`
	// Seconds is how long the row took in this run.
	Seconds float64 `json:"seconds"`
	// Error is why the forwarder did not start, if it did not.
	Error string `json:"error,omitempty"`
	// Ping is the light-load ping.
	Ping *pingStats `json:"ping,omitempty"`
	// TCP are the iperf3 tests.
	TCP []tcpRecord `json:"tcp,omitempty"`
	// Failed are the metrics without a value in this run, with the
	// cause (benchStop: the forwarder did not stop cleanly).
	Failed map[string]string `json:"failed,omitempty"`
}

// benchStop is benchRun.Failed's key for a forwarder that did not stop
// cleanly: no metric is lost, the run counts as failed.
const benchStop = "stop"

// tcpRecord is one iperf3 test.
type tcpRecord struct {
	// Offloads is "off" or "default".
	Offloads string `json:"offloads"`
	// Command is the client's command line.
	Command string `json:"command"`
	// Gbps is the received throughput; 0 when nothing was transferred.
	Gbps float64 `json:"gbps"`
	// Retransmits is the sender's count.
	Retransmits int `json:"retransmits"`
	// Error is why iperf3 failed, if it did.
	Error string `json:"error,omitempty"`
}

// rateMetrics are the table's metrics a forwarding-rate sample of size
// gives.
func rateMetrics(size int) []string {
	if size == 64 {
		return []string{Max64, Max64Loss, ZeroLoss64, CPUGross, CPUNet, CPUUser, CPUSys, CPUSoftirq}
	}
	return []string{Max1518, Max1518Loss}
}

// benchSamples are the table's values: per row and run, from its
// forwarding-rate samples (their CPU net of the baseline's, NetCPU) and
// its ping and iperf3 tests; a metric that failed carries the error.
func benchSamples(rates []RateSample, runs []benchRun) []benchSample {
	var out []benchSample
	for _, r := range runs {
		add := func(metric string, v float64, note, err string) {
			out = append(out, benchSample{Row: r.Row, Run: r.Run, Metric: metric, Value: v, Note: note, Err: err})
		}
		if r.Error != "" {
			for _, m := range []string{Max64, Max64Loss, ZeroLoss64, CPUGross, Max1518, Max1518Loss, TCPOff, TCPOn, RTT} {
				add(m, 0, "", r.Error)
			}
			continue
		}
		for _, s := range rates {
			if s.Setup != r.Row || s.Run != r.Run {
				continue
			}
			// A 1518-byte sample has no search and no CPU run.
			m := rateMetrics(s.Size)
			add(m[0], s.Max.PacketsPerSecond, "", "")
			add(m[1], s.Max.LossPercent, "", "")
			if len(s.Trials) > 0 {
				add(ZeroLoss64, s.ZeroLoss, zeroLossNote(s), "")
			}
			switch {
			case s.CPU == nil:
			case s.CPU.Err != "":
				add(CPUGross, 0, "", s.CPU.Err)
			default:
				add(CPUGross, s.CPU.Cost.NsPerFrame, cpuNote(s.CPU), "")
				add(CPUUser, s.CPU.Cost.User, "", "")
				add(CPUSys, s.CPU.Cost.System, "", "")
				add(CPUSoftirq, s.CPU.Cost.SoftIRQ, "", "")
				if s.CPU.Net != nil {
					add(CPUNet, *s.CPU.Net, "", "")
				}
			}
		}
		for _, m := range slices.Sorted(maps.Keys(r.Failed)) {
			if m != benchStop {
				add(m, 0, "", r.Failed[m])
			}
		}
		if r.Ping != nil {
			note := ""
			if r.Ping.Received < r.Ping.Sent {
				note = fmt.Sprintf("%d of %d pings lost", r.Ping.Sent-r.Ping.Received, r.Ping.Sent)
			}
			add(RTT, r.Ping.Avg, note, "")
		}
		for _, t := range r.TCP {
			metric, note := map[string]string{"off": TCPOff, "default": TCPOn}[t.Offloads], ""
			if t.Error != "" {
				note = "no transfer: " + t.Error
			}
			add(metric, t.Gbps, note, "")
		}
	}
	return out
}

// zeroLossNote qualifies a 64-byte zero-loss rate.
func zeroLossNote(s RateSample) string {
	var notes []string
	switch {
	case s.SenderBound:
		notes = append(notes, "sender-bound")
	case !s.Converged:
		notes = append(notes, "search not converged")
	case s.ZeroLossTrialRate > 0 && s.ZeroLossTrialRate >= s.Max.SentPerSecond:
		notes = append(notes, "no loss paced at the max-load rate")
	}
	if s.ZeroLossAboveMax {
		notes = append(notes, "above the max-load rate: paced, the path delivered more than overloaded")
	}
	return strings.Join(notes, ", ")
}

// cpuNote qualifies a CPU-cost run.
func cpuNote(c *CPURun) string {
	var notes []string
	if c.Figure.TesterBound {
		notes = append(notes, "sender fell short of the CPU load")
	}
	if c.lossy() {
		notes = append(notes, "loss at the CPU load")
	}
	return strings.Join(notes, ", ")
}

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

// benchMetrics are the table's metrics in order. A titled one has a line
// group of its own, its figures in its Format (FormatRate without one);
// an untitled one follows the metric in whose notes column its median
// shows, in its Format (percentages with one decimal, nanoseconds with
// none). cpuLoad is the paced load of the CPU metric in frames/s and
// pings the number of pings, for the titles. Their Value is unset: a
// benchSample names its metric and holds its value, which benchCell
// reads.
func benchMetrics(cpuLoad float64, pings int) []Metric[benchSample] {
	return []Metric[benchSample]{
		{Key: Max64, Title: "64 B frames/s, max load"}, {Key: Max64Loss, Format: "loss %.1f%%"},
		{Key: Max1518, Title: "1518 B frames/s, max load"}, {Key: Max1518Loss, Format: "loss %.1f%%"},
		{Key: ZeroLoss64, Title: "64 B zero-loss rate, frames/s"},
		{Key: CPUNet, Title: fmt.Sprintf("CPU ns/frame at %s/s, net", FormatRate(cpuLoad)), Format: "%.0f"},
		{Key: CPUGross, Format: "gross %.0f ns"}, {Key: CPUUser, Format: "user %.1f%%"},
		{Key: CPUSys, Format: "sys %.1f%%"}, {Key: CPUSoftirq, Format: "softirq %.1f%%"},
		{Key: TCPOff, Title: "TCP Gb/s, host offloads off", Format: "%.2f"},
		{Key: TCPOn, Title: "TCP Gb/s, default offloads", Format: "%.2f"},
		{Key: RTT, Title: fmt.Sprintf("ping RTT avg ms (%d, 200 ms)", pings), Format: "%.3f"},
	}
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

// benchCell summarises the samples of metric key on row over the runs:
// the values it takes, and the distinct notes and the distinct errors of
// runs without a value, each followed by the number of runs that had it
// ("sender-bound (2 runs)").
func benchCell(samples []benchSample, row, key string) (s stats.Summary, notes, errs []string) {
	var vals []float64
	for _, x := range samples {
		switch {
		case x.Row != row || x.Metric != key:
		case x.Err != "":
			errs = append(errs, x.Err)
		default:
			vals = append(vals, x.Value)
			if x.Note != "" {
				notes = append(notes, x.Note)
			}
		}
	}
	return stats.Summarize(vals), counted(notes), counted(errs)
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
		order[i] = fmt.Sprintf("%s (%d %s)", s, n[s], map[bool]string{true: "run", false: "runs"}[n[s] == 1])
	}
	return order
}

// maxNote is the most runes of one note cell; the JSON has the rest.
const maxNote = 90

// benchTable builds the table of samples over rows under the header
// lines: per titled metric a line per row (a skipped one gives its
// reason), a blank line between metrics.
func benchTable(header []string, rows []RateSpec, metrics []Metric[benchSample], samples []benchSample) Table {
	t := Table{Head: header, Columns: [][]string{{"metric", "path", "median", "min–max", "vs kernel", "vs OVS", "notes"}}}
	for mi, m := range metrics {
		if m.Title == "" {
			continue
		}
		if mi > 0 {
			t.Rows = append(t.Rows, Row{})
		}
		kernel, _, _ := benchCell(samples, "kernel", m.Key)
		ovs, _, _ := benchCell(samples, "ovs", m.Key)
		for i, r := range rows {
			label := ""
			if i == 0 {
				label = m.Title
			}
			if r.Skip != "" {
				t.Rows = append(t.Rows, Row{Label: label, Cells: texts(r.Label, r.Skip, "–", "–", "–")})
				continue
			}
			c, counts, errs := benchCell(samples, r.Name, m.Key)
			med, spread := "–", "–"
			switch {
			case c.N == 1:
				med, spread = benchFigure(m, c.Median), "(1 run)"
			case c.N > 1:
				med, spread = benchFigure(m, c.Median), benchFigure(m, c.Min)+"–"+benchFigure(m, c.Max)
			case len(errs) > 0:
				med = "failed"
			}
			var notes []string
			for _, n := range metrics[mi+1:] {
				if n.Title != "" {
					break
				}
				if nc, _, _ := benchCell(samples, r.Name, n.Key); nc.N > 0 {
					notes = append(notes, fmt.Sprintf(n.Format, nc.Median))
				}
			}
			notes = append(notes, counts...)
			for _, e := range errs {
				notes = append(notes, "failed: "+e)
			}
			t.Rows = append(t.Rows, Row{Label: label, Cells: texts(r.Label, med, spread, ratioText(c, kernel), ratioText(c, ovs), clip(strings.Join(notes, "; ")))})
		}
	}
	return t
}

// benchFigure formats a value of m: in its Format, as frames/s
// (FormatRate) without one.
func benchFigure(m Metric[benchSample], v float64) string {
	if m.Format == "" {
		return FormatRate(v)
	}
	return fmt.Sprintf(m.Format, v)
}

// ratioText formats a row's median over a reference row's, or "–" when
// the ratio means nothing: either unmeasured (a skipped reference row has
// no samples), the reference's at most 0 or the row's below 0 (a net CPU
// cost below 0 is noise around the baseline).
func ratioText(c, ref stats.Summary) string {
	v := c.Median / ref.Median
	switch {
	case c.N == 0 || ref.N == 0 || ref.Median <= 0 || c.Median < 0:
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
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= maxNote {
		return string(r)
	}
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
