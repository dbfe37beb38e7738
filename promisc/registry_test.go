package promisc_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/promisc"
)

// fakePort is a promisc.Port that records its SetPromisc calls and can be
// told to fail them.
type fakePort struct {
	// name is the interface name.
	name string
	// mu guards the fields below.
	mu sync.Mutex
	// on is the membership state.
	on bool
	// calls lists the arguments of every SetPromisc call.
	calls []bool
	// fail, when set, is returned by SetPromisc instead of acting.
	fail error
}

func (f *fakePort) Name() string { return f.name }

func (f *fakePort) SetPromisc(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, on)
	if f.fail != nil {
		return f.fail
	}
	f.on = on
	return nil
}

func (f *fakePort) Promisc() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.on
}

func (f *fakePort) setCalls() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.calls...)
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRegistry(t *testing.T) {
	type step struct {
		op       string // acquire, release, forget
		port     int
		wantErr  bool
		wantHeld map[string]bool
	}
	cases := []struct {
		name      string
		ports     []string
		steps     []step
		wantCalls [][]bool
	}{
		{
			name:  "acquire then release",
			ports: []string{"eth1"},
			steps: []step{
				{op: "acquire", wantHeld: map[string]bool{"eth1": true}},
				{op: "release", wantHeld: map[string]bool{"eth1": false}},
			},
			wantCalls: [][]bool{{true, false}},
		},
		{
			name:  "one membership per port, counted",
			ports: []string{"eth1"},
			steps: []step{
				{op: "acquire"}, {op: "acquire"}, {op: "acquire"},
				{op: "release", wantHeld: map[string]bool{"eth1": true}},
				{op: "release", wantHeld: map[string]bool{"eth1": true}},
				{op: "release", wantHeld: map[string]bool{"eth1": false}},
			},
			wantCalls: [][]bool{{true, false}},
		},
		{
			name:      "release without acquire",
			ports:     []string{"eth1"},
			steps:     []step{{op: "release", wantErr: true, wantHeld: map[string]bool{"eth1": false}}},
			wantCalls: [][]bool{nil},
		},
		{
			name:  "two ports on one interface",
			ports: []string{"eth1", "eth1"},
			steps: []step{
				{op: "acquire", port: 0}, {op: "acquire", port: 1},
				{op: "release", port: 0, wantHeld: map[string]bool{"eth1": true}},
				{op: "release", port: 1, wantHeld: map[string]bool{"eth1": false}},
			},
			wantCalls: [][]bool{{true, false}, {true, false}},
		},
		{
			name:  "interfaces are independent",
			ports: []string{"eth1", "eth2"},
			steps: []step{
				{op: "acquire", port: 0, wantHeld: map[string]bool{"eth1": true, "eth2": false}},
				{op: "acquire", port: 1, wantHeld: map[string]bool{"eth1": true, "eth2": true}},
				{op: "release", port: 0, wantHeld: map[string]bool{"eth1": false, "eth2": true}},
			},
			wantCalls: [][]bool{{true, false}, {true}},
		},
		{
			name:  "forget a closed port",
			ports: []string{"eth1"},
			steps: []step{
				{op: "acquire"}, {op: "acquire"},
				{op: "forget", wantHeld: map[string]bool{"eth1": false}},
				{op: "release", wantErr: true},
			},
			wantCalls: [][]bool{{true}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := promisc.NewRegistry()
			ports := make([]*fakePort, len(c.ports))
			for i, n := range c.ports {
				ports[i] = &fakePort{name: n}
			}
			for i, s := range c.steps {
				p := ports[s.port]
				var err error
				switch s.op {
				case "acquire":
					err = r.Acquire(p)
				case "release":
					err = r.Release(p)
				case "forget":
					r.Forget(p)
				}
				if (err != nil) != s.wantErr {
					t.Fatalf("step %d %s port %d: err = %v, want error %v", i, s.op, s.port, err, s.wantErr)
				}
				for ifname, want := range s.wantHeld {
					if got := r.Held(ifname); got != want {
						t.Fatalf("step %d %s port %d: Held(%s) = %v, want %v", i, s.op, s.port, ifname, got, want)
					}
				}
			}
			for i, p := range ports {
				if got := p.setCalls(); !equal(got, c.wantCalls[i]) {
					t.Errorf("port %d SetPromisc calls = %v, want %v", i, got, c.wantCalls[i])
				}
			}
		})
	}
}

func TestRegistryFailures(t *testing.T) {
	boom := errors.New("setsockopt: no such device")
	r := promisc.NewRegistry()
	p := &fakePort{name: "eth1", fail: boom}
	if err := r.Acquire(p); !errors.Is(err, boom) || err.Error() != "promisc eth1: acquire: setsockopt: no such device" {
		t.Fatalf("Acquire with a failing port = %v, want the cause named with the port", err)
	}
	if r.Held("eth1") || r.Users(p) != 0 {
		t.Fatal("a failed Acquire was counted")
	}
	p.fail = nil
	if err := r.Acquire(p); err != nil {
		t.Fatal(err)
	}
	p.fail = boom
	if err := r.Release(p); !errors.Is(err, boom) {
		t.Fatalf("Release with a failing port = %v, want %v", err, boom)
	}
	if !r.Held("eth1") || r.Users(p) != 1 {
		t.Fatal("a failed Release must leave the membership counted")
	}
	p.fail = nil
	if err := r.Release(p); err != nil || r.Held("eth1") {
		t.Fatalf("retried Release = %v, Held = %v; want nil, false", err, r.Held("eth1"))
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r := promisc.NewRegistry()
	ports := []*fakePort{{name: "eth1"}, {name: "eth1"}, {name: "eth2"}}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := ports[(g+i)%len(ports)]
				if err := r.Acquire(p); err != nil {
					t.Error(err)
					return
				}
				_ = r.Held(p.name)
				if err := r.Release(p); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range ports {
		if r.Held(p.name) || p.Promisc() || r.Users(p) != 0 {
			t.Errorf("%s: still held after balanced Acquire/Release (Promisc %v)", p.name, p.Promisc())
		}
		calls := p.setCalls()
		for i := 1; i < len(calls); i++ {
			if calls[i] == calls[i-1] {
				t.Fatalf("%s: SetPromisc(%v) twice in a row: calls %v", p.name, calls[i], calls)
			}
		}
	}
}

// The AF_PACKET port is a promisc.Port.
var _ promisc.Port = (*afpacket.Port)(nil)
