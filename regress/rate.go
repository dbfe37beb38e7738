package regress

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swctl/swctl/gen"
)

// RateSpec is one setup of the forwarding-rate suite (suite item 2): a
// swctl device forwarding between two tester ports that sit in one tester
// namespace, driven in-process by package gen.
type RateSpec struct {
	// Name is the setup's name in the tables: bridge0 or trunk0.
	Name string `json:"name"`
	// Desc says what the device under test is and which way frames go.
	Desc string `json:"desc"`
}

// RateSetups are the forwarding-rate setups, in table order.
var RateSetups = []RateSpec{
	{
		Name: "bridge0",
		Desc: "swctl bridge over two veth links p1, p2; the tester sends on t1 (p1's peer) and counts on t2 (p2's peer); static bridge entries for both tester MACs, so every frame is a known unicast",
	},
	{
		Name: "trunk0",
		Desc: "swctl bridge between p1 and a swctl trunk (roundrobin, --promisc) over two veth links a1, a2; the tester sends on t1 and counts on br0, a Linux bridge over the links' peers b1, b2 addressed to br0's own MAC (the tester's side of the trunk); static bridge entries for both tester MACs",
	},
}

// FindRateSetups returns the forwarding-rate setups named in names (all
// when names is empty), in table order.
func FindRateSetups(names []string) ([]RateSpec, error) {
	return findNamed(RateSetups, names, "forwarding-rate setup", func(s RateSpec) string { return s.Name })
}

// RateConfig configures the forwarding-rate suite.
type RateConfig struct {
	// Setups names the setups to run; empty means all.
	Setups []string `json:"setups,omitempty"`
	// Sizes are the frame sizes as RFC 2544 counts them (FCS included):
	// 64 and 1518 by default, RFC2544Sizes in FULL mode.
	Sizes []int `json:"sizes"`
	// Trial is the length of the max-rate run and of each search trial.
	Trial time.Duration `json:"trial_ns"`
	// MaxTrials bounds the zero-loss search's paced trials per size.
	MaxTrials int `json:"max_trials"`
	// Resolution is the search's resolution as a fraction of the
	// max-rate run's sent rate (0.01 = 1%).
	Resolution float64 `json:"resolution"`
	// Latency adds a trial at the zero-loss rate whose latency is
	// reported (FULL mode).
	Latency bool `json:"latency"`
	// Flows is the number of flows the generator sends (source address
	// and UDP port vary, so the trunk's hash has something to spread).
	Flows int `json:"flows"`
	// LossRate adds RFC 2544's frame-loss-rate test (section 26.3) per
	// size: paced trials of Trial at 100%, 90%, ... of the max-rate run's
	// sent rate until two successive trials lose nothing (FULL mode).
	LossRate bool `json:"loss_rate,omitempty"`
	// WindowDuration is the length of the window benchmark (BalanceNG's:
	// WindowSize-byte frames, at most Window in flight) run once per
	// instance after the sizes; 0 skips it.
	WindowDuration time.Duration `json:"window_duration_ns,omitempty"`
	// WindowSize is the window benchmark's frame length without FCS.
	WindowSize int `json:"window_size,omitempty"`
	// Window is the window benchmark's most frames in flight.
	Window int `json:"window,omitempty"`
}

// DefaultRateConfig returns the forwarding-rate settings of a mode:
// quick (short trials), default, or full (the RFC 2544 size set, longer
// trials, latency at the zero-loss rate).
func DefaultRateConfig(quick, full bool) RateConfig {
	switch {
	case full:
		return RateConfig{Sizes: slices.Clone(gen.RFC2544Sizes), Trial: 10 * time.Second, MaxTrials: 12, Resolution: 0.002, Latency: true, Flows: 16,
			LossRate: true, WindowDuration: 300 * time.Second, WindowSize: DefaultWindowSize, Window: DefaultWindow}
	case quick:
		return RateConfig{Sizes: []int{64, 1518}, Trial: 500 * time.Millisecond, MaxTrials: 6, Resolution: 0.02, Flows: 16,
			WindowDuration: time.Second, WindowSize: DefaultWindowSize, Window: DefaultWindow}
	}
	return RateConfig{Sizes: []int{64, 1518}, Trial: time.Second, MaxTrials: 8, Resolution: 0.01, Flows: 16,
		WindowDuration: 10 * time.Second, WindowSize: DefaultWindowSize, Window: DefaultWindow}
}

