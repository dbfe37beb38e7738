package regress

import (
	"os"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseProcStatRecorded(t *testing.T) {
	a, err := ParseProcStat(readTestdata(t, "proc_stat_before.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseProcStat(readTestdata(t, "proc_stat_after.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantA := CPUTimes{User: 188477, System: 115585, Idle: 365633, IOWait: 4827, SoftIRQ: 21318}
	if a != wantA {
		t.Errorf("before: got %+v, want %+v", a, wantA)
	}
	// Deltas over the recorded second on 2 cores: user 91, system 59,
	// idle 55, iowait 1, softirq 1: 207 ticks.
	p := CPUDelta(a, b)
	want := CPUPercent{User: 100 * 91.0 / 207, System: 100 * 59.0 / 207, SoftIRQ: 100 * 1.0 / 207, Interrupts: 100 * 1.0 / 207, Idle: 100 * 56.0 / 207, Ticks: 207}
	if p.Ticks != want.Ticks || !near(p.User, want.User, 1e-9) || !near(p.System, want.System, 1e-9) ||
		!near(p.SoftIRQ, want.SoftIRQ, 1e-9) || p.IRQ != 0 || !near(p.Interrupts, want.Interrupts, 1e-9) || !near(p.Idle, want.Idle, 1e-9) {
		t.Errorf("CPUDelta = %+v, want %+v", p, want)
	}
}

func TestParseProcStatErrors(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"no cpu line", "intr 1 2 3\n"},
		{"short line", "cpu  1 2 3\n"},
		{"not a number", "cpu  1 2 x 4 5 6 7 8 0 0\n"},
	} {
		if _, err := ParseProcStat(c.in); err == nil {
			t.Errorf("%s: ParseProcStat(%q) succeeded, want an error", c.name, c.in)
		}
	}
}

func TestCPUDeltaCounterWentBack(t *testing.T) {
	if p := CPUDelta(CPUTimes{Idle: 10}, CPUTimes{Idle: 5}); p != (CPUPercent{}) {
		t.Errorf("CPUDelta with a later reading smaller: got %+v, want zero", p)
	}
}

func TestParseProcPidStat(t *testing.T) {
	for _, c := range []struct {
		file string
		want uint64
	}{
		{"proc_pid_stat.txt", 0},           // recorded: cat, too short-lived to be charged a tick
		{"proc_pid_stat_spaces.txt", 1801}, // utime 1234 + stime 567, comm "swctl (daemon) x"
	} {
		got, err := ParseProcPidStat(readTestdata(t, c.file))
		if err != nil || got != c.want {
			t.Errorf("%s: got %d, %v; want %d", c.file, got, err, c.want)
		}
	}
	if _, err := ParseProcPidStat("42 cat R 1"); err == nil {
		t.Error("ParseProcPidStat without ')': want an error")
	}
}
