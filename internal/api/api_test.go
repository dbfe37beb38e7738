package api_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/api/apitest"
)

func ptr[T any](v T) *T { return &v }

// get sends req and returns its result as a T.
func get[T any](ctx context.Context, c *api.Client, req api.Operation) (T, error) {
	var res T
	err := c.Do(ctx, req, &res)
	return res, err
}

func fakeState() *apitest.Fake {
	return &apitest.Fake{
		Bridges: []api.BridgeInfo{{
			Name: "bridge0", Timeout: 240, MaxAddr: 8192, Local: "bridge0", LocalMAC: "02:5e:00:12:34:56",
			Ports: []api.BridgePortInfo{{Name: "eth1", Flags: []string{"learning", "discover"}, Link: "up", STP: &api.PortSTPInfo{
				Enabled: true, AutoEdge: true, PTP: "auto", Priority: 128, PortID: "8001", Role: "root", State: "forwarding",
				PointToPoint: true, PathCost: 2000, Protocol: "rstp", DesignatedRoot: "1000.020000000099", DesignatedBridge: "1000.020000000099",
				DesignatedPort: "8002", BPDUsIn: 7, BPDUsOut: 8, BPDUsBad: 1,
			}}},
			Spans: []string{"eth3"}, Addresses: 1, Exceeded: 2, Forwarded: 3, Flooded: 4, Dropped: 5, FwdMask: 0x4000,
			STP: &api.STPInfo{
				Proto: "rstp", Priority: 32768, HelloTime: 2, FwdDelay: 15, MaxAge: 20, HoldCount: 6,
				BridgeID: "8000.025e00123456", Root: "1000.020000000099", RootPathCost: 2000, RootPort: "eth1",
				RootMaxAge: 20, RootFwdDelay: 15, TopologyChanges: 3, SinceTopologyChange: ptr(int64(12)),
			},
		}},
		Addrs: map[string][]api.AddrInfo{"bridge0": {
			{MAC: "02:00:00:00:00:01", VLAN: 0, Port: "eth1", Age: ptr(int64(12))},
			{MAC: "02:00:00:00:00:02", VLAN: 10, Port: "eth1", Static: true},
		}},
		Trunks: []api.TrunkInfo{{
			Name: "trunk0", Proto: "lacp", LLAddr: "02:5e:00:12:34:57", Hash: "l2,l3,l4", LACPMode: "active", LACPTimeout: "fast",
			LACPSystemPriority: 32768, LACPKey: 1, Active: true,
			Ports: []api.TrunkPortInfo{
				{Name: "eth5", Link: "up", Priority: 10, Flags: []string{"active", "collecting", "distributing"}, LACP: &api.LACPInfo{
					Actor:    api.LACPPeerInfo{System: "32768,02:5e:00:12:34:57", Key: 1, Port: 1, State: []string{"activity", "timeout", "aggregation", "synchronization", "collecting", "distributing"}},
					Partner:  api.LACPPeerInfo{System: "32768,02:00:00:00:00:aa", Key: 9, Port: 3, State: []string{"activity", "aggregation", "synchronization", "collecting", "distributing"}},
					Selected: true, RxLACPDUs: 10, TxLACPDUs: 11, RxBad: 1,
				}},
				{Name: "eth6", Link: "absent", Flags: []string{}, LACP: &api.LACPInfo{
					Actor: api.LACPPeerInfo{State: []string{}}, Partner: api.LACPPeerInfo{State: []string{}}, Reason: "link down",
				}},
			},
			RxPackets: 1, RxBytes: 2, TxPackets: 3, TxBytes: 4, RxDropped: 5, TxDropped: 6,
		}},
		Ports: []api.PortInfo{{Name: "eth1", Bridge: "bridge0", Role: "member", Link: "up", Promisc: true, RxPackets: 1, RxBytes: 2, TxPackets: 3, TxBytes: 4, RxDropped: 5, TxDropped: 6, RingDropped: 7, Errors: 8}},
		LBs: []api.LBInfo{{Name: "web", Iface: "eth1", MAC: "02:00:00:00:00:01", VIPs: []string{"192.0.2.100"}, Sources: []string{}, Method: "maglev",
			Health: "tcp:80", State: "running", Serving: 1, Flows: 3, Frames: 10, Bytes: 1000,
			Backends: []api.LBBackendInfo{{Addr: "192.0.2.11", MAC: "02:00:00:00:00:11", Weight: 1, State: "serving", Health: "up",
				HealthSince: time.Unix(1700000000, 0).UTC(), Frames: 10, Bytes: 1000}}}},
		VersionInfo: api.VersionInfo{Version: "v1.2.3", Revision: "abc", Go: "go1.26", Protocol: 1},
		Frames: []api.CapturedFrame{
			{Port: "eth1", Dir: api.FrameIn, Time: time.Unix(1700000000, 5), Len: 60, Data: bytes.Repeat([]byte{1}, 60)},
			{Port: "eth3", Dir: api.FrameOut, Time: time.Unix(1700000001, 6), Len: 1514, Data: bytes.Repeat([]byte{2}, 64)},
			{Port: "eth1", Dir: api.FrameIn, Time: time.Unix(1700000002, 7), Len: 60, Data: bytes.Repeat([]byte{3}, 60)},
		},
		CaptureDropped: 4,
		Samples: []api.Sample{
			{Name: "swctl_port_dropped_frames_total", Labels: map[string]string{"port": "eth1", "owner": "bridge0", "role": "member", "reason": "tx"}, Value: 6},
			{Name: "swctl_uptime_seconds", Value: 12.5},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		call     func(c *api.Client) (any, error)
		wantCall apitest.Call
		want     any
	}{
		{"bridge create", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeCreateRequest{Name: "bridge0", Local: true}, nil)
		}, apitest.Call{Op: "bridge.create", Req: api.BridgeCreateRequest{Name: "bridge0", Local: true}}, nil},
		{"bridge destroy", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeDestroyRequest{Name: "bridge0"}, nil)
		}, apitest.Call{Op: "bridge.destroy", Req: api.BridgeDestroyRequest{Name: "bridge0"}}, nil},
		{"bridge add", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}, nil)
		}, apitest.Call{Op: "bridge.add", Req: api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}}, nil},
		{"bridge add --force", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth0"}, Force: true}, nil)
		}, apitest.Call{Op: "bridge.add", Req: api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth0"}, Force: true}}, nil},
		{"bridge del", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"eth2"}}, nil)
		}, apitest.Call{Op: "bridge.del", Req: api.BridgeDelRequest{Name: "bridge0", Ifaces: []string{"eth2"}}}, nil},
		{"bridge show all", func(c *api.Client) (any, error) {
			return get[[]api.BridgeInfo](ctx, c, api.BridgeShowRequest{Name: ""})
		}, apitest.Call{Op: "bridge.show", Req: ""}, fakeState().Bridges},
		{"bridge show one", func(c *api.Client) (any, error) {
			return get[[]api.BridgeInfo](ctx, c, api.BridgeShowRequest{Name: "bridge0"})
		}, apitest.Call{Op: "bridge.show", Req: "bridge0"}, fakeState().Bridges},
		{"bridge addr", func(c *api.Client) (any, error) {
			return get[[]api.AddrInfo](ctx, c, api.BridgeAddrRequest{Name: "bridge0"})
		}, apitest.Call{Op: "bridge.addr", Req: api.BridgeAddrRequest{Name: "bridge0"}}, fakeState().Addrs["bridge0"]},
		{"bridge static", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.StaticRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", Iface: "eth1", VLAN: 7}, nil)
		}, apitest.Call{Op: "bridge.static", Req: api.StaticRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", Iface: "eth1", VLAN: 7}}, nil},
		{"bridge deladdr every vlan", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01"}, nil)
		}, apitest.Call{Op: "bridge.deladdr", Req: api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01"}}, nil},
		{"bridge deladdr vlan 0", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", VLAN: ptr(uint16(0))}, nil)
		}, apitest.Call{Op: "bridge.deladdr", Req: api.DelAddrRequest{Name: "bridge0", MAC: "02:00:00:00:00:01", VLAN: ptr(uint16(0))}}, nil},
		{"bridge flush", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.FlushRequest{Name: "bridge0", All: true}, nil)
		}, apitest.Call{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0", All: true}}, nil},
		{"bridge flush --port", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.FlushRequest{Name: "bridge0", Port: "eth1"}, nil)
		}, apitest.Call{Op: "bridge.flush", Req: api.FlushRequest{Name: "bridge0", Port: "eth1"}}, nil},
		{"bridge enable", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.EnableRequest{Name: "bridge0", Iface: "eth1"}, nil)
		}, apitest.Call{Op: "bridge.enable", Req: api.EnableRequest{Name: "bridge0", Iface: "eth1"}}, nil},
		{"bridge port storm-limit 0, bpdu-guard", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgePortRequest{Name: "bridge0", Iface: "eth1", StormLimit: ptr(0), BPDUGuard: ptr(true)}, nil)
		}, apitest.Call{Op: "bridge.port", Req: api.BridgePortRequest{Name: "bridge0", Iface: "eth1", StormLimit: ptr(0), BPDUGuard: ptr(true)}}, nil},
		{"bridge set timeout 0", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeSetRequest{Name: "bridge0", Timeout: ptr(0)}, nil)
		}, apitest.Call{Op: "bridge.set", Req: api.BridgeSetRequest{Name: "bridge0", Timeout: ptr(0)}}, nil},
		{"bridge set maxaddr", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeSetRequest{Name: "bridge0", MaxAddr: ptr(100)}, nil)
		}, apitest.Call{Op: "bridge.set", Req: api.BridgeSetRequest{Name: "bridge0", MaxAddr: ptr(100)}}, nil},
		{"bridge port", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgePortRequest{Name: "bridge0", Iface: "eth1", Learning: ptr(false), Stack: ptr(true)}, nil)
		}, apitest.Call{Op: "bridge.port", Req: api.BridgePortRequest{Name: "bridge0", Iface: "eth1", Learning: ptr(false), Stack: ptr(true)}}, nil},
		{"bridge set fwd-mask", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeSetRequest{Name: "bridge0", FwdMask: ptr(uint16(0x4000))}, nil)
		}, apitest.Call{Op: "bridge.set", Req: api.BridgeSetRequest{Name: "bridge0", FwdMask: ptr(uint16(0x4000))}}, nil},
		{"bridge port stp settings", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgePortRequest{Name: "bridge0", Iface: "eth1", STP: ptr(false), Edge: ptr(true), AutoEdge: ptr(false), PTP: ptr("on"), IfPriority: ptr(0), IfCost: ptr(0)}, nil)
		}, apitest.Call{Op: "bridge.port", Req: api.BridgePortRequest{Name: "bridge0", Iface: "eth1", STP: ptr(false), Edge: ptr(true), AutoEdge: ptr(false), PTP: ptr("on"), IfPriority: ptr(0), IfCost: ptr(0)}}, nil},
		{"bridge stp on with every setting", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeSTPRequest{Name: "bridge0", On: ptr(true), Proto: ptr("stp"), Priority: ptr(0), HelloTime: ptr(1), FwdDelay: ptr(4), MaxAge: ptr(6), HoldCount: ptr(1)}, nil)
		}, apitest.Call{Op: "bridge.stp", Req: api.BridgeSTPRequest{Name: "bridge0", On: ptr(true), Proto: ptr("stp"), Priority: ptr(0), HelloTime: ptr(1), FwdDelay: ptr(4), MaxAge: ptr(6), HoldCount: ptr(1)}}, nil},
		{"bridge stp off", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.BridgeSTPRequest{Name: "bridge0", On: ptr(false)}, nil)
		}, apitest.Call{Op: "bridge.stp", Req: api.BridgeSTPRequest{Name: "bridge0", On: ptr(false)}}, nil},
		{"bridge addspan", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.AddSpanRequest{Name: "bridge0", Iface: "eth3"}, nil)
		}, apitest.Call{Op: "bridge.addspan", Req: api.AddSpanRequest{Name: "bridge0", Iface: "eth3"}}, nil},
		{"bridge delspan", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.DelSpanRequest{Name: "bridge0", Iface: "eth3"}, nil)
		}, apitest.Call{Op: "bridge.delspan", Req: api.DelSpanRequest{Name: "bridge0", Iface: "eth3"}}, nil},
		{"trunk create defaults", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkCreateRequest{Name: "trunk0"}, nil)
		}, apitest.Call{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0"}}, nil},
		{"trunk create everything", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1", "eth2"}, Promisc: true, LACPMode: "passive", LACPTimeout: "fast", Hash: "l3,l2", Force: true}, nil)
		}, apitest.Call{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", Proto: "lacp", Ports: []string{"eth1", "eth2"}, Promisc: true, LACPMode: "passive", LACPTimeout: "fast", Hash: "l3,l2", Force: true}}, nil},
		{"trunk destroy", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkDestroyRequest{Name: "trunk0"}, nil)
		}, apitest.Call{Op: "trunk.destroy", Req: api.TrunkDestroyRequest{Name: "trunk0"}}, nil},
		{"trunk add", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth3"}}, nil)
		}, apitest.Call{Op: "trunk.add", Req: api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth3"}}}, nil},
		{"trunk add with priorities 0", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth3", "eth4"}, Priority: ptr(0), LACPPortPriority: ptr(0), Force: true}, nil)
		}, apitest.Call{Op: "trunk.add", Req: api.TrunkAddRequest{Name: "trunk0", Ifaces: []string{"eth3", "eth4"}, Priority: ptr(0), LACPPortPriority: ptr(0), Force: true}}, nil},
		{"trunk del", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkDelRequest{Name: "trunk0", Ifaces: []string{"eth3"}}, nil)
		}, apitest.Call{Op: "trunk.del", Req: api.TrunkDelRequest{Name: "trunk0", Ifaces: []string{"eth3"}}}, nil},
		{"trunk set everything", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkSetRequest{Name: "trunk0", Proto: ptr("roundrobin"), LACPMode: ptr("active"), LACPTimeout: ptr("slow"), Hash: ptr("l4"), LACPSystemPriority: ptr(0), LACPKey: ptr(0)}, nil)
		}, apitest.Call{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", Proto: ptr("roundrobin"), LACPMode: ptr("active"), LACPTimeout: ptr("slow"), Hash: ptr("l4"), LACPSystemPriority: ptr(0), LACPKey: ptr(0)}}, nil},
		{"trunk set key", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkSetRequest{Name: "trunk0", LACPKey: ptr(65535)}, nil)
		}, apitest.Call{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", LACPKey: ptr(65535)}}, nil},
		{"trunk create link policy", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkCreateRequest{Name: "trunk0", UpDelay: ptr(0), DownDelay: ptr(3600000), MinLinks: ptr(64), Preempt: ptr(false)}, nil)
		}, apitest.Call{Op: "trunk.create", Req: api.TrunkCreateRequest{Name: "trunk0", UpDelay: ptr(0), DownDelay: ptr(3600000), MinLinks: ptr(64), Preempt: ptr(false)}}, nil},
		{"trunk set link policy", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkSetRequest{Name: "trunk0", UpDelay: ptr(200), DownDelay: ptr(0), MinLinks: ptr(0), Preempt: ptr(true)}, nil)
		}, apitest.Call{Op: "trunk.set", Req: api.TrunkSetRequest{Name: "trunk0", UpDelay: ptr(200), DownDelay: ptr(0), MinLinks: ptr(0), Preempt: ptr(true)}}, nil},
		{"trunk port", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.TrunkPortRequest{Name: "trunk0", Iface: "eth3", Priority: ptr(0)}, nil)
		}, apitest.Call{Op: "trunk.port", Req: api.TrunkPortRequest{Name: "trunk0", Iface: "eth3", Priority: ptr(0)}}, nil},
		{"trunk show all", func(c *api.Client) (any, error) {
			return get[[]api.TrunkInfo](ctx, c, api.TrunkShowRequest{Name: ""})
		}, apitest.Call{Op: "trunk.show", Req: ""}, fakeState().Trunks},
		{"trunk show one", func(c *api.Client) (any, error) {
			return get[[]api.TrunkInfo](ctx, c, api.TrunkShowRequest{Name: "trunk0"})
		}, apitest.Call{Op: "trunk.show", Req: "trunk0"}, fakeState().Trunks},
		{"lb create", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.LBCreateRequest{Name: "web", Iface: "eth1", VIPs: []string{"192.0.2.100", "2001:db8::100"}, Method: "hash", Health: "http:80/hz", Interval: "1s", Rise: 1}, nil)
		}, apitest.Call{Op: "lb.create", Req: api.LBCreateRequest{Name: "web", Iface: "eth1", VIPs: []string{"192.0.2.100", "2001:db8::100"}, Method: "hash", Health: "http:80/hz", Interval: "1s", Rise: 1}}, nil},
		{"lb destroy", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.LBDestroyRequest{Name: "web"}, nil)
		}, apitest.Call{Op: "lb.destroy", Req: api.LBDestroyRequest{Name: "web"}}, nil},
		{"lb backend add", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.LBBackendAddRequest{Name: "web", Addr: "192.0.2.11", Weight: 2}, nil)
		}, apitest.Call{Op: "lb.backend.add", Req: api.LBBackendAddRequest{Name: "web", Addr: "192.0.2.11", Weight: 2}}, nil},
		{"lb backend del", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.LBBackendDelRequest{Name: "web", Addr: "192.0.2.11"}, nil)
		}, apitest.Call{Op: "lb.backend.del", Req: api.LBBackendDelRequest{Name: "web", Addr: "192.0.2.11"}}, nil},
		{"lb backend drain", func(c *api.Client) (any, error) {
			return nil, c.Do(ctx, api.LBBackendDrainRequest{Name: "web", Addr: "192.0.2.11"}, nil)
		}, apitest.Call{Op: "lb.backend.drain", Req: api.LBBackendDrainRequest{Name: "web", Addr: "192.0.2.11"}}, nil},
		{"lb show", func(c *api.Client) (any, error) {
			return get[[]api.LBInfo](ctx, c, api.LBShowRequest{Name: "web"})
		}, apitest.Call{Op: "lb.show", Req: "web"}, fakeState().LBs},
		{"port show", func(c *api.Client) (any, error) {
			return get[[]api.PortInfo](ctx, c, api.PortShowRequest{Name: "eth1"})
		}, apitest.Call{Op: "port.show", Req: "eth1"}, fakeState().Ports},
		{"version", func(c *api.Client) (any, error) {
			return get[api.VersionInfo](ctx, c, api.VersionRequest{})
		}, apitest.Call{Op: "version", Req: nil}, fakeState().VersionInfo},
		{"capture", func(c *api.Client) (any, error) {
			return readCapture(ctx, c, api.CaptureRequest{Name: "bridge0", Count: 2})
		}, apitest.Call{Op: "capture", Req: api.CaptureRequest{StreamVersion: api.StreamVersion, Name: "bridge0", Count: 2}},
			capture{fakeState().Frames[:2], api.CaptureEnd{Sent: 2, Dropped: 4}}},
		{"stats", func(c *api.Client) (any, error) {
			return get[[]api.Sample](ctx, c, api.StatsRequest{})
		}, apitest.Call{Op: "stats", Req: nil}, fakeState().Samples},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakeState()
			c, err := api.Dial(apitest.Serve(t, fake))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := tt.call(c)
			if err != nil {
				t.Fatalf("expected no error, got %v", err)
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("result:\nexpected %+v\ngot      %+v", tt.want, got)
			}
			calls := fake.Recorded()
			if len(calls) != 1 || !reflect.DeepEqual(calls[0], tt.wantCall) {
				t.Errorf("handler calls:\nexpected [%+v]\ngot      %+v", tt.wantCall, calls)
			}
			covered[tt.wantCall.Op] = true
		})
	}
	for _, op := range api.Ops() {
		if !covered[op] {
			t.Errorf("op %s: expected a round-trip case, got none", op)
		}
	}
}

