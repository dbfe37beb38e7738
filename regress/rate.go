package regress

import (
	"fmt"
	"slices"
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
	// Method is how the setup's rates count the frames delivered:
	// MethodCounting or MethodReceiving.
	Method string `json:"method"`
	// Baseline marks the setup without a device under test (direct
	// veth): its CPU per frame is the tester's own, subtracted from the
	// others' (NetCPU), and in make regress it runs only the max-rate
	// and CPU runs.
	Baseline bool `json:"baseline,omitempty"`
	// Label is the setup's name in make bench's table; empty for the
	// regress setups.
	Label string `json:"label,omitempty"`
	// Forwarder is what forwards in the device-under-test namespace:
	// FwdSwctl, FwdKernel, FwdOVS, or "" (the baseline: none).
	Forwarder string `json:"forwarder,omitempty"`
	// Workers, when not 0, is the swctl daemon's --workers.
	Workers int `json:"workers,omitempty"`
	// BusyPoll runs the swctl daemon with --busy-poll.
	BusyPoll bool `json:"busy_poll,omitempty"`
	// Trunk puts a roundrobin swctl trunk over two links a1, a2 on the
	// receiving side; their peers are a Linux bridge br0 at the far end.
	Trunk bool `json:"trunk,omitempty"`
	// TSO sets Open vSwitch's other_config:userspace-tso-enable=true.
	TSO bool `json:"tso,omitempty"`
	// Skip, when not empty, says why the setup was not measured (such as
	// "not installed").
	Skip string `json:"skip,omitempty"`
}

// The forwarders of RateSpec.Forwarder.
const (
	// FwdSwctl is swctl's daemon: bridge0 over p1 and p2 (or trunk0).
	FwdSwctl = "swctl"
	// FwdKernel is a Linux kernel bridge br0 over p1 and p2.
	FwdKernel = "kernel"
	// FwdOVS is Open vSwitch's userspace datapath over p1 and p2.
	FwdOVS = "ovs"
)

// RateSetups are the forwarding-rate setups, in table order; the
// baseline runs first.
var RateSetups = []RateSpec{
	{
		Name: "direct", Baseline: true, Method: MethodCounting,
		Desc: "no device under test: h1's eth0 cabled straight to h2's eth0 (one veth pair); the tester alone, whose CPU per frame is subtracted from the other setups'",
	},
	{
		Name: "bridge0", Method: MethodCounting, Forwarder: FwdSwctl,
		Desc: "swctl bridge over two veth links p1, p2; the tester sends on h1's eth0 (p1's peer) and counts on h2's eth0 (p2's peer); static bridge entries for both tester MACs and the sink address the rates are sent to, so every frame is a known unicast",
	},
	{
		Name: "trunk0", Method: MethodCounting, Forwarder: FwdSwctl, Trunk: true,
		Desc: "swctl bridge between p1 and a swctl trunk (roundrobin, --promisc) over two veth links a1, a2; the tester sends on h1's eth0 and counts on h2's br0, a Linux bridge over the links' peers b1, b2 addressed to br0's own MAC (the tester's side of the trunk), which delivers the rates' sink address locally; static bridge entries for both tester MACs and the sink address",
	},
}

// FindRateSetups returns the forwarding-rate setups named in names (all
// when names is empty), in table order.
func FindRateSetups(names []string) ([]RateSpec, error) {
	return findNamed(RateSetups, names, "forwarding-rate setup", func(s RateSpec) string { return s.Name })
}

// withBaseline returns setups with the baseline setups of RateSetups in
// front, where setups lacks them: the CPU per frame is net of the
// baseline's, so it runs whenever the CPU-cost run does.
func withBaseline(setups []RateSpec) []RateSpec {
	missing := slices.DeleteFunc(slices.Clone(RateSetups), func(s RateSpec) bool {
		return !s.Baseline || slices.ContainsFunc(setups, func(x RateSpec) bool { return x.Name == s.Name })
	})
	return append(missing, setups...)
}

// isBaseline says the setup of setups called name is a baseline setup.
func isBaseline(setups []RateSpec, name string) bool {
	return slices.ContainsFunc(setups, func(s RateSpec) bool { return s.Name == name && s.Baseline })
}

