package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/netnstest"
)

// benchIn runs swctl bench with args inside ns, in this process, and
// decodes its JSON report.
func benchIn(t *testing.T, ns *netnstest.NS, args ...string) (gen.BenchOutput, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var code int
	ns.Do(func() {
		code = run(context.Background(), append([]string{"swctl", "bench"}, args...), &stdout, &stderr)
	})
	var out gen.BenchOutput
	if code == exitOK {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("bench %v: %v\n%s", args, err, stdout.String())
		}
	}
	return out, stderr.String(), code
}

// vethPair makes a namespace with a veth cable a <-> b.
func vethPair(t *testing.T) *netnstest.NS {
	ns := netnstest.New(t, "bench")
	ns.Run("ip", "link", "add", "name", "a", "type", "veth", "peer", "name", "b")
	ns.Run("ip", "link", "set", "dev", "a", "address", "02:00:00:00:be:0a", "up")
	ns.Run("ip", "link", "set", "dev", "b", "address", "02:00:00:00:be:0b", "up")
	return ns
}

func TestIntegrationBenchOverVeth(t *testing.T) {
	netnstest.Require(t)
	ns := vethPair(t)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, out gen.BenchOutput)
	}{
		{"window 16 for 2 s: every frame arrives", []string{"a", "b", "--duration", "2s", "--window", "16"}, func(t *testing.T, out gen.BenchOutput) {
			if out.Mode != "window" || out.Window != 16 || out.Size != 1514 || out.RFC2544Size != 1518 {
				t.Errorf("mode %q window %d size %d (%d); want window 16, 1514 (1518)", out.Mode, out.Window, out.Size, out.RFC2544Size)
			}
			if out.Sent == 0 || out.Received != out.Sent || out.Lost != 0 {
				t.Errorf("sent %d, received %d, lost %d; want every frame", out.Sent, out.Received, out.Lost)
			}
			if out.Latency == nil || out.Latency.Min <= 0 || out.Latency.Max < out.Latency.Min {
				t.Errorf("latency %+v, want min > 0 and max >= min", out.Latency)
			}
		}},
		{"paced at 20k frames/s for 1 s: about 20k frames, none lost", []string{"a", "b", "--duration", "1s", "--rate", "20000", "--size", "60", "--flows", "16"}, func(t *testing.T, out gen.BenchOutput) {
			// The pacer's schedule is exact; on a busy machine it may
			// skip frames it could not send in time, never send more.
			if scheduled := out.Sent + out.TxDropped + out.Slipped; scheduled < 16000 || scheduled > 24000 {
				t.Errorf("%d frames scheduled (%d sent, %d refused, %d skipped), want 20000 ± 20%%", scheduled, out.Sent, out.TxDropped, out.Slipped)
			}
			// What it really sent depends on the CPU it got (a CI run
			// under load once sent 4,163 and skipped the rest): the
			// schedule is checked above, delivery here.
			if out.Sent == 0 || out.Received != out.Sent || out.Lost != 0 {
				t.Errorf("sent %d, received %d, lost %d; want frames sent, all received", out.Sent, out.Received, out.Lost)
			}
			if out.Slipped > 0 {
				t.Logf("the pacer skipped %d frames: the machine is busy", out.Slipped)
			}
			if out.Reordered != 0 || out.Duplicates != 0 {
				t.Errorf("%d reordered, %d duplicates; want none on one veth", out.Reordered, out.Duplicates)
			}
		}},
		{"search: trials recorded, a zero-loss rate found", []string{"a", "b", "--search", "--trial", "300ms", "--max-trials", "4", "--size", "60"}, func(t *testing.T, out gen.BenchOutput) {
			s := out.Search
			if s == nil || s.Max.Sent == 0 || len(s.Trials) == 0 || len(s.Trials) > 4 {
				t.Fatalf("search %+v, want a max-rate run and 1-4 trials", s)
			}
			if s.Trials[0].Rate != s.Max.SentPerSecond {
				t.Errorf("first trial at %.0f frames/s, want the max rate %.0f", s.Trials[0].Rate, s.Max.SentPerSecond)
			}
			// On a busy machine every trial may lose frames (at this
			// receiver): then the rate is 0. It is never above a trial
			// that passed.
			passed := 0.0
			for _, tr := range s.Trials {
				if tr.Sent > 0 && tr.Received == tr.Sent {
					passed = max(passed, tr.Rate)
				}
			}
			if s.TrialRate != passed || s.Rate > s.TrialRate || (passed > 0 && s.Rate <= 0) {
				t.Errorf("zero-loss rate %.0f (trial at %.0f), want the best passing trial's, %.0f", s.Rate, s.TrialRate, passed)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := benchIn(t, ns, append(tt.args, "-o", "json", "-q")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			tt.check(t, out)
		})
	}
}

func TestIntegrationBenchErrors(t *testing.T) {
	netnstest.Require(t)
	ns := vethPair(t)
	ns.Run("ip", "link", "set", "dev", "b", "mtu", "1000")
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no such interface", []string{"a", "nosuch0"}, "swctl: bench: afpacket nosuch0: no such network interface\n"},
		{"frame larger than the MTU", []string{"b", "a", "--size", "1100"}, "swctl: bench: sender on b: frame size 1100 exceeds the MTU 1000 (at most 1014 bytes without FCS)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := benchIn(t, ns, tt.args...)
			if code != exitError || stderr != tt.wantStderr {
				t.Errorf("exit %d, stderr %q; want exit %d, %q", code, stderr, exitError, tt.wantStderr)
			}
		})
	}
}