// check says what is wrong with c.
func (c RateConfig) check() error {
	if len(c.Sizes) == 0 {
		return fmt.Errorf("regress: forwarding rate: no frame sizes")
	}
	for _, s := range c.Sizes {
		if l := gen.FrameSize(s); l < gen.MinSize || l > gen.MaxSize {
			return fmt.Errorf("regress: forwarding rate: frame size %d: out of range %d-%d (FCS included)", s, gen.MinSize+gen.FCSLen, gen.MaxSize+gen.FCSLen)
		}
	}
	switch {
	case c.Trial < 10*time.Millisecond:
		return fmt.Errorf("regress: forwarding rate: trial %v: want at least 10ms", c.Trial)
	case c.MaxTrials < 1:
		return fmt.Errorf("regress: forwarding rate: max trials %d: want at least 1", c.MaxTrials)
	case c.Resolution <= 0 || c.Resolution >= 1:
		return fmt.Errorf("regress: forwarding rate: resolution %v: want a fraction between 0 and 1", c.Resolution)
	case c.Flows < 1 || c.Flows > gen.MaxFlows:
		return fmt.Errorf("regress: forwarding rate: flows %d: want 1-%d", c.Flows, gen.MaxFlows)
	}
	return c.checkWindow()
}

// drain is how long a run waits for frames still in flight.
const rateDrain = 200 * time.Millisecond

// weight is the planned seconds of one instance (all sizes), for the
// progress line: per size the max-rate run and the search's trials (it
// usually needs all of them to reach its resolution), each waiting up to
// the drain for lost frames, the latency trial; and the daemon's start.
func (c RateConfig) weight() float64 {
	per := c.Trial.Seconds() + rateDrain.Seconds()
	n := 1 + float64(c.MaxTrials)
	if c.Latency {
		n++
	}
	if c.LossRate {
		n += 100 / LossRateStep / 2 // typically half the steps
	}
	return float64(len(c.Sizes))*n*per + c.windowWeight() + 1.5
}

// RateInstance is one start of the device under test with one binary:
// every frame size of one forwarding-rate setup, one run.
type RateInstance struct {
	// Setup is the setup's name.
	Setup string `json:"setup"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1 within the setup.
	Run int `json:"run"`
}

// String describes the instance for the progress line.
func (in RateInstance) String() string {
	return fmt.Sprintf("forwarding rate %s %s run %d", in.Setup, in.Role, in.Run)
}

// RatePlan orders the forwarding-rate instances: per setup, runs
// alternate A B, B A, ... like Plan.
func RatePlan(setups []RateSpec, runs int) []RateInstance {
	var out []RateInstance
	for _, s := range setups {
		for r := 1; r <= runs; r++ {
			roles := []string{RolePatch, RoleNoPatch}
			if r%2 == 0 {
				roles = []string{RoleNoPatch, RolePatch}
			}
			for _, role := range roles {
				out = append(out, RateInstance{Setup: s.Name, Role: role, Run: r})
			}
		}
	}
	return out
}

// RateRun is one generator run (the max-rate run, a search trial or the
// latency trial) with the CPU spent during it.
type RateRun struct {
	// Result is the generator's result (Rate 0 = unpaced).
	gen.Result
	// CPU is the whole machine's CPU over the run.
	CPU CPUPercent `json:"cpu"`
	// EngineCPU is the swctl daemon's own CPU over the run, percent of
	// the whole machine; nil when it could not be read.
	EngineCPU *float64 `json:"engine_cpu,omitempty"`
}

// RateSample is one frame size measured in one instance.
type RateSample struct {
	// Setup is the setup's name.
	Setup string `json:"setup"`
	// Size is the frame size as RFC 2544 counts it (FCS included).
	Size int `json:"size"`
	// FrameLen is the length the ports carry (Size without the FCS).
	FrameLen int `json:"frame_len"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1 within the setup.
	Run int `json:"run"`
	// Seq is the sample's place among the forwarding-rate samples, from 1.
	Seq int `json:"seq"`
	// Start is when the max-rate run began.
	Start time.Time `json:"start"`
	// Max is the max-rate run: the sender as fast as the port takes frames.
	Max RateRun `json:"max"`
	// ZeroLoss is the RFC 2544 throughput: the highest offered rate of a
	// trial without loss, frames/s (what the sender reached when it fell
	// behind the pacer; then SenderBound is set); 0 when none passed.
	ZeroLoss float64 `json:"zero_loss"`
	// SenderBound says the sender reached less than 99% of the passing
	// trial's rate: ZeroLoss is a lower bound.
	SenderBound bool `json:"sender_bound,omitempty"`
	// Converged says the search came within its resolution.
	Converged bool `json:"converged"`
	// Trials are the search's paced trials in the order run.
	Trials []RateRun `json:"trials"`
	// SearchBound, when not 0, is the search's upper bound in frames/s:
	// the sent rate of the search's own max-rate run (swctl bench
	// --search on real test hosts makes one). 0 means the search's bound
	// is Max's sent rate.
	SearchBound float64 `json:"search_bound,omitempty"`
	// Latency is the latency trial at ZeroLoss (FULL mode); nil otherwise.
	Latency *RateRun `json:"latency,omitempty"`
	// LossRate are the frame-loss-rate test's trials (RFC 2544 26.3;
	// FULL mode) in the order run; nil otherwise.
	LossRate []LossStep `json:"loss_rate,omitempty"`
}

