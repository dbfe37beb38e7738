package stp

import (
	"sync"
	"testing"

	"github.com/swctl/swctl/clock"
)

// TestConcurrentUse calls every method from several goroutines at once,
// as member readers, the daemon's timer, the data path and the control
// requests do. Run it with -race.
func TestConcurrentUse(t *testing.T) {
	clk := clock.NewFake()
	b, err := New(DefaultConfig(), clk, Outputs{Send: func(int, []byte) {}, Flush: func(int) {}}, failOnError(t))
	if err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 4; id++ {
		if err := b.AddPort(id, "p", mac(byte(0x50+id)), up, DefaultPortConfig()); err != nil {
			t.Fatal(err)
		}
	}
	const rounds = 2000
	var wg sync.WaitGroup
	loop := func(f func(i int)) {
		wg.Go(func() {
			for i := range rounds {
				f(i)
			}
		})
	}
	root, agree := rootPeer(0x01, FlagProposal|FlagTC).rst(), peer{root: bid(4096, 0x01), cost: 40000,
		bridge: bid(32768, 0x99), port: NewPortID(128, 1), flags: rootRole(FlagAgreement)}.rst()
	loop(func(int) { b.Input(1, root) })
	loop(func(int) { b.Input(2, agree) })
	loop(func(int) { b.Input(3, tcnFrame(0x77)) })
	loop(func(int) { clk.Advance(tick); b.Tick() })
	gates := []*Gate{b.Gate(1), b.Gate(2), b.Gate(3), b.Gate(4)}
	loop(func(i int) { _ = gates[i%4].Forwarding() || gates[i%4].Learning() })
	loop(func(i int) { b.LinkChanged(1+i%4, Link{Up: i%3 != 0, SpeedMbps: uint64(1000 * (1 + i%2))}) })
	loop(func(i int) {
		c := DefaultConfig()
		c.Priority = uint16(4096 * (i % 16))
		c.Protocol = Protocol(i / 500 % 2)
		_ = b.SetConfig(c)
		pc := DefaultPortConfig()
		pc.AdminEdge, pc.Enabled = i%2 == 0, i%7 != 0
		_ = b.SetPortConfig(2, pc)
		b.MCheck(3)
		_, _ = b.Status(), b.Ports()
	})
	loop(func(i int) {
		if i%2 == 0 {
			b.RemovePort(5)
		} else {
			_ = b.AddPort(5, "p5", mac(0x55), up, DefaultPortConfig())
		}
	})
	wg.Wait()
	if n := len(b.Ports()); n != 5 {
		t.Errorf("ports after the last AddPort: got %d, want 5", n)
	}
}
