package regress

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
	"github.com/swctl/swctl/internal/config"
)

// RFC2889Setup is the address-caching suite's one setup: a swctl bridge
// with three members, the learning port, the test port and the monitor
// port.
const RFC2889Setup = "bridge0"

// RFC2889Config configures the address-caching suite (suite item 5):
// RFC 2889 section 5.7, address caching capacity, and section 5.8,
// address learning rate, through a swctl bridge.
type RFC2889Config struct {
	// MaxAddr is the bridge's address-table size (bridge set --maxaddr),
	// and the capacity search's upper bound.
	MaxAddr int `json:"maxaddr"`
	// Timeout is the bridge's ageing time in seconds (bridge set
	// --timeout), longer than any trial, so no address ages out during
	// one.
	Timeout int `json:"timeout_s"`
	// LearnRate is the rate of the learning frames in the capacity
	// trials, frames/s: low enough for the bridge to learn every one.
	LearnRate float64 `json:"learn_rate"`
	// TestRate is the rate of the test frames in every trial, frames/s:
	// low enough for the bridge to forward (and flood) every one.
	TestRate float64 `json:"test_rate"`
	// CapacityTrials bounds the capacity search's trials.
	CapacityTrials int `json:"capacity_trials"`
	// RateAddrs is the number of addresses of a learning-rate trial, at
	// most the capacity found.
	RateAddrs int `json:"rate_addrs"`
	// RateMax is the learning-rate search's upper bound, frames/s.
	RateMax float64 `json:"rate_max"`
	// Resolution is the learning-rate search's resolution as a fraction
	// of RateMax.
	Resolution float64 `json:"resolution"`
	// RateTrials bounds the learning-rate search's trials.
	RateTrials int `json:"rate_trials"`
	// Drain is the longest a trial waits for frames still on their way,
	// after the learning frames and after the test frames.
	Drain time.Duration `json:"drain_ns"`
}

// DefaultRFC2889Config returns the address-caching settings of a mode:
// quick (a table of 16384, a few trials), default (65536) or full
// (262144, finer learning-rate resolution).
func DefaultRFC2889Config(quick, full bool) RFC2889Config {
	c := RFC2889Config{MaxAddr: 65536, Timeout: 3600, LearnRate: 50000, TestRate: 50000, CapacityTrials: 24,
		RateAddrs: 16384, RateMax: 1e6, Resolution: 0.02, RateTrials: 8, Drain: 200 * time.Millisecond}
	switch {
	case full:
		c.MaxAddr, c.CapacityTrials, c.RateAddrs, c.Resolution, c.RateTrials = 1<<18, 40, 65536, 0.01, 10
	case quick:
		c.MaxAddr, c.CapacityTrials, c.RateAddrs, c.Resolution, c.RateTrials = 16384, 12, 8192, 0.05, 6
	}
	return c
}

// check says what is wrong with c.
func (c RFC2889Config) check() error {
	switch {
	case c.MaxAddr < 2 || c.MaxAddr > gen.MaxFlows:
		return fmt.Errorf("regress: address caching: maxaddr %d: want 2-%d", c.MaxAddr, gen.MaxFlows)
	case c.Timeout < 1 || c.Timeout > config.MaxTimeout:
		return fmt.Errorf("regress: address caching: ageing time %d s: want 1-%d", c.Timeout, config.MaxTimeout)
	case c.LearnRate <= 0 || c.TestRate <= 0 || c.RateMax <= 0:
		return fmt.Errorf("regress: address caching: rates %v, %v, %v frames/s: want all above 0", c.LearnRate, c.TestRate, c.RateMax)
	case c.CapacityTrials < 1 || c.RateTrials < 1:
		return fmt.Errorf("regress: address caching: max trials %d, %d: want at least 1", c.CapacityTrials, c.RateTrials)
	case c.RateAddrs < 1:
		return fmt.Errorf("regress: address caching: learning-rate addresses %d: want at least 1", c.RateAddrs)
	case c.Resolution <= 0 || c.Resolution >= 1:
		return fmt.Errorf("regress: address caching: resolution %v: want a fraction between 0 and 1", c.Resolution)
	case c.Drain < time.Millisecond:
		return fmt.Errorf("regress: address caching: drain %v: want at least 1ms", c.Drain)
	}
	return nil
}

