package daemon

import (
	"fmt"
	"net/netip"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/platform"
)

// TestEngineTrunkShowPerPort checks what trunk show says of each port and
// of the link policy: frames a standby received are counted refused on
// it, a slow-protocol frame as control, frames sent by the active port
// (the announcements after a failover) on it, and nothing on an absent
// port.
func TestEngineTrunkShowPerPort(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth9")
	sys.ips = map[string][]netip.Addr{"trunk0": {netip.MustParseAddr("192.0.2.1")}}
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"},
		UpDelay: ptr(0), DownDelay: ptr(25), MinLinks: ptr(1), Preempt: ptr(false)}))
	mustDo(t, e.Change(bg, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth9"}}))
	sys.setLink("eth9", platform.LinkAbsent)
	data := make([]byte, 60)
	copy(data, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xbb, 0, 0, 0, 1, 0x88, 0xb5})
	lacpdu := make([]byte, 124)
	copy(lacpdu, []byte{0x01, 0x80, 0xc2, 0, 0, 0x02, 0x02, 0xbb, 0, 0, 0, 1, 0x88, 0x09, 0x01})
	if _, err := sys.far["eth2"].WriteBatch(platform.Batch{Frames: [][]byte{data, data, lacpdu}}); err != nil {
		t.Fatal(err)
	}
	show := func() api.TrunkInfo {
		ti, err := e.TrunkShow(bg, "trunk0")
		mustDo(t, err)
		return ti[0]
	}
	port := func(ti api.TrunkInfo, name string) api.TrunkPortInfo {
		for _, p := range ti.Ports {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("trunk show: no port %s in %+v", name, ti.Ports)
		return api.TrunkPortInfo{}
	}
	// The port counts a frame when it is read, the trunk when it has
	// sorted it: wait for both.
	netnstest.Eventually(t, 5*time.Second, "eth2 counts what it received", func() bool {
		p := port(show(), "eth2")
		return p.RxPackets == 3 && p.RxRefused+p.RxControl == 3
	})
	ti := show()
	if p := port(ti, "eth2"); p.RxRefused != 2 || p.RxControl != 1 || p.RxBytes != 60+60+124 {
		t.Errorf("eth2, the standby: expected 3 frames (244 bytes), 2 refused, 1 control; got %+v", p)
	}
	if p := port(ti, "eth1"); p.RxPackets != 0 || p.RxRefused != 0 {
		t.Errorf("eth1: expected nothing received, got %+v", p)
	}
	if ti.UpDelay != 0 || ti.DownDelay != 25 || ti.MinLinks != 1 || ti.Preempt {
		t.Errorf("policy: expected updelay 0, downdelay 25, min-links 1, preempt off; got %d, %d, %d, %v", ti.UpDelay, ti.DownDelay, ti.MinLinks, ti.Preempt)
	}

	// eth1 goes down: failover moves to eth2 only after the 25 ms
	// downdelay, and eth2 sends the announcement then.
	sys.setLink("eth1", platform.LinkDown)
	tr := e.graph.trunks["trunk0"].tr
	tr.Tick()
	if p := port(show(), "eth2"); p.TxPackets != 0 {
		t.Errorf("eth2 before the downdelay: expected nothing sent, got %+v", p)
	}
	e.graph.clock.(*clock.Fake).Advance(25 * time.Millisecond)
	tr.Tick()
	ti = show()
	if p := port(ti, "eth2"); p.TxPackets != 1 || p.TxBytes != 60 || ti.Announced != 1 {
		t.Errorf("eth2 after the failover: expected 1 frame of 60 bytes sent and 1 announced, got %+v, announced %d", p, ti.Announced)
	}
	if p, want := port(ti, "eth9"), (api.TrunkPortInfo{Name: "eth9", Link: api.LinkAbsent}); !reflect.DeepEqual(p, want) {
		t.Errorf("eth9, absent: expected %+v, got %+v", want, p)
	}
}

// TestEngineLACPSystemPriorityZero checks that a system priority of 0,
// which trunk set accepts and trunk show shows, is also what the actor
// sends, rather than the default.
func TestEngineLACPSystemPriorityZero(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1"}}))
	actor := func() string {
		ti, err := e.TrunkShow(bg, "trunk0")
		mustDo(t, err)
		if len(ti) != 1 || len(ti[0].Ports) != 1 || ti[0].Ports[0].LACP == nil {
			t.Fatalf("trunk show: expected trunk0 with one LACP port, got %+v", ti)
		}
		return ti[0].Ports[0].LACP.Actor.System
	}
	for _, prio := range []int{0, 32768, 7} {
		mustDo(t, e.Change(bg, api.TrunkSetRequest{Name: "trunk0", LACPSystemPriority: ptr(prio)}))
		if got, want := actor(), fmt.Sprintf("%d,", prio); !strings.HasPrefix(got, want) {
			t.Errorf("lacp-system-priority %d: expected the actor's system %q..., got %q", prio, want, got)
		}
	}
}

// TestEngineTrunkCreateSettings checks that what trunk create gives
// beyond trunk add's ports, its MAC, LACP system priority and the ports'
// priority, is what the running trunk has.
func TestEngineTrunkCreateSettings(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1", "eth2"},
		LLAddr: "02:5e:00:00:00:09", LACPSystemPriority: ptr(0), LACPKey: ptr(7), Priority: ptr(3), LACPPortPriority: ptr(100)}))
	ti, err := e.TrunkShow(bg, "trunk0")
	mustDo(t, err)
	tr := ti[0]
	if tr.LLAddr != "02:5e:00:00:00:09" || tr.LACPSystemPriority != 0 || tr.LACPKey != 7 {
		t.Errorf("trunk0: expected lladdr 02:5e:00:00:00:09, system priority 0, key 7; got %s, %d, %d", tr.LLAddr, tr.LACPSystemPriority, tr.LACPKey)
	}
	for _, p := range tr.Ports {
		if p.Priority != 3 || p.LACP == nil || p.LACP.Actor.System != "0,02:5e:00:00:00:09" || p.LACP.Actor.Key != 7 {
			t.Errorf("%s: expected priority 3 and actor 0,02:5e:00:00:00:09 key 7, got priority %d, LACP %+v", p.Name, p.Priority, p.LACP)
		}
	}
	if c := e.cfg.Trunk("trunk0"); c == nil || c.Port("eth1") == nil || c.Port("eth1").LACPPortPriority != 100 {
		t.Errorf("trunk0's configuration: expected eth1 with LACP port priority 100, got %+v", c)
	}
}