func TestHandlerError(t *testing.T) {
	fake := fakeState()
	fake.Errs = map[string]error{"bridge.add": errors.New("bridge0: add eth9: no such interface")}
	c, err := api.Dial(apitest.Serve(t, fake))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Do(context.Background(), api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth9"}}, nil)
	var re *api.RemoteError
	if !errors.As(err, &re) || re.Message != "bridge0: add eth9: no such interface" || re.Op != "bridge.add" {
		t.Fatalf("expected RemoteError{bridge.add, bridge0: add eth9: no such interface}, got %#v", err)
	}
	// The connection stays usable after an error reply.
	if _, err := get[api.VersionInfo](context.Background(), c, api.VersionRequest{}); err != nil {
		t.Errorf("request after an error reply: expected no error, got %v", err)
	}
}

func TestEmptyListsAreArrays(t *testing.T) {
	fake := &apitest.Fake{Bridges: []api.BridgeInfo{{Name: "b0"}}, Addrs: map[string][]api.AddrInfo{"b0": nil}, Trunks: []api.TrunkInfo{{Name: "t0"}, {Name: "t1", Ports: []api.TrunkPortInfo{{Name: "e1"}, {Name: "e2", LACP: &api.LACPInfo{}}}}}}
	path := apitest.Serve(t, fake)
	tests := []struct {
		request string
		want    string
	}{
		{`{"version":1,"op":"bridge.show"}`, `{"result":[{"name":"b0","timeout":0,"maxaddr":0,"local":"","ports":[],"spans":[],"addresses":0,"exceeded":0,"forwarded":0,"flooded":0,"dropped":0}]}`},
		{`{"version":1,"op":"bridge.addr","args":{"name":"b0"}}`, `{"result":[]}`},
		{`{"version":1,"op":"port.show"}`, `{"result":[]}`},
		{`{"version":1,"op":"trunk.show","args":{"name":"t0"}}`, `{"result":[{"name":"t0","proto":"","lladdr":"","promisc":false,"hash":"","lacp_mode":"","lacp_timeout":"","lacp_system_priority":0,"lacp_key":0,"updelay":0,"downdelay":0,"min_links":0,"preempt":false,"queue":{"tx_queue_bytes":0,"tx_queue_delay_ms":0,"tx_queue_target_us":0,"tx_queue_super_frames":false,"send_buffer":0},"active":false,"ports":[],"rx_packets":0,"rx_bytes":0,"tx_packets":0,"tx_bytes":0,"rx_dropped":0,"tx_dropped":0,"announced":0}]}`},
		{`{"version":1,"op":"trunk.show","args":{"name":"t1"}}`, `{"result":[{"name":"t1","proto":"","lladdr":"","promisc":false,"hash":"","lacp_mode":"","lacp_timeout":"","lacp_system_priority":0,"lacp_key":0,"updelay":0,"downdelay":0,"min_links":0,"preempt":false,"queue":{"tx_queue_bytes":0,"tx_queue_delay_ms":0,"tx_queue_target_us":0,"tx_queue_super_frames":false,"send_buffer":0},"active":false,"ports":[{"name":"e1","link":"","priority":0,"flags":[],"rx_packets":0,"rx_bytes":0,"tx_packets":0,"tx_bytes":0,"rx_refused":0,"rx_control":0,"rx_dropped":0,"rx_bad_offload":0,"tx_dropped":0,"ring_dropped":0,"errors":0,"tx_queue_limit":0,"tx_queue_bytes":0,"tx_queue_overflow":0,"tx_queue_stale":0},{"name":"e2","link":"","priority":0,"flags":[],"lacp":{"actor":{"system":"","key":0,"port":0,"state":[]},"partner":{"system":"","key":0,"port":0,"state":[]},"selected":false,"reason":"","rx_lacpdus":0,"tx_lacpdus":0,"rx_bad":0},"rx_packets":0,"rx_bytes":0,"tx_packets":0,"tx_bytes":0,"rx_refused":0,"rx_control":0,"rx_dropped":0,"rx_bad_offload":0,"tx_dropped":0,"ring_dropped":0,"errors":0,"tx_queue_limit":0,"tx_queue_bytes":0,"tx_queue_overflow":0,"tx_queue_stale":0}],"rx_packets":0,"rx_bytes":0,"tx_packets":0,"tx_bytes":0,"rx_dropped":0,"tx_dropped":0,"announced":0}]}`},
		{`{"version":1,"op":"bridge.create","args":{"name":"b1"}}`, `{"result":null}`},
	}
	conn, r := rawDial(t, path)
	for _, tt := range tests {
		if got := exchange(t, conn, r, tt.request); got != tt.want {
			t.Errorf("%s:\nexpected %s\ngot      %s", tt.request, tt.want, got)
		}
	}
}

func rawDial(t *testing.T, path string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, bufio.NewReader(conn)
}

func exchange(t *testing.T, conn net.Conn, r *bufio.Reader, line string) string {
	t.Helper()
	if _, err := conn.Write([]byte(line + "\n")); err != nil {
		t.Fatalf("write %s: %v", line, err)
	}
	reply, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read reply to %s: %v", line, err)
	}
	return strings.TrimSuffix(reply, "\n")
}

