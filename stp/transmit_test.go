package stp

import (
	"testing"
	"time"
)

// TestHelloTime: a designated port sends a BPDU every HelloTime; a root
// port sends none unless it has something to say.
func TestHelloTime(t *testing.T) {
	for _, hello := range []int{1, 2, 5} {
		r := newRig(t, withTimes(32768, hello, 20, 15))
		r.addPort(1, DefaultPortConfig())
		r.addPort(2, DefaultPortConfig())
		// Past the topology change of port 1 forwarding, signalled on it.
		r.feed(1, rootPeer(0x01, 0).rst(), 10*time.Second)
		r.take(0)
		r.feed(1, rootPeer(0x01, 0).rst(), 60*time.Second)
		out := r.take(2)
		if want := 60 / hello; len(out) != want {
			t.Errorf("hello %d s: got %d BPDUs in 60 s on the designated port, want %d", hello, len(out), want)
		}
		for i := 1; i < len(out); i++ {
			if gap := out[i].at.Sub(out[i-1].at); gap != time.Duration(hello)*time.Second {
				t.Errorf("hello %d s: BPDUs %v apart, want %d s", hello, gap, hello)
				break
			}
		}
		if out := r.take(1); len(out) != 0 {
			t.Errorf("hello %d s: got %d BPDUs on the root port, want none", hello, len(out))
		}
	}
}

// TestHoldCount: however many changes come at once, a port sends at most
// HoldCount BPDUs a second; what is held back goes out a second later,
// carrying the latest information.
func TestHoldCount(t *testing.T) {
	for _, hold := range []int{1, 3, 6} {
		c := DefaultConfig()
		c.HoldCount = hold
		r := newRig(t, c)
		r.addPort(1, DefaultPortConfig())
		r.run(10 * time.Second)
		r.take(0)
		at := r.clk.Now()
		// Ten new bridge priorities in a row: each is new information.
		for i := range 10 {
			c.Priority = uint16(4096 * (i + 1))
			if err := r.b.SetConfig(c); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(r.take(1)); got != hold {
			t.Errorf("hold count %d: got %d BPDUs at once, want %d", hold, got, hold)
		}
		r.run(time.Second)
		out := r.take(1)
		if len(out) != 1 || out[0].fields().Bridge != bid(40960, 0x50) || out[0].at.Sub(at) > time.Second {
			t.Errorf("hold count %d: got %d BPDUs in the next second, want one with the last priority (40960)", hold, len(out))
		}
	}
}
