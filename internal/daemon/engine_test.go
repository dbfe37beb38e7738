package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
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
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// fakeSystem stands for the kernel: interfaces are in-memory cables whose
// far ends the test holds.
type fakeSystem struct {
	mu sync.Mutex
	// links are the interfaces that exist, with their state.
	links map[string]platform.LinkState
	// far are the test's ends of the cables, by interface name.
	far map[string]*memport.Port
	// open counts open ports by interface name.
	open map[string]int
	// guards counts stack guards by interface name.
	guards map[string]int
	// sendBuffers are the send buffers OpenPort was last asked for, by
	// interface name.
	sendBuffers map[string]int
	// failOpen makes OpenPort fail for that interface.
	failOpen string
	// caps, when set, gives the capability set OpenPort returns with p
	// instead of a bpf port's.
	caps func(p *trackedPort) platform.Caps
	// onOpen, when set, is called by OpenPort with the interface's name.
	onOpen func(name string)
	// macs are MACs set by SetLLAddr; orig the ones they replaced.
	macs, orig map[string]net.HardwareAddr
	// ports are the ports last opened, by interface name.
	ports map[string]*trackedPort
	// taps are every TAP created, in order.
	taps []*fakeTap
	// watch is the engine's link callback.
	watch func(linkEvent)
	// mtus are the interfaces' MTUs, when not 1500.
	mtus map[string]int
	// renames maps an old name to the new one, for the stack guards of
	// renamed interfaces (which hold an interface, not a name).
	renames map[string]string
	// ips are the host's addresses on TAPs, by name (HostIPs).
	ips map[string][]netip.Addr
	// defaultRoute are the interfaces holding the default route.
	defaultRoute []string
}

func newFakeSystem(ifaces ...string) *fakeSystem {
	s := &fakeSystem{links: map[string]platform.LinkState{}, far: map[string]*memport.Port{}, open: map[string]int{}, guards: map[string]int{}, macs: map[string]net.HardwareAddr{}, orig: map[string]net.HardwareAddr{}, ports: map[string]*trackedPort{}}
	for _, n := range ifaces {
		s.links[n] = platform.LinkUp
	}
	return s
}

// trackedPort counts closes so the test sees every port released.
type trackedPort struct {
	*memport.Port
	sys  *fakeSystem
	once sync.Once
	// promisc is the membership state.
	promisc bool
	// groups are the multicast groups joined; allmulti the
	// all-multicast membership. Guarded by sys.mu.
	groups   []string
	allmulti bool
}

func (p *trackedPort) Close() error {
	p.once.Do(func() {
		p.sys.mu.Lock()
		p.sys.open[p.Name()]--
		p.sys.mu.Unlock()
	})
	return p.Port.Close()
}
func (p *trackedPort) SetPromisc(on bool) error { p.promisc = on; return nil }
func (p *trackedPort) Promisc() bool            { return p.promisc }

func (p *trackedPort) JoinMulticast(mac net.HardwareAddr) error {
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	p.groups = append(p.groups, mac.String())
	return nil
}

func (p *trackedPort) SetAllMulti(on bool) error {
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	p.allmulti = on
	return nil
}

// memberships returns the port's multicast groups and all-multicast state.
func (p *trackedPort) memberships() ([]string, bool) {
	p.sys.mu.Lock()
	defer p.sys.mu.Unlock()
	return slices.Clone(p.groups), p.allmulti
}

