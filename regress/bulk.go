package regress

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/swctl/swctl/internal/iperf3"
)

// The bulk-transfer suite measures what one host pair and two host pairs
// at once get across a swctl bridge (the BSD/386 router report's
// two-pairs test), and UDP bulk at a fixed offered rate (the NFS-over-UDP
// case), next to TCP. Its rows, in table order:
const (
	// BulkOnePair is pair 1 (peer 1 to peer 2) alone.
	BulkOnePair = "TCP one pair"
	// BulkPair1 is pair 1 while pair 2 transfers too.
	BulkPair1 = "TCP two pairs: pair 1"
	// BulkPair2 is pair 2 (peer 3 to peer 4) while pair 1 transfers too.
	BulkPair2 = "TCP two pairs: pair 2"
	// BulkSum is the two pairs' sum.
	BulkSum = "TCP two pairs: sum"
	// BulkRatio is the sum over one pair alone, same instance.
	BulkRatio = "TCP two pairs / one"
	// BulkUDP is pair 1's UDP stream at the offered rate.
	BulkUDP = "UDP"
)

// BulkSetup is the setup the bulk suite runs over: a swctl bridge with
// two host pairs on four ports.
const BulkSetup = "bridge0"

// BulkConfig configures the bulk-transfer suite.
type BulkConfig struct {
	// Seconds is the length of one iperf3 test.
	Seconds int `json:"seconds"`
	// UDPMbps is the UDP stream's offered rate, iperf3's -b in Mb/s.
	UDPMbps int `json:"udp_mbps"`
	// UDPLen is the UDP datagram payload, iperf3's -l: 1472 bytes is the
	// largest an MTU of 1500 carries unfragmented.
	UDPLen int `json:"udp_len"`
}

// DefaultBulkConfig returns the bulk suite's settings of a mode: 1 s per
// test (quick), 5 s (default) or 10 s (full); UDP at 300 Mb/s of 1472-byte
// datagrams, a rate a swctl bridge carries on a small loaded machine, so
// that loss shows a change rather than the offered rate's excess.
func DefaultBulkConfig(quick, full bool) BulkConfig {
	c := BulkConfig{Seconds: 5, UDPMbps: 300, UDPLen: 1472}
	switch {
	case full:
		c.Seconds = 10
	case quick:
		c.Seconds = 1
	}
	return c
}

// check says what is wrong with c.
func (c BulkConfig) check() error {
	switch {
	case c.Seconds < 1:
		return fmt.Errorf("regress: bulk: seconds %d: want at least 1", c.Seconds)
	case c.UDPMbps < 1:
		return fmt.Errorf("regress: bulk: UDP rate %d Mb/s: want at least 1", c.UDPMbps)
	case c.UDPLen < 8 || c.UDPLen > 65507:
		return fmt.Errorf("regress: bulk: UDP datagram %d bytes: out of range 8-65507", c.UDPLen)
	}
	return nil
}

// weight is the planned seconds of one instance (three tests and the
// daemon's start), for the progress line and the expected total.
func (c BulkConfig) weight() float64 {
	return 3*(float64(c.Seconds)+0.5) + 1.5
}

// udpRow is the UDP row's label: the offered rate.
func (c BulkConfig) udpRow() string {
	return fmt.Sprintf("%s %d Mb/s offered", BulkUDP, c.UDPMbps)
}

// describe is the suite's method text for report.md.
func (c BulkConfig) describe() []string {
	return []string{fmt.Sprintf("Bulk transfer (the BSD/386 router report's two-pairs test and the NFS-over-UDP case): a swctl bridge with four ports p1-p4 to peers 1-4; per instance, iperf3 TCP for %d s from peer 1 to peer 2 alone (one pair), then peer 1 to peer 2 and peer 3 to peer 4 at the same moment (two pairs; both clients on CPU %s, both servers on CPU %s; CPU is the whole machine's over both), then iperf3 -u -b %dM -l %d from peer 1 to peer 2 (UDP: received Mb/s and datagram loss). Two pairs / one = the sum over one pair alone in the same instance.",
		c.Seconds, clientCPU, peerCPU, c.UDPMbps, c.UDPLen)}
}

// estimate is the suite's share of a run of runs runs.
func (c BulkConfig) estimate(runs int) Estimate {
	return planTime("bulk", BulkPlan(runs), func(RoleRun) float64 { return c.weight() })
}

// BulkPlan orders the bulk instances (a bridge start each, all bulk
// tests): runs alternate A B, B A, ...
func BulkPlan(runs int) []RoleRun { return roleRunPlan("bulk "+BulkSetup, runs) }

// BulkSample is one iperf3 client's test: pair 1 alone, one of the two
// pairs at once, or the UDP stream.
type BulkSample struct {
	// Test is BulkOnePair, BulkPair1, BulkPair2 or BulkUDP.
	Test string `json:"test"`
	// Sample is the test (Setup bridge0, Row Forward; for the two pairs
	// the CPU is the whole machine's over both clients).
	Sample
	// UDP is the UDP stream's datagram counts; nil for TCP.
	UDP *UDPResult `json:"udp,omitempty"`
}

// UDPResult is what iperf3 -u reports at the end of a test.
type UDPResult struct {
	// SentMbps is the client's sent rate, megabits per second.
	SentMbps float64 `json:"sent_mbps"`
	// UDP is the datagrams sent and lost.
	iperf3.UDP
}

