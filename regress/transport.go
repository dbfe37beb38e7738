package regress

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swctl/swctl/internal/bgproc"
	"github.com/swctl/swctl/internal/cpustat"
)

// commandLine joins args into one line for a POSIX shell, each quoted
// when it holds anything but safe characters.
func commandLine(args []string) string {
	q := slices.Clone(args)
	for i, a := range q {
		if a == "" || strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@+%") != "" {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// Host is a test host reached through its transport, with the commands
// of its OS: the ssh client, which reads the user's ~/.ssh/config (keys,
// user, port, jump hosts), or ip netns exec in a local network namespace
// (a testbed's, or one standing for a real host to exercise that code
// path without real hosts).
type Host struct {
	// Conf is the host's section of regress.conf, whose parser checked
	// it: its Transport ("ssh" or "netns") and Host (the ssh
	// destination, or the namespace's name under /run/netns) say how
	// commands reach it.
	Conf HostConfig
	// cmds records every command run.
	cmds *Commands
}

// transport names the transport and host for messages: "ssh dut1",
// "netns swr1dut".
func (h *Host) transport() string { return h.Conf.Transport + " " + h.Conf.Host }

// String names the host: "dut (ssh dut1)", or a testbed's namespace
// "netns swr1dut".
func (h *Host) String() string {
	if h.Conf.Role == "" {
		return h.transport()
	}
	return fmt.Sprintf("%s (%s)", h.Conf.Role, h.transport())
}

// Command returns an unstarted local command that runs args on the host,
// with its stdin, stdout and stderr connected through. Over ssh, args are
// quoted for the remote shell, which ssh hands its command line to;
// BatchMode keeps ssh from asking for a password in the middle of a suite.
func (h *Host) Command(ctx context.Context, args ...string) *exec.Cmd {
	if h.Conf.Transport == "ssh" {
		return exec.CommandContext(ctx, "ssh", "-o", "BatchMode=yes", "-T", h.Conf.Host, "--", commandLine(args))
	}
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.Conf.Host}, args...)...)
}

// Run runs args on the host with stdin (may be nil) and returns stdout;
// the error names the host, the command and carries stderr.
func (h *Host) Run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := h.command(ctx, args...)
	cmd.Stdin = stdin
	return capture(cmd, fmt.Sprintf("%s: %s", h, commandLine(args)))
}

// run runs args like Run and drops stdout (testbed.change's run).
func (h *Host) run(ctx context.Context, args ...string) error {
	_, err := h.Run(ctx, nil, args...)
	return err
}

// within runs args like Run, for timeout at most, and returns stdout.
func (h *Host) within(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := h.Run(ctx, nil, args...)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("%s: %s: no answer within %v", h, commandLine(args), timeout)
	}
	return string(out), err
}

// command records args and returns the unstarted local command that
// runs them on the host (Command).
func (h *Host) command(ctx context.Context, args ...string) *exec.Cmd {
	h.cmds.record(h.line(args))
	return h.Command(ctx, args...)
}

// line is how the command log records args run on the host: "[netns
// swr1dut] cat /proc/stat", "[ssh dut1] ..." (quoted as for a shell).
func (h *Host) line(args []string) string {
	return fmt.Sprintf("[%s] %s", h.transport(), commandLine(args))
}

// readOS runs linux on a Linux host, bsd on the others, like Run, and
// parses what it printed with parseLinux or parseBSD, whose error it
// prefixes with the host.
func readOS[T any](ctx context.Context, h *Host, linux, bsd []string, parseLinux, parseBSD func(out string) (T, error)) (v T, err error) {
	if h.Conf.OS != "linux" {
		linux, parseLinux = bsd, parseBSD
	}
	out, err := h.Run(ctx, nil, linux...)
	if err == nil {
		if v, err = parseLinux(string(out)); err != nil {
			err = fmt.Errorf("%s: %w", h, err)
		}
	}
	return v, err
}

// Proc is a command on a host whose PID there is known: a daemon, an
// iperf3 server, or the foreground command of RunStoppable.
type Proc struct {
	// PID is the process's ID on the host.
	PID int
	// cmd is the local command (ssh or ip netns exec) carrying it.
	cmd *exec.Cmd
	// done is closed when cmd has been reaped.
	done chan struct{}
	// err is cmd's exit error; set before done is closed.
	err error
	// stderr is what cmd wrote to its standard error.
	stderr bytes.Buffer
	// host is where it runs.
	host *Host
	// desc is its command line, for errors.
	desc string
	// log is the file on the host its output goes to; "" for
	// RunStoppable's.
	log string
}

