// Package bgproc runs the harnesses' background processes (swctl
// daemons, iperf3 servers): started in a process group of their own with
// their output in a log file, reaped as they end, stopped with SIGTERM
// and, when that does not end them, SIGKILL. It is the one process
// handling of make bench (cmd/swctl-bench) and make regress (package
// regress).
package bgproc

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// StopWait is how long Stop waits after SIGTERM before SIGKILL.
const StopWait = 10 * time.Second

// Proc is a process started by Start.
type Proc struct {
	// Name says what it is, for errors ("swctl daemon in ns1").
	Name string
	// Log is its log file (stdout and stderr).
	Log string
	// cmd is the process (ip netns exec and taskset exec the program, so
	// its PID is the program's).
	cmd *exec.Cmd
	// done is closed when cmd has been reaped.
	done chan struct{}
}

// Start starts args with stdout and stderr to the file log (created or
// truncated), in a process group of its own, and reaps it when it ends.
func Start(name, log string, args ...string) (*Proc, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", name, err)
	}
	defer f.Close()
	p := &Proc{Name: name, Log: log, done: make(chan struct{})}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, strings.Join(args, " "), err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process's ID.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has ended and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool { return Closed(p.done) }

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

// Stop sends SIGTERM and, when the process has not ended after
// StopWait, SIGKILL; the error says so then.
func (p *Proc) Stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(StopWait):
		p.Kill()
		return fmt.Errorf("%s (pid %d) did not stop on SIGTERM within %v; killed", p.Name, p.Pid(), StopWait)
	}
}

// Kill ends the process at once and waits until it is reaped.
func (p *Proc) Kill() {
	p.cmd.Process.Kill()
	<-p.done
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

// Alive reports whether pid is a process that has not exited; a zombie
// waiting for its reaper counts as exited. It reads /proc (Linux).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// StopPID ends a process this program did not start (a daemon that
// detached, known by its pid file): SIGTERM, then SIGKILL when it is still
// alive after wait. It reports whether SIGKILL was needed.
func StopPID(pid int, wait time.Duration) (killed bool) {
	if !Alive(pid) {
		return false
	}
	syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(wait)
	for Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !Alive(pid) {
		return false
	}
	syscall.Kill(pid, syscall.SIGKILL)
	return true
}