// trialSeconds is the planned length of a trial of n addresses learnt at
// rate: learning, the test frames, both drains at worst, and the flush and
// table reads.
func (c RFC2889Config) trialSeconds(n int, rate float64) float64 {
	return float64(n)/rate + float64(n)/c.TestRate + c.Drain.Seconds() + 0.1
}

// weight is the planned seconds of one instance, for the progress line:
// the capacity search (about three trials near the table size when it
// goes well), the learning-rate search (all its trials, at half the
// upper bound on average) and the daemon's start.
func (c RFC2889Config) weight() float64 {
	n := min(c.RateAddrs, c.MaxAddr)
	return 3*c.trialSeconds(c.MaxAddr, c.LearnRate) + float64(c.RateTrials)*c.trialSeconds(n, c.RateMax/2) + 1.5
}

// describe is the suite's method text for report.md.
func (c RFC2889Config) describe() []string {
	return []string{
		fmt.Sprintf("Address caching (RFC 2889 5.7, 5.8): swctl bridge %s over p1 (learning port), p2 (test port), p3 (monitor port) in one namespace; the tester's ends t1, t2, t3 in another, opened with AF_PACKET in the harness's process. bridge set --maxaddr %d --timeout %d (swctl's defaults: maxaddr %d, timeout %d s); a static entry for t2's MAC on p2 (the test port's address, which RFC 2889 has the bridge learn first), so %d addresses of the learning port fit; bridge flush (learned addresses only) before every trial.", RFC2889Setup, c.MaxAddr, c.Timeout, config.DefaultMaxAddr, config.DefaultTimeout, c.MaxAddr-1),
		fmt.Sprintf("A trial of N addresses: t1 sends N learning frames (64-byte UDP frames from MAC i of a block of locally administered addresses to t2's MAC), then t2 sends N test frames at %.0f frames/s, one to each of the N addresses. It fails when a test frame reaches the monitor t3 (unknown unicast is flooded there: that address was not in the table), passes when none does, all reach t1 and a broadcast barrier frame sent after them from t2 has reached t1 and t3 (the bridge forwards a member's frames in order, so every flooded copy is through by then); a test frame lost without any flooded is inconclusive (so is a would-be pass whose barrier did not arrive within the drain time, and, in the capacity search, any trial whose learning frames were lost, after which its learning frames and those of the later probes go at half the rate), and the trial is run again, at most %d more times, then counted as failed. Only frames of the trial's run ID count; the bridge's address count (bridge show) is recorded after each trial.", c.TestRate, addrRetries),
		fmt.Sprintf("Capacity (\"capacity\", addresses): binary search on N between 0 and maxaddr %d, at most %d probes, learning frames at %.0f frames/s (less after learning frames were lost); after a failure with F frames flooded the next probe is N-F (the addresses the table took), after such a guided probe passed N+1 (at most two guided probes in a row, otherwise the midpoint). The result is the largest N that passed with N+1 failing, or %d if that passed.", c.MaxAddr, c.CapacityTrials, c.LearnRate, c.MaxAddr),
		fmt.Sprintf("Learning rate (\"learn/s\", addresses/s): min(capacity, %d) addresses, learning frames offered at rate R; binary search on R from %.0f frames/s down (gen/rfc2544: first at the top, then halving) to within %.1f%% of it, at most %d probes. A pass whose sender offered less than %.0f%% of R (the machine took its CPU away) is inconclusive, like a lost frame. The result is the highest rate of a passing trial, the rate the sender offered where that is more than 1%% below R. \"trials\" counts both searches' trials, repeats included.", c.RateAddrs, c.RateMax, 100*c.Resolution, c.RateTrials, 100*senderShortfall),
	}
}

