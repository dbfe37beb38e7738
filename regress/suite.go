package regress

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Rows of the promisc tables.
const (
	// RowReceive is traffic into the device under test's own stack.
	RowReceive = "Receive"
	// RowTransmit is traffic out of the device under test's own stack.
	RowTransmit = "Transmit"
	// RowForward is traffic from peer to peer across the device under
	// test (bridge only).
	RowForward = "Forward"
)

// SetupSpec is one setup of the promisc suite: one device under test and
// the rows measured through it.
type SetupSpec struct {
	// Name is the setup's name in the tables: veth, trunk0, bridge0.
	Name string `json:"name"`
	// Desc says what the device under test is and what PROMISC and
	// -PROMISC mean for it.
	Desc string `json:"desc"`
	// Rows are the table rows measured.
	Rows []string `json:"rows"`
	// Engine says whether a swctl daemon is the device under test (its
	// own CPU is then reported); veth has none.
	Engine bool `json:"engine"`
	// NoPromiscNA, when set, is why the -PROMISC column is not measured.
	NoPromiscNA string `json:"no_promisc_na,omitempty"`
	// Pairs is the number of host pairs bridge0's testbed cables: 0 or 1
	// for peers 1 and 2 on ports p1 and p2; 2 adds peers 3 and 4 on p3
	// and p4 (the bulk suite's two pairs at once).
	Pairs int `json:"pairs,omitempty"`
}

// Setups are the promisc suite's setups, in table order.
var Setups = []SetupSpec{
	{
		Name: "veth", Rows: []string{RowReceive, RowTransmit},
		Desc: "plain veth interface, no engine (the baseline); PROMISC = a PACKET_MR_PROMISC membership held by the harness on an AF_PACKET socket bound to no protocol (it receives no frames), -PROMISC = none",
	},
	{
		Name: "trunk0", Rows: []string{RowReceive, RowTransmit}, Engine: true,
		Desc: "swctl trunk (failover) over two veth links to a peer whose two ends sit in a Linux bridge; host address on the trunk's TAP; PROMISC = trunk create --promisc, -PROMISC = the lladdr policy",
	},
	{
		Name: "bridge0", Rows: []string{RowReceive, RowTransmit, RowForward}, Engine: true,
		Desc: "swctl bridge over two veth links to two peers, host address on its --local TAP; Forward = peer to peer across the bridge; PROMISC = members promiscuous (the default), -PROMISC = `bridge port --promisc off` on both members (valid on veth, which delivers every frame anyway)",
	},
}

// FindSetups returns the setups named in names (all when names is
// empty), in table order.
func FindSetups(names []string) ([]SetupSpec, error) {
	return findNamed(Setups, names, "setup", func(s SetupSpec) string { return s.Name })
}

// findNamed returns the entries of all whose names are in names (all of
// them when names is empty), in table order; a name no entry has is an
// error naming it, the kind and the names there are.
func findNamed[T any](all []T, names []string, kind string, name func(T) string) ([]T, error) {
	var have []string
	for _, s := range all {
		have = append(have, name(s))
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("regress: %s %q: no such setup (have %s)", kind, n, strings.Join(have, ", "))
		}
	}
	return slices.DeleteFunc(slices.Clone(all), func(s T) bool {
		return len(names) > 0 && !slices.Contains(names, name(s))
	}), nil
}