// OpenPort opens a port with the capability set of a bpf port: promiscuous
// mode, link and MTU, no multicast memberships.
func (s *fakeSystem) OpenPort(name string, _ bool, sendBuffer int) (platform.Port, platform.Caps, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendBuffers == nil {
		s.sendBuffers = map[string]int{}
	}
	s.sendBuffers[name] = sendBuffer
	if s.onOpen != nil {
		s.onOpen(name)
	}
	if name == s.failOpen {
		return nil, platform.Caps{}, errors.New("injected failure")
	}
	if _, ok := s.links[name]; !ok {
		return nil, platform.Caps{}, errors.New("no such interface")
	}
	near, far := memport.Pair(name, net.HardwareAddr{2, 0, 0, 0, 0, 1}, name+"-far", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	if mtu := s.mtus[name]; mtu > 0 {
		near.SetMTU(mtu)
	}
	s.far[name] = far
	s.open[name]++
	p := &trackedPort{Port: near, sys: s}
	s.ports[name] = p
	if s.caps != nil {
		return p, s.caps(p), nil
	}
	return p, platform.Caps{Promisc: p, Link: p, MTU: p}, nil
}

// fakeTap is a TAP: its interface exists from its creation to its Close.
// The host's addresses on it would go with it, so a test that finds the
// same fakeTap open knows they were kept.
type fakeTap struct {
	*memport.Port
	sys *fakeSystem
	// closed is set by Close; guarded by sys.mu.
	closed bool
}

func (t *fakeTap) Close() error {
	t.sys.mu.Lock()
	if !t.closed {
		t.closed = true
		delete(t.sys.links, t.Name())
	}
	t.sys.mu.Unlock()
	return t.Port.Close()
}

// CreateTap makes a TAP with the capability set of a BSD one: link and
// MTU, no carrier.
func (s *fakeSystem) CreateTap(name string, mac net.HardwareAddr, mtu int) (platform.Port, platform.Caps, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.links[name]; ok {
		return nil, platform.Caps{}, errors.New("file exists")
	}
	near, _ := memport.Pair(name, mac, name+"-host", nil)
	near.SetMTU(mtu)
	s.links[name] = platform.LinkUp
	t := &fakeTap{Port: near, sys: s}
	s.taps = append(s.taps, t)
	return t, platform.Caps{Link: t, MTU: t}, nil
}

// openTaps returns the TAPs not closed, by name.
func (s *fakeSystem) openTaps() map[string]*fakeTap {
	s.mu.Lock()
	defer s.mu.Unlock()
	open := map[string]*fakeTap{}
	for _, t := range s.taps {
		if !t.closed {
			open[t.Name()] = t
		}
	}
	return open
}

func (s *fakeSystem) SetTapMTU(string, int) error { return nil }

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func (s *fakeSystem) GuardStack(name string) (io.Closer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.guards[name]++
	var once sync.Once
	return closerFunc(func() error {
		once.Do(func() {
			s.mu.Lock()
			n := name
			for s.renames[n] != "" {
				n = s.renames[n]
			}
			s.guards[n]--
			s.mu.Unlock()
		})
		return nil
	}), nil
}

func (s *fakeSystem) LinkState(name string) platform.LinkState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.links[name]
	if !ok {
		return platform.LinkAbsent
	}
	return st
}

func (s *fakeSystem) HardwareAddr(name string) (net.HardwareAddr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.links[name]; !ok {
		return nil, errors.New("no such interface")
	}
	if m, ok := s.macs[name]; ok {
		return m, nil
	}
	return net.HardwareAddr{2, 0, 0, 0, 0, byte(len(name))}, nil
}

func (s *fakeSystem) HostAddrs(string) int { return 0 }

func (s *fakeSystem) HostIPs(name string) ([]netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ips[name], nil
}

func (s *fakeSystem) SetLLAddr(name string, mac net.HardwareAddr, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.orig[name]; !ok {
		s.orig[name] = s.macs[name]
	}
	s.macs[name] = mac
	return nil
}

func (s *fakeSystem) RestoreLLAddr(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.orig[name]; ok {
		if o == nil {
			delete(s.macs, name)
		} else {
			s.macs[name] = o
		}
		delete(s.orig, name)
	}
	return nil
}

func (s *fakeSystem) DefaultRouteIfaces() ([]string, error) { return s.defaultRoute, nil }

func (s *fakeSystem) Watch(fn func(linkEvent)) error { s.watch = fn; return nil }
func (s *fakeSystem) Close() error                   { return nil }

// setLink changes an interface and tells the engine, as netlink would.
func (s *fakeSystem) setLink(name string, st platform.LinkState) {
	s.mu.Lock()
	if st == platform.LinkAbsent {
		delete(s.links, name)
	} else {
		s.links[name] = st
	}
	s.mu.Unlock()
	s.watch(linkEvent{name: name, state: st})
}

