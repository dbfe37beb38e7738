package regress

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/stats"
)

// Rows of the HTTP load-balancing suite (SUITES=lb, make bench-lb).
const (
	// LBDirect is one nginx reached directly: the ceiling, and the
	// baseline the kernel's share of nftables is netted against.
	LBDirect = "direct"
	// LBSwctl is swctl lb in front of the three backends, direct server
	// return.
	LBSwctl = "swctl"
	// LBNftables is an nftables DNAT balancer (numgen over the backends);
	// replies come back through it.
	LBNftables = "nftables"
	// LBHAProxy is HAProxy in TCP mode.
	LBHAProxy = "haproxy"
)

// Modes of the load-balancing suite: how wrk's connections carry
// requests.
const (
	// LBClose is connection per request (wrk -H 'Connection: close').
	LBClose = "close"
	// LBKeepAlive is persistent connections.
	LBKeepAlive = "keepalive"
)

// LBModes are the modes in table order.
var LBModes = []string{LBClose, LBKeepAlive}

// lbModeTitle names each mode in table titles.
var lbModeTitle = map[string]string{LBClose: "connection per request (Connection: close)", LBKeepAlive: "keep-alive"}

// LBRowSpec is one row of the load-balancing suite.
type LBRowSpec struct {
	// Name is the row's name (LBDirect, LBSwctl ...).
	Name string `json:"name"`
	// Desc says what sits between wrk and nginx.
	Desc string `json:"desc"`
}

// LBRows are the suite's rows, in table order.
var LBRows = []LBRowSpec{
	{LBDirect, "one nginx (backend 1) reached at its own address: no balancer, the ceiling"},
	{LBSwctl, "swctl lb in the balancer namespace: `swctl lb create web --iface eth0 --vip VIP --method maglev --health tcp:80`, `swctl lb backend add web ADDR` for each backend; direct server return (the backends hold the VIP on lo and answer the client themselves)"},
	{LBNftables, "nftables in the balancer namespace, which holds the VIP: `dnat to numgen inc mod 3 map { ... }` in a prerouting nat chain, ip_forward on; the backends route the client's address through the balancer, so replies come back through it (conntrack undoes the DNAT)"},
	{LBHAProxy, "HAProxy (one thread) in the balancer namespace, which holds the VIP: mode tcp, balance roundrobin over the backends; two TCP connections per client connection"},
}

// LBConfig configures the HTTP load-balancing suite: wrk in a client
// namespace against nginx in three backend namespaces, on one L2
// segment, directly and through each balancer.
type LBConfig struct {
	// Rows names the rows to run, in table order; direct runs whenever
	// nftables does (its kernel time is netted against direct's).
	Rows []string `json:"rows"`
	// Runs is the number of runs per row and mode (the tables show the
	// median).
	Runs int `json:"runs"`
	// Seconds is the length of one wrk run.
	Seconds int `json:"seconds"`
	// Connections is wrk's -c.
	Connections int `json:"connections"`
	// Warmup is the length in seconds of the unrecorded wrk run that
	// checks each instance before it is measured (repeated until every
	// backend the row should reach has answered).
	Warmup int `json:"warmup_s"`
}

// DefaultLBConfig returns the suite's settings: every row, 3 runs of
// 10 s per row and mode (QUICK: 3 runs of 2 s), 16 connections.
func DefaultLBConfig(quick bool) LBConfig {
	c := LBConfig{Runs: 3, Seconds: 10, Connections: 16, Warmup: 1}
	if quick {
		c.Seconds = 2
	}
	return c
}

// check says what is wrong with c.
func (c LBConfig) check() error {
	switch {
	case c.Runs < 1 || c.Seconds < 1:
		return fmt.Errorf("regress: load balancing: runs %d, seconds %d: both must be at least 1", c.Runs, c.Seconds)
	case c.Connections < 1 || c.Connections > 10000:
		return fmt.Errorf("regress: load balancing: %d connections: want 1-10000", c.Connections)
	case c.Warmup < 1:
		return fmt.Errorf("regress: load balancing: warm-up %d s: want at least 1", c.Warmup)
	}
	_, err := c.rows()
	return err
}

