package regress

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/swctl/swctl/internal/bgproc"
)

// pingStats is what ping -q printed.
type pingStats struct {
	// Sent and Received count the echo requests and replies.
	Sent int `json:"sent"`
	// Received counts the replies.
	Received int `json:"received"`
	// Min, Avg and Max are round-trip times in ms.
	Min float64 `json:"min_ms"`
	// Avg is the mean round-trip time in ms.
	Avg float64 `json:"avg_ms"`
	// Max is the longest round-trip time in ms.
	Max float64 `json:"max_ms"`
}

var (
	pingCounts = regexp.MustCompile(`(\d+) packets transmitted, (\d+) (?:packets )?received`)
	pingRTT    = regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/[0-9.]+ ms`)
)

// parsePing reads the summary of iputils ping:
//
//	20 packets transmitted, 20 received, 0% packet loss, time 3803ms
//	rtt min/avg/max/mdev = 0.041/0.061/0.092/0.011 ms
func parsePing(out string) (pingStats, error) {
	var p pingStats
	m := pingCounts.FindStringSubmatch(out)
	if m == nil {
		return p, fmt.Errorf("ping: no \"packets transmitted\" line in %q", bgproc.Clip(out))
	}
	p.Sent, _ = strconv.Atoi(m[1])
	p.Received, _ = strconv.Atoi(m[2])
	if p.Received == 0 {
		return p, fmt.Errorf("ping: none of %d echo requests answered", p.Sent)
	}
	r := pingRTT.FindStringSubmatch(out)
	if r == nil {
		return p, fmt.Errorf("ping: no rtt line in %q", bgproc.Clip(out))
	}
	p.Min, _ = strconv.ParseFloat(r[1], 64)
	p.Avg, _ = strconv.ParseFloat(r[2], 64)
	p.Max, _ = strconv.ParseFloat(r[3], 64)
	return p, nil
}

// offloadFeatures maps the ethtool -k names of the offloads the bench
// turns off and back on to their ethtool -K keywords.
var offloadFeatures = []struct{ long, short string }{
	{"tx-checksumming", "tx"},
	{"scatter-gather", "sg"},
	{"tcp-segmentation-offload", "tso"},
	{"generic-segmentation-offload", "gso"},
}

// parseOffloads reads ethtool -k output and returns the ethtool -K
// arguments that set those offloads back as they are ("tx on sg on ...").
// Features ethtool marks [fixed] are left out.
func parseOffloads(out string) ([]string, error) {
	state := map[string]string{}
	for line := range strings.Lines(out) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			state[k] = strings.TrimSpace(v)
		}
	}
	var args []string
	for _, f := range offloadFeatures {
		v, ok := state[f.long]
		if !ok {
			return nil, fmt.Errorf("ethtool -k: no %s line", f.long)
		}
		if strings.Contains(v, "[fixed]") {
			continue
		}
		onoff, _, _ := strings.Cut(v, " ")
		if onoff != "on" && onoff != "off" {
			return nil, fmt.Errorf("ethtool -k: %s: %q, want on or off", f.long, v)
		}
		args = append(args, f.short, onoff)
	}
	return args, nil
}
