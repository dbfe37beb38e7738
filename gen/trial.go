package gen

import "time"

// Paced trials as the benchmarks run them (swctl bench --search, make
// bench, make regress): the RFC 2544 zero-loss search and the
// frame-loss-rate steps.
const (
	// TrialBurst is the burst of a paced trial: a whole batch, as
	// trafgen -b sends its quota in bursts, so that the generator's
	// per-burst cost (a TX ring kick) does not bound the rates it can
	// offer on a shared core. RFC 2544 allows bursty offered load.
	TrialBurst = 64
	// TrialMaxLag is how far a paced trial's sender may fall behind and
	// still send every frame it owes. On a shared core the device under
	// test's receive softirq runs in the sender's context, and deferred
	// to ksoftirqd it takes the core for milliseconds; with MaxLag's
	// default a trial then skips part of its schedule and offers less
	// than it was asked to.
	TrialMaxLag = 20 * time.Millisecond
	// PaceTolerance is how far below its paced rate, as a fraction of
	// it, a run's sender may stay and still count as having offered that
	// rate.
	PaceTolerance = 0.01
)

// TrialLoad is a paced trial of rate frames/s for d, in bursts of
// TrialBurst frames with TrialMaxLag of catch-up.
func TrialLoad(rate float64, d time.Duration) Load {
	return Load{Rate: rate, Duration: d, Burst: TrialBurst, MaxLag: TrialMaxLag}
}

// ShortOfRate says r is a paced run whose sender reached less than its
// Rate by more than PaceTolerance: the machine took the sender's CPU
// away, so the load offered was SentPerSecond, not Rate. An unpaced run
// is never short.
func (r Result) ShortOfRate() bool {
	return r.Rate > 0 && r.SentPerSecond < (1-PaceTolerance)*r.Rate
}

// SearchRate is the zero-loss rate of an RFC 2544 search as the sender
// really offered it: rate is the paced rate of the search's best passing
// trial and trials the runs of the search. When that trial lost nothing
// but fell short of its rate (ShortOfRate), it returns what the sender
// reached, a lower bound of the device's zero-loss rate, and true.
func SearchRate(trials []Result, rate float64) (float64, bool) {
	for _, t := range trials {
		if t.Rate == rate && t.Sent > 0 && t.Received >= t.Sent && t.ShortOfRate() {
			return t.SentPerSecond, true
		}
	}
	return rate, false
}
