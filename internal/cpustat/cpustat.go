// Package cpustat says where a Linux machine's CPU time went, from
// /proc/stat and /proc/PID/stat, and turns two readings taken around a
// measured run into the CPU cost per frame. It is the one parser and the
// one cost arithmetic of the harnesses: make bench (cmd/swctl-bench) and
// make regress (package regress, which also reads these files from real
// test hosts through a transport, so parsing takes text).
package cpustat

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Times is one reading of the whole machine's CPU time, in clock ticks
// (USER_HZ) summed over every CPU, from the first line of /proc/stat.
type Times struct {
	// User is time in user mode, guests included.
	User uint64 `json:"user"`
	// Nice is time in user mode at low priority.
	Nice uint64 `json:"nice"`
	// System is time in kernel mode outside interrupts.
	System uint64 `json:"system"`
	// Idle is idle time.
	Idle uint64 `json:"idle"`
	// IOWait is idle time with I/O outstanding.
	IOWait uint64 `json:"iowait"`
	// IRQ is time servicing hardware interrupts.
	IRQ uint64 `json:"irq"`
	// SoftIRQ is time servicing softirqs (on veth: all packet work not
	// charged to a process).
	SoftIRQ uint64 `json:"softirq"`
	// Steal is time stolen by the hypervisor.
	Steal uint64 `json:"steal"`
}

// Total is the sum of all fields; guest time is already in User and Nice.
func (c Times) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// Busy is Total less idle and I/O-wait time.
func (c Times) Busy() uint64 { return c.Total() - c.Idle - c.IOWait }

// ParseStat reads the aggregate "cpu " line of a /proc/stat text and
// counts its per-CPU "cpuN" lines.
func ParseStat(text string) (Times, int, error) {
	var c Times
	found, cpus := false, 0
	for line := range strings.Lines(text) {
		switch name, rest, _ := strings.Cut(line, " "); {
		case name == "cpu":
			if _, err := fmt.Sscan(rest, &c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal); err != nil {
				return Times{}, 0, fmt.Errorf("/proc/stat: cpu line %q: want at least 8 tick counts: %w", strings.TrimSpace(line), err)
			}
			found = true
		case strings.HasPrefix(name, "cpu"):
			cpus++
		}
	}
	if !found {
		return Times{}, 0, errors.New("/proc/stat: no aggregate cpu line")
	}
	return c, cpus, nil
}

// ParsePidStat returns utime and stime, in clock ticks, from a
// /proc/PID/stat text. The command name may hold spaces and parentheses,
// so fields are counted from the last ')'.
func ParsePidStat(text string) (utime, stime uint64, err error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return 0, 0, errors.New("/proc/PID/stat: no ')' after the command name")
	}
	f := strings.Fields(text[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/PID/stat: %d fields after the command name, want at least 13", len(f))
	}
	utime, errU := strconv.ParseUint(f[11], 10, 64)
	stime, errS := strconv.ParseUint(f[12], 10, 64)
	if err := cmp.Or(errU, errS); err != nil {
		return 0, 0, fmt.Errorf("/proc/PID/stat: utime/stime: %w", err)
	}
	return utime, stime, nil
}

// Percent is the share of the whole machine's time (all cores: on 2
// cores 50% is one core busy) spent in each state between two readings.
type Percent struct {
	// User is user-mode time, percent.
	User float64 `json:"user"`
	// System is kernel time outside interrupts, percent.
	System float64 `json:"system"`
	// IRQ is hardware interrupt time, percent.
	IRQ float64 `json:"irq"`
	// SoftIRQ is softirq time, percent.
	SoftIRQ float64 `json:"softirq"`
	// Interrupts is IRQ + SoftIRQ.
	Interrupts float64 `json:"interrupts"`
	// Idle is idle and I/O-wait time, percent.
	Idle float64 `json:"idle"`
	// Ticks is the total number of clock ticks between the readings.
	Ticks uint64 `json:"ticks"`
}

// Delta returns the percentages between readings a and b (b later); zero
// when no tick passed or a counter went back.
func Delta(a, b Times) Percent {
	tot := since(a.Total(), b.Total())
	if tot == 0 {
		return Percent{}
	}
	pct := func(x, y uint64) float64 { return 100 * float64(since(x, y)) / float64(tot) }
	p := Percent{
		User:    pct(a.User+a.Nice, b.User+b.Nice),
		System:  pct(a.System, b.System),
		IRQ:     pct(a.IRQ, b.IRQ),
		SoftIRQ: pct(a.SoftIRQ, b.SoftIRQ),
		Idle:    pct(a.Idle+a.IOWait, b.Idle+b.IOWait),
		Ticks:   tot,
	}
	p.Interrupts = p.IRQ + p.SoftIRQ
	return p
}

