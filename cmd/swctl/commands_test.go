package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/api/apitest"
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

func TestDaemonRefusesAConfigThatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		wantErr string // after "swctl: PATH: "
	}{
		{"FIFO", func(t *testing.T, path string) {
			if err := unix.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file but a FIFO"},
		{"symbolic link", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(target, []byte("first-line-of-another-file\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link (give the file's own path: the daemon replaces the file when it saves)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "swctl.conf")
			tt.make(t, conf)
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run(context.Background(), []string{"swctl", "daemon", "--config", conf,
					"--socket", apitest.SocketPath(t), "--state-dir", filepath.Join(dir, "state")}, &stdout, &stderr)
			}()
			select {
			case code := <-done:
				if code != 1 {
					t.Errorf("exit code: expected 1, got %d", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("swctl daemon: expected to refuse the configuration at once, still starting after 10s")
			}
			if want := "swctl: " + conf + ": " + tt.wantErr + "\n"; stderr.String() != want {
				t.Errorf("stderr:\nexpected %q\ngot      %q", want, stderr.String())
			}
		})
	}
}