// rows returns the rows c names (all when none), in table order, with
// direct added when nftables runs.
func (c LBConfig) rows() ([]LBRowSpec, error) {
	names := c.Rows
	if slices.Contains(names, LBNftables) {
		names = append(slices.Clone(names), LBDirect)
	}
	return findNamed(LBRows, names, "load-balancing row", func(r LBRowSpec) string { return r.Name })
}

// lbPinning is the CPUs (taskset lists) of the suite's processes, the
// same in every row.
type lbPinning struct {
	// Client runs wrk.
	Client string `json:"client"`
	// Balancer runs the swctl daemon or HAProxy.
	Balancer string `json:"balancer"`
	// Backends run the three nginx.
	Backends string `json:"backends"`
}

// pinningFor spreads client, balancer and backends over ncpu CPUs: each
// its own from 3 CPUs on (the backends get the rest), the balancer with
// the backends on 2, everything on CPU 0 on 1.
func pinningFor(ncpu int) lbPinning {
	switch {
	case ncpu >= 4:
		return lbPinning{"0", "1", fmt.Sprintf("2-%d", ncpu-1)}
	case ncpu >= 2:
		return lbPinning{"0", "1", fmt.Sprint(ncpu - 1)}
	}
	return lbPinning{"0", "0", "0"}
}

// lbSuite is the load-balancing suite of a run: its configuration
// (which checks itself), the swctl row run once per role of roles.
type lbSuite struct {
	LBConfig
	roles []string
}

// lbRoles are the roles of a run of mode: patch alone in A/A.
func lbRoles(mode string) []string {
	if mode == "A/A" {
		return []string{RolePatch}
	}
	return bothRoles[:]
}

// estimate is the suite's share of a run: the suite has runs of its own,
// over the rows it names (checked).
func (s lbSuite) estimate(int) Estimate {
	rows, _ := s.rows()
	return planTime("lb", LBPlan(rows, s.roles, s.Runs), func(LBInstance) float64 { return s.weight() })
}

// run runs the suite's instances over the rows it names (checked) on its
// testbed and records them in res.LB.
func (s lbSuite) run(ctx context.Context, env suiteEnv, res *Results) error {
	rows, _ := s.rows()
	res.LB = &LBResults{Config: s.LBConfig, Rows: rows, Plan: LBPlan(rows, s.roles, s.Runs), Samples: []LBSample{}}
	return runLB(ctx, env, res.LB)
}

// describe is the suite's method text for report.md, with the pinning
// of this machine's CPUs.
func (s lbSuite) describe() []string {
	c, p := s.LBConfig, pinningFor(runtime.NumCPU())
	return []string{
		fmt.Sprintf("HTTP load balancing (issue 19, SKUDONET's benchmark): namespaces client, balancer and backend 1-3 on one L2 segment (a Linux bridge in a namespace of its own, one veth to each); nginx (Debian nginx-light, one process: master_process off, access_log off, keepalive_requests 1000000) in every backend serving an empty index.html; the VIP %s on every backend's lo with arp_ignore=1 and arp_announce=2; offloads off (ethtool -K eth0 tx off gso off) on every namespace's eth0, as swctl forwards without vnet headers; IPv6 off; permanent neighbour entries between real addresses, the VIP resolved by ARP (its entry flushed at each instance's start).", lbVIP),
		fmt.Sprintf("wrk -t1 -c%d -d%ds --latency --timeout 5s http://VIP/ (direct: backend 1's address), keep-alive, and with -H 'Connection: close' for connection per request; %d runs per row and mode, interleaved: each run goes through the rows in order, the next in reverse (A B C C B A), each instance measuring both modes, in alternating order; before each instance's first measured run, %d s warm-up runs (not recorded) until every backend the row reaches has answered (nginx stub_status counts).", c.Connections, c.Seconds, c.Runs, c.Warmup),
		fmt.Sprintf("Pinning (taskset), the same in every row: wrk on CPU %s, the balancer's processes (the swctl daemon, every thread; HAProxy) on CPU %s, the three nginx on CPU %s; nftables works in the kernel, in softirq on whichever CPU the packet is handled.", p.Client, p.Balancer, p.Backends),
		"CPU: /proc/stat (whole machine) and /proc/PID/stat (utime+stime of the balancer process and of the nginx processes; wrk's own from its rusage) read just before wrk starts and just after it ends; a figure per request is that CPU time over wrk's completed requests (internal/cpustat's arithmetic). \"balancer us/req\": for swctl and HAProxy their process's user+system time (report.md gives the system part too); for nftables, which has no process, the kernel's: the whole machine's softirq+irq time per request less direct's (the median of its runs in the same mode), i.e. the packet work the balancer adds (its NAT and conntrack, and the extra hops through the segment and its namespace in both directions). The swctl and HAProxy figures leave out the softirq work they cause the same way; \"machine us/req\" (everything, gross, other work on the machine included) covers it for every row.",
		"Each balanced row checks that every backend served requests (nginx stub_status before and after each run; results.json has the counts per backend).",
	}
}