// rename renames an interface and tells the engine, as netlink would
// (linkwatch): the old name absent, renamed, then the new one. Its MAC
// and stack guards go with it.
func (s *fakeSystem) rename(old, new string) {
	s.mu.Lock()
	st := s.links[old]
	s.links[new] = st
	delete(s.links, old)
	for _, m := range []map[string]net.HardwareAddr{s.macs, s.orig} {
		if mac, ok := m[old]; ok {
			m[new] = mac
			delete(m, old)
		}
	}
	s.guards[new], s.guards[old] = s.guards[old], 0
	if s.renames == nil {
		s.renames = map[string]string{}
	}
	s.renames[old] = new
	s.mu.Unlock()
	s.watch(linkEvent{name: old, state: platform.LinkAbsent, renamed: new})
	s.watch(linkEvent{name: new, state: st})
}

// setMTU changes an interface's MTU and tells the engine.
func (s *fakeSystem) setMTU(name string, mtu int) {
	s.mu.Lock()
	if s.mtus == nil {
		s.mtus = map[string]int{}
	}
	s.mtus[name] = mtu
	st := s.links[name]
	s.mu.Unlock()
	s.watch(linkEvent{name: name, state: st, mtu: mtu})
}

func (s *fakeSystem) counts(name string) (open, guards int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[name], s.guards[name]
}

func newTestEngine(t *testing.T, sys *fakeSystem) (*engine, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "swctl.conf")
	e := newEngine(path, sys, clock.NewFake(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := e.load(&config.Config{}); err != nil {
		t.Fatal(err)
	}
	sys.Watch(e.linkChanged)
	t.Cleanup(e.Close)
	return e, path
}

var bg = context.Background()

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestEngineAddIsAllOrNothing(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth3")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	sys.failOpen = "eth3"
	err := e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2", "eth3"}})
	if err == nil || !strings.Contains(err.Error(), "bridge0: add eth3: injected failure") {
		t.Fatalf("add with a failing member: want \"bridge0: add eth3: injected failure\", got %v", err)
	}
	for _, n := range []string{"eth1", "eth2"} {
		if open, guards := sys.counts(n); open != 0 || guards != 0 {
			t.Errorf("%s after a failed add: %d ports and %d guards open, want none", n, open, guards)
		}
	}
	show, _ := e.BridgeShow(bg, "bridge0")
	if len(show[0].Ports) != 0 {
		t.Errorf("failed add left members: %+v", show[0].Ports)
	}
	saved, err := config.Load(path)
	mustDo(t, err)
	if len(saved.Bridges[0].Ports) != 0 {
		t.Errorf("failed add was saved: %+v", saved.Bridges[0].Ports)
	}
}

func TestEngineRefusals(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0", Local: true}))
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge1"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"missing interface", e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth9"}}), "bridge0: add eth9: no such interface"},
		{"member of another bridge", e.Change(bg, api.BridgeAddRequest{Name: "bridge1", Ifaces: []string{"eth1"}}), "bridge1: add eth1: already a port of bridge bridge0"},
		{"own TAP", e.Change(bg, api.BridgeAddRequest{Name: "bridge1", Ifaces: []string{"bridge0"}}), "TAP of swctl bridge bridge0"},
		{"given twice", e.Change(bg, api.BridgeAddRequest{Name: "bridge1", Ifaces: []string{"eth2", "eth2"}}), "given twice"},
		{"unknown bridge", e.Change(bg, api.BridgeAddRequest{Name: "nosuch", Ifaces: []string{"eth2"}}), "nosuch: no such bridge"},
		{"duplicate bridge", e.Change(bg, api.BridgeCreateRequest{Name: "bridge1"}), "bridge1: bridge exists"},
		{"bad MAC", e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "zz", Iface: "eth1"}), "not a MAC address"},
		{"static on non-member", e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "02:00:00:00:00:05", Iface: "eth2"}), "eth2 is not a member"},
		{"del non-member", e.Change(bg, api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"eth2"}}), "bridge0: del eth2: not a member"},
		{"span already member", e.Change(bg, api.AddSpanRequest{Name: "bridge1", Iface: "eth1"}), "already a port of bridge bridge0"},
		{"bridge named like a member", e.Change(bg, api.BridgeCreateRequest{Name: "eth1", Local: true}), "eth1: is a port of bridge bridge0"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: want an error containing %q, got %v", c.name, c.want, c.err)
		}
	}
}

