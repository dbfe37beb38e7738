package health

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// interval is the time between two checks in the scripts below.
const interval = 2 * time.Second

var errRefused = errors.New("connect: connection refused")

func TestConfig(t *testing.T) {
	cases := []struct {
		cfg     Config
		want    Config
		wantErr string
	}{
		{Config{}, Config{Rise: 2, Fall: 3}, ""},
		{Config{Rise: 1, Fall: 1}, Config{Rise: 1, Fall: 1}, ""},
		{Config{Rise: 100, Fall: 5}, Config{Rise: 100, Fall: 5}, ""},
		{Config{Rise: -1}, Config{}, "web: backend 10.0.0.7: health: rise -1: want 1 to 100 (default 2)"},
		{Config{Fall: 101}, Config{}, "fall 101: want 1 to 100 (default 3)"},
	}
	for _, c := range cases {
		m, err := New("web: backend 10.0.0.7", c.cfg, clock.NewFake(), nil)
		switch {
		case c.wantErr == "" && (err != nil || m.Config() != c.want):
			t.Errorf("New(%+v): %v; want thresholds %+v", c.cfg, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("New(%+v): error %v, want one containing %q", c.cfg, err, c.wantErr)
		}
	}
}

// TestMachine runs scripts of results, one check every interval on a
// fake clock: "+" a success, "-" a failure. want is the state after each
// result (U up, D down, ? unknown).
func TestMachine(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		results string
		want    string
	}{
		{"first success: up at once", Config{}, "+", "U"},
		{"first failure: down at once", Config{}, "-", "D"},
		{"up, down after 3 failures", Config{}, "+---", "UUUD"},
		{"up, a success restarts the failure count", Config{}, "+--+--+---", "UUUUUUUUUD"},
		{"down, up after 2 successes", Config{}, "-++", "DDU"},
		{"down, a failure restarts the success count", Config{}, "-+-+-++", "DDDDDDU"},
		{"flapping every check stays up", Config{}, "+-+-+-+-", "UUUUUUUU"},
		{"flapping every check stays down", Config{}, "-+-+-+-+", "DDDDDDDD"},
		{"rise 1, fall 1: every result decides", Config{Rise: 1, Fall: 1}, "+-+--++", "UDUDDUU"},
		{"rise 4, fall 2", Config{Rise: 4, Fall: 2}, "+--+++-++++-", "UUDDDDDDDDUU"},
	}
	for _, c := range cases {
		clk := clock.NewFake()
		var logBuf bytes.Buffer
		start := clk.Now()
		m, err := New("web: backend 10.0.0.7", c.cfg, clk, slog.New(slog.NewTextHandler(&logBuf, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if st := m.Status(); st.State != Unknown || !st.Since.Equal(start) || st.Checks != 0 {
			t.Fatalf("%s: new machine %+v, want unknown since %v, no checks", c.name, st, start)
		}
		changes, since := 0, start
		prev := Unknown
		for i, r := range c.results {
			clk.Advance(interval)
			var result error
			if r == '-' {
				result = errRefused
			}
			changed := m.Record(result)
			st := m.Status()
			want := map[byte]State{'U': Up, 'D': Down, '?': Unknown}[c.want[i]]
			if st.State != want || changed != (want != prev) {
				t.Fatalf("%s: after result %d (%c): %v, changed %v; want %v, changed %v", c.name, i+1, r, st.State, changed, want, want != prev)
			}
			if changed {
				changes++
				since = clk.Now()
			}
			if !st.Since.Equal(since) || !st.LastCheck.Equal(clk.Now()) || st.Checks != uint64(i+1) {
				t.Fatalf("%s: after result %d: since %v, last check %v, %d checks; want %v, %v, %d",
					c.name, i+1, st.Since, st.LastCheck, st.Checks, since, clk.Now(), i+1)
			}
			if (r == '+') != (st.Successes > 0 && st.Failures == 0) || (r == '-') != (st.Failures > 0 && st.Successes == 0) {
				t.Fatalf("%s: after result %d (%c): %d successes, %d failures in a row; want a run of the last kind", c.name, i+1, r, st.Successes, st.Failures)
			}
			if m.State() != st.State {
				t.Fatalf("%s: State() = %v, Status().State = %v; want equal", c.name, m.State(), st.State)
			}
			prev = want
		}
		if n := strings.Count(logBuf.String(), "\n"); n != changes {
			t.Errorf("%s: %d log lines for %d changes, want one per change:\n%s", c.name, n, changes, logBuf.String())
		}
	}
}

// TestMachineLog checks what the log line of each kind of change says.
func TestMachineLog(t *testing.T) {
	cases := []struct {
		name    string
		results []error
		want    string
	}{
		{"first check passes", []error{nil}, `from=unknown to=up cause="first check successful"`},
		{"first check fails", []error{errRefused}, `from=unknown to=down cause="first check failed: connect: connection refused"`},
		{"goes down", []error{nil, errRefused, errRefused, errors.New("timeout")}, `from=up to=down cause="3 failed checks: timeout"`},
		{"comes up", []error{errRefused, nil, nil}, `from=down to=up cause="2 successful checks"`},
	}
	for _, c := range cases {
		var logBuf bytes.Buffer
		m, err := New("web: backend 10.0.0.7", Config{}, clock.NewFake(), slog.New(slog.NewTextHandler(&logBuf, nil)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.results {
			m.Record(r)
		}
		lines := strings.Split(strings.TrimSpace(logBuf.String()), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, `backend="web: backend 10.0.0.7"`) || !strings.Contains(last, c.want) {
			t.Errorf("%s: last log line %q, want it to name the backend and contain %q", c.name, last, c.want)
		}
	}
}

// TestMachineLastError checks that the cause of the last failure stays
// after successes, for display.
func TestMachineLastError(t *testing.T) {
	m, err := New("b", Config{}, clock.NewFake(), nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		result error
		want   string
	}{
		{nil, ""},
		{errRefused, errRefused.Error()},
		{nil, errRefused.Error()},
		{fmt.Errorf("http: status 503"), "http: status 503"},
	}
	for i, s := range steps {
		m.Record(s.result)
		if got := m.Status().LastError; got != s.want {
			t.Errorf("after result %d (%v): LastError %q, want %q", i+1, s.result, got, s.want)
		}
	}
}

// TestMachineConcurrent records from several probers while others read;
// run it with -race.
func TestMachineConcurrent(t *testing.T) {
	clk := clock.NewFake()
	m, err := New("b", Config{}, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				switch {
				case w < 2 && i%3 == 0:
					m.Record(errRefused)
				case w < 2:
					m.Record(nil)
				default:
					_ = m.Status()
					clk.Advance(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if st := m.Status(); st.Checks != 2*2000 {
		t.Errorf("%d checks recorded, want %d", st.Checks, 2*2000)
	}
}
