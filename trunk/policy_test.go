package trunk

import (
	"slices"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// activeFar returns the far end a frame written to the trunk reaches
// now, or -1.
func (fx *fixture) activeFar(seq uint32) int {
	fx.write(udp4(1, seq))
	got := -1
	for i, c := range fx.drainCounts() {
		if c > 0 {
			got = i
		}
	}
	return got
}

// advance moves the fake clock by d and ticks the trunk.
func (fx *fixture) advance(d time.Duration) {
	fx.clk.Advance(d)
	fx.tr.Tick()
}

func mustPolicy(t *testing.T, fx *fixture, p Policy) {
	t.Helper()
	if err := fx.tr.SetPolicy(p); err != nil {
		t.Fatal(err)
	}
}

// TestFailoverNoPreempt checks that without preemption failover stays on
// the backup when the primary comes back, and moves only when the backup
// goes down; turning preemption back on returns to the primary at once.
func TestFailoverNoPreempt(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{Priority: 2}, PortConfig{Priority: 1})
	mustPolicy(t, fx, Policy{NoPreempt: true})
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"start on the primary", func() {}, 0},
		{"primary down: the backup", func() { fx.setLink(0, false) }, 1},
		{"primary back: stays on the backup", func() { fx.setLink(0, true) }, 1},
		{"backup down: the primary", func() { fx.setLink(1, false) }, 0},
		{"backup back: stays on the primary", func() { fx.setLink(1, true) }, 0},
		{"primary down again, then back: on the backup", func() { fx.setLink(0, false); fx.setLink(0, true) }, 1},
		{"preemption on again: back to the primary at once", func() { mustPolicy(t, fx, Policy{}) }, 0},
	}
	for s, st := range steps {
		st.do()
		if got := fx.activeFar(uint32(s)); got != st.want {
			t.Fatalf("step %d (%s): frame left by port %d, want %d", s, st.name, got, st.want)
		}
	}
}

// TestLinkDelays checks updelay and downdelay on the fake clock: a link
// change counts only once it has held for its delay, and a flap shorter
// than the delay never reaches the protocol.
func TestLinkDelays(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{Priority: 2}, PortConfig{Priority: 1})
	mustPolicy(t, fx, Policy{UpDelay: 2 * time.Second, DownDelay: 500 * time.Millisecond})
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"start on the primary", func() {}, 0},
		{"primary down: still used within the downdelay", func() { fx.setLink(0, false); fx.advance(400 * time.Millisecond) }, -1},
		{"after the downdelay: the backup", func() { fx.advance(100 * time.Millisecond) }, 1},
		{"primary up: not used within the updelay", func() { fx.setLink(0, true); fx.advance(1900 * time.Millisecond) }, 1},
		{"after the updelay: back to the primary", func() { fx.advance(100 * time.Millisecond) }, 0},
		{"a flap shorter than the downdelay is never seen", func() {
			fx.setLink(0, false)
			fx.advance(300 * time.Millisecond)
			fx.setLink(0, true)
			fx.advance(time.Second)
		}, 0},
	}
	for s, st := range steps {
		st.do()
		got := fx.activeFar(uint32(s))
		// Within the downdelay the trunk still sends by the primary,
		// whose cable is pulled: nothing arrives anywhere.
		if got != st.want {
			t.Fatalf("step %d (%s): frame reached far end %d, want %d", s, st.name, got, st.want)
		}
	}
}

// TestMinLinks checks that the trunk is active only while at least
// MinLinks members distribute, and that OnActiveChange follows.
func TestMinLinks(t *testing.T) {
	fx := newFixture(t, ProtoLoadBalance, PortConfig{}, PortConfig{}, PortConfig{})
	mustPolicy(t, fx, Policy{MinLinks: 2})
	steps := []struct {
		name string
		do   func()
		want bool
	}{
		{"three up", func() {}, true},
		{"two up", func() { fx.setLink(0, false) }, true},
		{"one up: below min-links", func() { fx.setLink(1, false) }, false},
		{"two up again", func() { fx.setLink(0, true) }, true},
		{"min-links 3: inactive", func() { mustPolicy(t, fx, Policy{MinLinks: 3}) }, false},
		{"min-links 0: one is enough", func() { mustPolicy(t, fx, Policy{}) }, true},
	}
	for _, st := range steps {
		st.do()
		if got := fx.tr.Active(); got != st.want {
			t.Fatalf("%s: Active = %v, want %v", st.name, got, st.want)
		}
	}
	if got, want := fx.activeCalls(), []bool{true, false, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("OnActiveChange calls = %v, want %v", got, want)
	}
}

// TestSetPortPriority checks that a member's failover priority changes in
// place and failover follows at once.
func TestSetPortPriority(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{Priority: 2}, PortConfig{Priority: 1})
	if got := fx.activeFar(0); got != 0 {
		t.Fatalf("start: frame left by %d, want 0", got)
	}
	if err := fx.tr.SetPortPriority("eth1", 5); err != nil {
		t.Fatal(err)
	}
	if got := fx.activeFar(1); got != 1 {
		t.Fatalf("eth1 raised to 5: frame left by %d, want 1", got)
	}
	if p := fx.tr.Ports()[1]; p.Priority != 5 || !slices.Contains(p.Flags, "master") {
		t.Errorf("Ports()[1] = priority %d flags %v, want 5 and master", p.Priority, p.Flags)
	}
	if err := fx.tr.SetPortPriority("eth9", 1); err == nil || err.Error() != "trunk0: set priority of eth9: not a port" {
		t.Errorf("SetPortPriority(eth9) = %v, want a not-a-port error", err)
	}
}

func TestPolicyRefused(t *testing.T) {
	fx := newFixture(t, ProtoFailover, PortConfig{})
	for _, c := range []struct {
		p    Policy
		want string
	}{
		{Policy{UpDelay: -time.Millisecond}, "trunk0: updelay -1ms: want 0 to 1h0m0s"},
		{Policy{DownDelay: 2 * time.Hour}, "trunk0: downdelay 2h0m0s: want 0 to 1h0m0s"},
		{Policy{MinLinks: 65}, "trunk0: min-links 65: want 0 to 64"},
	} {
		if err := fx.tr.SetPolicy(c.p); err == nil || err.Error() != c.want {
			t.Errorf("SetPolicy(%+v) = %v, want %q", c.p, err, c.want)
		}
	}
	if _, err := New("t1", Options{Policy: Policy{MinLinks: -1}}); err == nil || err.Error() != "t1: min-links -1: want 0 to 64" {
		t.Errorf("New with min-links -1 = %v, want a refusal", err)
	}
}

// TestOnDistributingChange checks that the trunk says which members
// frames leave by each time that set changes, so that the daemon can
// announce the host's addresses after a failover.
func TestOnDistributingChange(t *testing.T) {
	var got [][]string
	fx := &fixture{t: t, clk: clock.NewFake()}
	var err error
	fx.tr, err = New("trunk0", Options{Protocol: builtin(t, ProtoFailover), Seed: 7, Clock: fx.clk, TickInterval: -1, Logger: quiet,
		OnDistributingChange: func(ports []string) { got = append(got, ports) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fx.close)
	fx.add(PortConfig{Priority: 2})
	fx.add(PortConfig{Priority: 1})
	fx.setLink(0, false)
	fx.setLink(1, false)
	fx.setLink(1, true)
	want := [][]string{{"eth0"}, {"eth1"}, {"eth1"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("OnDistributingChange calls = %v, want %v (nothing for the empty set)", got, want)
	}
}