// RateConfig configures the forwarding-rate suite.
type RateConfig struct {
	// Setups names the setups to run; empty means all.
	Setups []string `json:"setups,omitempty"`
	// Sizes are the frame sizes as RFC 2544 counts them (FCS included):
	// 64 and 1518 by default, RFC2544Sizes in FULL mode.
	Sizes []int `json:"sizes"`
	// Trial is the length of each search trial, and of the max-rate run
	// unless MaxTrial says otherwise.
	Trial time.Duration `json:"trial_ns"`
	// MaxTrial, when not 0, is the length of the max-rate run (make
	// bench's is twice its search trials').
	MaxTrial time.Duration `json:"max_trial_ns,omitempty"`
	// MaxTrials bounds the zero-loss search's paced trials per size; 0
	// runs no search.
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
	// CPURate is the paced load of the CPU-cost run per size, frames/s
	// (make bench's -cpu-rate): the same for every setup and size, below
	// what the device forwards, so the CPU per frame compares.
	CPURate float64 `json:"cpu_rate,omitempty"`
	// CPUTrial is the CPU-cost run's length; 0 skips it.
	CPUTrial time.Duration `json:"cpu_trial_ns,omitempty"`
}

// DefaultCPURate is RateConfig.CPURate's default, make bench's.
const DefaultCPURate = 200000

// DefaultRateConfig returns the forwarding-rate settings of a mode:
// quick (short trials), default, or full (the RFC 2544 size set, longer
// trials, latency at the zero-loss rate).
func DefaultRateConfig(quick, full bool) RateConfig {
	c := RateConfig{Sizes: []int{64, 1518}, Trial: time.Second, MaxTrials: 8, Resolution: 0.01, Flows: 16, Setups: []string{"bridge0"},
		WindowDuration: 10 * time.Second, WindowSize: DefaultWindowSize, Window: DefaultWindow, CPURate: DefaultCPURate, CPUTrial: 2 * time.Second}
	switch {
	case full:
		c.Setups, c.Sizes, c.Trial, c.MaxTrials, c.Resolution = nil, slices.Clone(gen.RFC2544Sizes), 10*time.Second, 12, 0.002
		c.Latency, c.LossRate, c.WindowDuration, c.CPUTrial = true, true, 300*time.Second, 10*time.Second
	case quick:
		c.Setups, c.Trial, c.MaxTrials, c.Resolution, c.WindowDuration, c.CPUTrial = nil, 500*time.Millisecond, 6, 0.02, time.Second, time.Second
	}
	return c
}

// check says what is wrong with c.
func (c RateConfig) check() error {
	for _, s := range c.Sizes {
		if l := gen.FrameSize(s); l < gen.MinSize || l > gen.MaxSize {
			return fmt.Errorf("regress: forwarding rate: frame size %d: out of range %d-%d (FCS included)", s, gen.MinSize+gen.FCSLen, gen.MaxSize+gen.FCSLen)
		}
	}
	switch {
	case len(c.Sizes) == 0:
		return fmt.Errorf("regress: forwarding rate: no frame sizes")
	case c.Trial < 10*time.Millisecond:
		return fmt.Errorf("regress: forwarding rate: trial %v: want at least 10ms", c.Trial)
	case c.MaxTrials < 1:
		return fmt.Errorf("regress: forwarding rate: max trials %d: want at least 1", c.MaxTrials)
	case c.Resolution <= 0 || c.Resolution >= 1:
		return fmt.Errorf("regress: forwarding rate: resolution %v: want a fraction between 0 and 1", c.Resolution)
	case c.Flows < 1 || c.Flows > gen.MaxFlows:
		return fmt.Errorf("regress: forwarding rate: flows %d: want 1-%d", c.Flows, gen.MaxFlows)
	case c.CPUTrial < 0 || (c.CPUTrial > 0 && c.CPUTrial < 10*time.Millisecond):
		return fmt.Errorf("regress: forwarding rate: CPU trial %v: want at least 10ms (or 0: none)", c.CPUTrial)
	case c.CPUTrial > 0 && !(c.CPURate > 0 && c.CPURate <= 1e8):
		return fmt.Errorf("regress: forwarding rate: CPU rate %v frames/s: want more than 0, at most 1e8", c.CPURate)
	case c.WindowDuration == 0: // no window benchmark
	case c.WindowDuration < 10*time.Millisecond:
		return fmt.Errorf("regress: window benchmark: duration %v: want at least 10ms (or 0: none)", c.WindowDuration)
	case c.WindowSize < gen.MinSize || c.WindowSize > gen.MaxSize:
		return fmt.Errorf("regress: window benchmark: frame size %d: out of range %d-%d (without FCS)", c.WindowSize, gen.MinSize, gen.MaxSize)
	case c.Window < 1:
		return fmt.Errorf("regress: window benchmark: window %d: want at least 1", c.Window)
	}
	return nil
}