// estimate is the suite's share of a run of runs runs.
func (c RFC2889Config) estimate(runs int) Estimate {
	return planTime("rfc2889", RFC2889Plan(runs), func(RoleRun) float64 { return c.weight() })
}

// RFC2889Plan orders the address-caching instances (a bridge start
// each, both searches): runs alternate A B, B A, ... like Plan.
func RFC2889Plan(runs int) []RoleRun { return roleRunPlan("address caching "+RFC2889Setup, runs) }

// AddrTrial is one trial of either search: N learning frames, then N test
// frames.
type AddrTrial struct {
	// Addresses is N.
	Addresses int `json:"addresses"`
	// Rate is the learning frames' rate asked for, frames/s.
	Rate float64 `json:"rate"`
	// LearnSent is the number of learning frames sent.
	LearnSent uint64 `json:"learn_sent"`
	// LearnPerSecond is the rate the learning frames were offered at.
	LearnPerSecond float64 `json:"learn_per_second"`
	// LearnRebased counts the times the learning sender fell behind its
	// schedule (gen.SendStats.Rebased).
	LearnRebased uint64 `json:"learn_rebased,omitempty"`
	// LearnForwarded is the number of learning frames that reached the
	// test port.
	LearnForwarded uint64 `json:"learn_forwarded"`
	// TestSent is the number of test frames sent.
	TestSent uint64 `json:"test_sent"`
	// Received is the number of test frames that reached the learning
	// port (forwarded or flooded).
	Received uint64 `json:"received"`
	// Flooded is the number of test frames that reached the monitor port.
	Flooded uint64 `json:"flooded"`
	// Barrier says the broadcast frame t2 sent after the test frames
	// reached both t1 and the monitor within the drain time: every
	// flooded copy had arrived when the counts were read. Without it
	// the trial's counts are as the drain time left them.
	Barrier bool `json:"barrier"`
	// Table is the bridge's address count after the trial (bridge show),
	// the static entry included; -1 when it could not be read.
	Table int `json:"table"`
	// Pass says every test frame reached the learning port and none the
	// monitor port: the table held all N addresses.
	Pass bool `json:"pass"`
	// Inconclusive says frames were lost on the way and the trial could
	// not tell (see judge); it was run again, at most addrRetries times.
	Inconclusive bool `json:"inconclusive,omitempty"`
}

// addrRetries is how often a search runs an inconclusive trial again
// before it counts it as failed.
const addrRetries = 2

// judge sets t.Pass and t.Inconclusive from its counts. A trial fails
// when a test frame reached the monitor port (the bridge flooded it: its
// address was not in the table), and passes when none did, every test
// frame reached the learning port and the barrier after them came
// through. A test frame lost without any flooded is inconclusive: its
// address may or may not have been in the table; so is a trial that would
// pass but whose barrier did not come through (a flooded copy may still
// have been on its way). In a learning-rate trial a pass is inconclusive
// too when the sender offered less than senderShortfall of the rate asked
// for (the machine took its CPU away): that rate was not tried.
// In a capacity trial (capacity set), any verdict after learning frames
// were lost on the way is inconclusive: the addresses of the lost frames
// were never offered to the table (a pass then means a flooded copy was
// missed: one under load at 18 claimed 16384 addresses in a table of
// 16383). In a learning-rate trial a
// learning frame the bridge dropped is what the search measures.
func (t *AddrTrial) judge(capacity bool) {
	n := uint64(t.Addresses)
	testLost := t.TestSent < n || t.Received < t.TestSent
	learnLost := capacity && t.learnLost()
	t.Pass = n > 0 && t.Flooded == 0 && !testLost && t.Barrier && !learnLost
	t.Inconclusive = n > 0 && ((t.Flooded == 0 && (testLost || !t.Barrier)) || learnLost)
	if !capacity && t.Pass && t.LearnPerSecond > 0 && t.LearnPerSecond < senderShortfall*t.Rate {
		t.Pass, t.Inconclusive = false, true
	}
}

