package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lacp"
)

// faultyFile is the configuration file with injected failures: writing
// fails before anything is written (a full disk), or the rename does (the
// pending file is removed and the old file left as it was).
type faultyFile struct {
	diskFile
	// failWrite and failRename choose the failure.
	failWrite, failRename bool
}

var errInjected = errors.New("injected failure")

func (f *faultyFile) write(c *config.Config) (pendingWrite, error) {
	if f.failWrite {
		return nil, fmt.Errorf("%s: write: %w", f.diskFile, errInjected)
	}
	p, err := f.diskFile.write(c)
	if err != nil || !f.failRename {
		return p, err
	}
	return renameFails{p}, nil
}

// renameFails is a pending write whose rename fails.
type renameFails struct{ pendingWrite }

func (r renameFails) Commit() error {
	r.Discard()
	return fmt.Errorf("rename: %w", errInjected)
}

// reconcileIfaces are the interfaces of the reconcile tests.
var reconcileIfaces = []string{"eth1", "eth2", "eth3", "eth4", "eth5", "eth6", "eth7", "eth8", "eth9"}

// reconcileBase starts an engine from the configuration every case starts
// from (reconcileBaseConfig), written to a file of its own.
func reconcileBase(t *testing.T) (*engine, *fakeSystem, string) {
	t.Helper()
	sys := newFakeSystem(reconcileIfaces...)
	for i, n := range reconcileIfaces {
		sys.macs[n] = net.HardwareAddr{2, 0, 0, 0, 0, byte(i + 1)}
	}
	path := filepath.Join(t.TempDir(), "swctl.conf")
	if err := os.WriteFile(path, reconcileBaseConfig(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(path, sys, clock.NewFake(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	mustDo(t, e.load(cfg))
	sys.Watch(e.linkChanged)
	t.Cleanup(e.Close)
	checkAgree(t, e, sys, path)
	return e, sys, path
}

var (
	baseOnce sync.Once
	// baseText is reconcileBaseConfig's result.
	baseText []byte
)

// reconcileBaseConfig returns the configuration file every case starts
// from, made once by these operations:
//
//	bridge0 --local: members eth1 and eth2, span eth3, a static entry on
//	                 each member (the same MAC, VLANs 0 and 10)
//	br1:             member trunk1
//	trunk0 (lacp):   port eth4, given to the host as a TAP
//	trunk1:          port eth5, a member of br1
//	trunk2:          port eth6, given to the host as a TAP
//
// eth7, eth8 and eth9 are free.
func reconcileBaseConfig(t *testing.T) []byte {
	baseOnce.Do(func() {
		sys := newFakeSystem(reconcileIfaces...)
		for i, n := range reconcileIfaces {
			sys.macs[n] = net.HardwareAddr{2, 0, 0, 0, 0, byte(i + 1)}
		}
		e, path := newTestEngine(t, sys)
		for _, err := range []error{
			e.Change(bg, api.BridgeCreateRequest{Name: "bridge0", Local: true}),
			e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}),
			e.Change(bg, api.AddSpanRequest{Name: "bridge0", Iface: "eth3"}),
			e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "02:aa:00:00:00:01", Iface: "eth1"}),
			e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "02:aa:00:00:00:01", Iface: "eth2", VLAN: 10}),
			e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth4"}}),
			e.Change(bg, api.TrunkCreateRequest{Name: "trunk1", Ports: []string{"eth5"}}),
			e.Change(bg, api.TrunkCreateRequest{Name: "trunk2", Ports: []string{"eth6"}}),
			e.Change(bg, api.BridgeCreateRequest{Name: "br1"}),
			e.Change(bg, api.BridgeAddRequest{Name: "br1", Ifaces: []string{"trunk1"}}),
		} {
			mustDo(t, err)
		}
		checkAgree(t, e, sys, path)
		var err error
		if baseText, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	})
	if baseText == nil {
		t.Fatal("the base configuration could not be made")
	}
	return baseText
}

