package regress

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	errNotYet, errGone := errors.New("not yet"), errors.New("gone")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name      string
		ctx       context.Context
		within    time.Duration
		results   []error // try's results in turn; the last repeats
		want      error
		wantTries int // 0 = at least len(results)
	}{
		{"passes at once", context.Background(), time.Second, []error{nil}, nil, 1},
		{"passes on the third try", context.Background(), time.Second, []error{errNotYet, errNotYet, nil}, nil, 3},
		{"stopPoll ends at once with its error", context.Background(), time.Minute, []error{errNotYet, stopPoll{errGone}}, errGone, 2},
		{"the last error when time is up", context.Background(), 5 * time.Millisecond, []error{errNotYet}, errNotYet, 0},
		{"the context's error when it ends", cancelled, time.Minute, []error{errNotYet}, context.Canceled, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			err := poll(tc.ctx, tc.within, time.Millisecond, func() error {
				tries++
				return tc.results[min(tries, len(tc.results))-1]
			})
			if !errors.Is(err, tc.want) && err != tc.want {
				t.Errorf("poll = %v, want %v", err, tc.want)
			}
			if tc.wantTries != 0 && tries != tc.wantTries {
				t.Errorf("%d tries, want %d", tries, tc.wantTries)
			}
		})
	}
}

func TestWaitDaemon(t *testing.T) {
	refused := errors.New("connection refused")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		answers []error // answer's results in turn; the last repeats
		exited  bool
		want    string // "" = nil
	}{
		{"answers on the second try", context.Background(), []error{refused, nil}, false, ""},
		{"exited: at once, with the CLI's error and the log", context.Background(), []error{refused}, true, "daemon exited at start: connection refused; log: bind: address in use"},
		{"the context's error, no log", cancelled, []error{refused}, false, "context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			start := time.Now()
			err := waitDaemon(tc.ctx, func() error {
				tries++
				return tc.answers[min(tries, len(tc.answers))-1]
			}, func() bool { return tc.exited }, func() string { return "bind: address in use" })
			if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
				t.Errorf("waitDaemon = %v, want %q", err, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("waitDaemon took %v, want well under its 10 s", d)
			}
		})
	}
}