// TestEngineBridgeShowFlags checks the flag words bridge show gives a
// member as its flags change, -promisc among them.
func TestEngineBridgeShowFlags(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}))
	tests := []struct {
		name   string
		change api.BridgePortRequest
		want   []string
	}{
		{"defaults", api.BridgePortRequest{}, []string{"learning", "discover"}},
		{"promisc off", api.BridgePortRequest{Promisc: ptr(false)}, []string{"learning", "discover", "-promisc"}},
		{"stack on, learning off", api.BridgePortRequest{Stack: ptr(true), Learning: ptr(false)}, []string{"discover", "stack", "-promisc"}},
		{"promisc on", api.BridgePortRequest{Promisc: ptr(true)}, []string{"discover", "stack"}},
	}
	for _, tt := range tests {
		if tt.change != (api.BridgePortRequest{}) {
			tt.change.Name, tt.change.Iface = "bridge0", "eth1"
			mustDo(t, e.Change(bg, tt.change))
		}
		bs, err := e.BridgeShow(bg, "bridge0")
		mustDo(t, err)
		if got := bs[0].Ports[0].Flags; !slices.Equal(got, tt.want) {
			t.Errorf("%s: expected flags %q, got %q", tt.name, tt.want, got)
		}
	}
}

// TestEngineDelAddrUnknown checks that deladdr of an address the table
// does not hold says so once, naming the bridge and the address.
func TestEngineDelAddrUnknown(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	tests := []struct {
		name string
		req  api.DelAddrRequest
		want string
	}{
		{"every VLAN", api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:99"},
			"bridge0: delete address 02:00:00:00:00:99: not in the address table"},
		{"one VLAN", api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:99", VLAN: ptr(uint16(5))},
			"bridge0: delete address 02:00:00:00:00:99 vlan 5: not in the address table"},
	}
	for _, tt := range tests {
		err := e.BridgeDelAddr(bg, tt.req)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: expected error %q, got %v", tt.name, tt.want, err)
		}
	}
}

func TestEngineAbsentMemberAttachesWhenItAppears(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	cfg := &config.Config{Bridges: []config.Bridge{config.NewBridge("bridge0")}}
	cfg.Bridges[0].Ports = []config.Port{config.NewPort("eth1"), config.NewPort("eth7")}
	e.Close()
	mustDo(t, e.load(cfg))
	link := func(n string) string {
		ps, err := e.PortShow(bg, n)
		mustDo(t, err)
		return ps[0].Link
	}
	if got := link("eth7"); got != "absent" {
		t.Fatalf("eth7 before it exists: %q, want absent", got)
	}
	sys.setLink("eth7", platform.LinkUp)
	if got := link("eth7"); got != "up" {
		t.Errorf("eth7 after it appeared: %q, want up", got)
	}
	if open, guards := sys.counts("eth7"); open != 1 || guards != 1 {
		t.Errorf("eth7 attached: %d ports and %d guards, want 1 and 1", open, guards)
	}
	sys.setLink("eth7", platform.LinkAbsent)
	if got := link("eth7"); got != "absent" {
		t.Errorf("eth7 after deletion: %q, want absent", got)
	}
	if open, guards := sys.counts("eth7"); open != 0 || guards != 0 {
		t.Errorf("eth7 deleted: %d ports and %d guards still open", open, guards)
	}
}

func TestEngineStackFlagTogglesGuard(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}))
	on, off := true, false
	mustDo(t, e.Change(bg, api.BridgePortRequest{Name: "bridge0", Iface: "eth1", Stack: &on}))
	if _, g := sys.counts("eth1"); g != 0 {
		t.Errorf("stack on: %d guards, want 0", g)
	}
	mustDo(t, e.Change(bg, api.BridgePortRequest{Name: "bridge0", Iface: "eth1", Stack: &off}))
	if _, g := sys.counts("eth1"); g != 1 {
		t.Errorf("stack off: %d guards, want 1", g)
	}
}

