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

func TestTail(t *testing.T) {
	dir := t.TempDir()
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