// LBInstance is one start of one row's balancer: both modes, one run.
type LBInstance struct {
	// Row is the row's name.
	Row string `json:"row"`
	// Role is the swctl binary's role (RolePatch or RoleNoPatch) in the
	// swctl row; "" elsewhere.
	Role string `json:"role,omitempty"`
	// Run counts from 1.
	Run int `json:"run"`
	// Modes are the modes measured, in the order run.
	Modes []string `json:"modes"`
}

// lbLabel is a row's label in the tables: the row, with the
// role when both roles of swctl run.
func lbLabel(row, role string, ab bool) string {
	if row == LBSwctl && ab {
		return row + " " + role
	}
	return row
}

// String describes the instance for the progress line.
func (in LBInstance) String() string {
	return fmt.Sprintf("load balancing %s run %d", strings.TrimSpace(in.Row+" "+in.Role), in.Run)
}

// LBPlan orders the suite's instances: each run goes through the rows
// (the swctl row once per role in roles) in order, the next run in
// reverse, so drift over time hits every row alike; modes alternate
// their order from run to run too.
func LBPlan(rows []LBRowSpec, roles []string, runs int) []LBInstance {
	var seq []LBInstance
	for _, r := range rows {
		rowRoles := []string{""}
		if r.Name == LBSwctl {
			rowRoles = roles
		}
		for _, role := range rowRoles {
			seq = append(seq, LBInstance{Row: r.Name, Role: role})
		}
	}
	var out []LBInstance
	for run := 1; run <= runs; run++ {
		order, modes := slices.Clone(seq), slices.Clone(LBModes)
		if run%2 == 0 {
			slices.Reverse(order)
			slices.Reverse(modes)
		}
		for _, in := range order {
			in.Run, in.Modes = run, modes
			out = append(out, in)
		}
	}
	return out
}

// LBSample is one wrk run of one row and mode.
type LBSample struct {
	// Row is the row's name.
	Row string `json:"row"`
	// Role is the swctl binary's role in the swctl row; "" elsewhere.
	Role string `json:"role,omitempty"`
	// Mode is LBClose or LBKeepAlive.
	Mode string `json:"mode"`
	// Run counts from 1.
	Run int `json:"run"`
	// Seq is the sample's place among the suite's samples, from 1.
	Seq int `json:"seq"`
	// Start is when wrk started.
	Start time.Time `json:"start"`
	// Command is wrk's command line.
	Command string `json:"command"`
	// Wrk is what wrk printed.
	Wrk WrkResult `json:"wrk"`
	// WallSeconds is the time between the CPU readings around wrk.
	WallSeconds float64 `json:"wall_s"`
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int `json:"cpus"`
	// Machine is the whole machine's CPU over the same span, in ticks.
	Machine cpustat.Times `json:"machine_ticks"`
	// BalancerTicks is the balancer process's utime+stime over the span;
	// nil without a balancer process (direct, nftables).
	BalancerTicks *uint64 `json:"balancer_ticks,omitempty"`
	// BalancerSystemTicks is the system (stime) part of BalancerTicks.
	BalancerSystemTicks *uint64 `json:"balancer_system_ticks,omitempty"`
	// BackendTicks is the nginx processes' utime+stime over the span.
	BackendTicks uint64 `json:"backend_ticks"`
	// ClientTicks is wrk's own utime+stime (its rusage), in ticks.
	ClientTicks uint64 `json:"client_ticks"`
	// BackendRequests are the requests each backend served during the
	// run (nginx stub_status, less the status request itself).
	BackendRequests []uint64 `json:"backend_requests"`
}