func TestEngineDestroyReleasesEverything(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))
	mustDo(t, e.Change(bg, api.BridgeDestroyRequest{Name: "bridge0"}))
	for _, n := range []string{"eth1", "eth2"} {
		if open, guards := sys.counts(n); open != 0 || guards != 0 {
			t.Errorf("%s after destroy: %d ports, %d guards open", n, open, guards)
		}
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "bridge0") {
		t.Errorf("destroyed bridge still in the configuration:\n%s", b)
	}
}

func TestEngineUnsavableChangeIsUndone(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	e.file = diskFile("/proc/swctl-cannot-write-here/swctl.conf")
	err := e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}})
	if err == nil || !strings.Contains(err.Error(), "cannot save the configuration") {
		t.Fatalf("add with an unwritable configuration: want a save error, got %v", err)
	}
	if open, guards := sys.counts("eth1"); open != 0 || guards != 0 {
		t.Errorf("eth1 after an unsaved add: %d ports, %d guards open", open, guards)
	}
}

func TestEngineTrunkLLAddrPolicy(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	sys.macs["eth1"] = net.HardwareAddr{2, 0, 0, 0, 0, 0x11}
	sys.macs["eth2"] = net.HardwareAddr{2, 0, 0, 0, 0, 0x22}
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}))
	ti, err := e.TrunkShow(bg, "trunk0")
	mustDo(t, err)
	if ti[0].LLAddr != "02:00:00:00:00:11" {
		t.Errorf("trunk lladdr = %s, want the first port's 02:00:00:00:00:11", ti[0].LLAddr)
	}
	if got := sys.macs["eth2"].String(); got != "02:00:00:00:00:11" {
		t.Errorf("eth2 in the trunk carries %s, want the trunk's MAC", got)
	}
	mustDo(t, e.Change(bg, api.TrunkDelRequest{Name: "trunk0", Ifaces: []string{"eth2"}}))
	if got := sys.macs["eth2"].String(); got != "02:00:00:00:00:22" {
		t.Errorf("eth2 after trunk del carries %s, want its own 02:00:00:00:00:22", got)
	}
	if open, guards := sys.counts("eth2"); open != 0 || guards != 0 {
		t.Errorf("eth2 after trunk del: %d ports, %d guards open", open, guards)
	}
}

func TestEngineTrunkRefusals(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth3")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}))
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth2"}}))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"bridge member into a trunk", e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth1"}}), "trunk0: add eth1: already a port of bridge bridge0"},
		{"trunk port into a bridge", e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth2"}}), "already a port of trunk trunk0"},
		{"trunk port twice", e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth2"}}), "trunk0: add eth2: already a port"},
		{"trunk named like a bridge", e.Change(bg, api.TrunkCreateRequest{Name: "bridge0"}), "bridge0: a bridge has that name"},
		{"bridge named like a trunk", e.Change(bg, api.BridgeCreateRequest{Name: "trunk0"}), "trunk0: a trunk has that name"},
		{"trunk as its own port", e.Change(bg, api.TrunkCreateRequest{Name: "trunk1", Ports: []string{"trunk0"}}), "is a swctl trunk"},
		{"missing port", e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth9"}}), "trunk0: add eth9: no such interface"},
		{"bridge named like a trunk port", e.Change(bg, api.BridgeCreateRequest{Name: "eth2", Local: true}), "eth2: is a port of trunk trunk0"},
		{"ports as one name with commas", e.Change(bg, api.TrunkCreateRequest{Name: "trunk9", Ports: []string{"sw5,sw6"}}),
			"trunk9: add sw5,sw6: no such interface (members are separate arguments: sw5 sw6)"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: want an error containing %q, got %v", c.name, c.want, c.err)
		}
	}
}

func TestEngineRefusesTheManagementInterface(t *testing.T) {
	const held = "holds the host's default route, so taking it would cut the host off that network"
	tests := []struct {
		name    string
		op      func(e *engine) error
		wantErr string // "" for success
	}{
		{"bridge add", func(e *engine) error {
			return e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth2", "eth1"}})
		}, "bridge0: add eth1: " + held + " (give --force to add it anyway)"},
		{"bridge add --force", func(e *engine) error {
			return e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth2", "eth1"}, Force: true})
		}, ""},
		{"bridge add of another interface", func(e *engine) error {
			return e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth2"}})
		}, ""},
		{"trunk create", func(e *engine) error {
			return e.Change(bg, api.TrunkCreateRequest{Name: "trunk1", Ports: []string{"eth1"}})
		}, "trunk1: add eth1: " + held + " (give --force to add it anyway)"},
		{"trunk create --force", func(e *engine) error {
			return e.Change(bg, api.TrunkCreateRequest{Name: "trunk1", Ports: []string{"eth1"}, Force: true})
		}, ""},
		{"trunk add", func(e *engine) error {
			return e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth1", "eth2"}})
		}, "trunk0: add eth1: " + held + " (give --force to add it anyway)"},
		{"trunk add --force", func(e *engine) error {
			return e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth1", "eth2"}, Force: true})
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newFakeSystem("eth1", "eth2")
			sys.defaultRoute = []string{"eth1"}
			e, _ := newTestEngine(t, sys)
			mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
			mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0"}))
			got := ""
			if err := tt.op(e); err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("expected error %q, got %q", tt.wantErr, got)
			}
			if open, _ := sys.counts("eth1"); tt.wantErr != "" && open != 0 {
				t.Errorf("eth1 after a refusal: %d ports open, want none", open)
			}
		})
	}
}

