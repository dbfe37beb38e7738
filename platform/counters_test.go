package platform_test

import (
	"testing"

	"github.com/swctl/swctl/platform"
)

func TestPortCounters(t *testing.T) {
	cases := []struct {
		name string
		add  func(c *platform.PortCounters)
		want platform.Counters
	}{
		{"nothing", func(c *platform.PortCounters) {}, platform.Counters{}},
		{"AddRx", func(c *platform.PortCounters) { c.AddRx(3, 180); c.AddRx(1, 1514) },
			platform.Counters{RxPackets: 4, RxBytes: 1694}},
		{"AddTx", func(c *platform.PortCounters) { c.AddTx(2, 120); c.AddTx(5, 300) },
			platform.Counters{TxPackets: 7, TxBytes: 420}},
		{"AddRxDropped", func(c *platform.PortCounters) { c.AddRxDropped(2); c.AddRxDropped(1) },
			platform.Counters{RxDropped: 3}},
		{"AddRxBadOffload", func(c *platform.PortCounters) { c.AddRxDropped(2); c.AddRxBadOffload(2) },
			platform.Counters{RxDropped: 2, RxBadOffload: 2}},
		{"AddTxDropped", func(c *platform.PortCounters) { c.AddTxDropped(64); c.AddTxDropped(1) },
			platform.Counters{TxDropped: 65}},
		{"AddRingDropped", func(c *platform.PortCounters) { c.AddRingDropped(10); c.AddRingDropped(5) },
			platform.Counters{RingDropped: 15}},
		{"SetRingDropped replaces", func(c *platform.PortCounters) { c.AddRingDropped(10); c.SetRingDropped(7) },
			platform.Counters{RingDropped: 7}},
		{"AddError", func(c *platform.PortCounters) { c.AddError(); c.AddError() },
			platform.Counters{Errors: 2}},
		{"all at once", func(c *platform.PortCounters) {
			c.AddRx(1, 60)
			c.AddTx(2, 128)
			c.AddRxDropped(3)
			c.AddTxDropped(4)
			c.AddRingDropped(5)
			c.AddError()
		}, platform.Counters{RxPackets: 1, RxBytes: 60, TxPackets: 2, TxBytes: 128,
			RxDropped: 3, TxDropped: 4, RingDropped: 5, Errors: 1}},
	}
	for _, c := range cases {
		var pc platform.PortCounters
		c.add(&pc)
		if got := pc.Snapshot(); got != c.want {
			t.Errorf("%s: Snapshot() = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestPortCountersAllocs: the data path adds once per batch; adding must
// not allocate.
func TestPortCountersAllocs(t *testing.T) {
	var pc platform.PortCounters
	if n := testing.AllocsPerRun(100, func() {
		pc.AddRx(64, 64*60)
		pc.AddTx(64, 64*60)
		pc.AddRxDropped(1)
		pc.AddTxDropped(1)
		pc.AddError()
	}); n != 0 {
		t.Errorf("adding to PortCounters: %v allocations per run, want 0", n)
	}
}
