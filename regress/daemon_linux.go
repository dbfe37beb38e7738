package regress

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// daemonProc is a swctl daemon started by the harness in a namespace.
type daemonProc struct {
	// cmd is the running process (ip netns exec execs the daemon, so its
	// PID is the daemon's).
	cmd *exec.Cmd
	// done is closed when cmd has been reaped.
	done chan struct{}
	// log is the daemon's log file.
	log string
	// bin is the swctl binary.
	bin string
	// sock is the daemon's control socket.
	sock string
	// ns is the namespace it runs in.
	ns string
	// cmds runs and records the CLI commands.
	cmds *Commands
}

// startDaemon starts bin's daemon in namespace ns with its socket,
// configuration, state and log next to base, and waits up to 10 s until
// it answers.
func startDaemon(ctx context.Context, cmds *Commands, ns, bin, base string) (_ *daemonProc, err error) {
	d := &daemonProc{log: base + ".log", bin: bin, sock: base + ".sock", ns: ns, cmds: cmds}
	logf, err := os.Create(d.log)
	if err != nil {
		return nil, fmt.Errorf("daemon log: %w", err)
	}
	defer logf.Close()
	args := []string{"ip", "netns", "exec", ns, bin, "daemon", "--socket", d.sock, "--config", base + ".conf", "--state-dir", base + ".state"}
	cmds.Log = append(cmds.Log, strings.Join(args, " ")+" &")
	d.cmd = exec.Command(args[0], args[1:]...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("daemon %s in %s: %w", bin, ns, err)
	}
	d.done = make(chan struct{})
	go func() { d.cmd.Wait(); close(d.done) }()
	defer func() {
		if err != nil {
			d.stop()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := cmds.Output(ctx, "", nil, "ip", "netns", "exec", ns, bin, "--socket", d.sock, "bridge", "show"); err == nil {
			return d, nil
		}
		select {
		case <-d.done:
			return nil, fmt.Errorf("daemon exited at start: %s", tail(d.log))
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("daemon did not answer within 10s: %s", tail(d.log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// swctl runs the daemon's CLI with args.
func (d *daemonProc) swctl(ctx context.Context, args ...string) error {
	_, err := d.cmds.Output(ctx, "", nil, append([]string{"ip", "netns", "exec", d.ns, d.bin, "--socket", d.sock}, args...)...)
	return err
}

// pid is the daemon's process ID.
func (d *daemonProc) pid() int { return d.cmd.Process.Pid }

// stop sends SIGTERM and, after 10 s, SIGKILL.
func (d *daemonProc) stop() error {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
		return fmt.Errorf("daemon in %s did not stop on SIGTERM within 10s; killed", d.ns)
	}
}
