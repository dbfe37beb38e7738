package lladdr_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/platform/lladdr"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// startChild runs this test binary as a helper (see childEnv) through
// cmd, waits for it to say ready, and kills it when the test ends.
func startChild(t *testing.T, cmd *exec.Cmd, spec string) *exec.Cmd {
	t.Helper()
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper %q: said %q, %v; want ready", spec, line, err)
	}
	return cmd
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestRecoverRefusesWhileLocked(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := startChild(t, exec.CommandContext(ctx, self(t), "-test.run=^$"), "lock "+dir)

	_, err := lladdr.Recover(dir, quiet)
	want := "state dir " + dir + ": a swctl daemon is running (it holds " + filepath.Join(dir, "lock") + "); stop it first"
	if err == nil || err.Error() != want {
		t.Fatalf("Recover while another process holds the lock = %v, want %q", err, want)
	}
	_, err = lladdr.LockStateDir(dir)
	var le *lladdr.StateDirLockedError
	if !errors.As(err, &le) || le.Dir != dir {
		t.Fatalf("LockStateDir while held = %v, want a *StateDirLockedError for %s", err, dir)
	}

	// The lock dies with its holder.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	rep, err := lladdr.Recover(dir, quiet)
	if err != nil || !rep.Empty() {
		t.Fatalf("Recover after the holder died = %+v, %v; want an empty report", rep, err)
	}
}

func TestLockStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	unlock, err := lladdr.LockStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v, %v; want made with mode 0700", fi, err)
	}
	// flock is per open file: a second lock in this process conflicts too.
	if _, err := lladdr.LockStateDir(dir); err == nil || !strings.Contains(err.Error(), "another swctl process holds") {
		t.Fatalf("second LockStateDir = %v, want refused", err)
	}
	unlock()
	unlock2, err := lladdr.LockStateDir(dir)
	if err != nil {
		t.Fatalf("LockStateDir after unlock = %v", err)
	}
	unlock2()
}

func TestLockStateDirRefusesASymlink(t *testing.T) {
	tests := []struct {
		name   string
		target func(t *testing.T) string // the file the link names
	}{
		{"to an existing file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "passwd")
			if err := os.WriteFile(p, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"to nothing yet", func(t *testing.T) string { return filepath.Join(t.TempDir(), "planted") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := tt.target(t)
			before, beforeErr := os.ReadFile(target)
			lock := filepath.Join(dir, lladdr.LockFile)
			if err := os.Symlink(target, lock); err != nil {
				t.Fatal(err)
			}
			unlock, err := lladdr.LockStateDir(dir)
			if err == nil {
				unlock()
			}
			want := "state dir " + dir + ": " + lock + " is a symbolic link; remove it (swctl makes the lock file itself)"
			if err == nil || err.Error() != want {
				t.Errorf("LockStateDir:\nexpected %s\ngot      %v", want, err)
			}
			after, afterErr := os.ReadFile(target)
			if string(after) != string(before) || (beforeErr == nil) != (afterErr == nil) {
				t.Errorf("link target %s: expected untouched (%q, %v), got %q, %v", target, before, beforeErr, after, afterErr)
			}
		})
	}
}

func TestRecoverWithoutStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never-made")
	rep, err := lladdr.Recover(dir, quiet)
	if err != nil || !rep.Empty() {
		t.Fatalf("Recover without a state dir = %+v, %v; want an empty report", rep, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Recover made the state dir %s", dir)
	}
}

func TestRecoverCorruptJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, lladdr.JournalFile)
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := lladdr.Recover(dir, quiet)
	if err == nil || !strings.HasPrefix(err.Error(), "lladdr journal "+path+": decode: unexpected EOF") {
		t.Fatalf("Recover with a corrupt journal = %v, want the file and the cause named", err)
	}
}
