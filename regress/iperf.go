package regress

import (
	"encoding/json"
	"fmt"
)

// iperfPort is the TCP port of the iperf3 servers (testbed and hosts).
const iperfPort = "5201"

// parseIperf reads iperf3 -J output: received bits/s and retransmits.
func parseIperf(out []byte) (mbps float64, retransmits int, err error) {
	var r struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			SumSent struct {
				Retransmits int `json:"retransmits"`
			} `json:"sum_sent"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, fmt.Errorf("iperf3 output: %w", err)
	}
	if r.Error != "" {
		return 0, 0, fmt.Errorf("iperf3: %s", r.Error)
	}
	return r.End.SumReceived.BitsPerSecond / 1e6, r.End.SumSent.Retransmits, nil
}
