package regress

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/stats"
)

// simBridge simulates a bridge under an RFC 2889 trial: an address table
// of capacity entries (beyond it new addresses are not learned, as
// swctl's), a receive path that takes learning frames up to learnRate
// frames/s and drops the excess before learning (as a full ring does),
// and optional faults.
type simBridge struct {
	// capacity is the most learning-port addresses the table holds.
	capacity int
	// learnRate is the highest learning-frame rate without loss; 0 means
	// no limit.
	learnRate float64
	// floodAll makes a table that overflows flood every test frame, not
	// just those of the addresses it could not learn (a misleading count).
	floodAll bool
	// floodOne makes an overflowing table report a single flooded frame
	// (an undercount).
	floodOne bool
	// loseTests makes the first loseTests trials lose a test frame
	// without flooding (inconclusive).
	loseTests int
	// loseAbove makes every trial of more addresses lose a test frame
	// without flooding; 0 = never.
	loseAbove int
	// senderMax caps the rate the tester achieves; 0 = no cap.
	senderMax float64
	// stallCall is the trial (counting from 1) whose sender offers only a
	// tenth of the rate (the machine took its CPU away); 0 = none.
	stallCall int
	// calls counts trials.
	calls int
}

func (b *simBridge) trial(n int, rate float64) (AddrTrial, error) {
	b.calls++
	offered := rate
	if b.senderMax > 0 {
		offered = math.Min(rate, b.senderMax)
	}
	if b.calls == b.stallCall {
		offered = rate / 10
	}
	t := AddrTrial{LearnSent: uint64(n), LearnPerSecond: offered, TestSent: uint64(n), Received: uint64(n), Barrier: true}
	got := n // learning frames that made it in
	if b.learnRate > 0 && offered > b.learnRate {
		got = int(float64(n) * b.learnRate / offered)
	}
	t.LearnForwarded = uint64(got)
	learned := min(got, b.capacity)
	switch {
	case learned == n:
	case b.floodAll:
		t.Flooded = uint64(n)
	case b.floodOne:
		t.Flooded = 1
	default:
		t.Flooded = uint64(n - learned)
	}
	if b.calls <= b.loseTests || (b.loseAbove > 0 && n > b.loseAbove) {
		if t.Flooded == 0 {
			t.Received--
		}
	}
	t.Table = learned + 1
	return t, nil
}

func TestSearchCapacity(t *testing.T) {
	tests := []struct {
		name      string
		bridge    simBridge
		hi        int
		want      int
		maxProbes int // probes (distinct N) at most
	}{
		{"the table swctl's maxaddr leaves (static entry takes one)", simBridge{capacity: 65535}, 65536, 65535, 2},
		{"a small table", simBridge{capacity: 1000}, 65536, 1000, 3},
		{"one address", simBridge{capacity: 1}, 65536, 1, 3},
		{"no room at all", simBridge{capacity: 0}, 64, 0, 7},
		{"the upper bound fits", simBridge{capacity: 100000}, 65536, 65536, 1},
		{"an overflow floods everything (no estimate)", simBridge{capacity: 12345, floodAll: true}, 65536, 12345, 17},
		{"an overflow floods one frame (estimate far too high)", simBridge{capacity: 12345, floodOne: true}, 65536, 12345, 3*16 + 1},
		{"test frames lost in the first two trials (retried)", simBridge{capacity: 5000, loseTests: 2}, 65536, 5000, 3},
		{"test frames always lost above 3000 (counts as failure)", simBridge{capacity: 5000, loseAbove: 3000}, 65536, 3000, 17},
		{"learning frames lost above 20000 frames/s (slower learning frames)", simBridge{capacity: 5000, learnRate: 20000}, 65536, 5000, 3},
		{"the table swctl's maxaddr leaves, learning frames lost above 40000 frames/s", simBridge{capacity: 16383, learnRate: 40000}, 16384, 16383, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.bridge
			res, err := SearchCapacity(context.Background(), b.trial, tt.hi, 50000, 100)
			if err != nil {
				t.Fatal(err)
			}
			if res.Capacity != tt.want || !res.Converged {
				t.Errorf("capacity %d (converged %v, interval %d-%d), want %d, converged", res.Capacity, res.Converged, res.Lo, res.Hi, tt.want)
			}
			// Learning frames go at the rate given, halved after each
			// trial that lost some.
			probes, rate := map[int]bool{}, 50000.0
			for _, tr := range res.Trials {
				probes[tr.Addresses] = true
				if tr.Rate != rate {
					t.Errorf("trial of %d addresses at %v frames/s, want %v", tr.Addresses, tr.Rate, rate)
				}
				if tr.LearnForwarded < tr.LearnSent {
					rate /= 2
				}
			}
			if len(probes) > tt.maxProbes {
				t.Errorf("%d probes, want at most %d", len(probes), tt.maxProbes)
			}
			if b.calls != len(res.Trials) {
				t.Errorf("%d trials run, %d recorded", b.calls, len(res.Trials))
			}
			// The result is proven by the trials: N passed, N+1 failed.
			if res.Capacity < tt.hi {
				passed, failed := res.Capacity == 0, false
				for _, tr := range res.Trials {
					passed = passed || (tr.Addresses == res.Capacity && tr.Pass)
					failed = failed || (tr.Addresses == res.Capacity+1 && !tr.Pass)
				}
				if !passed || !failed {
					t.Errorf("capacity %d without a passing trial of it (%v) and a failing one of one more (%v)", res.Capacity, passed, failed)
				}
			}
		})
	}
}