// running describes what runs, one fact a line, in the terms a
// configuration can also be described in (configured): the bridges'
// settings, members, flags, span ports and static entries as the bridges
// report them; the trunks' protocol, hash, MAC, TAP and ports as the
// trunks report them (of LACP, the mode and the system priority: with no
// partner, the actor's timeout bit is fast whatever we set); and for every interface the ports, stack guards and
// promiscuous memberships open on it and its MAC, as the system counts
// them.
func running(e *engine, sys *fakeSystem) []string {
	var out []string
	for name, b := range e.graph.bridges {
		local := "-"
		if b.local != nil {
			local = b.local.HardwareAddr().String()
		}
		out = append(out, fmt.Sprintf("bridge %s timeout %v maxaddr %d local %s", name, b.br.Timeout().Seconds(), b.br.MaxAddr(), local))
		for _, p := range b.br.Ports() {
			switch {
			case p.Span:
				out = append(out, fmt.Sprintf("bridge %s span %s", name, p.Name))
			case b.local == nil || p.Name != b.local.Name():
				out = append(out, fmt.Sprintf("bridge %s member %s %+v", name, p.Name, p.Flags))
			}
		}
		for _, a := range b.br.Addrs() {
			if a.Static {
				out = append(out, fmt.Sprintf("bridge %s static %s vlan %d on %s", name, a.MAC, a.VLAN, a.Port))
			}
		}
		out = append(out, stpRunning(name, b)...)
	}
	for name, to := range e.graph.trunks {
		tap := "-"
		if to.tap != nil {
			tap = to.tap.HardwareAddr().String()
		}
		out = append(out, fmt.Sprintf("trunk %s proto %s hash %s lladdr %s tap %s", name, to.tr.Proto(), to.tr.HashFields(), to.tr.HardwareAddr(), tap))
		pol := to.tr.Policy()
		out = append(out, fmt.Sprintf("trunk %s updelay %v downdelay %v min-links %d preempt %v", name, pol.UpDelay, pol.DownDelay, pol.MinLinks, !pol.NoPreempt))
		for _, p := range to.tr.Ports() {
			out = append(out, fmt.Sprintf("trunk %s port %s priority %d", name, p.Name, p.Priority))
			if st, ok := p.Detail.(lacp.PortState); ok {
				out = append(out, fmt.Sprintf("trunk %s port %s lacp active %v system-priority %d port-priority %d", name, p.Name,
					slices.Contains(st.Actor.State.Words(), "activity"), st.Actor.SystemPriority, st.Actor.PortPriority))
			}
		}
	}
	for _, n := range reconcileIfaces {
		open, guards := sys.counts(n)
		sys.mu.Lock()
		promisc := open > 0 && sys.ports[n].promisc
		mac := sys.macs[n].String()
		sys.mu.Unlock()
		out = append(out, fmt.Sprintf("iface %s open %d guards %d promisc %v mac %s", n, open, guards, promisc, mac))
	}
	slices.Sort(out)
	return out
}

// configured describes what c says should run, as running describes what
// does. Every interface exists, so every member is attached.
func configured(c *config.Config) []string {
	var out []string
	type use struct {
		open, guards int
		promisc      bool
		mac          string
	}
	uses := map[string]use{}
	for _, b := range c.Bridges {
		local := "-"
		if b.Local {
			local = b.LocalMAC.String()
		}
		out = append(out, fmt.Sprintf("bridge %s timeout %v maxaddr %d local %s", b.Name, float64(b.Timeout), b.MaxAddr, local))
		for _, p := range b.Ports {
			out = append(out, fmt.Sprintf("bridge %s member %s %+v", b.Name, p.Name, portFlags(&p)))
			if c.Trunk(p.Name) == nil {
				guards := 1
				if p.Stack {
					guards = 0
				}
				uses[p.Name] = use{open: 1, guards: guards, promisc: !p.NoPromisc}
			}
		}
		for _, s := range b.Spans {
			out = append(out, fmt.Sprintf("bridge %s span %s", b.Name, s))
			uses[s] = use{open: 1}
		}
		for _, s := range b.Statics {
			out = append(out, fmt.Sprintf("bridge %s static %s vlan %d on %s", b.Name, s.MAC, s.VLAN, s.Port))
		}
		out = append(out, stpConfigured(&b)...)
	}
	for _, t := range c.Trunks {
		tap := "-"
		if c.BridgeOf(t.Name) == "" {
			tap = t.LLAddr.String()
		}
		out = append(out, fmt.Sprintf("trunk %s proto %s hash %s lladdr %s tap %s", t.Name, t.Proto, t.Hash, t.LLAddr, tap))
		out = append(out, fmt.Sprintf("trunk %s updelay %v downdelay %v min-links %d preempt %v", t.Name,
			time.Duration(t.UpDelay)*time.Millisecond, time.Duration(t.DownDelay)*time.Millisecond, t.MinLinks, !t.NoPreempt))
		for _, p := range t.Ports {
			out = append(out, fmt.Sprintf("trunk %s port %s priority %d", t.Name, p.Name, p.Priority))
			if t.Proto == config.ProtoLACP {
				out = append(out, fmt.Sprintf("trunk %s port %s lacp active %v system-priority %d port-priority %d", t.Name, p.Name,
					t.LACPMode == config.LACPActive, t.LACPSystemPriority, p.LACPPortPriority))
			}
			u := use{open: 1, guards: 1, promisc: t.Promisc}
			if !t.Promisc {
				u.mac = t.LLAddr.String()
			}
			uses[p.Name] = u
		}
	}
	for i, n := range reconcileIfaces {
		u := uses[n]
		if u.mac == "" {
			u.mac = net.HardwareAddr{2, 0, 0, 0, 0, byte(i + 1)}.String()
		}
		out = append(out, fmt.Sprintf("iface %s open %d guards %d promisc %v mac %s", n, u.open, u.guards, u.promisc, u.mac))
	}
	slices.Sort(out)
	return out
}

