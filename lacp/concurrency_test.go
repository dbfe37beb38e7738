package lacp

import (
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
)

// TestConcurrentUse calls every method from several goroutines at once,
// as member readers, the trunk's timer, the data path and the daemon do.
// Run it with -race.
func TestConcurrentUse(t *testing.T) {
	clk := clock.NewFake()
	a := New(Config{Timeout: Fast, SystemMAC: sysA}, clk, func(int, []byte) {}, nil)
	for id := 1; id <= 4; id++ {
		if err := a.AddPort(id, "eth", portMAC(sysA, id), DefaultPortPriority, true); err != nil {
			t.Fatal(err)
		}
	}
	peer := PortInfo{SystemPriority: 1, System: sysX, Key: 7, Port: 3, State: partnerState}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	loop := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					f(i)
				}
			}
		}()
	}
	for id := 1; id <= 4; id++ {
		pdu := lacpFrame(1, sysX, peer, PortInfo{})
		loop(func(int) { a.Receive(id, pdu) })
	}
	loop(func(int) { clk.Advance(tick); a.Tick() })
	loop(func(i int) { _ = a.Collecting(i%5) || a.Distributing(i%5) })
	loop(func(i int) { a.LinkChanged(1+i%4, i%3 != 0) })
	loop(func(i int) {
		a.SetConfig(Config{Timeout: Timeout(i % 2), Key: uint16(1 + i%2)})
		_ = a.SetPortPriority(2, uint16(i))
		_ = a.Ports()
		_, _ = a.Aggregator()
	})
	loop(func(i int) {
		if i%2 == 0 {
			a.RemovePort(5)
		} else {
			_ = a.AddPort(5, "eth5", portMAC(sysA, 5), DefaultPortPriority, true)
		}
	})
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if got := len(a.Ports()); got < 4 || got > 5 {
		t.Errorf("ports after the run: got %d, want 4 or 5", got)
	}
}

// TestSilentPeerBackToBack stops one system's LACPDUs on one link, as
// SIGSTOP on its daemon would, and checks that both ends take that link
// out of distribution after the timeout while the other link carries on.
func TestSilentPeerBackToBack(t *testing.T) {
	pr := newPair(t, Config{Timeout: Fast}, Config{Timeout: Fast}, 2)
	if _, ok := pr.until(5*time.Second, func() bool { return pr.allDistributing(2) }); !ok {
		t.Fatalf("no negotiation in 5 s")
	}
	pr.wires[pr.b][1].up = false // B's LACPDUs on link 1 are lost from now on
	pr.run(ShortTimeoutTime - tick)
	if !pr.a.Distributing(1) {
		t.Fatalf("A port 1 stopped distributing before the timeout")
	}
	pr.run(2 * tick)
	if pr.a.Distributing(1) || pr.a.Collecting(1) {
		t.Errorf("A port 1 after %v of silence: got collecting %v distributing %v, want neither",
			ShortTimeoutTime+tick, pr.a.Collecting(1), pr.a.Distributing(1))
	}
	// B still hears A, which now says it is out of sync: B stops too.
	if pr.b.Distributing(1) {
		t.Errorf("B port 1 distributes although A no longer collects from it")
	}
	for _, at := range []struct {
		who string
		a   *Actor
	}{{"A", pr.a}, {"B", pr.b}} {
		if !at.a.Distributing(2) {
			t.Errorf("%s port 2 stopped distributing, want it to carry on", at.who)
		}
	}
	pr.wires[pr.b][1].up = true
	if _, ok := pr.until(5*time.Second, func() bool { return pr.allDistributing(2) }); !ok {
		t.Errorf("link 1 did not recover within 5 s of B's LACPDUs returning")
	}
}