func TestBadRequests(t *testing.T) {
	tests := []struct {
		name    string
		request string
		want    string
	}{
		{"malformed JSON", `{"version":1,`, `{"error":"malformed request: unexpected EOF"}`},
		{"not an object", `[1,2]`, `{"error":"malformed request: json: cannot unmarshal array into Go value of type api.Request"}`},
		{"trailing data", `{"version":1,"op":"version"} x`, `{"error":"malformed request: trailing data after the JSON value"}`},
		{"missing version", `{"op":"version"}`, `{"error":"malformed request: missing version"}`},
		{"bad version", `{"version":3,"op":"version"}`, `{"error":"unsupported protocol version 3 (this daemon speaks versions 1 to 2: restart the daemon after upgrading swctl)"}`},
		{"missing op", `{"version":1}`, `{"error":"malformed request: missing op"}`},
		{"unknown field in envelope", `{"version":1,"op":"version","extra":1}`, `{"error":"malformed request: json: unknown field \"extra\""}`},
		{"unknown op", `{"version":1,"op":"bridge.explode"}`, `{"error":"unknown op \"bridge.explode\" (want one of bridge.add, bridge.addr, bridge.addspan, bridge.create, bridge.del, bridge.deladdr, bridge.delspan, bridge.destroy, bridge.enable, bridge.flush, bridge.port, bridge.set, bridge.show, bridge.static, bridge.stp, capture, lb.backend.add, lb.backend.del, lb.backend.drain, lb.create, lb.destroy, lb.show, port.show, stats, trunk.add, trunk.create, trunk.del, trunk.destroy, trunk.port, trunk.set, trunk.show, version)"}`},
		{"lb without vip", `{"version":2,"op":"lb.create","args":{"name":"web","iface":"eth1"}}`, `{"error":"lb.create: web: create: no --vip given"}`},
		{"lb on iface and bridge", `{"version":2,"op":"lb.create","args":{"name":"web","iface":"eth1","bridge":"br0","vips":["192.0.2.1"]}}`, `{"error":"lb.create: web: create: give exactly one of --iface and --bridge"}`},
		{"lb malformed vip", `{"version":2,"op":"lb.create","args":{"name":"web","iface":"eth1","vips":["192.0.2.300"]}}`, `{"error":"lb.create: web: vip \"192.0.2.300\": not an IPv4 or IPv6 address"}`},
		{"lb bad health", `{"version":2,"op":"lb.create","args":{"name":"web","iface":"eth1","vips":["192.0.2.1"],"health":"icmp"}}`, `{"error":"lb.create: web: health check \"icmp\": want tcp:PORT, http:PORT/path, arp or none"}`},
		{"lb backend malformed", `{"version":2,"op":"lb.backend.add","args":{"name":"web","addr":"x"}}`, `{"error":"lb.backend.add: web: backend add: backend \"x\": not an IPv4 or IPv6 address"}`},
		{"lb backend drain with weight", `{"version":2,"op":"lb.backend.drain","args":{"name":"web","addr":"192.0.2.11","weight":2}}`, `{"error":"lb.backend.drain: web: backend drain 192.0.2.11: weight 2: want 1 to 1000, with add only"}`},
		{"unknown arg", `{"version":1,"op":"bridge.create","args":{"name":"b0","color":"red"}}`, `{"error":"bridge.create: malformed args: json: unknown field \"color\""}`},
		{"arg of the wrong type", `{"version":1,"op":"bridge.create","args":{"name":7}}`, `{"error":"bridge.create: malformed args: json: cannot unmarshal number into Go struct field BridgeCreateRequest.name of type string"}`},
		{"missing args", `{"version":1,"op":"bridge.create"}`, `{"error":"bridge.create: bridge name is empty"}`},
		{"missing name", `{"version":1,"op":"bridge.destroy","args":{}}`, `{"error":"bridge.destroy: bridge name is empty"}`},
		{"name too long", `{"version":1,"op":"bridge.create","args":{"name":"abcdefghijklmnop"}}`, `{"error":"bridge.create: bridge name \"abcdefghijklmnop\" is 16 bytes long (at most 15)"}`},
		{"missing ifaces", `{"version":1,"op":"bridge.add","args":{"name":"b0"}}`, `{"error":"bridge.add: b0: add: no interfaces given"}`},
		{"duplicate iface", `{"version":1,"op":"bridge.add","args":{"name":"b0","ifaces":["e1","e1"]}}`, `{"error":"bridge.add: b0: add e1: given twice"}`},
		{"bad MAC", `{"version":1,"op":"bridge.static","args":{"name":"b0","mac":"zz","iface":"e1"}}`, `{"error":"bridge.static: b0: static: \"zz\" is not a MAC address (want aa:bb:cc:dd:ee:ff)"}`},
		{"multicast static", `{"version":1,"op":"bridge.static","args":{"name":"b0","mac":"01:00:5e:00:00:01","iface":"e1"}}`, `{"error":"bridge.static: b0: static 01:00:5e:00:00:01: a multicast or broadcast MAC is not a station address"}`},
		{"vlan out of range", `{"version":1,"op":"bridge.static","args":{"name":"b0","mac":"02:00:00:00:00:01","iface":"e1","vlan":4095}}`, `{"error":"bridge.static: b0: static 02:00:00:00:00:01: vlan 4095 out of range (0 for untagged, 1 to 4094)"}`},
		{"vlan overflows uint16", `{"version":1,"op":"bridge.static","args":{"name":"b0","mac":"02:00:00:00:00:01","iface":"e1","vlan":70000}}`, `{"error":"bridge.static: malformed args: json: cannot unmarshal number 70000 into Go struct field StaticRequest.vlan of type uint16"}`},
		{"flush bad port", `{"version":1,"op":"bridge.flush","args":{"name":"b0","port":"a/b"}}`, `{"error":"bridge.flush: b0: flush --port: interface name \"a/b\" contains '/'"}`},
		{"set nothing", `{"version":1,"op":"bridge.set","args":{"name":"b0"}}`, `{"error":"bridge.set: b0: set: nothing to set (give --timeout, --maxaddr or --fwd-mask)"}`},
		{"set fwd-mask with pause", `{"version":1,"op":"bridge.set","args":{"name":"b0","fwd_mask":16386}}`, `{"error":"bridge.set: b0: set: fwd-mask 0x4002: bit 1 (MAC control/pause, 01:80:c2:00:00:01) cannot be forwarded"}`},
		{"stp nothing", `{"version":1,"op":"bridge.stp","args":{"name":"b0"}}`, `{"error":"bridge.stp: b0: stp: nothing to change (give on, off, or a setting such as --priority)"}`},
		{"stp bad proto", `{"version":1,"op":"bridge.stp","args":{"name":"b0","proto":"mstp"}}`, `{"error":"bridge.stp: b0: stp: protocol \"mstp\": want rstp or stp"}`},
		{"port bad ptp", `{"version":1,"op":"bridge.port","args":{"name":"b0","iface":"e1","ptp":"yes"}}`, `{"error":"bridge.port: b0: port e1: stp: ptp \"yes\": want auto, on or off"}`},
		{"set negative timeout", `{"version":1,"op":"bridge.set","args":{"name":"b0","timeout":-1}}`, `{"error":"bridge.set: b0: set: timeout -1 out of range (0 to 1000000 seconds, 0 = never age)"}`},
		{"port without flags", `{"version":1,"op":"bridge.port","args":{"name":"b0","iface":"e1"}}`, `{"error":"bridge.port: b0: port e1: no flag to change (give --learning, --discover, --blocknonip, --stack, --promisc, --stp, --edge, --autoedge, --ptp, --ifpriority, --ifcost, --storm-limit or --bpdu-guard)"}`},
		{"args for version", `{"version":1,"op":"version","args":{"x":1}}`, `{"error":"version: malformed args: json: unknown field \"x\""}`},
		{"trunk create without name", `{"version":1,"op":"trunk.create","args":{}}`, `{"error":"trunk.create: trunk name is empty"}`},
		{"trunk name too long", `{"version":1,"op":"trunk.destroy","args":{"name":"abcdefghijklmnop"}}`, `{"error":"trunk.destroy: trunk name \"abcdefghijklmnop\" is 16 bytes long (at most 15)"}`},
		{"trunk create bad proto", `{"version":1,"op":"trunk.create","args":{"name":"t0","proto":"bond"}}`, `{"error":"trunk.create: t0: create: proto \"bond\": want failover, roundrobin, loadbalance, broadcast, lacp or none"}`},
		{"trunk create bad hash", `{"version":1,"op":"trunk.create","args":{"name":"t0","hash":"l2,l7"}}`, `{"error":"trunk.create: t0: create: hash \"l2,l7\": unknown field \"l7\" (want a comma-separated list of l2, l3, l4)"}`},
		{"trunk create bad mode", `{"version":1,"op":"trunk.create","args":{"name":"t0","lacp_mode":"on"}}`, `{"error":"trunk.create: t0: create: lacp-mode \"on\": want active or passive"}`},
		{"trunk create bad timeout", `{"version":1,"op":"trunk.create","args":{"name":"t0","lacp_timeout":"1s"}}`, `{"error":"trunk.create: t0: create: lacp-timeout \"1s\": want slow or fast"}`},
		{"trunk create port twice", `{"version":1,"op":"trunk.create","args":{"name":"t0","ports":["e1","e1"]}}`, `{"error":"trunk.create: t0: port e1: given twice"}`},
		{"trunk create port is itself", `{"version":1,"op":"trunk.create","args":{"name":"t0","ports":["e1","t0"]}}`, `{"error":"trunk.create: t0: port t0: is the trunk itself"}`},
		{"trunk add without ifaces", `{"version":1,"op":"trunk.add","args":{"name":"t0"}}`, `{"error":"trunk.add: t0: add: no interfaces given"}`},
		{"trunk add bad iface", `{"version":1,"op":"trunk.add","args":{"name":"t0","ifaces":["a/b"]}}`, `{"error":"trunk.add: t0: add: interface name \"a/b\" contains '/'"}`},
		{"trunk add priority too large", `{"version":1,"op":"trunk.add","args":{"name":"t0","ifaces":["e1"],"priority":65536}}`, `{"error":"trunk.add: t0: add: priority 65536 out of range (0 to 65535)"}`},
		{"trunk add lacp priority negative", `{"version":1,"op":"trunk.add","args":{"name":"t0","ifaces":["e1"],"lacp_port_priority":-1}}`, `{"error":"trunk.add: t0: add: lacp-port-priority -1 out of range (0 to 65535)"}`},
		{"trunk del duplicate", `{"version":1,"op":"trunk.del","args":{"name":"t0","ifaces":["e1","e1"]}}`, `{"error":"trunk.del: t0: del e1: given twice"}`},
		{"trunk set nothing", `{"version":1,"op":"trunk.set","args":{"name":"t0"}}`, `{"error":"trunk.set: t0: set: nothing to set (give --proto, --lacp-mode, --lacp-timeout, --lacp-system-priority, --lacp-key, --hash, --updelay, --downdelay, --min-links, --preempt or --promisc)"}`},
		{"trunk create updelay negative", `{"version":1,"op":"trunk.create","args":{"name":"t0","updelay":-1}}`, `{"error":"trunk.create: t0: create: updelay -1 out of range (0 to 3600000 ms, 0 = at once)"}`},
		{"trunk set downdelay too long", `{"version":1,"op":"trunk.set","args":{"name":"t0","downdelay":3600001}}`, `{"error":"trunk.set: t0: set: downdelay 3600001 out of range (0 to 3600000 ms, 0 = at once)"}`},
		{"trunk set min-links too large", `{"version":1,"op":"trunk.set","args":{"name":"t0","min_links":65}}`, `{"error":"trunk.set: t0: set: min-links 65 out of range (0 to 64)"}`},
		{"trunk set preempt not a bool", `{"version":1,"op":"trunk.set","args":{"name":"t0","preempt":"off"}}`, `{"error":"trunk.set: malformed args: json: cannot unmarshal string into Go struct field TrunkSetRequest.preempt of type bool"}`},
		{"trunk port nothing", `{"version":1,"op":"trunk.port","args":{"name":"t0","iface":"e1"}}`, `{"error":"trunk.port: t0: port e1: nothing to set (give --priority or --lacp-port-priority)"}`},
		{"trunk port without iface", `{"version":1,"op":"trunk.port","args":{"name":"t0","priority":1}}`, `{"error":"trunk.port: t0: port: interface name is empty"}`},
		{"trunk port priority too large", `{"version":1,"op":"trunk.port","args":{"name":"t0","iface":"e1","priority":65536}}`, `{"error":"trunk.port: t0: port e1: priority 65536 out of range (0 to 65535)"}`},
		{"trunk set empty proto", `{"version":1,"op":"trunk.set","args":{"name":"t0","proto":""}}`, `{"error":"trunk.set: t0: set: proto \"\": want failover, roundrobin, loadbalance, broadcast, lacp or none"}`},
		{"trunk set empty hash", `{"version":1,"op":"trunk.set","args":{"name":"t0","hash":""}}`, `{"error":"trunk.set: t0: set: hash \"\": empty (want a comma-separated list of l2, l3, l4)"}`},
		{"trunk set key too large", `{"version":1,"op":"trunk.set","args":{"name":"t0","lacp_key":65536}}`, `{"error":"trunk.set: t0: set: lacp-key 65536 out of range (0 to 65535, 0 = derive)"}`},
		{"trunk set system priority negative", `{"version":1,"op":"trunk.set","args":{"name":"t0","lacp_system_priority":-1}}`, `{"error":"trunk.set: t0: set: lacp-system-priority -1 out of range (0 to 65535)"}`},
		{"trunk show bad name", `{"version":1,"op":"trunk.show","args":{"name":"a b"}}`, `{"error":"trunk.show: trunk name \"a b\" contains whitespace or a control character"}`},
		{"trunk unknown arg", `{"version":1,"op":"trunk.create","args":{"name":"t0","mode":"lacp"}}`, `{"error":"trunk.create: malformed args: json: unknown field \"mode\""}`},
		{"empty line", ``, `{"error":"malformed request: empty line"}`},
	}
	fake := fakeState()
	conn, r := rawDial(t, apitest.Serve(t, fake))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exchange(t, conn, r, tt.request); got != tt.want {
				t.Errorf("reply:\nexpected %s\ngot      %s", tt.want, got)
			}
		})
	}
	// Every bad request was refused before the handler, and the connection
	// is still usable.
	if calls := fake.Recorded(); len(calls) != 0 {
		t.Errorf("handler calls: expected none, got %+v", calls)
	}
	if got, want := exchange(t, conn, r, `{"version":1,"op":"version"}`), `{"result":{"version":"v1.2.3","revision":"abc","go":"go1.26","protocol":1}}`; got != want {
		t.Errorf("after bad requests:\nexpected %s\ngot      %s", want, got)
	}
}