// drain is how long a run waits for frames still in flight.
const rateDrain = 200 * time.Millisecond

// weight is the planned seconds of one instance (all sizes), for the
// progress line: per size the max-rate run and the search's trials (it
// usually needs all of them to reach its resolution), each waiting up to
// the drain for lost frames, the latency trial, the CPU-cost run; the
// window benchmark; and the daemon's start.
func (c RateConfig) weight() float64 {
	n := 1 + float64(c.MaxTrials)
	if c.Latency {
		n++
	}
	if c.LossRate {
		n += 100 / LossRateStep / 2 // typically half the steps
	}
	per := n * (c.Trial + rateDrain).Seconds()
	if c.CPUTrial > 0 {
		per += (c.CPUTrial + rateDrain).Seconds()
	}
	w := float64(len(c.Sizes))*per + 1.5
	if c.WindowDuration > 0 {
		w += (c.WindowDuration + rateDrain).Seconds() + 0.2
	}
	return w
}

// of is c as a setup runs it: the baseline runs neither the search, the
// frame-loss-rate steps, latency nor the window benchmark.
func (c RateConfig) of(baseline bool) RateConfig {
	if baseline {
		c.MaxTrials, c.Latency, c.LossRate, c.WindowDuration = 0, false, false, 0
	}
	return c
}

// rateSuite is the forwarding-rate suite on the netns testbed: its
// configuration (which checks and describes it) through setups (the
// direct baseline included when it runs).
type rateSuite struct {
	*RateConfig
	setups []RateSpec
}

// estimate is the suite's share of a run of runs runs.
func (s rateSuite) estimate(runs int) Estimate {
	return planTime("rate", RatePlan(s.setups, runs), s.weight)
}

