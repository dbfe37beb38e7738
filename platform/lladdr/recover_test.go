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
	"github.com/swctl/swctl/platform/statedir"
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
	_, err = statedir.Lock(dir)
	var le *statedir.LockedError
	if !errors.As(err, &le) || le.Dir != dir {
		t.Fatalf("statedir.Lock while held = %v, want a *statedir.LockedError for %s", err, dir)
	}

	// The lock dies with its holder.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	rep, err := lladdr.Recover(dir, quiet)
	if err != nil || !rep.Empty() {
		t.Fatalf("Recover after the holder died = %+v, %v; want an empty report", rep, err)
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