// checkAgree fails the test unless what runs is what the file at path
// says.
func checkAgree(t *testing.T, e *engine, sys *fakeSystem, path string) {
	t.Helper()
	saved, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := running(e, sys), configured(saved); !slices.Equal(got, want) {
		t.Errorf("running state and file disagree:\nfile says:\n  %s\nrunning:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		var names []string
		for _, d := range entries {
			names = append(names, d.Name())
		}
		t.Errorf("configuration directory: expected only the file, got %v", names)
	}
}

// checkTapsKept fails the test unless every TAP open in before is open
// now (the host's addresses on it are kept) and, with only, no other TAP
// is open.
func checkTapsKept(t *testing.T, sys *fakeSystem, before map[string]*fakeTap, only bool) {
	t.Helper()
	after := sys.openTaps()
	for name, tap := range before {
		if a, ok := after[name]; ok && a != tap {
			t.Errorf("TAP %s was made again: its host addresses are gone", name)
		} else if !ok && only {
			t.Errorf("TAP %s was closed: its host addresses are gone", name)
		}
	}
	if only && len(after) != len(before) {
		t.Errorf("open TAPs: expected %d, got %d", len(before), len(after))
	}
}

// stateOps are the state operations the reconcile tests run on
// reconcileBase, one case at least each, and the cases that move a trunk
// between its TAP and a bridge.
var stateOps = []struct {
	name string
	op   func(e *engine) error
}{
	{"bridge create --local", func(e *engine) error {
		return e.Change(bg, api.BridgeCreateRequest{Name: "br2", Local: true})
	}},
	{"bridge destroy --local", func(e *engine) error {
		return e.Change(bg, api.BridgeDestroyRequest{Name: "bridge0"})
	}},
	{"bridge destroy with a trunk member", func(e *engine) error {
		return e.Change(bg, api.BridgeDestroyRequest{Name: "br1"})
	}},
	{"bridge add", func(e *engine) error {
		return e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth7", "eth8"}})
	}},
	{"bridge add a trunk", func(e *engine) error {
		return e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth7", "trunk2"}})
	}},
	{"bridge del", func(e *engine) error {
		return e.Change(bg, api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"eth1"}})
	}},
	{"bridge del a trunk", func(e *engine) error {
		return e.Change(bg, api.BridgeDelRequest{Name: "br1", Ifaces: []string{"trunk1"}})
	}},
	{"bridge static", func(e *engine) error {
		return e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "02:aa:00:00:00:09", Iface: "eth2"})
	}},
	{"bridge static --replace moves an entry", func(e *engine) error {
		return e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "02:aa:00:00:00:01", Iface: "eth2", Replace: true})
	}},
	{"bridge deladdr", func(e *engine) error {
		return e.BridgeDelAddr(bg, api.DelAddrRequest{Name: "bridge0", MAC: "02:aa:00:00:00:01"})
	}},
	{"bridge deladdr in one VLAN keeps the others", func(e *engine) error {
		return e.BridgeDelAddr(bg, api.DelAddrRequest{Name: "bridge0", MAC: "02:aa:00:00:00:01", VLAN: ptr(uint16(0))})
	}},
	{"bridge flush --all", func(e *engine) error {
		return e.BridgeFlush(bg, api.FlushRequest{Name: "bridge0", All: true})
	}},
	{"bridge flush --all --port", func(e *engine) error {
		return e.BridgeFlush(bg, api.FlushRequest{Name: "bridge0", All: true, Port: "eth2"})
	}},
	{"bridge set", func(e *engine) error {
		return e.Change(bg, api.BridgeSetRequest{Name: "bridge0", Timeout: ptr(0), MaxAddr: ptr(100)})
	}},
	{"bridge port", func(e *engine) error {
		return e.Change(bg, api.BridgePortRequest{Name: "bridge0", Iface: "eth2", Learning: ptr(false), Stack: ptr(true), Promisc: ptr(false)})
	}},
	{"bridge port of a trunk", func(e *engine) error {
		return e.Change(bg, api.BridgePortRequest{Name: "br1", Iface: "trunk1", Discover: ptr(false)})
	}},
	{"bridge addspan", func(e *engine) error {
		return e.Change(bg, api.AddSpanRequest{Name: "bridge0", Iface: "eth9"})
	}},
	{"bridge delspan", func(e *engine) error {
		return e.Change(bg, api.DelSpanRequest{Name: "bridge0", Iface: "eth3"})
	}},
	{"trunk create", func(e *engine) error {
		return e.Change(bg, api.TrunkCreateRequest{Name: "trunk3", Proto: "lacp", Ports: []string{"eth7", "eth8"}})
	}},
	{"trunk destroy", func(e *engine) error {
		return e.Change(bg, api.TrunkDestroyRequest{Name: "trunk0"})
	}},
	{"trunk add", func(e *engine) error {
		return e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth9"}, Priority: ptr(5)})
	}},
	{"trunk del", func(e *engine) error {
		return e.Change(bg, api.TrunkDelRequest{Name: "trunk0", Ifaces: []string{"eth4"}})
	}},
	{"trunk set proto and hash", func(e *engine) error {
		return e.Change(bg, api.TrunkSetRequest{Name: "trunk0", Proto: ptr("roundrobin"), Hash: ptr("l3")})
	}},
	{"trunk set lacp", func(e *engine) error {
		return e.Change(bg, api.TrunkSetRequest{Name: "trunk0", LACPMode: ptr("passive"), LACPTimeout: ptr("fast"), LACPSystemPriority: ptr(1)})
	}},
	{"trunk set link policy", func(e *engine) error {
		return e.Change(bg, api.TrunkSetRequest{Name: "trunk2", UpDelay: ptr(200), DownDelay: ptr(50), MinLinks: ptr(2), Preempt: ptr(false)})
	}},
	{"trunk set link policy and proto", func(e *engine) error {
		return e.Change(bg, api.TrunkSetRequest{Name: "trunk1", Proto: ptr("roundrobin"), MinLinks: ptr(1)})
	}},
	{"trunk set --promisc on", func(e *engine) error {
		return e.Change(bg, api.TrunkSetRequest{Name: "trunk2", Promisc: ptr(true)})
	}},
	{"trunk set --promisc on, a bridge member", func(e *engine) error {
		return e.Change(bg, api.TrunkSetRequest{Name: "trunk1", Promisc: ptr(true), Proto: ptr("roundrobin")})
	}},
	{"trunk port priority", func(e *engine) error {
		return e.Change(bg, api.TrunkPortRequest{Name: "trunk2", Iface: "eth6", Priority: ptr(7)})
	}},
	{"trunk port priority and LACP port priority 0", func(e *engine) error {
		return e.Change(bg, api.TrunkPortRequest{Name: "trunk0", Iface: "eth4", Priority: ptr(3), LACPPortPriority: ptr(0)})
	}},
}