// Reading is one reading for a CPU cost: the whole machine and this
// process (the tester, whose pacer spins in user mode).
type Reading struct {
	// At is when it was taken.
	At time.Time
	// Times are the whole machine's ticks.
	Times Times
	// CPUs is the number of cpuN lines in /proc/stat.
	CPUs int
	// SelfUser is this process's utime in ticks.
	SelfUser uint64
}

// Read reads /proc/stat and this process's /proc/PID/stat.
func Read() (Reading, error) {
	r := Reading{At: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return r, err
	}
	if r.Times, r.CPUs, err = ParseStat(string(b)); err != nil {
		return r, err
	}
	r.SelfUser, _, err = ReadPidTimes(os.Getpid())
	return r, err
}

// ReadPid returns utime + stime of process pid, in clock ticks.
func ReadPid(pid int) (uint64, error) {
	u, s, err := ReadPidTimes(pid)
	return u + s, err
}

// ReadPidTimes returns utime and stime of process pid, in clock ticks.
func ReadPidTimes(pid int) (utime, stime uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	return ParsePidStat(string(b))
}

// Cost is the CPU spent between two readings, per frame delivered in
// that span.
type Cost struct {
	// WallSeconds is the time between the readings.
	WallSeconds float64 `json:"wall_s"`
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int `json:"cpus"`
	// TotalTicks is every tick between the readings.
	TotalTicks uint64 `json:"total_ticks"`
	// BusyTicks is the non-idle, non-iowait ticks.
	BusyTicks uint64 `json:"busy_ticks"`
	// TesterUserTicks is the reading process's utime delta: its pacer
	// spins between bursts, which is the tester's cost, not the path's.
	TesterUserTicks uint64 `json:"tester_user_ticks"`
	// User, System, SoftIRQ, IRQ are whole-machine percentages.
	User float64 `json:"user_pct"`
	// System is the system percentage.
	System float64 `json:"system_pct"`
	// SoftIRQ is the softirq percentage.
	SoftIRQ float64 `json:"softirq_pct"`
	// IRQ is the irq percentage.
	IRQ float64 `json:"irq_pct"`
	// Frames is the number of frames delivered in the span.
	Frames uint64 `json:"frames"`
	// NsPerFrame is (busy - tester user) ticks as ns per delivered frame.
	NsPerFrame float64 `json:"ns_per_frame"`
	// WholeNsPerFrame is all busy ticks as ns per delivered frame, the
	// tester's spinning included.
	WholeNsPerFrame float64 `json:"whole_ns_per_frame"`
}

// Between returns the cost of frames delivered between readings a and b
// (b later). The error says why there is no per-frame figure (no frame,
// no tick); the rest of the Cost is filled in anyway.
func Between(a, b Reading, frames uint64) (c Cost, err error) {
	c = Cost{WallSeconds: b.At.Sub(a.At).Seconds(), CPUs: b.CPUs, Frames: frames,
		TotalTicks: since(a.Times.Total(), b.Times.Total()), TesterUserTicks: since(a.SelfUser, b.SelfUser)}
	c.BusyTicks = min(since(a.Times.Busy(), b.Times.Busy()), c.TotalTicks)
	p := Delta(a.Times, b.Times)
	c.User, c.System, c.SoftIRQ, c.IRQ = p.User, p.System, p.SoftIRQ, p.IRQ
	// Both figures share total, CPUs, time and frames, and neither's busy
	// ticks exceed the total: they fail together, for the same reason.
	net := c.BusyTicks - min(c.TesterUserTicks, c.BusyTicks)
	c.NsPerFrame, err = NsPerFrame(net, c.TotalTicks, c.CPUs, c.WallSeconds, frames)
	c.WholeNsPerFrame, _ = NsPerFrame(c.BusyTicks, c.TotalTicks, c.CPUs, c.WallSeconds, frames)
	return c, err
}

// since is counter reading b less the earlier reading a; 0 when the
// counter went back.
func since(a, b uint64) uint64 { return max(a, b) - a }

// NsPerFrame converts a CPU reading to nanoseconds of CPU per frame:
// busy of total clock ticks (summed over all ncpu cores, as /proc/stat
// counts them) during wall seconds, spread over frames. With 2 cores,
// 10 s, half the ticks busy and 1 M frames: 0.5 * 2 * 10 s / 1 M = 10 µs.
func NsPerFrame(busy, total uint64, ncpu int, wall float64, frames uint64) (float64, error) {
	switch {
	case total == 0:
		return 0, errors.New("CPU per frame: no clock ticks between the readings")
	case busy > total:
		return 0, fmt.Errorf("CPU per frame: %d busy ticks of %d", busy, total)
	case ncpu < 1 || wall <= 0:
		return 0, fmt.Errorf("CPU per frame: %d CPUs, %v s: want at least 1 CPU and a positive time", ncpu, wall)
	case frames == 0:
		return 0, errors.New("CPU per frame: no frame delivered")
	}
	return float64(busy) / float64(total) * float64(ncpu) * wall * 1e9 / float64(frames), nil
}
