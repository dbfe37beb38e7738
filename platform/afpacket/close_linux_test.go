package afpacket_test

import (
	"errors"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
)

// TestIntegrationCloseDoesNotHoldUsers holds a Close between the moment
// the port's users have left and its teardown (unmapping the rings,
// closing the sockets), and checks that a writer, a reader and the
// control path calling then are refused at once rather than made to wait
// for the teardown: a bridge reader sending to a member being removed
// must not stall with its own ring filling up.
func TestIntegrationCloseDoesNotHoldUsers(t *testing.T) {
	ns, a, _ := cable(t)
	for _, opts := range []afpacket.Options{{}, {TXRing: true}} {
		p := openIn(t, ns, opts, a)[0]
		entered, release := make(chan struct{}), make(chan struct{})
		afpacket.HoldTeardown(p, func() { close(entered); <-release })
		closed := make(chan error, 1)
		go func() { closed <- p.Close() }()
		<-entered

		f := make([]byte, 60)
		frame.Encode(f, frame.MAC{2, 0, 0, 0, 0, 2}, frame.MAC{2, 0, 0, 0, 0, 1}, 0x88b5)
		calls := []struct {
			name string
			call func() error
		}{
			{"WriteBatch", func() error {
				_, err := p.WriteBatch(platform.Batch{Frames: [][]byte{f}})
				return err
			}},
			{"ReadBatch", func() error {
				_, err := p.ReadBatch(platform.NewBatch(8))
				return err
			}},
			{"TxRoom", func() error {
				if n := p.TxRoom(8); n > 0 {
					return errors.New("room in a closed port's ring")
				}
				return platform.ErrClosed
			}},
			{"Counters", func() error { p.Counters(); return platform.ErrClosed }},
			{"SetPromisc(true)", func() error { return p.SetPromisc(true) }},
		}
		for _, c := range calls {
			done := make(chan error, 1)
			go func() { done <- c.call() }()
			select {
			case err := <-done:
				if !errors.Is(err, platform.ErrClosed) {
					t.Errorf("TXRing %v: %s during Close's teardown = %v, want ErrClosed", opts.TXRing, c.name, err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("TXRing %v: %s during Close's teardown still waiting after 10 s: want it refused at once", opts.TXRing, c.name)
			}
		}
		close(release)
		if err := <-closed; err != nil {
			t.Errorf("TXRing %v: Close = %v, want nil", opts.TXRing, err)
		}
	}
}
