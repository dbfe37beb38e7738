package regress

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// addStrings adds each seed to f's corpus as bytes.
func addStrings(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

// FuzzParseHostsConfig feeds arbitrary files to the regress.conf parser
// (a file the user writes). It must never panic; an error names the file;
// a configuration it accepts has both roles with a transport, a host and
// interfaces, a known OS, and only known tests, each once.
func FuzzParseHostsConfig(f *testing.F) {
	example, err := os.ReadFile("testdata/example.conf")
	if err != nil {
		f.Fatal(err)
	}
	addStrings(f,
		string(example),
		"[dut]\ntransport=netns\nhost=a\ninterfaces=e1\naddr=10.0.0.1/24\n[peer]\ntransport=netns\nhost=b\ninterfaces=e1\naddr=10.0.0.2/24\n",
		"[dut]\ntransport=ssh\nhost=d\ninterfaces=e1 e2\n[peer]\ntransport=ssh\nhost=p\ninterfaces=f1 f2\n[tests]\nrun=rate\n",
		"[dut\n",
		"key = value\n",
		"[tests]\nrun = plain plain\n",
		"",
	)
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := ParseHostsConfig("fuzz.conf", strings.NewReader(string(text)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.conf") {
				t.Fatalf("error %q: expected it to name the file", err)
			}
			return
		}
		for _, h := range []HostConfig{c.DUT, c.Peer} {
			if h.Transport == "" || h.Host == "" || len(h.Interfaces) == 0 || !slices.Contains([]string{"linux", "openbsd", "freebsd"}, h.OS) {
				t.Fatalf("accepted %+v: expected a transport, a host, interfaces and a known OS", h)
			}
		}
		for i, tt := range c.Tests {
			if !slices.Contains(HostTests, tt) || slices.Contains(c.Tests[:i], tt) {
				t.Fatalf("accepted tests %v: expected known tests, each once", c.Tests)
			}
		}
	})
}

// FuzzParseToolOutput feeds arbitrary text to every parser of what a test
// host's tools and /proc files print (CPU times, MACs, swctl bench JSON,
// message sizes, the comparison suite's ping and ethtool -k, wrk and nginx
// stub_status): none may panic, whatever a host prints. iperf3's is
// internal/iperf3's FuzzParse, /proc's internal/cpustat's.
func FuzzParseToolOutput(f *testing.F) {
	for _, name := range []string{"kern_cp_time_openbsd.txt", "kern_cp_time_freebsd.txt", "swctl_bench_rate.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	addStrings(f,
		`{"end":{"sum_sent":{"bits_per_second":9.4e9,"retransmits":3},"sum_received":{"bits_per_second":9.3e9}}}`,
		"    link/ether 02:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff\n",
		"\tlladdr 02:00:00:00:00:01\n",
		"1:02:03.45\n",
		"1,64,65536",
		"10 packets transmitted, 10 received, 0% packet loss, time 9013ms\nrtt min/avg/max/mdev = 0.031/0.045/0.061/0.009 ms\n",
		"Features for eth0:\ntx-checksumming: on\ngeneric-segmentation-offload: off [fixed]\n",
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		parsePing(s)
		parseOffloads(s)
		ParsePsCputime(s)
		ParseMsgSizes(s)
		for _, goos := range []string{"linux", "openbsd", "freebsd"} {
			ParseMAC(goos, s)
			ParseCPTime(goos, s)
		}
		ParseWrk(b)
		ParseStubStatus(b)
		for _, mode := range []string{"max", "rate", "search"} {
			parseBenchJSON(b, mode, 60)
		}
	})
}