func TestEngineTrunkJoinsAndLeavesABridge(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth2"}}))
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"trunk0", "eth1"}}))
	if e.graph.trunks["trunk0"].tap != nil {
		t.Errorf("a trunk that joined a bridge still has its TAP")
	}
	if err := e.Change(bg, api.TrunkDestroyRequest{Name: "trunk0"}); err == nil || !strings.Contains(err.Error(), "member of bridge bridge0") {
		t.Errorf("destroying a trunk in a bridge: want a refusal naming bridge0, got %v", err)
	}
	mustDo(t, e.Change(bg, api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"trunk0"}}))
	if e.graph.trunks["trunk0"].tap == nil {
		t.Errorf("a trunk that left its bridge did not get its TAP back")
	}
	mustDo(t, e.Change(bg, api.TrunkDestroyRequest{Name: "trunk0"}))
	if open, guards := sys.counts("eth2"); open != 0 || guards != 0 {
		t.Errorf("eth2 after trunk destroy: %d ports, %d guards open", open, guards)
	}
}

// TestEngineFlushPort checks bridge flush --port: the addresses learned on
// that member go, other members' and static entries stay; with --all the
// member's static entries go too, from the table and the file.
func TestEngineFlushPort(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, path := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))
	mustDo(t, e.Change(bg, api.StaticRequest{Name: "bridge0", MAC: "02:aa:00:00:00:09", Iface: "eth1"}))
	// A broadcast from a station behind each member.
	for i, n := range []string{"eth1", "eth2"} {
		f := make([]byte, 60)
		copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xbb, 0, 0, 0, byte(i + 1), 0x88, 0xb5})
		if _, err := sys.far[n].WriteBatch(platform.Batch{Frames: [][]byte{f}}); err != nil {
			t.Fatal(err)
		}
	}
	table := func() []string {
		addrs, err := e.BridgeAddr(bg, api.BridgeAddrRequest{Name: "bridge0"})
		mustDo(t, err)
		var out []string
		for _, a := range addrs {
			out = append(out, fmt.Sprintf("%s on %s static %v", a.MAC, a.Port, a.Static))
		}
		slices.Sort(out)
		return out
	}
	netnstest.Eventually(t, 10*time.Second, "both stations learned", func() bool { return len(table()) == 3 })
	tests := []struct {
		req  api.FlushRequest
		want []string
		// file is whether the static entry is still in the file.
		file bool
	}{
		{api.FlushRequest{Name: "bridge0", Port: "eth1"}, []string{"02:aa:00:00:00:09 on eth1 static true", "02:bb:00:00:00:02 on eth2 static false"}, true},
		{api.FlushRequest{Name: "bridge0", Port: "eth1", All: true}, []string{"02:bb:00:00:00:02 on eth2 static false"}, false},
	}
	for _, tt := range tests {
		mustDo(t, e.BridgeFlush(bg, tt.req))
		if got := table(); !slices.Equal(got, tt.want) {
			t.Errorf("after flush %+v: table\nexpected %q\ngot      %q", tt.req, tt.want, got)
		}
		saved, err := config.Load(path)
		mustDo(t, err)
		if got := len(saved.Bridges[0].Statics) == 1; got != tt.file {
			t.Errorf("after flush %+v: static entry in the file: expected %v, got %v", tt.req, tt.file, got)
		}
	}
	err := e.BridgeFlush(bg, api.FlushRequest{Name: "bridge0", Port: "eth9"})
	if want := "bridge0: flush --port eth9: not a member"; err == nil || err.Error() != want {
		t.Errorf("flush --port of a non-member: expected %q, got %v", want, err)
	}
}