// perRequest returns ticks of the sample's CPU time as microseconds per
// completed request (false: no ticks given, no request or no tick).
func (s LBSample) perRequest(ticks *uint64) (float64, bool) {
	if ticks == nil {
		return 0, false
	}
	ns, err := cpustat.NsPerFrame(*ticks, s.Machine.Total(), s.CPUs, s.WallSeconds, s.Wrk.Requests)
	return ns / 1e3, err == nil
}

// kernelUs is the whole machine's softirq+irq time per request.
func (s LBSample) kernelUs() (float64, bool) {
	return s.perRequest(new(s.Machine.SoftIRQ + s.Machine.IRQ))
}

// lbPoint is a sample with the summary of direct's kernel time per
// request in the sample's mode (N 0 when direct did not run), whose
// median the nftables row's balancer figure is net of.
type lbPoint struct {
	LBSample
	direct stats.Summary
}

// balancerUs is the balancer's CPU per request: its process's, or for
// nftables the kernel's less direct's.
func (s lbPoint) balancerUs() (float64, bool) {
	if s.Row == LBNftables && s.direct.N > 0 {
		k, ok := s.kernelUs()
		return k - s.direct.Median, ok
	}
	return s.perRequest(s.BalancerTicks)
}

// LBMetrics are the figures summarised per row and mode; the first five
// are the table's columns.
var LBMetrics = []Metric[lbPoint]{
	{"balancer_us", "balancer us/req", "%.1f", lbPoint.balancerUs},
	{"machine_us", "machine us/req", "%.1f", func(s lbPoint) (float64, bool) { return s.perRequest(new(s.Machine.Busy())) }},
	{"rps", "req/s", "%.0f", func(s lbPoint) (float64, bool) { return s.Wrk.RequestsPerSec, true }},
	{"p50_ms", "p50 ms", "%.2f", func(s lbPoint) (float64, bool) { return s.Wrk.P50 / 1e3, true }},
	{"p99_ms", "p99 ms", "%.2f", func(s lbPoint) (float64, bool) { return s.Wrk.P99 / 1e3, true }},
	{"balancer_system_us", "balancer system us/req", "%.1f", func(s lbPoint) (float64, bool) { return s.perRequest(s.BalancerSystemTicks) }},
	{"kernel_us", "softirq+irq us/req", "%.1f", lbPoint.kernelUs},
	{"backends_us", "nginx us/req", "%.1f", func(s lbPoint) (float64, bool) { return s.perRequest(&s.BackendTicks) }},
	{"client_us", "wrk us/req", "%.1f", func(s lbPoint) (float64, bool) { return s.perRequest(&s.ClientTicks) }},
	{"errors", "socket errors + non-2xx", "%.0f", func(s lbPoint) (float64, bool) {
		return float64(s.Wrk.SocketErrors() + s.Wrk.Non2xx), true
	}},
}

// AnalyzeLB summarises samples per row, role, mode and metric, in the
// order of plan's first run.
func AnalyzeLB(plan []LBInstance, samples []LBSample) []RoleCell {
	values := func(row, role, mode string, value func(LBSample) (float64, bool)) []float64 {
		return roleValues(samples, func(s LBSample) (string, float64, bool) {
			x, ok := value(s)
			return s.Role, x, ok && s.Row == row && s.Mode == mode
		})[role]
	}
	var out []RoleCell
	for _, in := range lbRowsOf(plan) {
		for _, mode := range LBModes {
			direct := stats.Summarize(values(LBDirect, "", mode, LBSample.kernelUs))
			for _, m := range LBMetrics {
				v := values(in.Row, in.Role, mode, func(s LBSample) (float64, bool) { return m.Value(lbPoint{s, direct}) })
				out = append(out, RoleCell{Row: in.Row, Mode: mode, Metric: m.Key, Role: in.Role, Comparison: Comparison{NA: len(v) == 0, Summary: stats.Summarize(v), Values: v}})
			}
		}
	}
	return out
}

