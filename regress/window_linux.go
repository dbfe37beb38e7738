package regress

import (
	"context"
	"fmt"
	"time"

	"github.com/swctl/swctl/gen"
)

// window runs the window benchmark (BalanceNG's, swctl bench's default
// mode) through the running instance: one flow of cfg.WindowSize-byte
// frames, at most cfg.Window in flight, for cfg.WindowDuration.
func (b *rateBed) window(ctx context.Context) (WindowSample, error) {
	smp := WindowSample{Setup: b.spec.Name, Start: time.Now()}
	bench, err := b.open(gen.Stream{Size: b.cfg.WindowSize, Flows: 1})
	if err != nil {
		return smp, err
	}
	defer bench.Close()
	bench.SetDrain(rateDrain)
	if smp.RateRun, err = b.run(ctx, bench, gen.Load{Window: b.cfg.Window, Duration: b.cfg.WindowDuration}); err != nil {
		return smp, fmt.Errorf("%s window benchmark: %w", b.spec.Name, err)
	}
	return smp, nil
}