func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	conn, r := rawDial(t, apitest.Serve(t, fakeState()))
	var batch strings.Builder
	var want []string
	for i := range 50 {
		if i%2 == 0 {
			batch.WriteString(`{"version":1,"op":"bridge.addr","args":{"name":"nope"}}` + "\n")
			want = append(want, `{"error":"nope: no such bridge"}`)
		} else {
			batch.WriteString(`{"version":1,"op":"bridge.flush","args":{"name":"b0"}}` + "\n")
			want = append(want, `{"result":null}`)
		}
	}
	if _, err := conn.Write([]byte(batch.String())); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if got = strings.TrimSuffix(got, "\n"); got != w {
			t.Fatalf("reply %d: expected %s, got %s", i, w, got)
		}
	}
}

func TestOversizeRequest(t *testing.T) {
	tests := []struct {
		name string
		size int // bytes before the newline
		want string
	}{
		{"exactly the limit", api.MaxRequestSize - 1, `{"error":"malformed request: invalid character 'x' looking for beginning of value"}`},
		{"one byte over", api.MaxRequestSize, `{"error":"request longer than 1048576 bytes"}`},
		{"far over", 8 * api.MaxRequestSize, `{"error":"request longer than 1048576 bytes"}`},
	}
	path := apitest.Serve(t, fakeState())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, r := rawDial(t, path)
			go func() {
				// The server stops reading once the line is too long: the
				// rest of this write fails, which is expected.
				conn.Write([]byte(strings.Repeat("x", tt.size) + "\n"))
			}()
			got, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("expected a reply, got %v", err)
			}
			if got = strings.TrimSuffix(got, "\n"); got != tt.want {
				t.Errorf("reply: expected %s, got %s", tt.want, got)
			}
			if tt.want == `{"error":"request longer than 1048576 bytes"}` {
				if _, err := r.ReadString('\n'); err == nil {
					t.Errorf("after an oversize request: expected the connection closed, got more data")
				}
			}
		})
	}
	wantAnswer(t, path, "after oversize requests")
}

