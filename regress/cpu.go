package regress

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUTimes is one reading of the whole machine's CPU time, in clock ticks
// (USER_HZ), from the first line of /proc/stat.
type CPUTimes struct {
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
func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseProcStat reads the aggregate "cpu " line of a /proc/stat text.
func ParseProcStat(text string) (CPUTimes, error) {
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: cpu line has %d fields, want at least 9: %q", len(f), strings.TrimSpace(line))
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
			}
			v[i] = n
		}
		return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
	}
	return CPUTimes{}, fmt.Errorf("/proc/stat: no aggregate cpu line")
}

// CPUPercent is the share of the whole machine's time (all cores: on 2
// cores 50% is one core busy) spent in each state between two readings.
type CPUPercent struct {
	// User is user-mode time, percent.
	User float64 `json:"user"`
	// System is kernel time outside interrupts, percent.
	System float64 `json:"system"`
	// IRQ is hardware interrupt time, percent.
	IRQ float64 `json:"irq"`
	// SoftIRQ is softirq time, percent.
	SoftIRQ float64 `json:"softirq"`
	// Interrupts is IRQ + SoftIRQ, the "CPU (interrupts %)" table.
	Interrupts float64 `json:"interrupts"`
	// Idle is idle and I/O-wait time, percent.
	Idle float64 `json:"idle"`
	// Ticks is the total number of clock ticks between the readings.
	Ticks uint64 `json:"ticks"`
}

// CPUDelta returns the percentages between readings a and b (b later).
func CPUDelta(a, b CPUTimes) CPUPercent {
	tot := b.Total() - a.Total()
	if tot == 0 || b.Total() < a.Total() {
		return CPUPercent{}
	}
	pct := func(x, y uint64) float64 { return 100 * float64(y-x) / float64(tot) }
	p := CPUPercent{
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

// ParseProcPidStat returns utime + stime, in clock ticks, from a
// /proc/PID/stat text. The command name may hold spaces and parentheses,
// so fields are counted from the last ')'.
func ParseProcPidStat(text string) (uint64, error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/PID/stat: no ')' after the command name")
	}
	f := strings.Fields(text[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/PID/stat: %d fields after the command name, want at least 13", len(f))
	}
	var sum uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/PID/stat: utime/stime: %w", err)
		}
		sum += n
	}
	return sum, nil
}

// readCPU reads /proc/stat.
func readCPU() (CPUTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, err
	}
	return ParseProcStat(string(b))
}

// readProcCPU reads utime + stime of process pid.
func readProcCPU(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseProcPidStat(string(b))
}
