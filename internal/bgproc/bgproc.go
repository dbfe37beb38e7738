// Package bgproc holds the harnesses' helpers for the processes they
// run (make bench, cmd/swctl-bench, and make regress, package regress,
// which start them on a test host through regress.Host): whether one
// has ended, the end of its log and a tool's output clipped for an
// error, and stopping a process the harness did not start (a daemon
// that detached): SIGTERM and, when that does not end it, SIGKILL.
package bgproc

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Closed reports, without waiting, whether done is closed: whether a
// process whose reaper closes done has ended.
func Closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Clip shortens a tool's output for an error message: trimmed, at most
// 300 bytes and "...".
func Clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// Tail returns the end of the log file at path (at most 400 bytes), for
// errors; "(empty log)" when there is nothing.
func Tail(path string) string {
	bs, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	s := strings.TrimSpace(string(bs))
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	return cmp.Or(s, "(empty log)")
}

// Alive reports whether pid is a process that has not exited: one with a
// /proc entry (Linux) whose state is not zombie (waiting for its reaper).
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state is the first field after the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// StopPID ends a process this program did not start (a daemon that
// detached, known by its pid file): SIGTERM, then SIGKILL when it is still
// alive after wait. It reports whether SIGKILL was needed.
func StopPID(pid int, wait time.Duration) (killed bool) {
	if !Alive(pid) {
		return false
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(wait); Alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			return true
		}
	}
	return false
}