func TestSocketMode(t *testing.T) {
	tests := []struct {
		name      string
		group     string
		wantMode  os.FileMode
		wantGroup uint32
	}{
		{"no group", "", 0o600, uint32(os.Getegid())},
		{"group by id", "0", 0o660, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.group != "" && os.Geteuid() != 0 {
				t.Skip("needs root: chgrp to group 0")
			}
			path := apitest.SocketPath(t)
			ln, err := api.Listen(path, tt.group)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if mode := st.Mode().Perm(); mode != tt.wantMode {
				t.Errorf("mode: expected %#o, got %#o", tt.wantMode, mode)
			}
			if gid := st.Sys().(*syscall.Stat_t).Gid; gid != tt.wantGroup {
				t.Errorf("group: expected %d, got %d", tt.wantGroup, gid)
			}
		})
	}
}

func TestListen(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr string // with PATH for the socket path; "" for success
	}{
		{"missing parent directory", func(t *testing.T, path string) {
			os.Remove(strings.TrimSuffix(path, "/swctl.sock"))
		}, ""},
		{"stale socket is replaced", func(t *testing.T, path string) {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close()
		}, ""},
		{"live daemon is kept", func(t *testing.T, path string) {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		}, "another daemon is listening on PATH"},
		{"regular file is kept", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "PATH: exists and is not a socket"},
		{"unknown group", func(t *testing.T, path string) {}, `PATH: socket group "no-such-group-swctl": no such group`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := apitest.SocketPath(t)
			tt.prepare(t, path)
			group := ""
			if tt.name == "unknown group" {
				group = "no-such-group-swctl"
			}
			ln, err := api.Listen(path, group)
			want := strings.ReplaceAll(tt.wantErr, "PATH", path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("expected no error, got %v", err)
				}
				ln.Close()
				return
			}
			if err == nil {
				ln.Close()
				t.Fatalf("expected error %q, got none", want)
			}
			if err.Error() != want {
				t.Errorf("error:\nexpected %s\ngot      %s", want, err)
			}
		})
	}
}