// TestEngineTrunkLogNamesTheTrunkOnce checks the trunk's own log lines
// (port added, proto changed) carry trunk= once.
func TestEngineTrunkLogNamesTheTrunkOnce(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	dir := t.TempDir()
	// A file, which the trunks' goroutines may write while the test reads.
	logs, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	e := newEngine(filepath.Join(dir, "swctl.conf"), sys, clock.NewFake(), slog.New(slog.NewTextHandler(logs, nil)))
	if err := e.load(&config.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}))
	mustDo(t, e.Change(bg, api.TrunkSetRequest{Name: "trunk0", Proto: ptr("roundrobin")}))
	out, err := os.ReadFile(logs.Name())
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, l := range strings.Split(string(out), "\n") {
		for _, msg := range []string{`msg="port added"`, `msg="proto changed"`} {
			if strings.Contains(l, msg) {
				seen = append(seen, msg)
			}
		}
		if n := strings.Count(l, "trunk=trunk0"); n > 1 {
			t.Errorf("expected trunk=trunk0 once, got %d times in %q", n, l)
		}
	}
	if len(seen) < 2 {
		t.Errorf("expected the trunk's port added and proto changed lines, got %q in\n%s", seen, out)
	}
}

// TestEngineAsksOnlyTheCapabilitySet checks that the engine uses the
// controls an OS adapter gives with a port (platform.Caps), and only
// those: the fake port has every method, so a control left out of the
// set is one the engine did not discover by itself.
func TestEngineAsksOnlyTheCapabilitySet(t *testing.T) {
	every := func(p *trackedPort) platform.Caps {
		return platform.Caps{Promisc: p, Multicast: p, Link: p, MTU: p}
	}
	none := func(*trackedPort) platform.Caps { return platform.Caps{} }
	tests := []struct {
		name string
		caps func(*trackedPort) platform.Caps
		// trunk makes eth1 a member of an lladdr-policy trunk instead of
		// a bridge.
		trunk        bool
		wantPromisc  bool
		wantGroups   []string
		wantAllmulti bool
	}{
		{name: "bridge member with promiscuous mode", caps: every, wantPromisc: true},
		{name: "bridge member without promiscuous mode joins all the same", caps: none},
		{name: "trunk member with multicast memberships", caps: every, trunk: true,
			wantGroups: []string{"01:80:c2:00:00:02"}, wantAllmulti: true},
		{name: "trunk member without multicast memberships joins all the same", caps: none, trunk: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newFakeSystem("eth1")
			sys.caps = tt.caps
			e, _ := newTestEngine(t, sys)
			if tt.trunk {
				mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1"}}))
			} else {
				mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
				mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}))
			}
			p := sys.ports["eth1"]
			if p.Promisc() != tt.wantPromisc {
				t.Errorf("eth1 promiscuous = %v, want %v", p.Promisc(), tt.wantPromisc)
			}
			groups, allmulti := p.memberships()
			if !slices.Equal(groups, tt.wantGroups) || allmulti != tt.wantAllmulti {
				t.Errorf("eth1 multicast groups %q, all-multicast %v; want %q, %v", groups, allmulti, tt.wantGroups, tt.wantAllmulti)
			}
		})
	}
}