// lbRowsOf returns plan's first run: its rows (row and role), once
// each, in order.
func lbRowsOf(plan []LBInstance) []LBInstance {
	return slices.DeleteFunc(slices.Clone(plan), func(in LBInstance) bool { return in.Run != 1 })
}

// LBTable builds the suite's table of one mode: a row per row (and
// role) of plan, the first five LBMetrics as columns, each cell the
// median and, in brackets, the range of its runs; "-" where a row has no
// such figure. Columns are as wide as their widest cell plus two blanks.
// Lines under the table explain the nftables figure and name any row
// whose runs had socket errors or non-2xx responses.
func LBTable(cfg LBConfig, plan []LBInstance, cells []RoleCell, mode string, ab bool) Table {
	t := Table{Head: []string{fmt.Sprintf("HTTP load balancing, %s: median of %d runs [min..max]", lbModeTitle[mode], cfg.Runs)}, Columns: [][]string{{"row"}}}
	for _, m := range LBMetrics[:5] {
		t.Columns[0] = append(t.Columns[0], m.Title)
	}
	for _, in := range lbRowsOf(plan) {
		r := Row{Label: lbLabel(in.Row, in.Role, ab)}
		for _, m := range LBMetrics[:5] {
			r.Cells = append(r.Cells, texts(lbCellText(findCell(cells, RoleCell{Row: in.Row, Mode: mode, Metric: m.Key, Role: in.Role}), m.Format))...)
		}
		t.Rows = append(t.Rows, r)
		if c := findCell(cells, RoleCell{Row: in.Row, Mode: mode, Metric: "errors", Role: in.Role}); c != nil && !c.NA && c.Summary.Max > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: socket errors or non-2xx responses in some run (at most %.0f; results.json has wrk's counts)", r.Label, c.Summary.Max))
		}
		if in.Row == LBNftables {
			t.Notes = append(t.Notes, "nftables: balancer us/req = the whole machine's softirq+irq time per request less direct's (kernel work, no process)")
		}
	}
	return t
}

// lbCellText formats c as "median [min..max]" with the fmt verb f (".."
// because figures may be negative), just the median for one run, "-"
// when not measured.
func lbCellText(c *RoleCell, f string) string {
	switch {
	case c == nil || c.NA:
		return "-"
	case c.Summary.N > 1:
		return fmt.Sprintf(f+" ["+f+".."+f+"]", c.Summary.Median, c.Summary.Min, c.Summary.Max)
	}
	return fmt.Sprintf(f, c.Summary.Median)
}

// LBResults is the suite's part of results.json.
type LBResults struct {
	// Config is the suite's configuration.
	Config LBConfig `json:"config"`
	// Rows are the rows that ran.
	Rows []LBRowSpec `json:"rows"`
	// Pinning is the CPUs of wrk, the balancer and nginx.
	Pinning lbPinning `json:"pinning"`
	// Tools are the versions of wrk, nginx, HAProxy and nft.
	Tools map[string]string `json:"tools,omitempty"`
	// Plan is the instances in the order run.
	Plan []LBInstance `json:"plan"`
	// Samples are every wrk run in the order run.
	Samples []LBSample `json:"samples"`
	// Cells are the summaries per row, role, mode and metric.
	Cells []RoleCell `json:"cells"`
}

// lbHeader is the line Header prints about the suite.
func lbHeader(r *LBResults) string {
	return fmt.Sprintf("HTTP load balancing: wrk, %d connections, %d s per run, against nginx (3 backends, empty page) directly and through each balancer; %d runs per row and mode, median [min..max]; the balancer's own CPU per request leads.",
		r.Config.Connections, r.Config.Seconds, r.Config.Runs)
}