func TestDialWithoutDaemon(t *testing.T) {
	path := apitest.SocketPath(t)
	_, err := api.Dial(path)
	want := "cannot reach the daemon at " + path + ": connect: no such file or directory (is `swctl daemon` running?)"
	if err == nil || err.Error() != want {
		t.Errorf("Dial:\nexpected %s\ngot      %v", want, err)
	}
}

// wantAnswer checks that the server on path still answers a new
// connection, when, for example, "after oversize requests".
func wantAnswer(t *testing.T, path, when string) {
	t.Helper()
	c, err := api.Dial(path)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	defer c.Close()
	if _, err := get[api.VersionInfo](context.Background(), c, api.VersionRequest{}); err != nil {
		t.Errorf("%s: expected the server to answer on a new connection, got %v", when, err)
	}
}

func TestPeerCredentials(t *testing.T) {
	tests := []struct {
		name string
		auth api.Authorizer
		want string // "" for allowed
	}{
		{"allowed", api.AuthorizerFunc(func(p api.Peer) error { return nil }), ""},
		{"refused", api.AuthorizerFunc(func(p api.Peer) error { return errors.New("no") }), "no"},
		{"sees our uid", api.AuthorizerFunc(func(p api.Peer) error {
			if p.UID != uint32(os.Geteuid()) || len(p.GIDs) == 0 || p.GIDs[0] != uint32(os.Getegid()) {
				return errors.New("wrong credentials")
			}
			return nil
		}), ""},
		{"daemon default", mustAuthorizer(t, ""), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := api.Dial(apitest.ServeAuth(t, fakeState(), tt.auth))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = get[api.VersionInfo](context.Background(), c, api.VersionRequest{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Version: expected error %q, got %q", tt.want, got)
			}
		})
	}
}

