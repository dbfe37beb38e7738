// Package iperf3 reads what iperf3 -J prints at the end of a test: the
// one parser of iperf3's results for the harnesses, make bench
// (cmd/swctl-bench) and make regress (package regress).
package iperf3

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/swctl/swctl/internal/bgproc"
)

// Result is the end of one iperf3 test.
type Result struct {
	// ReceivedBps and SentBps are the receiver's and the sender's
	// throughput, bits per second.
	ReceivedBps, SentBps float64
	// Retransmits is the TCP sender's retransmit count (0 for UDP).
	Retransmits int
	// UDP is a UDP test's datagram counts; nil for TCP.
	UDP *UDP
}

// UDP is what a UDP test's receiver counted.
type UDP struct {
	// Datagrams is the number the client sent.
	Datagrams int `json:"datagrams"`
	// Lost is the number the server did not receive.
	Lost int `json:"lost"`
}

// LossPercent is the share of datagrams lost.
func (u UDP) LossPercent() float64 {
	if u.Datagrams == 0 {
		return 0
	}
	return 100 * float64(u.Lost) / float64(u.Datagrams)
}

// sum is one of iperf3's end-of-test sums.
type sum struct {
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   int     `json:"retransmits"`
	Packets       *int    `json:"packets"`
	LostPackets   int     `json:"lost_packets"`
}

// Parse reads iperf3 -J output: the receiver's and the sender's rates
// from end.sum_received and end.sum_sent (a UDP test of iperf3 before
// 3.10 has only end.sum, the receiver's counts with the sender's rate),
// and a UDP test's datagram counts; iperf3's own error is returned as
// one.
func Parse(out []byte) (Result, error) {
	var j struct {
		Error string `json:"error"`
		Start struct {
			TestStart struct {
				Protocol string `json:"protocol"`
			} `json:"test_start"`
		} `json:"start"`
		End struct {
			Sum         *sum `json:"sum"`
			SumSent     *sum `json:"sum_sent"`
			SumReceived *sum `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &j); err != nil {
		return Result{}, fmt.Errorf("iperf3 -J: %v in %q", err, bgproc.Clip(string(out)))
	}
	if j.Error != "" {
		return Result{}, fmt.Errorf("iperf3: %s", j.Error)
	}
	// Without end.sum_sent, the sender's rate and retransmits are 0.
	sent, recv := cmp.Or(j.End.SumSent, &sum{}), j.End.SumReceived
	if recv == nil && j.End.Sum != nil && j.End.Sum.Packets != nil {
		sent, recv = j.End.Sum, j.End.Sum // UDP before iperf3 3.10
	}
	if recv == nil {
		return Result{}, fmt.Errorf("iperf3 -J: no end.sum_received")
	}
	r := Result{ReceivedBps: recv.BitsPerSecond, SentBps: sent.BitsPerSecond, Retransmits: sent.Retransmits}
	if j.Start.TestStart.Protocol == "UDP" || recv.Packets != nil {
		u := UDP{Datagrams: *cmp.Or(recv.Packets, new(0)), Lost: recv.LostPackets} // no packets: 0
		if u.Datagrams < 0 || u.Lost < 0 || u.Lost > u.Datagrams {
			return Result{}, fmt.Errorf("iperf3 -J: %d of %d datagrams lost: not a count", u.Lost, u.Datagrams)
		}
		r.UDP = &u
	}
	return r, nil
}