func TestSearchCapacityRetries(t *testing.T) {
	b := simBridge{capacity: 5000, loseTests: 2}
	res, err := SearchCapacity(context.Background(), b.trial, 65536, 50000, 100)
	if err != nil {
		t.Fatal(err)
	}
	// 65536 floods (conclusive); 5000 loses a frame twice, then passes;
	// 5001 floods.
	var got []string
	for _, tr := range res.Trials {
		v := "fail"
		switch {
		case tr.Pass:
			v = "pass"
		case tr.Inconclusive:
			v = "inconclusive"
		}
		got = append(got, v)
	}
	if want := "fail inconclusive pass fail"; strings.Join(got, " ") != want {
		t.Errorf("trials %q, want %q (an inconclusive trial is run again)", strings.Join(got, " "), want)
	}
}

// The smoke's failure at load 18: the first probe (maxaddr 16384, the
// table holds 16383) lost learning frames twice (1 flooded each time),
// then test frames without any flooded: counted failed, inconclusive.
// Its flood count still guides the search to 16383 and 16384's failure
// bounds it, in 2 probes, where 12 probes of halving end at 16376, not
// converged.
func TestSearchCapacityInconclusiveFirstProbe(t *testing.T) {
	runs := 0
	trial := func(n int, rate float64) (AddrTrial, error) {
		runs++
		t := AddrTrial{LearnSent: uint64(n), LearnForwarded: uint64(n), TestSent: uint64(n), Received: uint64(n), Barrier: true}
		switch {
		case n <= 16383:
		case runs < 3:
			t.LearnForwarded -= 10
			t.Flooded = 1
		default:
			t.Received -= 7
		}
		return t, nil
	}
	res, err := SearchCapacity(context.Background(), trial, 16384, 50000, 12)
	if err != nil {
		t.Fatal(err)
	}
	if res.Capacity != 16383 || !res.Converged || len(res.Trials) != 4 {
		t.Errorf("capacity %d (converged %v) after %d trials, want 16383, converged, after 4 (3 of 16384, 1 of 16383)", res.Capacity, res.Converged, len(res.Trials))
	}
}

