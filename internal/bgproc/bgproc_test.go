package bgproc

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartLogsAndEnds(t *testing.T) {
	log := filepath.Join(t.TempDir(), "echo.log")
	p, err := Start("echo", log, "sh", "-c", "echo hello; echo oops >&2")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("sh did not end within 10 s")
	}
	if !p.Exited() {
		t.Errorf("Exited() = false after Done")
	}
	if got := Tail(log); got != "hello\noops" {
		t.Errorf("Tail = %q, want both lines", got)
	}
}

func TestStopTerminates(t *testing.T) {
	p, err := Start("sleep", filepath.Join(t.TempDir(), "sleep.log"), "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited() {
		t.Fatal("sleep 60 ended at once")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v, want nil (sleep ends on SIGTERM)", err)
	}
	if !p.Exited() {
		t.Errorf("still running after Stop")
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Start("x", filepath.Join(dir, "no", "such", "dir", "x.log"), "true"); err == nil || !strings.HasPrefix(err.Error(), "x: log: ") {
		t.Errorf("log in a missing directory: %v, want an error naming x and its log", err)
	}
	if _, err := Start("x", filepath.Join(dir, "x.log"), filepath.Join(dir, "no-such-program")); err == nil || !strings.Contains(err.Error(), "no-such-program") {
		t.Errorf("missing program: %v, want an error naming it", err)
	}
	if got := Tail(filepath.Join(dir, "none.log")); !strings.Contains(got, "no such file") {
		t.Errorf("Tail of a missing file = %q, want the error", got)
	}
	os.WriteFile(filepath.Join(dir, "empty.log"), nil, 0o644)
	if got := Tail(filepath.Join(dir, "empty.log")); got != "(empty log)" {
		t.Errorf("Tail of an empty file = %q", got)
	}
	os.WriteFile(filepath.Join(dir, "long.log"), []byte(strings.Repeat("x", 1000)+"END"), 0o644)
	if got := Tail(filepath.Join(dir, "long.log")); len(got) != 403 || !strings.HasSuffix(got, "END") || !strings.HasPrefix(got, "...") {
		t.Errorf("Tail of a long file: %d bytes %.10q..., want ... and the last 400", len(got), got)
	}
}

// StopPID ends a process that goes on SIGTERM without SIGKILL, and one that
// ignores SIGTERM with SIGKILL after the wait; Alive then says both exited.
func TestStopPID(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script string
		killed bool
	}{
		{"ends on SIGTERM", "echo ready; exec sleep 30", false},
		{"ignores SIGTERM", "trap '' TERM; echo ready; while :; do sleep 1; done", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tt.script)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The shell has set its trap once it says ready.
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }() // reap, so the exit shows
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			pid := cmd.Process.Pid
			if !Alive(pid) {
				t.Fatalf("Alive(%d) = false for a running process", pid)
			}
			if got := StopPID(pid, 300*time.Millisecond); got != tt.killed {
				t.Errorf("StopPID = %v, want %v", got, tt.killed)
			}
			<-done
			if Alive(pid) {
				t.Errorf("Alive(%d) = true after StopPID", pid)
			}
		})
	}
}
