package bridge

import (
	"slices"
	"testing"
	"time"
)

// TestAgeing checks when a learned address stops being known, on the
// fake clock: at the timeout after it was last seen, never with timeout 0,
// never for a static entry.
func TestAgeing(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		static  bool
		// refreshAt, when not zero, is when stB sends again.
		refreshAt time.Duration
		at        time.Duration
		known     bool
	}{
		{name: "known just before the timeout", timeout: 240 * time.Second, at: 239 * time.Second, known: true},
		{name: "unknown at the timeout", timeout: 240 * time.Second, at: 240 * time.Second, known: false},
		{name: "a refresh restarts the timeout", timeout: 240 * time.Second, refreshAt: 200 * time.Second, at: 439 * time.Second, known: true},
		{name: "unknown a timeout after the refresh", timeout: 240 * time.Second, refreshAt: 200 * time.Second, at: 440 * time.Second, known: false},
		{name: "timeout 0 never ages", timeout: 0, at: 1000 * time.Hour, known: true},
		{name: "a static entry never ages", timeout: time.Second, static: true, at: 1000 * time.Hour, known: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixtureOpts(t, Options{Timeout: tc.timeout}, true, "a", "b", "c")
			start := fx.clk.Now()
			if tc.static {
				fx.b.AddStatic(stB, 0, "b")
			} else {
				fx.send("b", ip4(stA, stB))
			}
			if tc.refreshAt > 0 {
				fx.clk.Advance(tc.refreshAt)
				fx.send("b", ip4(stA, stB))
			}
			fx.clk.Advance(tc.at - fx.clk.Now().Sub(start))
			fx.reset()
			f := ip4(stB, stA)
			fx.send("a", f)
			want := []string{"b", "c"}
			if tc.known {
				want = []string{"b"}
			}
			if got := fx.receivers(f); !slices.Equal(got, want) {
				t.Errorf("frame to stB at %v went to %v, want %v", tc.at, got, want)
			}
			fx.b.expire(fx.clk.Now())
			kept := slices.ContainsFunc(fx.b.Addrs(), func(a Addr) bool { return a.MAC == stB })
			if kept != tc.known {
				t.Errorf("stB in the table after a sweep at %v: %v, want %v", tc.at, kept, tc.known)
			}
			// Only stB can have aged out (stA was just learned).
			wantAged := uint64(0)
			if !tc.known {
				wantAged = 1
			}
			if got := fx.b.Stats().Aged; got != wantAged {
				t.Errorf("Stats().Aged after the sweep = %d, want %d", got, wantAged)
			}
		})
	}
}

// TestSetTimeoutAppliesAtOnce checks that a shorter timeout ages entries by
// the time they were last seen, and that an expired address seen again is
// learned afresh.
func TestSetTimeoutAppliesAtOnce(t *testing.T) {
	fx := newFixture(t, "a", "b")
	fx.send("b", ip4(stA, stB))
	fx.clk.Advance(30 * time.Second)
	if got := len(fx.b.Addrs()); got != 1 {
		t.Fatalf("table holds %d entries, want 1", got)
	}
	fx.b.SetTimeout(10 * time.Second)
	if got := fx.b.Timeout(); got != 10*time.Second {
		t.Errorf("Timeout() = %v, want 10s", got)
	}
	if got := fx.b.Addrs(); len(got) != 0 {
		t.Errorf("table after SetTimeout(10s), 30s after the last frame = %s, want empty", addrsString(got))
	}
	before := fx.b.Stats()
	fx.send("b", ip4(stA, stB))
	wantDelta(t, "expired address seen again", before, fx.b.Stats(), map[string]uint64{"Learned": 1})
	fx.b.SetTimeout(-time.Second)
	if got := fx.b.Timeout(); got != 0 {
		t.Errorf("Timeout() after SetTimeout(-1s) = %v, want 0 (never)", got)
	}
}

// TestSweepGoroutine checks that the bridge's own sweep deletes expired
// addresses, without a test calling it.
func TestSweepGoroutine(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: 100 * time.Millisecond}, true, "a", "b")
	fx.send("b", ip4(stA, stB))
	fx.clk.Advance(time.Second)
	eventually(t, "the sweep to delete the expired address", func() bool { return fx.b.fdb.len() == 0 })
}

// TestSweepInterval checks how often the sweep runs for a timeout.
func TestSweepInterval(t *testing.T) {
	tests := []struct{ timeout, want time.Duration }{
		{0, time.Second},
		{240 * time.Second, time.Second},
		{5 * time.Second, 500 * time.Millisecond},
		{time.Millisecond, 10 * time.Millisecond},
	}
	for _, tc := range tests {
		fx := newFixtureOpts(t, Options{Timeout: tc.timeout}, true)
		if got := fx.b.sweepInterval(); got != tc.want {
			t.Errorf("sweep interval for timeout %v = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}
