package daemon

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/trunk"
)

// TestEngineTrunkPolicyInPlace checks that trunk set's link policy and
// trunk port's priority change the running trunk in place (same TAP,
// same ports), that each step has the effect it names, and that a
// restart from the saved file gives the same trunk back.
func TestEngineTrunkPolicyInPlace(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}))
	taps := sys.openTaps()
	// state is which port is master and which active, and whether the
	// trunk is up.
	state := func() (master, active string, up bool) {
		ti, err := e.TrunkShow(bg, "trunk0")
		mustDo(t, err)
		for _, p := range ti[0].Ports {
			if slices.Contains(p.Flags, api.TrunkFlagMaster) {
				master = p.Name
			}
			if slices.Contains(p.Flags, api.TrunkFlagActive) {
				active += p.Name
			}
		}
		return master, active, ti[0].Active
	}
	steps := []struct {
		name           string
		req            api.Edit
		master, active string
		up             bool
		wantPolicy     trunk.Policy
	}{
		{"eth2 raised above eth1: failover moves to it",
			api.TrunkPortRequest{Name: "trunk0", Iface: "eth2", Priority: ptr(10)}, "eth2", "eth2", true, trunk.Policy{}},
		{"preempt off", api.TrunkSetRequest{Name: "trunk0", Preempt: ptr(false)}, "eth2", "eth2", true, trunk.Policy{NoPreempt: true}},
		{"eth1 raised above eth2 without preemption: failover stays on eth2",
			api.TrunkPortRequest{Name: "trunk0", Iface: "eth1", Priority: ptr(20)}, "eth1", "eth2", true, trunk.Policy{NoPreempt: true}},
		{"preempt on again: failover returns to the primary at once",
			api.TrunkSetRequest{Name: "trunk0", Preempt: ptr(true)}, "eth1", "eth1", true, trunk.Policy{}},
		{"min-links 2 with one port distributing: the trunk is down",
			api.TrunkSetRequest{Name: "trunk0", MinLinks: ptr(2), UpDelay: ptr(150), DownDelay: ptr(40)}, "eth1", "eth1", false,
			trunk.Policy{MinLinks: 2, UpDelay: 150 * time.Millisecond, DownDelay: 40 * time.Millisecond}},
		{"roundrobin distributes by both: the trunk is up",
			api.TrunkSetRequest{Name: "trunk0", Proto: ptr("roundrobin")}, "eth1", "eth1eth2", true,
			trunk.Policy{MinLinks: 2, UpDelay: 150 * time.Millisecond, DownDelay: 40 * time.Millisecond}},
	}
	for _, s := range steps {
		mustDo(t, e.Change(bg, s.req))
		master, active, up := state()
		if master != s.master || active != s.active || up != s.up {
			t.Errorf("%s: expected master %s, active %s, up %v; got master %s, active %s, up %v", s.name, s.master, s.active, s.up, master, active, up)
		}
		if got := e.graph.trunks["trunk0"].tr.Policy(); got != s.wantPolicy {
			t.Errorf("%s: running policy: expected %+v, got %+v", s.name, s.wantPolicy, got)
		}
	}
	checkTapsKept(t, sys, taps, true)
	if open, _ := sys.counts("eth1"); open != 1 {
		t.Errorf("eth1: expected the port opened once (changed in place), got %d open", open)
	}

	// A restart from the file gives the same policy and priorities.
	e.Close()
	saved, err := config.Load(path)
	mustDo(t, err)
	e2 := newEngine(path, sys, clock.NewFake(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	mustDo(t, e2.load(saved))
	t.Cleanup(e2.Close)
	to := e2.graph.trunks["trunk0"]
	if got, want := to.tr.Policy(), steps[len(steps)-1].wantPolicy; got != want {
		t.Errorf("after a restart: policy expected %+v, got %+v", want, got)
	}
	prio := map[string]int{}
	for _, p := range to.tr.Ports() {
		prio[p.Name] = p.Priority
	}
	if prio["eth1"] != 20 || prio["eth2"] != 10 {
		t.Errorf("after a restart: priorities expected eth1 20, eth2 10; got %v", prio)
	}
}

// TestTrunkPolicyBoundsAgree checks that the largest values the
// configuration accepts are ones the trunk accepts too, and that its
// limits are the trunk's own: just past them the trunk refuses.
func TestTrunkPolicyBoundsAgree(t *testing.T) {
	c := config.NewTrunk("t0")
	c.UpDelay, c.DownDelay, c.MinLinks = config.MaxDelay, config.MaxDelay, config.MaxMinLinks
	tr, err := trunk.New("t0", trunk.Options{Policy: trunkPolicy(&c), TickInterval: -1})
	if err != nil {
		t.Fatalf("the configuration's largest policy: expected the trunk to accept it, got %v", err)
	}
	defer tr.Close()
	for _, over := range []func(c *config.Trunk){
		func(c *config.Trunk) { c.UpDelay++ },
		func(c *config.Trunk) { c.DownDelay++ },
		func(c *config.Trunk) { c.MinLinks++ },
	} {
		o := c
		over(&o)
		if err := tr.SetPolicy(trunkPolicy(&o)); err == nil {
			t.Errorf("policy %+v, past the configuration's limits: expected the trunk to refuse it", trunkPolicy(&o))
		}
	}
}

// TestSetTrunkQueue checks how a trunk's queue settings become
// trunk.Options: 0 keeps the trunk's default, off a negative bound, the
// delay in milliseconds and the target in microseconds.
func TestSetTrunkQueue(t *testing.T) {
	tests := []struct {
		name string
		q    config.TrunkQueue
		want trunk.Options
	}{
		{"defaults", config.TrunkQueue{}, trunk.Options{}},
		{"every bound", config.TrunkQueue{TxQueueBytes: 65536, TxQueueDelay: 5, TxQueueTarget: 500, SuperFrames: true, SendBuffer: 1 << 20},
			trunk.Options{TxQueueBytes: 65536, TxQueueDelay: 5 * time.Millisecond, TxQueueTarget: 500 * time.Microsecond, TxQueueSuperFrames: true}},
		{"bounds off", config.TrunkQueue{TxQueueBytes: config.QueueOff, TxQueueTarget: config.QueueOff},
			trunk.Options{TxQueueBytes: -1, TxQueueTarget: -time.Microsecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got trunk.Options
			setTrunkQueue(&got, tt.q)
			if got.TxQueueBytes != tt.want.TxQueueBytes || got.TxQueueDelay != tt.want.TxQueueDelay ||
				got.TxQueueTarget != tt.want.TxQueueTarget || got.TxQueueSuperFrames != tt.want.TxQueueSuperFrames {
				t.Errorf("expected bytes %d, delay %v, target %v, super-frames %v; got %d, %v, %v, %v",
					tt.want.TxQueueBytes, tt.want.TxQueueDelay, tt.want.TxQueueTarget, tt.want.TxQueueSuperFrames,
					got.TxQueueBytes, got.TxQueueDelay, got.TxQueueTarget, got.TxQueueSuperFrames)
			}
		})
	}
}

// TestEngineTrunkQueue checks that trunk create's queue settings reach
// the members (their send buffer), are saved, and that trunk show gives
// them with the trunk's defaults filled in.
func TestEngineTrunkQueue(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth3")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"},
		Queue: &config.TrunkQueue{TxQueueTarget: config.QueueOff, SendBuffer: 1 << 20}}))
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk1", Ports: []string{"eth3"}}))
	for iface, want := range map[string]int{"eth1": 1 << 20, "eth2": 1 << 20, "eth3": 0} {
		if got := sys.sendBuffers[iface]; got != want {
			t.Errorf("%s: expected send buffer %d, got %d", iface, want, got)
		}
	}
	ti, err := e.TrunkShow(bg, "")
	mustDo(t, err)
	want := []api.TrunkQueueInfo{
		{TxQueueBytes: trunk.DefaultTxQueueBytes, TxQueueDelayMS: 20, TxQueueTargetUS: 0, SendBuffer: 1 << 20},
		{TxQueueBytes: trunk.DefaultTxQueueBytes, TxQueueDelayMS: 20, TxQueueTargetUS: 1000},
	}
	for i, w := range want {
		if ti[i].Queue != w {
			t.Errorf("%s: expected queue %+v, got %+v", ti[i].Name, w, ti[i].Queue)
		}
	}
	c, err := config.Load(path)
	mustDo(t, err)
	if got := c.Trunk("trunk0").Queue; got != (config.TrunkQueue{TxQueueTarget: config.QueueOff, SendBuffer: 1 << 20}) {
		t.Errorf("saved queue: got %+v", got)
	}
	if trunk.DefaultTxQueueDelay != 20*time.Millisecond || trunk.DefaultTxQueueTarget != time.Millisecond {
		t.Errorf("config's and the docs' defaults (20 ms, 1000 us) differ from the trunk's: %v, %v", trunk.DefaultTxQueueDelay, trunk.DefaultTxQueueTarget)
	}
}
