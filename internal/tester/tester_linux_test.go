package tester

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/netnstest"
)

// TestIntegrationTesterCounts sends paced frames over a veth cable
// between two namespaces to an address no interface has, and checks that
// the far end's rx_packets counts every one of them, run after run, while
// neither tester port receives a frame.
func TestIntegrationTesterCounts(t *testing.T) {
	netnstest.Require(t)
	a, b := netnstest.New(t, "tca"), netnstest.New(t, "tcb")
	netnstest.Veth(t, a, "t1", "02:55:00:00:00:01", b, "t2", "02:55:00:00:00:02")
	rx := End{NS: b.Name, Interface: "t2"}
	c, err := NewCounter(rx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bench, err := Open(End{NS: a.Name, Interface: "t1"}, rx, gen.Stream{Size: gen.MinSize, Dst: frame.MAC{0x02, 0x55, 0, 0, 0, 0x03}}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer bench.Close()
	bench.SetDrain(200 * time.Millisecond)
	for run := 1; run <= 2; run++ {
		res, err := bench.Run(context.Background(), gen.Load{Rate: 20_000, Count: 2000})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		// Nothing else arrives at t2 (IPv6 is off in both namespaces),
		// so the counter sees exactly the run's frames.
		if res.Sent != 2000 || res.Received != res.Sent || res.Latency != nil {
			t.Errorf("run %d: sent %d, received %d, latency %v; want 2000 sent, all counted, no latency (a counter cannot know it)", run, res.Sent, res.Received, res.Latency)
		}
		if res.RxRingDropped != 0 {
			t.Errorf("run %d: the receiving port's ring dropped %d frames; it has no ring", run, res.RxRingDropped)
		}
	}
}

func TestIntegrationTesterCounterErrors(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "tce")
	for _, c := range []struct {
		end  End
		want string
	}{
		{End{NS: ns.Name, Interface: "nosuch0"}, ns.Name + ":nosuch0: rx_packets"},
		{End{NS: ns.Name + "x", Interface: "lo"}, "namespace " + ns.Name + "x"},
	} {
		if _, err := NewCounter(c.end); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewCounter(%v): error %v, want one naming %q", c.end, err, c.want)
		}
	}
}