// RateMetrics are the figures summarised per forwarding-rate cell; the
// first three are the printed table's column pairs.
var RateMetrics = []struct {
	// Key names the metric in results.json.
	Key string
	// Title is the column's title (first header line).
	Title string
	// Value extracts the metric from a sample (ok false: not measured).
	Value func(s RateSample) (float64, bool)
}{
	{"max_rate", "max fps", func(s RateSample) (float64, bool) { return s.Max.PacketsPerSecond, true }},
	{"zero_loss", "0-loss fps", func(s RateSample) (float64, bool) { return s.ZeroLoss, true }},
	{"loss", "loss %", func(s RateSample) (float64, bool) { return s.Max.LossPercent, true }},
	{"offered", "offered fps", func(s RateSample) (float64, bool) { return s.Max.SentPerSecond, true }},
	{"system", "CPU system % at max", func(s RateSample) (float64, bool) { return s.Max.CPU.System, true }},
	{"interrupts", "CPU interrupts % at max", func(s RateSample) (float64, bool) { return s.Max.CPU.Interrupts, true }},
	{"engine", "engine CPU % at max", func(s RateSample) (float64, bool) {
		if s.Max.EngineCPU == nil {
			return 0, false
		}
		return *s.Max.EngineCPU, true
	}},
	{"latency_avg_us", "latency avg µs at 0-loss", func(s RateSample) (float64, bool) {
		if s.Latency == nil || s.Latency.Result.Latency == nil {
			return 0, false
		}
		return float64(s.Latency.Result.Latency.Avg) / 1e3, true
	}},
	{"latency_max_us", "latency max µs at 0-loss", func(s RateSample) (float64, bool) {
		if s.Latency == nil || s.Latency.Result.Latency == nil {
			return 0, false
		}
		return float64(s.Latency.Result.Latency.Max) / 1e3, true
	}},
}