// start starts args on the host through a shell that prints its PID and
// execs them: the PID is the command's, on the host, whatever the
// transport. Their stdout and stderr go to the file log on the host, or
// with log "" what they print after the PID goes to out. The command log
// records args, with " > LOG &" for a log.
func (h *Host) start(ctx context.Context, out io.Writer, log string, args ...string) (*Proc, error) {
	script, zero, logged := `echo $$; exec "$@"`, "sh", h.line(args)
	if log != "" { // $0 names the log
		script, zero, logged = script+` >"$0" 2>&1`, log, logged+" > "+log+" &"
	}
	h.cmds.record(logged)
	p := &Proc{done: make(chan struct{}), host: h, desc: strings.Join(args, " "), log: log}
	p.cmd = h.Command(context.WithoutCancel(ctx), append([]string{"sh", "-c", script, zero}, args...)...)
	// Its own process group: a Ctrl-C at the terminal reaches the
	// harness, which stops the command on the host.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Stderr = &p.stderr
	pipe, err := p.cmd.StdoutPipe()
	if err == nil {
		err = p.cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", h, p.desc, err)
	}
	r := bufio.NewReader(pipe)
	line, rerr := r.ReadString('\n')
	go func() {
		io.Copy(out, r) // until the command's stdout closes, before Wait
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	if p.PID, err = strconv.Atoi(strings.TrimSpace(line)); rerr != nil || err != nil {
		p.cmd.Process.Kill()
		<-p.done
		return nil, fmt.Errorf("%s: start %s: no PID from the host (%q): %v", h, p.desc, line, rerr)
	}
	return p, nil
}

// Start starts args on the host in the background with stdout and stderr
// going to log on the host.
func (h *Host) Start(ctx context.Context, log string, args ...string) (*Proc, error) {
	return h.start(ctx, io.Discard, log, args...)
}

// Tail returns the end of the process's log (its last 5 lines), for
// errors.
func (p *Proc) Tail() string {
	out, err := p.host.within(context.Background(), 10*time.Second, "tail", "-5", p.log)
	if err != nil {
		return err.Error()
	}
	return cmp.Or(strings.TrimSpace(out), "(empty log)")
}

// RunStoppable runs args on the host in the foreground like Run, as a
// Proc: when ctx ends before it does, it is stopped there, for an ssh
// client that goes away leaves its remote command running. It returns
// stdout.
func (h *Host) RunStoppable(ctx context.Context, args ...string) ([]byte, error) {
	var out bytes.Buffer
	p, err := h.start(ctx, &out, "", args...)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		p.Stop(sctx)
		cancel()
		return out.Bytes(), fmt.Errorf("%s: %s: %w", h, p.desc, ctx.Err())
	}
	if p.err != nil {
		return out.Bytes(), fmt.Errorf("%s: %s: %v: %s", h, p.desc, p.err, strings.TrimSpace(p.stderr.String()))
	}
	return out.Bytes(), nil
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool { return bgproc.Closed(p.done) }

// Stop sends SIGTERM on the host, then SIGKILL after 10 s, and waits for
// the local carrier command to end. Stopping a stopped process is no
// error.
func (p *Proc) Stop(ctx context.Context) error {
	if p.Exited() {
		return nil
	}
	p.host.Run(ctx, nil, "kill", "-TERM", strconv.Itoa(p.PID))
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	p.host.Run(ctx, nil, "kill", "-KILL", strconv.Itoa(p.PID))
	// The local carrier command is killed too if that has not ended it
	// within 5 s.
	kill := time.AfterFunc(5*time.Second, func() { p.cmd.Process.Kill() })
	defer kill.Stop()
	<-p.done
	return fmt.Errorf("%s: %s (pid %d) did not stop on SIGTERM within 10s; killed", p.host, p.desc, p.PID)
}

// CPU reads the host's whole-machine CPU times: /proc/stat on Linux,
// kern.cp_time on the BSDs.
func (h *Host) CPU(ctx context.Context) (CPUTimes, error) {
	return readOS(ctx, h, []string{"cat", "/proc/stat"}, []string{"sysctl", "-n", "kern.cp_time"}, func(out string) (CPUTimes, error) {
		c, _, err := cpustat.ParseStat(out)
		return c, err
	}, func(out string) (CPUTimes, error) { return ParseCPTime(h.Conf.OS, out) })
}

// ProcCPU reads the user+system CPU time of process pid on the host: in
// USER_HZ ticks on Linux (/proc/PID/stat, the unit of /proc/stat), in
// hundredths of a second on the BSDs (ps cputime; kern.cp_time counts at
// stathz, so there the engine's share is taken against wall time).
func (h *Host) ProcCPU(ctx context.Context, pid int) (uint64, error) {
	return readOS(ctx, h, []string{"cat", fmt.Sprintf("/proc/%d/stat", pid)}, []string{"ps", "-o", "cputime=", "-p", strconv.Itoa(pid)}, func(out string) (uint64, error) {
		u, s, err := cpustat.ParsePidStat(out)
		return u + s, err
	}, ParsePsCputime)
}

// MAC returns the hardware address of interface ifname on the host:
// /sys/class/net/IF/address on Linux, ifconfig's ether or lladdr line on
// the BSDs.
func (h *Host) MAC(ctx context.Context, ifname string) (string, error) {
	parse := func(out string) (string, error) {
		mac, err := ParseMAC(h.Conf.OS, out)
		if err != nil {
			err = fmt.Errorf("%s: %w", ifname, err)
		}
		return mac, err
	}
	return readOS(ctx, h, []string{"cat", "/sys/class/net/" + ifname + "/address"}, []string{"ifconfig", ifname}, parse, parse)
}

// ifconfigMACRE finds the address on ifconfig's first "ether" (FreeBSD)
// or "lladdr" (OpenBSD) line.
var ifconfigMACRE = regexp.MustCompile(`(?m)^[ \t]*(?:ether|lladdr)[ \t]+(\S+)`)

// ParseMAC reads an interface's hardware address from the output of
// `cat /sys/class/net/IF/address` (linux) or `ifconfig IF` (FreeBSD's
// "ether" line, OpenBSD's "lladdr").
func ParseMAC(goos, text string) (string, error) {
	s := strings.TrimSpace(text)
	if goos != "linux" {
		s = ""
		if m := ifconfigMACRE.FindStringSubmatch(text); m != nil {
			s = m[1]
		}
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("no Ethernet address in %q", bgproc.Clip(text))
	}
	return hw.String(), nil
}

// NCPU returns the host's number of online CPUs.
func (h *Host) NCPU(ctx context.Context) (int, error) {
	parse := func(out string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q is not a CPU count", out)
		}
		return n, nil
	}
	return readOS(ctx, h, []string{"getconf", "_NPROCESSORS_ONLN"}, []string{"sysctl", "-n", "hw.ncpu"}, parse, parse)
}