// Config is one run of the suite.
type Config struct {
	// AB says what "patch" and "no patch" are.
	AB ABSpec
	// Runs is the number of runs per cell and role.
	Runs int
	// Seconds is the length of one iperf3 test.
	Seconds int
	// Alpha is the significance level of the Mann-Whitney test.
	Alpha float64
	// Setups names the promisc setups to run; empty means all.
	Setups []string
	// Hosts, when set, runs the promisc tests on the real test hosts it
	// names, through their transports, instead of a netns testbed.
	Hosts *HostsConfig
	// NoPromisc skips the promisc tables (suite item 1).
	NoPromisc bool
	// Rate, when set, runs the forwarding-rate suite (suite item 2) after
	// the promisc tables, as it says; nil skips it.
	Rate *RateConfig
	// MsgSize, when set, runs the TCP-stream-by-message-size suite
	// (suite item 4) after the forwarding rate; nil skips it.
	MsgSize *MsgSizeConfig
	// Bulk, when set, runs the bulk-transfer suite (one pair, two pairs
	// at once, UDP) after the message sizes; nil skips it.
	Bulk *BulkConfig
	// RFC2889, when set, runs the address-caching suite (suite item 5:
	// RFC 2889 capacity and learning rate) as it says; nil skips it.
	RFC2889 *RFC2889Config
	// LB, when set, runs the HTTP load-balancing suite (issue 19: wrk
	// against nginx directly and through swctl lb, nftables and HAProxy)
	// as it says; nil skips it.
	LB *LBConfig
	// Quick marks the short form in the report.
	Quick bool
	// OutRoot is the directory that receives <timestamp>/ (regress-out).
	OutRoot string
	// Stdout receives the tables.
	Stdout io.Writer
	// Stderr receives the progress line and warnings.
	Stderr io.Writer
	// TTY redraws the progress line in place with '\r' (Stderr is a
	// terminal); otherwise it prints plain lines.
	TTY bool
}

// Instance is one start of the device under test with one binary: all
// rows of one setup, one column and one run.
type Instance struct {
	// Setup is the setup's name.
	Setup string `json:"setup"`
	// Promisc is the column: PROMISC or -PROMISC.
	Promisc bool `json:"promisc"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1 within the cell.
	Run int `json:"run"`
	// Rows are the rows measured.
	Rows []string `json:"rows"`
}

// Plan orders the instances of a suite: per setup and column, runs
// alternate A B, B A, A B ... so that drift over time hits both roles
// alike.
func Plan(setups []SetupSpec, runs int) []Instance {
	var out []Instance
	for _, s := range setups {
		for _, promisc := range []bool{true, false} {
			if !promisc && s.NoPromiscNA != "" {
				continue
			}
			out = append(out, abPlan(runs, func(role string, r int) Instance {
				return Instance{Setup: s.Name, Promisc: promisc, Role: role, Run: r, Rows: s.Rows}
			})...)
		}
	}
	return out
}

// promiscSuite is the promisc suite on the netns testbed: setups, each
// iperf3 test seconds long.
type promiscSuite struct {
	setups  []SetupSpec
	seconds int
}

// check has nothing to check: Config.suites checked runs and seconds.
func (promiscSuite) check() error { return nil }

// describe adds nothing: Run's method text starts with the suite's.
func (promiscSuite) describe() []string { return nil }

// estimate is the suite's share of a run of runs runs.
func (s promiscSuite) estimate(runs int) Estimate {
	return planTime("promisc", Plan(s.setups, runs), s.weight)
}

// weight is the planned seconds of one instance: its iperf3 tests, a
// quarter second each to connect and end, and a second for the daemon's
// start and the first ping (the smoke run's instances: three 1 s tests
// through bridge0 in 3.5-4 s, two through veth in 2-2.5 s).
func (s promiscSuite) weight(in Instance) float64 {
	return float64(len(in.Rows))*(float64(s.seconds)+0.25) + 1
}

// run runs every setup on a testbed of its own.
func (s promiscSuite) run(ctx context.Context, env suiteEnv, res *Results) error {
	res.Setups = s.setups
	for si, setup := range s.setups {
		b, err := newBed(ctx, setup, si+1, env.work, env.cmds)
		if err != nil {
			return err
		}
		start, measure := promiscSteps(ctx, b, env.trees, s.seconds, res)
		err = runPlan(env.prog, env.step, Plan([]SetupSpec{setup}, env.runs), start, measure, b.stop, s.weight)
		b.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// abPlan orders the instances of a suite with one instance per role and
// run: runs alternate A B, B A, ... (patch first in odd runs, counting
// from 1, no patch first in even ones); mk makes an instance.
func abPlan[T any](runs int, mk func(role string, run int) T) []T {
	var out []T
	for r := 1; r <= runs; r++ {
		for i := range bothRoles {
			out = append(out, mk(bothRoles[(r-1+i)%2], r))
		}
	}
	return out
}

// colName is the table's column name for promisc.
func colName(promisc bool) string {
	if promisc {
		return "PROMISC"
	}
	return "-PROMISC"
}

// String describes the instance for the progress line.
func (in Instance) String() string {
	return fmt.Sprintf("%s %s %s run %d", in.Setup, colName(in.Promisc), in.Role, in.Run)
}

// Sample is one iperf3 test.
type Sample struct {
	// Setup is the setup's name.
	Setup string `json:"setup"`
	// Row is Receive, Transmit or Forward.
	Row string `json:"row"`
	// Promisc is the column.
	Promisc bool `json:"promisc"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1 within the cell.
	Run int `json:"run"`
	// Seq is the sample's place in the whole suite, from 1.
	Seq int `json:"seq"`
	// Start is when the test began.
	Start time.Time `json:"start"`
	// Mbps is iperf3's received throughput, megabits per second.
	Mbps float64 `json:"mbps"`
	// Retransmits is iperf3's TCP retransmit count.
	Retransmits int `json:"retransmits"`
	// CPU is the whole machine's CPU between just before the client
	// started and just after it ended.
	CPU CPUPercent `json:"cpu"`
	// EngineCPU is the swctl daemon's own CPU over the same span, percent
	// of the whole machine; nil without an engine.
	EngineCPU *float64 `json:"engine_cpu,omitempty"`
	// Command is the iperf3 client's command line.
	Command string `json:"command"`
}