// lbMarkdown writes report.md's every-cell section of the suite and the
// requests each backend served per run.
func lbMarkdown(b *strings.Builder, r *Results) {
	ab := r.Mode != "A/A"
	b.WriteString("\n### HTTP load balancing\n\n")
	t := Table{Columns: [][]string{{"row", "mode", "metric", "n", "median", "min", "max", "mean", "stddev"}}}
	for _, c := range r.LB.Cells {
		m, figures := c.Summary, "n/a | | | | |" // the statistics' columns blank
		if !c.NA {
			figures = fmt.Sprintf("%d | %.2f | %.2f | %.2f | %.2f | %.2f", m.N, m.Median, m.Min, m.Max, m.Mean, m.Stddev)
		}
		t.Rows = append(t.Rows, Row{Label: lbLabel(c.Row, c.Role, ab), Cells: texts(c.Mode, c.Metric, figures)})
	}
	writeMarkdown(b, t)
	b.WriteString("\nRequests per backend, per run (nginx stub_status), and wrk's errors:\n\n")
	for _, s := range r.LB.Samples {
		// The counts as "n1/n2/n3".
		per := strings.ReplaceAll(strings.Trim(fmt.Sprint(s.BackendRequests), "[]"), " ", "/")
		fmt.Fprintf(b, "- %s %s run %d: %d requests, %.0f req/s; backends %s; socket errors %d, non-2xx %d\n",
			lbLabel(s.Row, s.Role, ab), s.Mode, s.Run, s.Wrk.Requests, s.Wrk.RequestsPerSec, per, s.Wrk.SocketErrors(), s.Wrk.Non2xx)
	}
	if len(r.LB.Tools) > 0 {
		var t []string
		for _, k := range slices.Sorted(maps.Keys(r.LB.Tools)) {
			t = append(t, k+" "+r.LB.Tools[k])
		}
		b.WriteString("\nTools: " + strings.Join(t, "; ") + "\n")
	}
}

// weight is the planned seconds of one instance, for the progress line:
// the balancer's start, the warm-up, both modes' runs and the reads
// around them.
func (c LBConfig) weight() float64 {
	return 2 + float64(c.Warmup) + float64(len(LBModes))*(float64(c.Seconds)+0.5)
}

// Addresses of the suite's segment (10.80.0.0/24).
const (
	// lbClientIP is the client namespace's address.
	lbClientIP = "10.80.0.1"
	// lbBalancerIP is the balancer namespace's own address.
	lbBalancerIP = "10.80.0.2"
	// lbVIP is the virtual address the balancers serve.
	lbVIP = "10.80.0.100"
	// lbBackends is the number of backends.
	lbBackends = 3
)

// lbBackendIP is backend k's (1-3) own address.
func lbBackendIP(k int) string { return fmt.Sprintf("10.80.0.%d", 10+k) }

// maxStubStatus bounds what ParseStubStatus reads: nginx prints about
// 100 bytes.
const maxStubStatus = 4 << 10

// ParseStubStatus returns the requests count of nginx's stub_status page
// (the third number on the line under "server accepts handled
// requests"). Output over 4 KiB, a missing header, a counts line without
// exactly three counts or a count that is no number is an error.
func ParseStubStatus(out []byte) (uint64, error) {
	if len(out) > maxStubStatus {
		return 0, fmt.Errorf("nginx stub_status: %d bytes, more than %d", len(out), maxStubStatus)
	}
	_, counts, ok := strings.Cut(string(out), "server accepts handled requests\n")
	if !ok {
		return 0, errors.New(`nginx stub_status: no "server accepts handled requests" line`)
	}
	var accepts, handled, requests uint64
	if _, err := fmt.Sscanln(counts, &accepts, &handled, &requests); err != nil {
		return 0, fmt.Errorf("nginx stub_status: counts under \"server accepts handled requests\": %w", err)
	}
	return requests, nil
}