func mustAuthorizer(t *testing.T, group string) api.Authorizer {
	a, err := api.NewAuthorizer(group)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAuthorizer(t *testing.T) {
	self := uint32(os.Geteuid())
	other := uint32(4242424)
	if self == other {
		t.Skip("running as the made-up uid")
	}
	tests := []struct {
		name  string
		group string
		peer  api.Peer
		want  string
	}{
		{"root", "", api.Peer{UID: 0}, ""},
		{"daemon's user", "", api.Peer{UID: self, GIDs: []uint32{99}}, ""},
		{"other user without group", "", api.Peer{UID: other, GIDs: []uint32{0}}, "permission denied: uid 4242424 is not root or the daemon's user"},
		{"other user in the group", "0", api.Peer{UID: other, GIDs: []uint32{5, 0}}, ""},
		{"other user not in the group", "0", api.Peer{UID: other, GIDs: []uint32{4242424}}, "permission denied: uid 4242424 is not root, the daemon's user or in group 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustAuthorizer(t, tt.group).Authorize(tt.peer)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Authorize(%+v): expected %q, got %q", tt.peer, tt.want, got)
			}
		})
	}
}

func TestServeStopsOnCancel(t *testing.T) {
	path := apitest.SocketPath(t)
	ln, err := api.Listen(path, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&api.Server{Handler: fakeState()}).Serve(ctx, ln) }()
	c, err := api.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := get[api.VersionInfo](ctx, c, api.VersionRequest{}); err != nil {
		t.Fatal(err)
	}
	cancel() // an idle connection is open: Serve must still return
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: expected nil, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve: expected to return after cancel, still running")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after Serve returned: expected removed, got stat error %v", err)
	}
	if _, err := get[api.VersionInfo](context.Background(), c, api.VersionRequest{}); err == nil {
		t.Errorf("request after shutdown: expected an error, got none")
	}
}

// serveInBackground serves srv on a new socket until the returned cancel
// is called; Serve's result arrives on the returned channel.
func serveInBackground(t *testing.T, srv *api.Server) (path string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	path = apitest.SocketPath(t)
	ln, err := api.Listen(path, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d := make(chan error, 1)
	go func() { d <- srv.Serve(ctx, ln) }()
	return path, cancel, d
}

// within fails the test unless ch delivers within 5s, and returns what
// it delivered.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still waiting after 5s", what)
		panic("unreachable")
	}
}

// bigReplies is a handler whose version reply is larger than a unix
// socket's send buffer can be: the server is blocked writing the first
// reply to a peer that does not read.
func bigReplies() *apitest.Fake {
	f := fakeState()
	f.VersionInfo.Version = strings.Repeat("v", 8<<20)
	return f
}

func TestServeStopsDespiteAPeerThatDoesNotRead(t *testing.T) {
	tests := []struct {
		name  string
		grace time.Duration // 0: the default
		hurry bool
	}{
		{"after the grace period", 0, false},
		{"at once when hurried", time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hurry := make(chan struct{})
			srv := &api.Server{Handler: bigReplies(), Hurry: hurry}
			srv.SetTimeouts(0, tt.grace)
			path, cancel, done := serveInBackground(t, srv)
			_, sent := apitest.NonReader(t, path, 20000)
			cancel()
			if tt.hurry {
				close(hurry)
			}
			if err := within(t, done, "Serve after the cancel, with a peer that does not read"); err != nil {
				t.Errorf("Serve: expected nil, got %v", err)
			}
			if err := within(t, sent, "the peer's requests"); err == nil {
				t.Errorf("the peer's requests: expected the connection closed under them, got all sent")
			}
		})
	}
}

func TestServeClosesAPeerThatDoesNotRead(t *testing.T) {
	var logged bytes.Buffer
	srv := &api.Server{Handler: fakeState(), Log: slog.New(slog.NewTextHandler(&logged, nil))}
	srv.SetTimeouts(100*time.Millisecond, 0)
	path, cancel, done := serveInBackground(t, srv)
	_, sent := apitest.NonReader(t, path, 20000)
	if err := within(t, sent, "the peer's requests, past the reply timeout"); err == nil {
		t.Fatalf("the peer's requests: expected the connection closed under them, got all sent")
	}
	wantAnswer(t, path, "after closing a peer that did not read")
	cancel()
	within(t, done, "Serve after the cancel") // after it, the log is the test's to read
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	want := fmt.Sprintf("peer_uid=%d peer_pid=%d", os.Geteuid(), os.Getpid())
	if len(lines) != 1 || !strings.Contains(lines[0], "did not read") || !strings.Contains(lines[0], want) {
		t.Errorf("log: expected one line about a peer that did not read, with %q; got:\n%s", want, logged.String())
	}
}

func TestClientContext(t *testing.T) {
	// A handler that never answers: the client gives up when ctx ends.
	path := apitest.SocketPath(t)
	ln, err := api.Listen(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(5 * time.Second)
		}
	}()
	c, err := api.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = get[api.VersionInfo](ctx, c, api.VersionRequest{})
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("Version with an expiring context: expected a deadline error, got %v", err)
	}
}