func ptr[T any](v T) *T { return &v }

// TestReconcileFailureLeavesStateAndFileAgreeing makes every state
// operation fail where it can: writing the new file, each step of
// applying it, and the rename. After the error, what runs must be what
// the file says (the old configuration), and every TAP must be the one
// that was open before, its host addresses kept. Then the operation must
// succeed, what runs must be what the new file says, and no TAP that
// stays may have been made again.
func TestReconcileFailureLeavesStateAndFileAgreeing(t *testing.T) {
	for _, tc := range stateOps {
		t.Run(tc.name, func(t *testing.T) {
			for _, fail := range []struct {
				name string
				file faultyFile
			}{{"write fails", faultyFile{failWrite: true}}, {"rename fails", faultyFile{failRename: true}}} {
				t.Run(fail.name, func(t *testing.T) {
					e, sys, path := reconcileBase(t)
					taps := sys.openTaps()
					fail.file.diskFile = diskFile(path)
					e.file = &fail.file
					if err := tc.op(e); err == nil || !strings.Contains(err.Error(), "not changed: cannot save the configuration") {
						t.Fatalf("expected \"not changed: cannot save the configuration\", got %v", err)
					}
					checkAgree(t, e, sys, path)
					checkTapsKept(t, sys, taps, true)
				})
			}
			// Fail at step 0, 1, ... until the operation completes
			// before the fault.
			for k := 0; ; k++ {
				e, sys, path := reconcileBase(t)
				taps := sys.openTaps()
				calls := 0
				e.fault = func() error {
					calls++
					if calls == k+1 {
						return errInjected
					}
					return nil
				}
				err := tc.op(e)
				if calls <= k {
					if err != nil {
						t.Fatalf("apply fails at step %d: the operation failed before it: %v", k, err)
					}
					break
				}
				if !errors.Is(err, errInjected) {
					t.Fatalf("apply fails at step %d: expected the injected failure, got %v", k, err)
				}
				checkAgree(t, e, sys, path)
				checkTapsKept(t, sys, taps, true)
				if t.Failed() {
					t.Fatalf("apply fails at step %d", k)
				}
			}
			t.Run("succeeds", func(t *testing.T) {
				e, sys, path := reconcileBase(t)
				taps := sys.openTaps()
				mustDo(t, tc.op(e))
				checkAgree(t, e, sys, path)
				checkTapsKept(t, sys, taps, false)
			})
		})
	}
}

