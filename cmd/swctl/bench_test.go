package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/gen"
)

func TestBenchUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"one interface", []string{"bench", "a"}, "swctl: bench: missing arguments (usage: swctl bench IFA IFB)\n"},
		{"three interfaces", []string{"bench", "a", "b", "c"}, "swctl: bench: too many arguments (usage: swctl bench IFA IFB)\n"},
		{"same interface twice", []string{"bench", "a", "a"}, "swctl: bench: IFA and IFB are both a: want two interfaces\n"},
		{"runt frames", []string{"bench", "a", "b", "--size", "59"}, "swctl: --size: 59 out of range 60-9230 (bytes without FCS: RFC 2544's 64 is 60)\n"},
		{"no flows", []string{"bench", "a", "b", "--flows", "0"}, "swctl: --flows: 0 out of range 1-1048576\n"},
		{"negative rate", []string{"bench", "a", "b", "--rate", "-5"}, "swctl: --rate: -5: want frames/s >= 0\n"},
		{"negative window", []string{"bench", "a", "b", "--window", "-1"}, "swctl: --window: -1: want >= 0\n"},
		{"zero duration", []string{"bench", "a", "b", "--duration", "0s"}, "swctl: --duration: 0s: want > 0\n"},
		{"search with a rate", []string{"bench", "a", "b", "--search", "--rate", "1000"}, "swctl: --search: chooses the rates itself: drop --rate and --window\n"},
		{"search tolerating all loss", []string{"bench", "a", "b", "--search", "--loss", "100"}, "swctl: --loss: 100%: want 0 <= percent < 100\n"},
		{"bad output format", []string{"bench", "a", "b", "-o", "yaml"}, "swctl: -o: want json or text, got \"yaml\"\n"},
		{"usage error as JSON", []string{"bench", "a", "a", "-o", "json"}, "{\"error\":\"bench: IFA and IFB are both a: want two interfaces\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl"}, tt.args...), &stdout, &stderr)
			if code != exitUsage || stderr.String() != tt.wantStderr || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d, stderr %q", code, stderr.String(), stdout.String(), exitUsage, tt.wantStderr)
			}
		})
	}
}

func TestFormatBench(t *testing.T) {
	res := &gen.Result{
		Size: 1514, Flows: 1, Window: 16, Seconds: 2, Sent: 2000, Received: 1990, Lost: 10, LossPercent: 0.5,
		Duplicates: 1, Reordered: 2, SentPerSecond: 1000, PacketsPerSecond: 995, BytesPerSecond: 1506430, Mbps: 12.05144,
		RxRingDropped: 10, Latency: &gen.Latency{Samples: 1990, Min: 12345 * time.Nanosecond, Avg: 25 * time.Microsecond, Max: 1234567 * time.Nanosecond},
	}
	tests := []struct {
		name string
		out  gen.BenchOutput
		want string
	}{
		{"window run", gen.BenchOutput{TX: "a", RX: "b", Mode: "window", RFC2544Size: 1518, Result: res}, `bench a -> b: 1514-byte frames (1518 with FCS), 1 flow, window 16, 2.0 s
  sent        2000 packets
  received    1990 packets
  lost        10 (0.500%)
  duplicates  1
  reordered   2
  packets/s   995 received, 1000 sent
  bytes/s     1506430 (12.1 Mb/s)
  latency     min 12.3µs  avg 25µs  max 1.23ms
  notes       10 dropped by the receiving port's ring (receiver too slow)
`},
		{"search", gen.BenchOutput{TX: "a", RX: "b", Mode: "search", RFC2544Size: 64, Search: &gen.BenchSearch{
			Max:  gen.Result{Size: 60, Flows: 8, Sent: 1000, Received: 900, Lost: 100, LossPercent: 10, SentPerSecond: 1000, PacketsPerSecond: 900},
			Rate: 480, TrialRate: 500, SenderBound: true, Mbps: 0.23, Resolution: 10, Converged: true,
			Trials: []gen.Result{{Rate: 1000, Sent: 1000, Received: 950, Lost: 50, LossPercent: 5, SentPerSecond: 1000},
				{Rate: 500, Sent: 500, Received: 500, SentPerSecond: 480, Slipped: 20}},
		}}, `bench a -> b: RFC 2544 throughput, 60-byte frames (64 with FCS), 8 flows
TRIAL  RATE  SENT/S  SENT  RECEIVED  LOST  LOSS%   RESULT
max    max   1000    1000  900       100   10.000  upper bound
1      1000  1000    1000  950       50    5.000   loss
2      500   480     500   500       0     0.000   pass (pacer skipped 20)
zero-loss rate: 480 frames/s (0.2 Mb/s), resolution 10 frames/s
note: the trial was paced at 500 frames/s but the sender reached only 480 (CPU-bound): a lower bound
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := formatBench(&b, tt.out); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}
