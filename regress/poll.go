package regress

import (
	"context"
	"errors"
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