// bulkMetrics are the figures summarised per bulk row: throughput and
// CPU everywhere, loss and the sent rate in the UDP row.
var bulkMetrics = []string{"throughput", "system", "engine", "loss", "sent"}

// bulkRowValues returns the figures of one instance's samples (one
// role, one run) per row and metric.
func bulkRowValues(c BulkConfig, smp []BulkSample) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, s := range smp {
		m := map[string]float64{"throughput": s.Mbps, "system": s.CPU.System}
		if s.EngineCPU != nil {
			m["engine"] = *s.EngineCPU
		}
		row := s.Test
		if s.Test == BulkUDP {
			row = c.udpRow()
			if s.UDP != nil {
				m["loss"], m["sent"] = s.UDP.LossPercent(), s.UDP.SentMbps
			}
		}
		out[row] = m
	}
	one, p1, p2 := out[BulkOnePair], out[BulkPair1], out[BulkPair2]
	if p1 != nil && p2 != nil {
		out[BulkSum] = map[string]float64{"throughput": p1["throughput"] + p2["throughput"], "system": p1["system"]}
	}
	if sum := out[BulkSum]; sum != nil && one["throughput"] > 0 && one["system"] > 0 {
		out[BulkRatio] = map[string]float64{"throughput": sum["throughput"] / one["throughput"],
			"system": sum["system"] / one["system"]}
	}
	return out
}

// bulkRows are the rows of c's table, in order.
func bulkRows(c BulkConfig) []string {
	return []string{BulkOnePair, BulkPair1, BulkPair2, BulkSum, BulkRatio, c.udpRow()}
}

// AnalyzeBulk summarises bulk samples per row, metric and role and
// compares patch with no patch; a row's figure is one per instance (role
// and run), in run order, as the sum and ratio rows are made of an
// instance's samples.
func AnalyzeBulk(c BulkConfig, samples []BulkSample, alpha float64) []RoleCell {
	by := map[RoleRun][]BulkSample{}
	for _, s := range samples {
		k := RoleRun{Role: s.Role, Run: s.Run}
		by[k] = append(by[k], s)
	}
	order := slices.SortedFunc(maps.Keys(by), func(a, b RoleRun) int { return cmp.Compare(a.Run, b.Run) })
	var out []RoleCell
	for _, row := range bulkRows(c) {
		for _, m := range bulkMetrics {
			vals := roleValues(order, func(k RoleRun) (string, float64, bool) {
				v, ok := bulkRowValues(c, by[k])[row][m]
				return k.Role, v, ok
			})
			if len(vals) > 0 {
				out = append(out, roleCells(RoleCell{Setup: BulkSetup, Row: row, Metric: m}, vals, alpha)...)
			}
		}
	}
	return out
}

// BulkTable builds the bulk table: a row per test, Mb/s and CPU system %,
// patch beside no patch; the ratio row holds ratios, the UDP row the
// received rate.
func BulkTable(c BulkConfig, cells []RoleCell) Table {
	t := pairTable([]string{"Bulk transfer: one pair, two pairs at once, UDP (Mb/s, CPU system %)"}, "test", "Mb/s", "system %")
	for _, row := range bulkRows(c) {
		t.Rows = append(t.Rows, pairRow(row, []string{"%.2f", "%.2f"}, pairCells(cells, RoleCell{Setup: BulkSetup, Row: row}, "throughput", "system")...))
	}
	return t
}

// UDPLossTable builds the UDP stream's table: the rate the client sent
// and the datagram loss, patch beside no patch.
func UDPLossTable(c BulkConfig, cells []RoleCell) Table {
	t := pairTable([]string{fmt.Sprintf("UDP bulk: iperf3 -u -b %dM -l %d, datagram loss", c.UDPMbps, c.UDPLen)}, "")
	for _, r := range []struct{ label, metric string }{{"sent Mb/s", "sent"}, {"loss %", "loss"}} {
		t.Rows = append(t.Rows, pairRow(r.label, []string{"%.2f"}, pairCells(cells, RoleCell{Setup: BulkSetup, Row: c.udpRow()}, r.metric)...))
	}
	return t
}

// run runs the bulk suite on a four-port bridge0 testbed of its own
// (index 2: after the message sizes' bed) and appends its samples to res.
func (c BulkConfig) run(ctx context.Context, env suiteEnv, res *Results) error {
	res.Bulk = &c
	return runForward(ctx, BulkSetup, "bulk", 2, 2, BulkPlan(env.runs), c.weight(), env, func(b *bed, in RoleRun) error {
		smp, err := measureBulk(ctx, b, c)
		if err != nil {
			return err
		}
		for _, s := range smp {
			s.Setup, s.Promisc, s.Role, s.Run, s.Seq = BulkSetup, true, in.Role, in.Run, len(res.BulkSamples)+1
			res.BulkSamples = append(res.BulkSamples, s)
		}
		return nil
	})
}

// udpArgs are the iperf3 client options of c's UDP stream.
func (c BulkConfig) udpArgs() []string {
	return []string{"-u", "-b", strconv.Itoa(c.UDPMbps) + "M", "-l", strconv.Itoa(c.UDPLen)}
}
