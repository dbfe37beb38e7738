package iperf3

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		out     string
		want    Result
		wantUDP *UDP
		wantErr string // substring; "" = no error
	}{
		{"TCP", `{"start":{"test_start":{"protocol":"TCP"}},"end":{"sum_sent":{"bits_per_second":9.6e9,"retransmits":3},"sum_received":{"bits_per_second":9.5e9}}}`,
			Result{ReceivedBps: 9.5e9, SentBps: 9.6e9, Retransmits: 3}, nil, ""},
		{"UDP, iperf3 3.12: sum_sent and sum_received",
			`{"start":{"test_start":{"protocol":"UDP"}},"end":{"sum":{"bits_per_second":2e8,"packets":17842,"lost_packets":0},"sum_sent":{"bits_per_second":2.5e8,"packets":20000,"lost_packets":0},"sum_received":{"bits_per_second":1.9e8,"packets":20000,"lost_packets":500}}}`,
			Result{ReceivedBps: 1.9e8, SentBps: 2.5e8}, &UDP{Datagrams: 20000, Lost: 500}, ""},
		{"UDP, older iperf3: end.sum only", `{"start":{"test_start":{"protocol":"UDP"}},"end":{"sum":{"bits_per_second":1e8,"packets":1000,"lost_packets":10}}}`,
			Result{ReceivedBps: 1e8, SentBps: 1e8}, &UDP{Datagrams: 1000, Lost: 10}, ""},
		{"more lost than sent", `{"end":{"sum":{"packets":10,"lost_packets":11}}}`, Result{}, nil, "11 of 10 datagrams lost"},
		{"iperf3's error", `{"start":{},"intervals":[],"end":{},"error":"unable to connect to server: Connection timed out"}`, Result{}, nil, "iperf3: unable to connect to server"},
		{"no end summary", `{"start":{},"end":{}}`, Result{}, nil, "no end.sum_received"},
		{"a TCP end.sum only", `{"end":{"sum":{"bits_per_second":1e9}}}`, Result{}, nil, "no end.sum_received"},
		{"not JSON", "iperf3: error - unable to connect", Result{}, nil, "iperf3 -J"},
	}
	for _, c := range cases {
		got, err := Parse([]byte(c.out))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: error %v", c.name, err)
			continue
		}
		u := got.UDP
		got.UDP = nil
		if got != c.want || (u == nil) != (c.wantUDP == nil) || u != nil && *u != *c.wantUDP {
			t.Errorf("%s: %+v (UDP %+v), want %+v (UDP %+v)", c.name, got, u, c.want, c.wantUDP)
		}
	}
	if l := (UDP{Datagrams: 200, Lost: 5}).LossPercent(); l != 2.5 {
		t.Errorf("5 of 200 lost: %v%%, want 2.5%%", l)
	}
	if l := (UDP{}).LossPercent(); l != 0 {
		t.Errorf("nothing sent: %v%% lost, want 0", l)
	}
}

// FuzzParse: no output of iperf3 makes Parse panic, and a result it
// accepts has a count of datagrams lost within those sent.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"end":{"sum_sent":{"bits_per_second":9.4e9,"retransmits":3},"sum_received":{"bits_per_second":9.3e9}}}`,
		`{"start":{"test_start":{"protocol":"UDP"}},"end":{"sum":{"bits_per_second":1e8,"packets":1000,"lost_packets":10}}}`,
		`{"error":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err == nil && r.UDP != nil && (r.UDP.Lost < 0 || r.UDP.Lost > r.UDP.Datagrams) {
			t.Errorf("accepted %+v", *r.UDP)
		}
	})
}