// learnLost reports whether learning frames were not sent or did not
// all reach the test port.
func (t *AddrTrial) learnLost() bool {
	return t.LearnSent < uint64(t.Addresses) || t.LearnForwarded < t.LearnSent
}

// senderShortfall is the least fraction of the rate asked for that a
// learning-rate trial's sender must offer for its pass to count.
const senderShortfall = 0.9

// AddrTrialFunc runs one trial of n addresses with learning frames at
// rate frames/s.
type AddrTrialFunc func(n int, rate float64) (AddrTrial, error)

// judged runs trial for n addresses at rate, again while it is
// inconclusive (at most addrRetries times more), appends every run to
// *trials and returns the last. In a capacity trial (capacity set) whose
// learning frames were lost, the next run sends them at half the rate:
// a capacity trial's learning frames are meant to go at a rate the bridge
// learns every one at, and a loaded machine (the daemon's receive ring
// overflowing while it waits for a CPU) may not keep up with LearnRate.
func judged(ctx context.Context, trial AddrTrialFunc, n int, rate float64, capacity bool, trials *[]AddrTrial) (t AddrTrial, err error) {
	for try := 0; try <= addrRetries; try++ {
		if err := ctx.Err(); err != nil {
			return t, err
		}
		t, err = trial(n, rate)
		t.Addresses, t.Rate = n, rate
		t.judge(capacity)
		*trials = append(*trials, t)
		if err != nil || !t.Inconclusive {
			return t, err
		}
		if capacity && t.learnLost() {
			rate /= 2
		}
	}
	return t, nil
}

// CapacityResult is the outcome of the capacity search.
type CapacityResult struct {
	// Capacity is the largest N that passed; 0 when none did.
	Capacity int `json:"capacity"`
	// Lo passed (or is 0); Hi failed (or is the upper bound and passed).
	Lo int `json:"lo"`
	// Hi is the upper end of the final interval.
	Hi int `json:"hi"`
	// Converged says Hi = Lo+1, or the upper bound passed.
	Converged bool `json:"converged"`
	// Trials are the trials in the order run, repeated inconclusive ones
	// included.
	Trials []AddrTrial `json:"trials"`
}

// maxGuided is how many guided trials the capacity search runs in a row
// before it halves the interval once: a flood count that misleads (a
// table that evicts, say) costs at most a constant factor in trials.
const maxGuided = 2

// SearchCapacity finds the largest N in [1, hi] whose trial (learning
// frames at rate) passes, with at most maxTrials probes (each run up to
// 1+addrRetries times while inconclusive; a run that lost learning
// frames is followed by runs at half the rate, which the later probes
// keep: see judged). The first probe is at hi; if it passes, hi is the
// result. Otherwise a binary search narrows [lo, hi], where lo (0 at
// first) passed and hi failed; its probes are guided by the flood count:
// after a conclusive failure of N with F test frames flooded, the table
// held N-F addresses, so N-F is tried next, and after a guided probe that
// passed, that N plus one. A guess outside the
// interval, or a third guided probe in a row, gives way to the midpoint.
// A table that learns up to C addresses and floods the rest is found in
// three probes (hi, C, C+1). A trial's error ends the search with the
// trials so far.
func SearchCapacity(ctx context.Context, trial AddrTrialFunc, hi int, rate float64, maxTrials int) (CapacityResult, error) {
	res := CapacityResult{Hi: hi, Trials: []AddrTrial{}}
	if hi < 1 || maxTrials < 1 {
		return res, fmt.Errorf("capacity search: upper bound %d, max trials %d: want both at least 1", hi, maxTrials)
	}
	guess, guided := 0, 0
	for probes := 0; probes == 0 || res.Hi-res.Lo > 1 && probes < maxTrials; probes++ {
		n := res.Lo + (res.Hi-res.Lo)/2
		isGuess := guess > res.Lo && guess < res.Hi && guided < maxGuided
		switch {
		case probes == 0:
			n = hi
		case isGuess:
			n = guess
			guided++
		default:
			guided = 0
		}
		runs := len(res.Trials)
		t, err := judged(ctx, trial, n, rate, true, &res.Trials)
		if err != nil {
			return res, fmt.Errorf("capacity trial of %d addresses: %w", n, err)
		}
		rate, guess = t.Rate, 0 // slower once learning frames were lost
		if t.Pass {
			res.Lo, res.Capacity = n, n
			if isGuess {
				guess = n + 1
			}
			continue
		}
		res.Hi = n
		// The next guess is the table's size the runs of the failed probe
		// tell: N-F of the last run that flooded F frames (none: no
		// guess). A run inconclusive for lost learning frames tells it
		// too, as a lower bound (the table held N-F addresses, of fewer
		// offered): a probe whose runs were all inconclusive still guides
		// the search, rather than leave it to halving, which the probes
		// may not suffice for. A guess is a probe like any other: its
		// verdict, not the estimate, moves the interval.
		for _, t := range slices.Backward(res.Trials[runs:]) {
			if !t.Pass && t.Flooded > 0 && t.Flooded <= uint64(t.Addresses) {
				guess = t.Addresses - int(t.Flooded)
				break
			}
		}
	}
	res.Converged = res.Hi-res.Lo <= 1
	return res, nil
}

