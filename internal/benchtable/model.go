package benchtable

import (
	"fmt"
	"math"
)

// Row IDs, in table order.
const (
	// RowDirect is h1:eth0 cabled straight to h2:eth0: no device under
	// test, the baseline of the CPU cost.
	RowDirect = "direct"
	// RowKernel is a Linux kernel bridge in the dut namespace.
	RowKernel = "kernel"
	// RowSwctl1 is a swctl bridge, daemon --workers 1.
	RowSwctl1 = "swctl-w1"
	// RowSwctl2 is a swctl bridge, daemon --workers 2.
	RowSwctl2 = "swctl-w2"
	// RowSwctlPoll is a swctl bridge, daemon --workers 1 --busy-poll.
	RowSwctlPoll = "swctl-poll"
	// RowTrunk is a swctl bridge between p1 and a roundrobin swctl trunk
	// over two links, whose peers are a Linux bridge in h2.
	RowTrunk = "swctl-trunk"
	// RowOVS is Open vSwitch's userspace datapath (datapath_type=netdev).
	RowOVS = "ovs"
	// RowOVSTSO is the same with other_config:userspace-tso-enable=true.
	RowOVSTSO = "ovs-tso"
)

// Row is one path through the device under test.
type Row struct {
	// ID is the row's short name, one of the Row constants.
	ID string `json:"id"`
	// Label is the row's name in the table.
	Label string `json:"label"`
	// Skip, when not empty, says why the row was not measured (such as
	// "not installed"); the table prints it instead of figures.
	Skip string `json:"skip,omitempty"`
}

// Rows returns every row in table order, none skipped.
func Rows() []Row {
	return []Row{
		{ID: RowDirect, Label: "direct veth (no dut)"},
		{ID: RowKernel, Label: "Linux kernel bridge"},
		{ID: RowSwctl1, Label: "swctl bridge, 1 worker"},
		{ID: RowSwctl2, Label: "swctl bridge, 2 workers"},
		{ID: RowSwctlPoll, Label: "swctl bridge, busy poll"},
		{ID: RowTrunk, Label: "swctl trunk roundrobin x2"},
		{ID: RowOVS, Label: "OVS userspace"},
		{ID: RowOVSTSO, Label: "OVS userspace + TSO"},
	}
}

// Metric IDs. The hidden ones feed other metrics' notes or the CPU
// arithmetic and have no line of their own.
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
	// CPUNet is the CPU ns per forwarded frame at the fixed paced load,
	// minus the direct-veth row's in the same run; NetCPU derives it from
	// CPUGross.
	CPUNet = "cpu_net"
	// CPUGross is the CPU ns per frame of the row itself (hidden).
	CPUGross = "cpu_gross"
	// CPUUser, CPUSys and CPUSoftirq are the whole machine's user,
	// system and softirq percentages during that load (hidden; in the
	// notes of CPUNet).
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

// Metric is one measured quantity.
type Metric struct {
	// ID is one of the metric constants.
	ID string
	// Label is the metric's name in the table, with its unit.
	Label string
	// Format formats a value of the metric.
	Format func(float64) string
	// Hidden metrics have no line of their own.
	Hidden bool
	// Notes are other metrics shown, as their medians, in this metric's
	// notes column.
	Notes []Note
}

// Note is a companion figure in a metric's notes column.
type Note struct {
	// Metric is the metric whose median is shown.
	Metric string
	// Format is a fmt format with one %s verb for the formatted median.
	Format string
	// Fmt formats the value.
	Fmt func(float64) string
}

// Metrics returns the metrics in table order. cpuLoad is the paced load
// of the CPU metric in frames/s and pings the number of pings, for the
// labels.
func Metrics(cpuLoad float64, pings int) []Metric {
	pct := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	l64 := []Note{{Metric: Max64Loss, Format: "loss %s%%", Fmt: pct}}
	l1518 := []Note{{Metric: Max1518Loss, Format: "loss %s%%", Fmt: pct}}
	return []Metric{
		{ID: Max64, Label: "64 B frames/s, max load", Format: FormatRate, Notes: l64},
		{ID: Max1518, Label: "1518 B frames/s, max load", Format: FormatRate, Notes: l1518},
		{ID: ZeroLoss64, Label: "64 B zero-loss rate, frames/s", Format: FormatRate},
		{ID: CPUNet, Label: fmt.Sprintf("CPU ns/frame at %s/s, net", FormatRate(cpuLoad)), Format: FormatFixed(0), Notes: []Note{
			{Metric: CPUGross, Format: "gross %s ns", Fmt: FormatFixed(0)},
			{Metric: CPUUser, Format: "user %s%%", Fmt: pct},
			{Metric: CPUSys, Format: "sys %s%%", Fmt: pct},
			{Metric: CPUSoftirq, Format: "softirq %s%%", Fmt: pct},
		}},
		{ID: TCPOff, Label: "TCP Gb/s, host offloads off", Format: FormatFixed(2)},
		{ID: TCPOn, Label: "TCP Gb/s, default offloads", Format: FormatFixed(2)},
		{ID: RTT, Label: fmt.Sprintf("ping RTT avg ms (%d, 200 ms)", pings), Format: FormatFixed(3)},
		{ID: Max64Loss, Hidden: true, Format: pct},
		{ID: Max1518Loss, Hidden: true, Format: pct},
		{ID: CPUGross, Hidden: true, Format: FormatFixed(0)},
		{ID: CPUUser, Hidden: true, Format: pct},
		{ID: CPUSys, Hidden: true, Format: pct},
		{ID: CPUSoftirq, Hidden: true, Format: pct},
	}
}

// Sample is one value of one metric on one row in one run.
type Sample struct {
	// Row is the row ID.
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

// FormatFixed returns a formatter with prec decimals.
func FormatFixed(prec int) func(float64) string {
	return func(v float64) string { return fmt.Sprintf("%.*f", prec, v) }
}
