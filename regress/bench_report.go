package regress

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

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
		return []string{Max64, Max64Loss, ZeroLoss64, CPUGross,
			CPUNet, CPUUser, CPUSys, CPUSoftirq}
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
				add(m, 0, "", "start: "+r.Error)
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
			metric, note := TCPOn, ""
			if t.Offloads == "off" {
				metric = TCPOff
			}
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