// RateResult is the outcome of the learning-rate search.
type RateResult struct {
	// Addresses is N, the addresses of every trial.
	Addresses int `json:"addresses"`
	// Rate is the highest learning rate of a passing trial, addresses/s:
	// the rate asked for, or what the sender offered when it fell behind
	// (by more than 1%: SenderBound); 0 when none passed. It is the
	// search's result (Lo) unless a sender fell behind.
	Rate float64 `json:"rate"`
	// SenderBound says the sender of the trial Rate comes from offered
	// less than 99% of the rate asked for: Rate is what it offered.
	SenderBound bool `json:"sender_bound,omitempty"`
	// Lo and Hi bound the learning rate at the end (rfc2544.Result).
	Lo float64 `json:"lo"`
	// Hi is the upper end of the final interval.
	Hi float64 `json:"hi"`
	// Converged says the search came within its resolution.
	Converged bool `json:"converged"`
	// Trials are the trials in the order run, repeated inconclusive ones
	// included.
	Trials []AddrTrial `json:"trials"`
}

// SearchLearningRate finds the highest rate in (0, hi] at which a trial
// of n addresses passes, to within resolution frames/s, with at most
// maxTrials probes (each run up to 1+addrRetries times while
// inconclusive): RFC 2544's binary search (gen/rfc2544: first at hi, then
// halving), a trial passing where RFC 2544's loses nothing.
func SearchLearningRate(ctx context.Context, trial AddrTrialFunc, n int, hi, resolution float64, maxTrials int) (RateResult, error) {
	res := RateResult{Addresses: n, Trials: []AddrTrial{}}
	if n < 1 {
		return res, fmt.Errorf("learning-rate search: %d addresses: want at least 1", n)
	}
	sr, err := rfc2544.Search(ctx, func(rate float64) (uint64, uint64, error) {
		// A trial passes as a loss-free one does in RFC 2544 (on an error
		// the search ends, whatever the counts). A pass is always the
		// last run of judged: Rate is the highest of those.
		t, err := judged(ctx, trial, n, rate, false, &res.Trials)
		if !t.Pass {
			return uint64(n), 0, err
		}
		r, bound := t.Rate, false
		if t.LearnPerSecond > 0 && t.LearnPerSecond < 0.99*t.Rate {
			r, bound = t.LearnPerSecond, true
		}
		if r > res.Rate {
			res.Rate, res.SenderBound = r, bound
		}
		return uint64(n), uint64(n), err
	}, 0, hi, resolution, maxTrials, 0)
	res.Lo, res.Hi, res.Converged = sr.Lo, sr.Hi, sr.Converged
	if err != nil {
		return res, fmt.Errorf("learning-rate search of %d addresses: %w", n, err)
	}
	return res, nil
}

