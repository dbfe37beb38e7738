package regress

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// poll calls try every pause until it returns nil, for at most within:
// it returns try's last error when within has passed, ctx's error when
// ctx ends, and at once the error inside a stopPoll that try returns
// (a condition that waiting cannot change, such as a process that
// exited).
func poll(ctx context.Context, within, pause time.Duration, try func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := try()
		var stop stopPoll
		switch {
		case err == nil:
			return nil
		case errors.As(err, &stop):
			return stop.error
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline):
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// stopPoll is an error that ends poll at once.
type stopPoll struct{ error }

// waitDaemon waits up to 10 s until a swctl daemon just started answers
// its CLI, which answer runs; exited says the daemon has ended, which
// ends the wait at once, and tail is the end of its log, for the error.
func waitDaemon(ctx context.Context, answer func() error, exited func() bool, tail func() string) error {
	why := "did not answer within 10s"
	err := poll(ctx, 10*time.Second, 50*time.Millisecond, func() error {
		err := answer()
		if err != nil && exited() {
			why = "exited at start"
			return stopPoll{err}
		}
		return err
	})
	if err == nil || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("daemon %s: %v; log: %s", why, err, tail())
}