// TestReconcileRefusesWhatCannotChangeInPlace checks the differences no
// operation makes today and the running objects cannot take: the plan
// refuses them whole, and what runs is still what the file says.
func TestReconcileRefusesWhatCannotChangeInPlace(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *config.Config)
		want string
	}{
		{"a trunk's MAC", func(c *config.Config) { c.Trunk("trunk0").LLAddr = config.NewLocalMAC() },
			"trunk0: its MAC cannot change while it runs"},
		{"a trunk's MAC with its policy", func(c *config.Config) { t := c.Trunk("trunk2"); t.LLAddr, t.Promisc = config.NewLocalMAC(), true },
			"trunk2: its MAC cannot change while it runs"},
		{"a trunk's queue", func(c *config.Config) { c.Trunk("trunk0").Queue.TxQueueTarget = config.QueueOff },
			"trunk0: tx-queue-target cannot change while it runs (destroy and create it)"},
		{"a trunk's send buffer", func(c *config.Config) { c.Trunk("trunk2").Queue.SendBuffer = 1 << 20 },
			"trunk2: send-buffer cannot change while it runs (destroy and create it)"},
		{"a bridge's local TAP", func(c *config.Config) { b := c.Bridge("bridge0"); b.Local, b.LocalMAC = false, [6]byte{} },
			"bridge0: its local TAP cannot change while it runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, sys, path := reconcileBase(t)
			taps := sys.openTaps()
			// With a new trunk first in the same change, so that the plan
			// has something to roll back when it meets the refusal.
			err := e.change(bg, func(c *config.Config) error {
				t9 := config.NewTrunk("trunk9")
				t9.LLAddr, t9.Ports = config.NewLocalMAC(), []config.TrunkPort{config.NewTrunkPort("eth7")}
				c.Trunks = append([]config.Trunk{t9}, c.Trunks...)
				tt.edit(c)
				return nil
			})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("expected %q, got %v", tt.want, err)
			}
			checkAgree(t, e, sys, path)
			checkTapsKept(t, sys, taps, true)
		})
	}
}
