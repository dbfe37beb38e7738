package main

import "testing"

// FuzzParseToolOutput feeds arbitrary text to every parser of what the
// testbed's tools print (ping, ethtool -k; iperf3's is internal/iperf3's FuzzParse): none may panic,
// whatever a tool prints. /proc is internal/cpustat's (FuzzParse there).
func FuzzParseToolOutput(f *testing.F) {
	for _, s := range []string{
		"10 packets transmitted, 10 received, 0% packet loss, time 9013ms\nrtt min/avg/max/mdev = 0.031/0.045/0.061/0.009 ms\n",
		`{"end":{"sum_sent":{"bits_per_second":9.4e9,"retransmits":3},"sum_received":{"bits_per_second":9.3e9}}}`,
		"Features for eth0:\ntx-checksumming: on\ngeneric-segmentation-offload: off [fixed]\n",
		"1234 (swctl daemon) S 1 1234 1234 0 -1 4194560 1 0 0 0 17 5 0 0 20 0 9 0 100 0 0\n",
		"cpu  100 0 50 1000 0 0 0 0 0 0\ncpu0 50 0 25 500 0 0 0 0 0 0\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		parsePing(s)
		parseOffloads(s)
	})
}
