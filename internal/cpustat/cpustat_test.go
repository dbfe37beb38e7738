package cpustat

import (
	"math"
	"os"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func TestParseStatRecorded(t *testing.T) {
	a, n, err := ParseStat(readTestdata(t, "proc_stat_before.txt"))
	if err != nil || n != 2 {
		t.Fatalf("before: %d CPUs, %v; want 2 CPUs", n, err)
	}
	b, _, err := ParseStat(readTestdata(t, "proc_stat_after.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantA := Times{User: 188477, System: 115585, Idle: 365633, IOWait: 4827, SoftIRQ: 21318}
	if a != wantA {
		t.Errorf("before: got %+v, want %+v", a, wantA)
	}
	if got, want := a.Total(), uint64(188477+115585+365633+4827+21318); got != want {
		t.Errorf("Total = %d, want %d", got, want)
	}
	if got, want := a.Busy(), uint64(188477+115585+21318); got != want {
		t.Errorf("Busy = %d, want %d", got, want)
	}
	// Deltas over the recorded second on 2 cores: user 91, system 59,
	// idle 55, iowait 1, softirq 1: 207 ticks.
	p := Delta(a, b)
	want := Percent{User: 100 * 91.0 / 207, System: 100 * 59.0 / 207, SoftIRQ: 100 * 1.0 / 207, Interrupts: 100 * 1.0 / 207, Idle: 100 * 56.0 / 207, Ticks: 207}
	if p.Ticks != want.Ticks || !near(p.User, want.User, 1e-9) || !near(p.System, want.System, 1e-9) ||
		!near(p.SoftIRQ, want.SoftIRQ, 1e-9) || p.IRQ != 0 || !near(p.Interrupts, want.Interrupts, 1e-9) || !near(p.Idle, want.Idle, 1e-9) {
		t.Errorf("Delta = %+v, want %+v", p, want)
	}
}

func TestParseStatErrors(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"no cpu line", "intr 1 2 3\n"},
		{"only per-CPU lines", "cpu0 1 2 3 4 5 6 7 8\n"},
		{"short line", "cpu  1 2 3\n"},
		{"not a number", "cpu  1 2 x 4 5 6 7 8 0 0\n"},
	} {
		if _, _, err := ParseStat(c.in); err == nil {
			t.Errorf("%s: ParseStat(%q) succeeded, want an error", c.name, c.in)
		}
	}
}

func TestDeltaCounterWentBack(t *testing.T) {
	if p := Delta(Times{Idle: 10}, Times{Idle: 5}); p != (Percent{}) {
		t.Errorf("Delta with a later reading smaller: got %+v, want zero", p)
	}
}

func TestParsePidStat(t *testing.T) {
	for _, c := range []struct {
		name         string
		text         string
		utime, stime uint64
	}{
		// Recorded: cat, too short-lived to be charged a tick.
		{"recorded", readTestdata(t, "proc_pid_stat.txt"), 0, 0},
		// comm "swctl (daemon) x": spaces and parentheses.
		{"spaces", readTestdata(t, "proc_pid_stat_spaces.txt"), 1234, 567},
		{"inline", "4242 (swctl bench (x)) R 1 4242 4242 0 -1 4194304 100 0 0 0 777 55 0 0 20 0 3 0 100 0 0", 777, 55},
	} {
		u, s, err := ParsePidStat(c.text)
		if err != nil || u != c.utime || s != c.stime {
			t.Errorf("%s: utime %d stime %d, %v; want %d %d", c.name, u, s, err, c.utime, c.stime)
		}
	}
	for _, bad := range []string{"42 cat R 1", "4242 (x) R 1", "4242 (x) R 1 2 3 4 5 6 7 8 9 10 x 5 0"} {
		if _, _, err := ParsePidStat(bad); err == nil {
			t.Errorf("ParsePidStat(%q): want an error", bad)
		}
	}
}

func TestNsPerFrame(t *testing.T) {
	for _, c := range []struct {
		name        string
		busy, total uint64
		ncpu        int
		wall        float64
		frames      uint64
		want        float64
		wantErr     bool
	}{
		{"half of 2 CPUs for 10 s over 1 M frames", 500, 1000, 2, 10, 1e6, 10000, false},
		{"one CPU fully busy 5 s, 200 k frames/s", 500, 1000, 2, 5, 1e6, 5000, false},
		{"idle machine", 0, 1000, 2, 5, 1e6, 0, false},
		{"no frames", 500, 1000, 2, 5, 0, 0, true},
		{"no ticks", 0, 0, 2, 5, 1e6, 0, true},
		{"more busy than total", 1001, 1000, 2, 5, 1e6, 0, true},
		{"no time", 500, 1000, 2, 0, 1e6, 0, true},
	} {
		got, err := NsPerFrame(c.busy, c.total, c.ncpu, c.wall, c.frames)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: error %v, want error: %v", c.name, err, c.wantErr)
			continue
		}
		if math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: %v ns/frame, want %v", c.name, got, c.want)
		}
	}
}

func TestBetween(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := Reading{At: t0, CPUs: 2, SelfUser: 50, Times: Times{User: 100, System: 100, Idle: 800}}
	// 2 s on 2 CPUs: 400 ticks, 300 busy (user 100 of which the tester's
	// own 60, system 150, softirq 50), 100 idle; 400 k frames.
	b := Reading{At: t0.Add(2 * time.Second), CPUs: 2, SelfUser: 110, Times: Times{User: 200, System: 250, SoftIRQ: 50, Idle: 900}}
	c, err := Between(a, b, 400000)
	if err != nil {
		t.Fatal(err)
	}
	want := Cost{WallSeconds: 2, CPUs: 2, TotalTicks: 400, BusyTicks: 300, TesterUserTicks: 60, User: 25, System: 37.5, SoftIRQ: 12.5, Frames: 400000,
		// (300-60)/400 of 2 CPUs for 2 s = 2.4 s of CPU over 400 k frames.
		NsPerFrame: 6000, WholeNsPerFrame: 7500}
	if !near(c.NsPerFrame, want.NsPerFrame, 1e-6) || !near(c.WholeNsPerFrame, want.WholeNsPerFrame, 1e-6) {
		t.Errorf("ns/frame %v (whole %v), want %v (%v)", c.NsPerFrame, c.WholeNsPerFrame, want.NsPerFrame, want.WholeNsPerFrame)
	}
	c.NsPerFrame, c.WholeNsPerFrame = want.NsPerFrame, want.WholeNsPerFrame
	if c != want {
		t.Errorf("Between = %+v\nwant      %+v", c, want)
	}
	// The tester's own time above the busy time counts as all of it.
	b.SelfUser = 1000
	if c, err := Between(a, b, 400000); err != nil || c.NsPerFrame != 0 {
		t.Errorf("tester user beyond busy: %v ns/frame, %v; want 0", c.NsPerFrame, err)
	}
	if _, err := Between(a, b, 0); err == nil {
		t.Errorf("no frame: want an error")
	}
}
