package regress

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePing(t *testing.T) {
	for _, c := range []struct {
		name    string
		out     string
		want    pingStats
		wantErr string
	}{
		{"all answered", "PING 10.79.1.2 (10.79.1.2) 56(84) bytes of data.\n\n--- 10.79.1.2 ping statistics ---\n" +
			"20 packets transmitted, 20 received, 0% packet loss, time 3803ms\nrtt min/avg/max/mdev = 0.041/0.061/0.092/0.011 ms\n",
			pingStats{Sent: 20, Received: 20, Min: 0.041, Avg: 0.061, Max: 0.092}, ""},
		{"some lost", "10 packets transmitted, 8 received, 20% packet loss, time 1803ms\nrtt min/avg/max/mdev = 1.000/2.500/4.000/1.000 ms\n",
			pingStats{Sent: 10, Received: 8, Min: 1, Avg: 2.5, Max: 4}, ""},
		{"none answered", "10 packets transmitted, 0 received, 100% packet loss, time 1803ms\n", pingStats{Sent: 10}, "none of 10"},
		{"no summary", "ping: connect: Network is unreachable\n", pingStats{}, "no \"packets transmitted\""},
	} {
		got, err := parsePing(c.out)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestParseOffloads(t *testing.T) {
	veth := `Features for eth0:
rx-checksumming: on
tx-checksumming: on
	tx-checksum-ipv4: off [fixed]
	tx-checksum-ip-generic: on
scatter-gather: on
	tx-scatter-gather: on
tcp-segmentation-offload: on
	tx-tcp-segmentation: on
generic-segmentation-offload: on
generic-receive-offload: off
`
	got, err := parseOffloads(veth)
	if want := []string{"tx", "on", "sg", "on", "tso", "on", "gso", "on"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("veth defaults: %q, %v; want %q", got, err, want)
	}
	fixed := strings.Replace(strings.Replace(veth, "scatter-gather: on\n", "scatter-gather: off [fixed]\n", 1), "generic-segmentation-offload: on", "generic-segmentation-offload: off", 1)
	got, err = parseOffloads(fixed)
	if want := []string{"tx", "on", "tso", "on", "gso", "off"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("fixed sg, gso off: %q, %v; want %q (a fixed feature is left alone)", got, err, want)
	}
	if _, err := parseOffloads("Features for eth0:\nrx-checksumming: on\n"); err == nil || !strings.Contains(err.Error(), "tx-checksumming") {
		t.Errorf("missing lines: error %v, want one naming tx-checksumming", err)
	}
}

func TestParseBenchFlags(t *testing.T) {
	c, err := ParseBenchFlags([]string{"-quick", "-runs", "1", "-rows", "ovs,direct"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"direct", "ovs"}; !slices.Equal(c.Rows, want) {
		t.Errorf("rows %q, want %q (table order)", c.Rows, want)
	}
	if c.Trial >= c.MaxTrial || c.Pings != 10 {
		t.Errorf("-quick: search trial %v, max trial %v, %d pings; want shorter trials and 10 pings", c.Trial, c.MaxTrial, c.Pings)
	}
	for _, bad := range [][]string{{"-runs", "0"}, {"-rows", "bogus"}, {"-flows", "0"}, {"extra"}} {
		if _, err := ParseBenchFlags(bad); err == nil {
			t.Errorf("ParseBenchFlags(%q): no error", bad)
		}
	}
}