// mustDial connects a client to the socket at path, closed when the test
// ends.
func mustDial(t *testing.T, path string) *api.Client {
	t.Helper()
	c, err := api.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// logLines is a slog destination that hands each record's line to a
// channel, so a test can wait for one.
type logLines chan string

func (l logLines) Write(b []byte) (int, error) {
	select {
	case l <- string(b):
	default: // a test that stopped reading loses later lines
	}
	return len(b), nil
}

func newLog() (*slog.Logger, logLines) {
	l := make(logLines, 64)
	return slog.New(slog.NewTextHandler(l, nil)), l
}

// waitLog returns the first line on lines that contains want, failing the
// test if none comes within 5s.
func waitLog(t *testing.T, lines logLines, want string) string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("log: expected a line containing %q within 5s, got none", want)
		}
	}
}

// gatedFake is a Fake whose bridge create signals entered, then waits for
// gate: a request that holds the handler as long as the test wants.
type gatedFake struct {
	*apitest.Fake
	entered chan struct{}
	gate    chan struct{}
}

func newGatedFake() *gatedFake {
	return &gatedFake{Fake: fakeState(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
}

func (g *gatedFake) Change(ctx context.Context, r api.Edit) error {
	if _, ok := r.(api.BridgeCreateRequest); ok {
		g.entered <- struct{}{}
		<-g.gate
	}
	return g.Fake.Change(ctx, r)
}

// ops returns the ops of the calls the fake received.
func ops(f *apitest.Fake) []string {
	var out []string
	for _, c := range f.Recorded() {
		out = append(out, c.Op)
	}
	return out
}

func TestRequestPastItsDeadlineIsNotApplied(t *testing.T) {
	add := api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}
	t.Run("waited in the listen queue", func(t *testing.T) {
		// The daemon is out of descriptors, or busy: it does not accept
		// until after the client has given up.
		path := apitest.SocketPath(t)
		ln, err := api.Listen(path, "")
		if err != nil {
			t.Fatal(err)
		}
		c := mustDial(t, path) // queued, not yet accepted
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := c.Do(ctx, add, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("BridgeAdd with nobody accepting: expected a deadline error, got %v", err)
		}
		fake := fakeState()
		log, lines := newLog()
		serveCtx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- (&api.Server{Handler: fake, Log: log}).Serve(serveCtx, ln) }()
		line := waitLog(t, lines, "deadline passed")
		if !strings.Contains(line, "op=bridge.add") {
			t.Errorf("log: expected the refused op named, got %s", line)
		}
		wantAnswer(t, path, "after refusing a late request")
		stop()
		within(t, done, "Serve after the cancel")
		if got := ops(fake); !reflect.DeepEqual(got, []string{"version"}) {
			t.Errorf("handler calls: expected only the later version, got %v", got)
		}
	})
	t.Run("waited behind another request", func(t *testing.T) {
		fake := newGatedFake()
		log, lines := newLog()
		path, _, _ := serveInBackground(t, &api.Server{Handler: fake, Log: log})
		slow := mustDial(t, path)
		slowDone := make(chan error, 1)
		go func() { slowDone <- slow.Do(context.Background(), api.BridgeCreateRequest{Name: "bridge0"}, nil) }()
		within(t, fake.entered, "the slow request in the handler")

		c := mustDial(t, path)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		// The client's read and the server's refusal end at the same
		// deadline: either may come first.
		err := c.Do(ctx, add, nil)
		var re *api.RemoteError
		if !errors.Is(err, context.DeadlineExceeded) && (!errors.As(err, &re) || re.Message != "bridge.add: not applied: the request's deadline passed before the daemon could serve it") {
			t.Fatalf("BridgeAdd behind a slow request: expected a deadline error or the daemon's refusal, got %v", err)
		}
		waitLog(t, lines, "deadline passed")
		close(fake.gate)
		if err := within(t, slowDone, "the slow request"); err != nil {
			t.Fatalf("the slow request: expected no error, got %v", err)
		}
		if got := ops(fake.Fake); !reflect.DeepEqual(got, []string{"bridge.create"}) {
			t.Errorf("handler calls: expected only bridge.create, got %v", got)
		}
	})
	t.Run("in time", func(t *testing.T) {
		fake := fakeState()
		c := mustDial(t, apitest.Serve(t, fake))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Do(ctx, add, nil); err != nil {
			t.Fatalf("BridgeAdd with a minute to go: expected no error, got %v", err)
		}
		if got := ops(fake); !reflect.DeepEqual(got, []string{"bridge.add"}) {
			t.Errorf("handler calls: expected bridge.add, got %v", got)
		}
	})
}

func TestServeRefusesConnectionsOverTheLimit(t *testing.T) {
	fake := fakeState()
	log, lines := newLog()
	path, _, _ := serveInBackground(t, &api.Server{Handler: fake, Log: log, MaxConns: 2})
	const version = `{"version":1,"op":"version"}`
	held := make([]net.Conn, 2)
	for i := range held {
		conn, r := rawDial(t, path)
		exchange(t, conn, r, version) // accepted and served
		held[i] = conn
	}
	want := "too many control connections: the daemon serves at most 2 at once (swctl daemon --max-clients); try again later"
	for i := range 3 {
		err := mustDial(t, path).Do(context.Background(), api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}, nil)
		var re *api.RemoteError
		if !errors.As(err, &re) || re.Message != want {
			t.Fatalf("connection %d over the limit: expected the error %q, got %v", i+1, want, err)
		}
	}
	if got := ops(fake); !reflect.DeepEqual(got, []string{"version", "version"}) {
		t.Errorf("handler calls: expected the two versions under the limit, got %v", got)
	}
	if line := waitLog(t, lines, "refused"); !strings.Contains(line, "open=2 limit=2") {
		t.Errorf("log: expected the count and the limit, got %s", line)
	}
	select {
	case l := <-lines:
		t.Errorf("log: expected one line for three refusals in a row, got another: %s", l)
	default:
	}
	// A slot that frees up is given to the next connection.
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := get[api.VersionInfo](context.Background(), mustDial(t, path), api.VersionRequest{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a connection closed: expected a new one served within 5s, got %v", err)
		}
	}
}

func TestServeClosesIdleConnections(t *testing.T) {
	fake := newGatedFake()
	srv := &api.Server{Handler: fake, IdleTimeout: 200 * time.Millisecond}
	path, _, _ := serveInBackground(t, srv)

	// A request that takes longer than the idle timeout is answered.
	busy, busyR := rawDial(t, path)
	if _, err := busy.Write([]byte(`{"version":1,"op":"bridge.create","args":{"name":"b0"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	within(t, fake.entered, "the slow request in the handler")

	idle, idleR := rawDial(t, path)
	got, err := idleR.ReadString('\n')
	if want := `{"error":"control connection closed: no request for 200ms (swctl daemon --idle-timeout)"}` + "\n"; err != nil || got != want {
		t.Fatalf("idle connection: expected %q, got %q (%v)", want, got, err)
	}
	if _, err := idleR.ReadString('\n'); err == nil {
		t.Errorf("idle connection after the notice: expected it closed, got more data")
	}
	idle.Close()

	// The busy connection has been busy longer than the idle timeout.
	close(fake.gate)
	if got, err := busyR.ReadString('\n'); err != nil || got != `{"result":null}`+"\n" {
		t.Fatalf("request that outlasted the idle timeout: expected its reply, got %q (%v)", got, err)
	}
	// The idle clock starts again after each reply.
	if got := exchange(t, busy, busyR, `{"version":1,"op":"version"}`); !strings.HasPrefix(got, `{"result":`) {
		t.Errorf("request right after a long one: expected a result, got %s", got)
	}
}
