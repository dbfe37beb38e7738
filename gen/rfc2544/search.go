// Package rfc2544 finds a device's throughput as RFC 2544 section 26.1
// defines it: the highest offered rate at which the device forwards every
// frame, by binary search over trials at fixed rates. The trial itself
// (pacing a generator, counting frames) is the caller's: with package gen,
// a trial is one gen.Bench run at a paced Load.
package rfc2544

import (
	"context"
	"fmt"
	"math"
)

// TrialFunc offers frames at rate frames/s for one trial and returns how
// many were sent and how many arrived.
type TrialFunc func(rate float64) (sent, received uint64, err error)

// Trial is one trial of a search.
type Trial struct {
	// Rate is the offered rate in frames/s.
	Rate float64 `json:"rate"`
	// Sent is the number of frames sent.
	Sent uint64 `json:"sent"`
	// Received is the number of frames that arrived.
	Received uint64 `json:"received"`
	// Loss is the fraction of sent frames lost, 0 to 1.
	Loss float64 `json:"loss"`
	// Pass reports whether the loss was within the tolerance.
	Pass bool `json:"pass"`
}

// Result is the outcome of a search.
type Result struct {
	// Rate is the highest rate that passed, in frames/s; 0 when none did.
	Rate float64 `json:"rate"`
	// Lo and Hi bound the throughput at the end: Lo passed (or is the
	// search's lower bound), Hi failed (or is its upper bound and passed).
	Lo float64 `json:"lo"`
	// Hi is the upper end of the final interval.
	Hi float64 `json:"hi"`
	// Converged reports whether Hi - Lo came within the resolution (or the
	// upper bound passed) before the trials ran out.
	Converged bool `json:"converged"`
	// Trials lists every trial in the order run.
	Trials []Trial `json:"trials"`
}

// Search finds the highest rate in [lo, hi] at which trial loses at
// most the fraction tolerance of its frames (0 = none, RFC 2544's
// throughput; 0.001 = 0.1%), to within resolution frames/s, in at most
// maxTrials trials (0 = no limit). The first trial is at hi; if it
// passes, hi is the result. Otherwise the search halves the interval: a
// passing rate raises the lower end, a failing one lowers the upper end.
// lo itself is assumed to pass and is never tried; a result of Rate 0
// means no trial passed. A trial's error ends the search with the trials
// so far.
func Search(ctx context.Context, trial TrialFunc, lo, hi, resolution float64, maxTrials int, tolerance float64) (Result, error) {
	res := Result{Lo: lo, Hi: hi}
	switch {
	case !finite(lo) || !finite(hi) || lo < 0 || hi <= lo:
		return res, fmt.Errorf("rfc2544: search bounds %v..%v: want 0 <= lo < hi", lo, hi)
	case !finite(resolution) || resolution <= 0:
		return res, fmt.Errorf("rfc2544: resolution %v: want > 0", resolution)
	case maxTrials < 0:
		return res, fmt.Errorf("rfc2544: max trials %d: want >= 0", maxTrials)
	case !finite(tolerance) || tolerance < 0 || tolerance >= 1:
		return res, fmt.Errorf("rfc2544: loss tolerance %v: want 0 <= tolerance < 1", tolerance)
	}
	// The first trial is at hi; each later one halves the interval. A
	// pass at hi closes it at once (Lo = Hi = hi).
	for rate := hi; ctx.Err() == nil; rate = (res.Lo + res.Hi) / 2 {
		sent, received, err := trial(rate)
		t := Trial{Rate: rate, Sent: sent, Received: received}
		if sent > 0 && received < sent {
			t.Loss = float64(sent-received) / float64(sent)
		}
		t.Pass = err == nil && sent > 0 && t.Loss <= tolerance
		res.Trials = append(res.Trials, t)
		if err != nil {
			return res, fmt.Errorf("rfc2544: trial at %.0f frames/s: %w", rate, err)
		}
		if t.Pass {
			res.Lo, res.Rate = rate, rate
		} else {
			res.Hi = rate
		}
		res.Converged = res.Hi-res.Lo <= resolution
		if res.Converged || maxTrials > 0 && len(res.Trials) >= maxTrials {
			return res, nil
		}
	}
	return res, ctx.Err()
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