func TestSearchCapacityLimits(t *testing.T) {
	b := simBridge{capacity: 12345, floodAll: true}
	res, err := SearchCapacity(context.Background(), b.trial, 65536, 50000, 4)
	if err != nil {
		t.Fatal(err)
	}
	if res.Converged || len(res.Trials) != 4 || res.Capacity != 8192 || res.Lo != 8192 || res.Hi != 16384 {
		t.Errorf("4 probes of a plain bisection: capacity %d in %d-%d, converged %v after %d trials; want 8192 in 8192-16384, not converged, 4 trials",
			res.Capacity, res.Lo, res.Hi, res.Converged, len(res.Trials))
	}
	if _, err := SearchCapacity(context.Background(), b.trial, 0, 50000, 4); err == nil {
		t.Error("upper bound 0: no error")
	}
	boom := errors.New("boom")
	calls := 0
	res, err = SearchCapacity(context.Background(), func(n int, rate float64) (AddrTrial, error) {
		calls++
		if calls == 2 {
			return AddrTrial{}, boom
		}
		return AddrTrial{LearnSent: uint64(n), LearnForwarded: uint64(n), TestSent: uint64(n), Received: uint64(n), Flooded: 1, Barrier: true}, nil
	}, 100, 50000, 10)
	if !errors.Is(err, boom) || len(res.Trials) != 2 || !strings.Contains(err.Error(), "capacity trial of 99 addresses") {
		t.Errorf("a trial's error: %v after %d trials, want boom naming the trial, after 2", err, len(res.Trials))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SearchCapacity(ctx, b.trial, 100, 50000, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
}

func TestSearchLearningRate(t *testing.T) {
	tests := []struct {
		name        string
		bridge      simBridge
		want        float64 // the result is within resolution below it
		senderBound bool
	}{
		{"learns 230000 addresses/s", simBridge{capacity: 1 << 20, learnRate: 230000}, 230000, false},
		{"learns at any rate: the upper bound", simBridge{capacity: 1 << 20}, 1e6, false},
		{"the tester reaches 600000 only", simBridge{capacity: 1 << 20, senderMax: 600000}, 600000, true},
		{"learns 40000 addresses/s", simBridge{capacity: 1 << 20, learnRate: 40000}, 40000, false},
		// The trial at 500000 passes only because its sender offered
		// 50000: it is run again rather than taken for a pass at 500000.
		{"a stalled sender at 500000", simBridge{capacity: 1 << 20, learnRate: 230000, stallCall: 2}, 230000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.bridge
			res, err := SearchLearningRate(context.Background(), b.trial, 8192, 1e6, 20000, 12)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rate > tt.want || res.Rate < tt.want-20000 || !res.Converged {
				t.Errorf("learning rate %.0f (converged %v), want within 20000 below %.0f", res.Rate, res.Converged, tt.want)
			}
			if res.SenderBound != tt.senderBound {
				t.Errorf("sender-bound %v, want %v", res.SenderBound, tt.senderBound)
			}
			if res.Addresses != 8192 || res.Trials[0].Rate != 1e6 {
				t.Errorf("addresses %d, first trial at %v; want 8192 at the upper bound", res.Addresses, res.Trials[0].Rate)
			}
			for _, tr := range res.Trials {
				if tr.Addresses != 8192 {
					t.Errorf("a trial of %d addresses, want 8192", tr.Addresses)
				}
			}
		})
	}
	if _, err := SearchLearningRate(context.Background(), (&simBridge{}).trial, 0, 1e6, 1000, 5); err == nil {
		t.Error("0 addresses: no error")
	}
}

func TestAddrTrialJudge(t *testing.T) {
	ok := AddrTrial{Addresses: 10, LearnSent: 10, LearnForwarded: 10, TestSent: 10, Received: 10, Barrier: true}
	with := func(f func(*AddrTrial)) AddrTrial { t := ok; f(&t); return t }
	tests := []struct {
		name               string
		trial              AddrTrial
		capacity           bool
		pass, inconclusive bool
	}{
		{"every test frame forwarded, none flooded", ok, true, true, false},
		{"a flooded test frame", with(func(t *AddrTrial) { t.Flooded = 1 }), true, false, false},
		{"a lost test frame, none flooded", with(func(t *AddrTrial) { t.Received = 9 }), true, false, true},
		{"a lost test frame and a flooded one", with(func(t *AddrTrial) { t.Received, t.Flooded = 9, 1 }), false, false, false},
		{"capacity: flooded after lost learning frames", with(func(t *AddrTrial) { t.LearnForwarded, t.Flooded = 8, 2 }), true, false, true},
		{"capacity: none flooded after a lost learning frame (a missed flood)", with(func(t *AddrTrial) { t.LearnForwarded = 9 }), true, false, true},
		{"learning rate: flooded after dropped learning frames", with(func(t *AddrTrial) { t.LearnForwarded, t.Flooded = 8, 2 }), false, false, false},
		{"a test frame not sent", with(func(t *AddrTrial) { t.TestSent, t.Received = 9, 9 }), true, false, true},
		{"no flood, but the barrier did not come through", with(func(t *AddrTrial) { t.Barrier = false }), true, false, true},
		{"a flood, and the barrier did not come through", with(func(t *AddrTrial) { t.Barrier, t.Flooded = false, 1 }), true, false, false},
		{"learning rate: passed, but the sender offered 80% of the rate", with(func(t *AddrTrial) { t.Rate, t.LearnPerSecond = 100000, 80000 }), false, false, true},
		{"learning rate: passed, the sender offered 95% of the rate", with(func(t *AddrTrial) { t.Rate, t.LearnPerSecond = 100000, 95000 }), false, true, false},
		{"capacity: passed, the sender offered 50% of the rate", with(func(t *AddrTrial) { t.Rate, t.LearnPerSecond = 100000, 50000 }), true, true, false},
		{"no addresses", AddrTrial{}, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.trial
			tr.judge(tt.capacity)
			if tr.Pass != tt.pass || tr.Inconclusive != tt.inconclusive {
				t.Errorf("pass %v, inconclusive %v; want %v, %v", tr.Pass, tr.Inconclusive, tt.pass, tt.inconclusive)
			}
		})
	}
}