// Metrics are the figures summarised per cell; the first three are the
// printed tables.
var Metrics = []Metric[Sample]{
	{"throughput", "Throughput (Mb/s)", "", func(s Sample) (float64, bool) { return s.Mbps, true }},
	{"system", "CPU (system %)", "", func(s Sample) (float64, bool) { return s.CPU.System, true }},
	{"interrupts", "CPU (interrupts %)", "", func(s Sample) (float64, bool) { return s.CPU.Interrupts, true }},
	{"irq", "CPU (irq %)", "", func(s Sample) (float64, bool) { return s.CPU.IRQ, true }},
	{"softirq", "CPU (softirq %)", "", func(s Sample) (float64, bool) { return s.CPU.SoftIRQ, true }},
	{"engine", "Engine process CPU (% of machine)", "", func(s Sample) (float64, bool) { return optional(s.EngineCPU) }},
}

// optional is a metric's value at p, nil when it was not measured.
func optional(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Analyze summarises samples per setup, metric, row, column and role and
// compares patch with no patch.
func Analyze(setups []SetupSpec, samples []Sample, alpha float64) []RoleCell {
	var out []RoleCell
	for _, s := range setups {
		metrics := Metrics
		if !s.Engine {
			metrics = slices.DeleteFunc(slices.Clone(Metrics), func(m Metric[Sample]) bool { return m.Key == "engine" })
		}
		var places []RoleCell
		for _, row := range s.Rows {
			for _, promisc := range []bool{true, false} {
				places = append(places, RoleCell{Setup: s.Name, Row: row, Promisc: promisc})
			}
		}
		out = summarize(out, metrics, places, samples, func(x Sample, at RoleCell) (string, bool) {
			return x.Role, x.Setup == at.Setup && x.Row == at.Row && x.Promisc == at.Promisc
		}, alpha)
	}
	return out
}

// Tables builds the printed tables of setup s (throughput, system,
// interrupts) from cells; a cell not in cells is n/a.
func Tables(s SetupSpec, cells []RoleCell) []Table {
	var out []Table
	for _, m := range Metrics[:3] {
		var rows []Row
		for _, row := range s.Rows {
			at := RoleCell{Setup: s.Name, Row: row, Promisc: true}
			promisc := pairCells(cells, at, m.Key)
			at.Promisc = false
			rows = append(rows, Row{Label: row, Cells: append(promisc, pairCells(cells, at, m.Key)...)})
		}
		out = append(out, seedTable(m.Title, rows...))
	}
	return out
}

// ofSetup returns the instances of plan whose setup is name.
func ofSetup[I any](plan []I, name string, setup func(I) string) []I {
	return slices.DeleteFunc(slices.Clone(plan), func(in I) bool { return setup(in) != name })
}