// ParseCPTime reads `sysctl -n kern.cp_time` (a "kern.cp_time=" or
// "kern.cp_time:" prefix is allowed): OpenBSD prints user, nice, sys,
// spin, intr, idle separated by commas; FreeBSD user, nice, sys, intr,
// idle separated by blanks. Spinning is kernel time and counts as System.
func ParseCPTime(goos, text string) (CPUTimes, error) {
	s := strings.TrimSpace(text)
	if i := strings.IndexAny(s, "=:"); i >= 0 {
		s = s[i+1:]
	}
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	v := make([]uint64, len(f))
	for i, x := range f {
		n, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return CPUTimes{}, fmt.Errorf("kern.cp_time: field %d %q: not a count", i+1, x)
		}
		v[i] = n
	}
	switch {
	case goos == "openbsd" && len(v) == 6:
		return CPUTimes{User: v[0], Nice: v[1], System: v[2] + v[3], IRQ: v[4], Idle: v[5]}, nil
	case goos == "freebsd" && len(v) == 5:
		return CPUTimes{User: v[0], Nice: v[1], System: v[2], IRQ: v[3], Idle: v[4]}, nil
	}
	return CPUTimes{}, fmt.Errorf("kern.cp_time on %s: %d fields %q, want 6 on openbsd (user,nice,sys,spin,intr,idle) or 5 on freebsd (user nice sys intr idle)", goos, len(v), strings.TrimSpace(text))
}

// ParsePsCputime reads ps's cputime ([[dd-]hh:]mm:ss[.hh]) in hundredths
// of a second.
func ParsePsCputime(text string) (uint64, error) {
	s := strings.TrimSpace(text)
	days, hms, ok := strings.Cut(s, "-")
	if !ok {
		days, hms = "0", s
	}
	whole, frac, _ := strings.Cut(hms, ".")
	f := strings.Split(whole, ":")
	if len(f) < 2 || len(f) > 3 {
		return 0, fmt.Errorf("ps cputime %q: want [[dd-]hh:]mm:ss[.hh]", text)
	}
	if len(f) == 2 {
		f = append([]string{"0"}, f...)
	}
	// Days, hours, minutes, seconds and hundredths, each a digit of its
	// own radix.
	var total uint64
	for i, x := range []string{days, f[0], f[1], f[2], (frac + "00")[:2]} {
		n, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("ps cputime %q: %w", text, err)
		}
		total = total*[]uint64{0, 24, 60, 60, 100}[i] + n
	}
	return total, nil
}