// RFC2889Sample is one instance's measurement: both searches.
type RFC2889Sample struct {
	// Setup is RFC2889Setup.
	Setup string `json:"setup"`
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Run counts from 1.
	Run int `json:"run"`
	// Seq is the sample's place among the address-caching samples, from 1.
	Seq int `json:"seq"`
	// Start is when the capacity search began.
	Start time.Time `json:"start"`
	// MaxAddr is the table size set on the bridge.
	MaxAddr int `json:"maxaddr"`
	// Capacity is RFC 2889 5.7's result: addresses of the learning port
	// the table held.
	Capacity CapacityResult `json:"capacity"`
	// LearningRate is RFC 2889 5.8's result, addresses/s.
	LearningRate RateResult `json:"learning_rate"`
}

// RFC2889Metrics are the figures summarised per role: the rows of the
// printed table.
var RFC2889Metrics = []Metric[RFC2889Sample]{
	{"capacity", "capacity", "%.0f", func(s RFC2889Sample) (float64, bool) { return float64(s.Capacity.Capacity), true }},
	{"learning_rate", "learn/s", "%.0f", func(s RFC2889Sample) (float64, bool) { return s.LearningRate.Rate, true }},
	{"trials", "trials", "%.1f", func(s RFC2889Sample) (float64, bool) {
		return float64(len(s.Capacity.Trials) + len(s.LearningRate.Trials)), true
	}},
}

// AnalyzeRFC2889 summarises address-caching samples per metric and role
// and compares patch with no patch.
func AnalyzeRFC2889(samples []RFC2889Sample, alpha float64) []RoleCell {
	return summarize(nil, RFC2889Metrics, []RoleCell{{Setup: RFC2889Setup}}, samples, func(s RFC2889Sample, _ RoleCell) (string, bool) { return s.Role, true }, alpha)
}

// RFC2889Table builds the address-caching table from cells: a row per
// metric, patch beside no patch.
func RFC2889Table(cells []RoleCell) Table {
	t := pairTable([]string{"Address caching, RFC 2889 (capacity: addresses; learn/s: addresses/s)"}, "")
	for _, m := range RFC2889Metrics {
		t.Rows = append(t.Rows, pairRow(m.Title, []string{m.Format}, pairCells(cells, RoleCell{Setup: RFC2889Setup}, m.Key)...))
	}
	return t
}

// rfc2889Header is the line Header prints about the suite.
func rfc2889Header(c *RFC2889Config) string {
	return fmt.Sprintf("Address caching: swctl bridge with maxaddr %d (default %d) and a static entry for the test port; capacity = learning-port addresses held without flooding (%d expected), learn/s = highest rate at which %d addresses were all learned; trials = both searches'.",
		c.MaxAddr, config.DefaultMaxAddr, c.MaxAddr-1, c.RateAddrs)
}

// rfc2889Trials writes report.md's list of the trials of every
// address-caching instance.
func rfc2889Trials(b *strings.Builder, r *Results) {
	b.WriteString("\nTrials per instance (N addresses at a learning rate: flooded to the monitor, lost; table = the bridge's address count after the trial):\n\n")
	for _, s := range r.RFC2889Samples {
		fmt.Fprintf(b, "- %s run %d: capacity %d (converged %v), learning rate %.0f/s for %d addresses (converged %v",
			s.Role, s.Run, s.Capacity.Capacity, s.Capacity.Converged, s.LearningRate.Rate, s.LearningRate.Addresses, s.LearningRate.Converged)
		if s.LearningRate.SenderBound {
			b.WriteString(", sender-bound")
		}
		b.WriteString("):")
		for _, t := range slices.Concat(s.Capacity.Trials, s.LearningRate.Trials) {
			v := "fail"
			if t.Pass {
				v = "pass"
			} else if t.Inconclusive {
				v = "inconclusive"
			}
			fmt.Fprintf(b, " %d at %.0f/s (offered %.0f/s) %s: %d flooded, %d lost, table %d;", t.Addresses, t.Rate, t.LearnPerSecond, v, t.Flooded, t.TestSent-min(t.Received, t.TestSent), t.Table)
		}
		b.WriteString("\n")
	}
}