func TestRFC2889Plan(t *testing.T) {
	var got []string
	for _, in := range RFC2889Plan(3) {
		got = append(got, in.String())
	}
	want := []string{
		"address caching bridge0 patch run 1", "address caching bridge0 no patch run 1",
		"address caching bridge0 no patch run 2", "address caching bridge0 patch run 2",
		"address caching bridge0 patch run 3", "address caching bridge0 no patch run 3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant (A B B A ...):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRFC2889ConfigCheck(t *testing.T) {
	for _, mode := range []struct {
		name        string
		quick, full bool
		maxWeight   float64 // seconds per instance at most
	}{{"quick", true, false, 12}, {"default", false, false, 30}, {"full", false, true, 120}} {
		c := DefaultRFC2889Config(mode.quick, mode.full)
		if err := c.check(); err != nil {
			t.Errorf("%s defaults: %v", mode.name, err)
		}
		if w := c.weight(); w <= 0 || w > mode.maxWeight {
			t.Errorf("%s: planned %.1f s per instance, want 0-%.0f", mode.name, w, mode.maxWeight)
		}
	}
	tests := []struct {
		name string
		edit func(*RFC2889Config)
		err  string
	}{
		{"table of one", func(c *RFC2889Config) { c.MaxAddr = 1 }, "maxaddr 1"},
		{"table beyond the generator's block", func(c *RFC2889Config) { c.MaxAddr = 1<<20 + 1 }, "maxaddr"},
		{"no ageing", func(c *RFC2889Config) { c.Timeout = 0 }, "ageing time 0"},
		{"zero test rate", func(c *RFC2889Config) { c.TestRate = 0 }, "rates"},
		{"no trials", func(c *RFC2889Config) { c.RateTrials = 0 }, "max trials"},
		{"no learning-rate addresses", func(c *RFC2889Config) { c.RateAddrs = 0 }, "learning-rate addresses 0"},
		{"resolution 1", func(c *RFC2889Config) { c.Resolution = 1 }, "resolution"},
		{"no drain", func(c *RFC2889Config) { c.Drain = 0 }, "drain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultRFC2889Config(false, false)
			tt.edit(&c)
			err := c.check()
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "address caching") {
				t.Errorf("check: %v, want an error naming the suite and containing %q", err, tt.err)
			}
		})
	}
}

// rfc2889Samples are two runs a side: patch learns faster, with the same
// capacity.
func rfc2889Samples() []RFC2889Sample {
	smp := func(role string, run, capacity int, rate float64, trials int) RFC2889Sample {
		s := RFC2889Sample{Setup: RFC2889Setup, Role: role, Run: run, MaxAddr: 65536, Start: time.Unix(0, 0).UTC()}
		s.Capacity = CapacityResult{Capacity: capacity, Lo: capacity, Hi: capacity + 1, Converged: true, Trials: make([]AddrTrial, 3)}
		s.LearningRate = RateResult{Addresses: 16384, Rate: rate, Converged: true, Trials: make([]AddrTrial, trials-3)}
		return s
	}
	var out []RFC2889Sample
	for run := 1; run <= 4; run++ {
		out = append(out,
			smp(RolePatch, run, 65535, 300000+float64(run)*1000, 11),
			smp(RoleNoPatch, run, 65535, 200000+float64(run)*1000, 10+run%2))
	}
	return out
}

func TestRFC2889TableGolden(t *testing.T) {
	var b strings.Builder
	cells := AnalyzeRFC2889(rfc2889Samples(), 0.05)
	printAllTables(&b, &Results{RFC2889: &RFC2889Config{}, RFC2889Cells: cells})
	golden(t, "rfc2889_table.golden", b.String())
	for _, c := range cells {
		if c.Metric == "learning_rate" && c.Role == RolePatch && !c.Significant {
			t.Errorf("learning rate 301000-304000 against 201000-204000, 4 runs a side: p = %v, want significant", c.P)
		}
		if c.Metric == "capacity" && c.Significant {
			t.Errorf("equal capacities marked significant (p = %v)", c.P)
		}
	}
	// Without samples every cell is n/a.
	b.Reset()
	RenderTable(&b, RFC2889Table(AnalyzeRFC2889(nil, 0.05)))
	if strings.Count(b.String(), "n/a") != 6 {
		t.Errorf("no samples: want six n/a cells:\n%s", b.String())
	}
}

func TestRFC2889Report(t *testing.T) {
	c := DefaultRFC2889Config(true, false)
	r := &Results{Mode: "A/A", Runs: 4, Alpha: 0.05, MinP: stats.MinP(4, 4), RFC2889: &c, RFC2889Samples: rfc2889Samples()}
	r.RFC2889Cells = AnalyzeRFC2889(r.RFC2889Samples, r.Alpha)
	var b strings.Builder
	printAllTables(&b, r)
	if !strings.HasPrefix(b.String(), "== address caching: bridge0 ==\n") {
		t.Errorf("the suite's table alone starts with a blank line or lacks its header:\n%s", b.String())
	}
	md := Markdown(r, nil)
	for _, want := range []string{"Address caching: swctl bridge with maxaddr 16384 (default 8192)", "```\n== address caching: bridge0 ==", "### address caching: bridge0", "| learning_rate | - | patch | 4 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}