// weight is the planned seconds of in: RateConfig.weight as in's
// setup runs it.
func (s rateSuite) weight(in RateInstance) float64 {
	return s.of(isBaseline(s.setups, in.Setup)).weight()
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
		out = append(out, abPlan(runs, func(role string, r int) RateInstance { return RateInstance{Setup: s.Name, Role: role, Run: r} })...)
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
	// Method is how the max-rate run, the search and the frame-loss-rate
	// steps counted the frames delivered: MethodCounting or
	// MethodReceiving. Latency and the window benchmark always use the
	// receiving tester.
	Method string `json:"method"`
	// Max is the max-rate run: the sender as fast as the port takes frames.
	Max RateRun `json:"max"`
	// MaxRate is the max-rate run's figure: achieved and delivered, and
	// whether the tester set it.
	MaxRate RateFigure `json:"max_rate"`
	// ZeroLoss is the RFC 2544 throughput: the highest offered rate of a
	// trial without loss, frames/s (what the sender reached when it fell
	// behind the pacer; then SenderBound is set); 0 when none passed.
	ZeroLoss float64 `json:"zero_loss"`
	// ZeroLossTrialRate is the paced rate of the search's best passing
	// trial; 0 when none passed.
	ZeroLossTrialRate float64 `json:"zero_loss_trial_rate,omitempty"`
	// ZeroLossRate is that trial's figure: offered, achieved, delivered,
	// and whether the tester set it.
	ZeroLossRate RateFigure `json:"zero_loss_rate"`
	// ZeroLossAboveMax says ZeroLoss is above the max-rate run's
	// delivered rate: paced, the device delivered more than when
	// overloaded (see ZeroLossNote).
	ZeroLossAboveMax bool `json:"zero_loss_above_max,omitempty"`
	// SenderBound says the sender reached less than 99% of the passing
	// trial's rate: ZeroLoss is a lower bound. (Version 2's field;
	// ZeroLossRate.TesterBound says it and more.)
	SenderBound bool `json:"sender_bound,omitempty"`
	// CPU is the CPU-cost run at RateConfig.CPURate; nil when it did not
	// run.
	CPU *CPURun `json:"cpu,omitempty"`
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

// cpuFigure is the figure of a sample's CPU-cost run.
func cpuFigure(s RateSample) (cellRun, bool) {
	if s.CPU == nil || s.CPU.Err != "" {
		return cellRun{}, false
	}
	return cellRun{RateFigure: s.CPU.Figure, lossy: s.CPU.lossy(), saturated: s.CPU.saturated()}, true
}

// RateMetrics are the figures summarised per forwarding-rate cell; the
// first four are the printed table's column pairs (cpu_gross in the
// baseline's table instead of cpu_net), their titles the columns' (first
// header line).
var RateMetrics = []Metric[RateSample]{
	{Key: "cpu_net", Title: "ns/frame", Value: func(s RateSample) (float64, bool) {
		if s.CPU == nil || s.CPU.Net == nil {
			return 0, false
		}
		return *s.CPU.Net, true
	}},
	{Key: "max_rate", Title: "max fps", Value: func(s RateSample) (float64, bool) { return s.Max.PacketsPerSecond, true }},
	{Key: "zero_loss", Title: "0-loss fps", Value: func(s RateSample) (float64, bool) { return s.ZeroLoss, true }},
	{Key: "loss", Title: "loss %", Value: func(s RateSample) (float64, bool) { return s.Max.LossPercent, true }},
	{Key: "cpu_gross", Title: "ns/frame", Value: func(s RateSample) (float64, bool) {
		if s.CPU == nil || s.CPU.Err != "" {
			return 0, false
		}
		return s.CPU.Cost.NsPerFrame, true
	}},
	{Key: "offered", Title: "sent fps at max", Value: func(s RateSample) (float64, bool) { return s.Max.SentPerSecond, true }},
	{Key: "system", Title: "CPU system % at max", Value: func(s RateSample) (float64, bool) { return s.Max.CPU.System, true }},
	{Key: "interrupts", Title: "CPU interrupts % at max", Value: func(s RateSample) (float64, bool) { return s.Max.CPU.Interrupts, true }},
	{Key: "engine", Title: "engine CPU % at max", Value: func(s RateSample) (float64, bool) { return optional(s.Max.EngineCPU) }},
	{Key: "latency_avg_us", Title: "latency avg µs at 0-loss", Value: latencyUs(func(l *gen.Latency) time.Duration { return l.Avg })},
	{Key: "latency_max_us", Title: "latency max µs at 0-loss", Value: latencyUs(func(l *gen.Latency) time.Duration { return l.Max })},
}

// rateFigures extract, per rate metric, a run's figure from a sample (ok
// false: not measured).
var rateFigures = map[string]func(s RateSample) (r cellRun, ok bool){
	"cpu_net":   cpuFigure,
	"max_rate":  func(s RateSample) (cellRun, bool) { return cellRun{RateFigure: s.MaxRate}, true },
	"zero_loss": func(s RateSample) (cellRun, bool) { return cellRun{RateFigure: s.ZeroLossRate}, s.ZeroLoss > 0 },
	"cpu_gross": cpuFigure,
}

// notBaseline are the metrics the baseline setup does not have: it runs
// no search, and its CPU is the baseline itself.
var notBaseline = []string{"cpu_net", "zero_loss"}

// latencyUs returns the Value of a latency metric: the delay pick takes
// from the sample's latency trial, in µs; not measured without one.
func latencyUs(pick func(*gen.Latency) time.Duration) func(RateSample) (float64, bool) {
	return func(s RateSample) (float64, bool) {
		if s.Latency == nil || s.Latency.Result.Latency == nil {
			return 0, false
		}
		return float64(pick(s.Latency.Result.Latency)) / 1e3, true
	}
}

// AnalyzeRates summarises forwarding-rate samples per setup, metric,
// frame size and role and compares patch with no patch. Metrics without
// any sample in a setup (latency outside FULL) are left out.
func AnalyzeRates(setups []RateSpec, sizes []int, samples []RateSample, alpha float64) []RoleCell {
	in := func(x RateSample, at RoleCell) (string, bool) {
		return x.Role, x.Setup == at.Setup && x.Size == at.Size
	}
	var out []RoleCell
	for _, s := range setups {
		var places []RoleCell
		for _, size := range sizes {
			places = append(places, RoleCell{Setup: s.Name, Size: size})
		}
		for _, m := range RateMetrics {
			cells := summarize(nil, []Metric[RateSample]{m}, places, samples, in, alpha)
			if s.Baseline && slices.Contains(notBaseline, m.Key) || !slices.ContainsFunc(cells, func(c RoleCell) bool { return !c.NA }) {
				continue
			}
			figure := rateFigures[m.Key]
			for i, c := range cells {
				var runs []cellRun
				for _, x := range samples {
					_, measured := m.Value(x)
					if role, at := in(x, c); measured && at && role == c.Role && figure != nil {
						if r, ok := figure(x); ok {
							runs = append(runs, r)
						}
					}
				}
				cells[i].Figure = summarizeFigures(runs)
			}
			out = append(out, cells...)
		}
	}
	return out
}

// describe is the rate testbed's method text for report.md.
func (c RateConfig) describe() []string {
	sizes := make([]string, len(c.Sizes))
	for i, s := range c.Sizes {
		sizes[i] = fmt.Sprintf("%d (%d on veth)", s, gen.FrameSize(s))
	}
	m := []string{
		fmt.Sprintf("Forwarding rate: package gen in the harness's process, tester ports opened with AF_PACKET in two tester namespaces (h1 sends, h2 counts); %d UDP flows; frame sizes %s, RFC 2544's sizes with the 4-byte FCS that veth does not carry.", c.Flows, strings.Join(sizes, ", ")),
		"Tester method (each table's \"method\" line): the rates, the search and the frame-loss-rate steps use the counting tester, as make bench does: a send-only generator (no receive ring) and, at the far end, the receiving interface's rx_packets (netlink), frames sent to a sink address no interface has, so nothing at the far end reads frames or takes CPU from the path. Latency and the window benchmark need the receiving tester, whose receiver reads every frame.",
		fmt.Sprintf("Per size and instance: a max-rate run of %v (the sender as fast as its port takes frames: \"max fps\" is frames delivered per second, \"loss %%\" its loss), then RFC 2544 throughput (\"0-loss fps\") by binary search (gen/rfc2544) of paced trials of %v (bursts of %d, as make bench) between 0 and the max run's sent rate, to within %.1f%% of it, at most %d trials; 0 = no trial passed. A zero-loss rate above the max rate is possible (paced, a device can deliver more than overloaded) and the table says so where it happens.", c.Trial, c.Trial, gen.TrialBurst, 100*c.Resolution, c.MaxTrials),
		fmt.Sprintf("Every rate records the rate offered (asked of the generator; a max-rate run offers all it can), achieved (sent by the generator) and delivered (counted at the far end), per run in results.json (rate_samples: max_rate, zero_loss_rate, cpu.figure) and per cell (rate_cells: figure). A figure is tester-bound (t) when the generator fell short of its offer: a paced run below %.0f%% of its rate, a max-rate run that lost nothing, a zero-loss rate at the search's upper bound.", 100*(1-gen.PaceTolerance)),
		"Forwarding-rate CPU: whole-machine /proc/stat and the daemon's /proc/PID/stat deltas around every run (max-rate run, each trial), in results.json; the report's every-cell table gives those at max rate.",
	}
	if c.CPUTrial > 0 {
		m = append(m, fmt.Sprintf("CPU per forwarded frame (\"ns/frame\", the table's first pair): per size and instance a run of %v paced at %.0f frames/s, the same for every setup and size, with the counting tester; the whole machine's busy time (/proc/stat) less the tester's own user time (its pacer spins), per frame delivered, less the mean of the direct setup's (veth with no device under test: the tester's own cost at both ends) at the same size in this run. This is the figure that measures the engine on a small machine, where the tester and the engine share the cores and the rates are often the tester's. It counts the whole machine: other work running meanwhile counts too, and a run whose machine had less than %.0f%% idle time is flagged s.", c.CPUTrial, c.CPURate, 100*SaturatedIdle))
	}
	if c.Latency {
		m = append(m, fmt.Sprintf("Latency: one more trial of %v at the zero-loss rate; one-way delay from the sender's to the receiver's clock (one process), min/avg/max.", c.Trial))
	}
	if c.LossRate {
		m = append(m, fmt.Sprintf("Frame loss rate (RFC 2544 section 26.3): per size and instance, paced trials of %v at 100%%, 90%%, 80%% ... of the max-rate run's sent rate (steps of %d%%, RFC 2544's coarsest) until two successive trials lose no frame; loads below those two are lossless by RFC 2544's rule and not run.", c.Trial, LossRateStep))
	}
	if c.WindowDuration > 0 {
		m = append(m, fmt.Sprintf("Window benchmark (BalanceNG's benchmark, swctl bench's default mode): per instance, one flow of %d-byte frames (%d with FCS) from the tester's sending port to its counting port, at most %d frames in flight, for %v: packets sent, received, lost, packets/s, bytes/s (received, frames without FCS).", c.WindowSize, c.WindowSize+4, c.Window, c.WindowDuration))
	}
	return m
}
