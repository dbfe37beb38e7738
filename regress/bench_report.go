package regress

import (
	"time"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
	"github.com/swctl/swctl/internal/benchtable"
	"github.com/swctl/swctl/internal/cpustat"
)

// benchReport is make bench's part of results.json (bench): the
// configuration, the programs measured, every row's raw measurements per
// run, the samples the table was made from, and the table.
type benchReport struct {
	// Config is the configuration.
	Config reportConfig `json:"config"`
	// Programs are the versions of swctl and Open vSwitch.
	Programs map[string]string `json:"programs"`
	// Rows are the rows, with skip reasons.
	Rows []benchtable.Row `json:"rows"`
	// Runs are the raw measurements, one per row and run, in the order
	// measured.
	Runs []runRecord `json:"runs"`
	// Samples are the table's inputs (CPU net values included).
	Samples []benchtable.Sample `json:"samples"`
	// Table is the printed table.
	Table string `json:"table"`
}

// reportConfig is the configuration as recorded.
type reportConfig struct {
	// Runs is the number of runs.
	Runs int `json:"runs"`
	// Quick is set for the short form.
	Quick bool `json:"quick"`
	// Flows is the number of flows of the generated frames.
	Flows int `json:"flows"`
	// MaxTrialS is the length of a max-load run in seconds.
	MaxTrialS float64 `json:"max_trial_s"`
	// SearchTrialS is the length of a zero-loss trial in seconds.
	SearchTrialS float64 `json:"search_trial_s"`
	// SearchTrials bounds the trials of one search.
	SearchTrials int `json:"search_max_trials"`
	// Resolution is the search's resolution, a fraction of the max-load
	// rate.
	Resolution float64 `json:"search_resolution"`
	// CPURate is the paced load of the CPU measurement, frames/s.
	CPURate float64 `json:"cpu_rate"`
	// CPUTrialS is its length in seconds.
	CPUTrialS float64 `json:"cpu_trial_s"`
	// TCPSeconds is the length of one iperf3 test.
	TCPSeconds int `json:"tcp_seconds"`
	// Pings is the number of light-load pings.
	Pings int `json:"pings"`
	// TesterCPU is the harness's, iperf3's and ping's CPU ("" = any).
	TesterCPU string `json:"tester_cpu"`
	// ForwarderCPU is swctl's and ovs-vswitchd's CPU ("" = any).
	ForwarderCPU string `json:"forwarder_cpu"`
	// Swctl is the swctl binary measured.
	Swctl string `json:"swctl"`
}

// runRecord is one row measured in one run.
type runRecord struct {
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
	// Max64 and Max1518 are the max-load runs.
	Max64 *maxRecord `json:"max64,omitempty"`
	// Max1518 is the max-load run of 1514-byte frames.
	Max1518 *maxRecord `json:"max1518,omitempty"`
	// Search is the zero-loss search of 60-byte frames.
	Search *searchRecord `json:"search,omitempty"`
	// CPU is the paced load and its CPU readings.
	CPU *cpuRecord `json:"cpu,omitempty"`
	// Ping is the light-load ping.
	Ping *pingStats `json:"ping,omitempty"`
	// TCP are the iperf3 tests.
	TCP []tcpRecord `json:"tcp,omitempty"`
	// Errors are the metrics that failed, with the cause.
	Errors []string `json:"errors,omitempty"`
}

// maxRecord is one max-load run.
type maxRecord struct {
	// Result is the generator's result (its received count is what the
	// tester's receiver saw).
	Result gen.Result `json:"result"`
	// RxPackets is the rx_packets delta of h2's interface over the run:
	// the frames the path delivered, the table's figure.
	RxPackets uint64 `json:"rx_packets"`
}

// searchRecord is one RFC 2544 search.
type searchRecord struct {
	// Rate is the zero-loss rate reported: the search's, or what the
	// sender reached in that trial when it fell behind.
	Rate float64 `json:"rate"`
	// NoLossAtMax is set when the max-load run lost nothing: Rate is its
	// sending rate and no search ran.
	NoLossAtMax bool `json:"no_loss_at_max,omitempty"`
	// SenderBound is set when the sender reached less than 99% of the
	// trial's paced rate.
	SenderBound bool `json:"sender_bound,omitempty"`
	// Search is the search's own result.
	Search *rfc2544.Result `json:"search,omitempty"`
	// Trials are the generator's results of the trials (their received
	// counts are what the harness's receiver saw).
	Trials []gen.Result `json:"trials"`
	// RxPackets are the trials' rx_packets deltas at h2's interface: the
	// received counts the search used.
	RxPackets []uint64 `json:"rx_packets"`
}

// cpuRecord is the CPU cost measurement.
type cpuRecord struct {
	// Load is the generator's result of the paced run.
	Load gen.Result `json:"load"`
	// RxPackets is the rx_packets delta at h2's interface: the frames
	// delivered, the divisor of the CPU per frame.
	RxPackets uint64 `json:"rx_packets"`
	// Cost is the CPU between the readings around the load, per frame
	// delivered (RxPackets).
	cpustat.Cost
}

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