// TestEngineLACPPortPriorityZero checks that an LACP port priority of 0,
// given at create or by trunk port in place, is what the actor sends,
// rather than the default, and that trunk port changes it in place.
func TestEngineLACPPortPriorityZero(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1"}, LACPPortPriority: ptr(0)}))
	advertised := func() uint16 {
		ports := e.graph.trunks["trunk0"].tr.Ports()
		st, ok := ports[0].Detail.(lacp.PortState)
		if len(ports) != 1 || !ok {
			t.Fatalf("trunk0: expected one LACP port, got %+v", ports)
		}
		return st.Actor.PortPriority
	}
	if got := advertised(); got != 0 {
		t.Errorf("created with lacp-port-priority 0: expected the actor's port priority 0, got %d", got)
	}
	for _, prio := range []int{7, 0, 32768} {
		mustDo(t, e.Change(bg, api.TrunkPortRequest{Name: "trunk0", Iface: "eth1", LACPPortPriority: ptr(prio)}))
		if got := advertised(); int(got) != prio {
			t.Errorf("trunk port --lacp-port-priority %d: expected the actor's port priority %d, got %d", prio, prio, got)
		}
		if c := e.cfg.Trunk("trunk0").Port("eth1"); c.LACPPortPriority != prio {
			t.Errorf("trunk port --lacp-port-priority %d: expected it saved, got %d", prio, c.LACPPortPriority)
		}
	}
}

// TestEngineTrunkRxQueuesFollowWorkers checks that a trunk has one
// receive queue per worker (--workers), 0 counting as 1, and not one per
// CPU: a bridge the trunk joins runs one forwarding goroutine per queue.
func TestEngineTrunkRxQueuesFollowWorkers(t *testing.T) {
	for _, tc := range []struct{ workers, want int }{{0, 1}, {1, 1}, {3, 3}, {runtime.GOMAXPROCS(0) + 2, runtime.GOMAXPROCS(0) + 2}} {
		t.Run(fmt.Sprintf("workers=%d", tc.workers), func(t *testing.T) {
			sys := newFakeSystem("eth1", "eth2")
			e, _ := newTestEngine(t, sys)
			e.graph.workers = tc.workers
			mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}))
			if got := e.graph.trunks["trunk0"].tr.RxQueues(); got != tc.want {
				t.Errorf("trunk0 with %d workers has %d receive queues, want %d", tc.workers, got, tc.want)
			}
		})
	}
}
