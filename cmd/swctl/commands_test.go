package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStopSignals(t *testing.T) {
	tests := []struct {
		name   string
		second syscall.Signal
	}{
		{"SIGTERM then SIGTERM", syscall.SIGTERM},
		{"SIGTERM then SIGINT", syscall.SIGINT},
	}
	for _, tt := range tests {
		second := tt.second
		t.Run(tt.name, func(t *testing.T) {
			var logged bytes.Buffer
			ctx, hurry, stop := stopSignals(context.Background(), slog.New(slog.NewTextHandler(&logged, nil)))
			defer stop()
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("first signal: expected the context done, still running after 5s")
			}
			select {
			case <-hurry:
				t.Fatal("first signal: expected no hurry yet, got it")
			default:
			}
			if err := syscall.Kill(syscall.Getpid(), second); err != nil {
				t.Fatal(err)
			}
			select {
			case <-hurry:
			case <-time.After(5 * time.Second):
				t.Fatalf("second signal (%v): expected hurry closed, still open after 5s", second)
			}
			if !strings.Contains(logged.String(), "second signal") {
				t.Errorf("log: expected a line about the second signal, got %q", logged.String())
			}
		})
	}
}