// RateCell is the summary of one forwarding-rate cell: setup, metric,
// frame size and role.
type RateCell struct {
	// Setup is the setup's name.
	Setup string `json:"setup"`
	// Metric is a RateMetrics key.
	Metric string `json:"metric"`
	// Size is the RFC 2544 frame size.
	Size int `json:"size"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// NA is set when the cell was not measured.
	NA bool `json:"na,omitempty"`
	// Summary describes the samples.
	Summary Summary `json:"summary"`
	// Values are the samples in run order.
	Values []float64 `json:"values"`
	// P is the Mann-Whitney p-value of patch against no patch.
	P float64 `json:"p"`
	// Significant says P < alpha.
	Significant bool `json:"significant"`
}

// AnalyzeRates summarises forwarding-rate samples per setup, metric,
// frame size and role and compares patch with no patch. Metrics without
// any sample in a setup (latency outside FULL) are left out.
func AnalyzeRates(setups []RateSpec, sizes []int, samples []RateSample, alpha float64) []RateCell {
	var out []RateCell
	for _, s := range setups {
		for _, m := range RateMetrics {
			var cells []RateCell
			any := false
			for _, size := range sizes {
				vals := map[string][]float64{}
				for _, x := range samples {
					if x.Setup == s.Name && x.Size == size {
						if v, ok := m.Value(x); ok {
							vals[x.Role] = append(vals[x.Role], v)
							any = true
						}
					}
				}
				p, sig := Compare(vals[RolePatch], vals[RoleNoPatch], alpha)
				for _, role := range []string{RolePatch, RoleNoPatch} {
					cells = append(cells, RateCell{
						Setup: s.Name, Metric: m.Key, Size: size, Role: role,
						NA: len(vals[role]) == 0, Summary: Summarize(vals[role]), Values: vals[role], P: p, Significant: sig,
					})
				}
			}
			if any {
				out = append(out, cells...)
			}
		}
	}
	return out
}

// RateTable is the forwarding-rate table of one setup: a row per frame
// size, columns max rate, zero-loss rate and loss %, patch beside no
// patch.
type RateTable struct {
	// Title is the first line.
	Title string
	// Veth says the ports carry frames without FCS: the row labels then
	// say both lengths (64/60).
	Veth bool
	// Rows are the frame sizes in order.
	Rows []RateRow
}

// RateRow is one frame size of a RateTable.
type RateRow struct {
	// Size is the RFC 2544 frame size.
	Size int
	// Cells are max rate patch, max rate no patch, zero-loss patch,
	// zero-loss no patch, loss % patch, loss % no patch.
	Cells [6]Cell
}

// rateCols are the two header lines of a RateTable.
var rateCols = [2][6]string{
	{"max fps", "max fps", "0-loss fps", "0-loss fps", "loss %", "loss %"},
	{"patch", "no patch", "patch", "no patch", "patch", "no patch"},
}

// rateTableCol is the column pair of each metric the table shows.
var rateTableCol = map[string]int{"max_rate": 0, "zero_loss": 1, "loss": 2}

// RenderRateTable writes t: a 10-character label column (frame size),
// 12-character value columns; frames/s without decimals, loss % with two;
// '*' marks a patch cell that differs significantly from no patch.
func RenderRateTable(w io.Writer, t RateTable) error {
	var b strings.Builder
	line := func(label string, cols [6]string) {
		s := fmt.Sprintf("%-10s", label)
		for _, c := range cols {
			s += fmt.Sprintf("%-12s", c+" ")
		}
		b.WriteString(strings.TrimRight(s, " "))
		b.WriteByte('\n')
	}
	b.WriteString(t.Title)
	b.WriteByte('\n')
	line("bytes", rateCols[0])
	line("", rateCols[1])
	for _, r := range t.Rows {
		var cols [6]string
		for i, c := range r.Cells {
			f := "%.0f"
			if i >= 4 {
				f = "%.2f"
			}
			switch {
			case c.NA:
				cols[i] = "n/a"
			case c.Marked:
				cols[i] = fmt.Sprintf(f+"*", c.Value)
			default:
				cols[i] = fmt.Sprintf(f, c.Value)
			}
		}
		label := strconv.Itoa(r.Size)
		if t.Veth {
			label += "/" + strconv.Itoa(gen.FrameSize(r.Size))
		}
		line(label, cols)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RateTables builds the table of setup s from cells, one row per size.
func RateTables(s RateSpec, sizes []int, cells []RateCell) RateTable {
	t := RateTable{Title: "Forwarding rate (frames/s, loss %)", Veth: true}
	for _, size := range sizes {
		r := RateRow{Size: size}
		for k := range r.Cells {
			r.Cells[k].NA = true
		}
		for _, c := range cells {
			if c.Setup != s.Name || c.Size != size {
				continue
			}
			k, ok := rateTableCol[c.Metric]
			if !ok {
				continue
			}
			k *= 2
			if c.Role == RoleNoPatch {
				k++
			}
			r.Cells[k] = Cell{Value: c.Summary.Mean, NA: c.NA, Marked: c.Role == RolePatch && c.Significant}
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// PrintRateTables writes the table of every forwarding-rate setup, a
// header line naming each.
func PrintRateTables(w io.Writer, setups []RateSpec, sizes []int, cells []RateCell) error {
	var b strings.Builder
	for i, s := range setups {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "== forwarding rate: %s ==\n", s.Name)
		RenderRateTable(&b, RateTables(s, sizes, cells))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is the rate testbed's method text for report.md.
func (c RateConfig) describe() []string {
	sizes := make([]string, len(c.Sizes))
	for i, s := range c.Sizes {
		sizes[i] = fmt.Sprintf("%d (%d on veth)", s, gen.FrameSize(s))
	}
	m := []string{
		fmt.Sprintf("Forwarding rate: package gen in the harness's process, tester ports opened with AF_PACKET in one tester namespace; %d UDP flows; frame sizes %s, RFC 2544's sizes with the 4-byte FCS that veth does not carry.", c.Flows, strings.Join(sizes, ", ")),
		fmt.Sprintf("Per size and instance: a max-rate run of %v (the sender as fast as its port takes frames: \"max fps\" is frames delivered per second, \"loss %%\" its loss), then RFC 2544 throughput (\"0-loss fps\") by binary search (gen/rfc2544) of paced trials of %v between 0 and the max run's sent rate, to within %.1f%% of it, at most %d trials; 0 = no trial passed.", c.Trial, c.Trial, 100*c.Resolution, c.MaxTrials),
		"Forwarding-rate CPU: whole-machine /proc/stat and the daemon's /proc/PID/stat deltas around every run (max-rate run, each trial), in results.json; the report's every-cell table gives those at max rate.",
	}
	if c.Latency {
		m = append(m, fmt.Sprintf("Latency: one more trial of %v at the zero-loss rate; one-way delay from the sender's to the receiver's clock (one process), min/avg/max.", c.Trial))
	}
	return append(m, c.describeExtra()...)
}
