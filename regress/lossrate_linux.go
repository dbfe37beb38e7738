package regress

import (
	"context"
	"fmt"

	"github.com/swctl/swctl/gen"
)

// lossRate runs RFC 2544's frame-loss-rate test on bench: paced trials of
// cfg.Trial at 100%, 90%, ... of maxRate (the max-rate run's sent rate)
// until two successive trials lose nothing, paced as the search's.
func (b *rateBed) lossRate(ctx context.Context, bench *gen.Bench, maxRate float64) ([]LossStep, error) {
	var runs []RateRun
	trials, err := LossRateSteps(ctx, maxRate, LossRateStep, func(rate float64) (uint64, uint64, error) {
		rr, err := b.run(ctx, bench, gen.TrialLoad(rate, b.cfg.Trial))
		runs = append(runs, rr)
		return rr.Sent, rr.Received, err
	})
	steps := make([]LossStep, 0, len(trials))
	for i, t := range trials {
		if i < len(runs) {
			steps = append(steps, LossStep{Percent: t.Percent, RateRun: runs[i]})
		}
	}
	if err != nil {
		return steps, fmt.Errorf("%s size %d: %w", b.spec.Name, bench.Stream().Size+gen.FCSLen, err)
	}
	return steps, nil
}
