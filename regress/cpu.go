package regress

import (
	"github.com/swctl/swctl/internal/cpustat"
)

// CPUTimes is one reading of a machine's CPU time in clock ticks: from
// /proc/stat (cpustat.ParseStat), or kern.cp_time on the BSDs
// (ParseCPTime).
type CPUTimes = cpustat.Times

// CPUPercent is the share of the whole machine's time spent in each
// state between two readings (cpustat.Delta); its Interrupts are the
// "CPU (interrupts %)" table.
type CPUPercent = cpustat.Percent

// CPUDelta returns the percentages between readings a and b (b later).
func CPUDelta(a, b CPUTimes) CPUPercent { return cpustat.Delta(a, b) }
