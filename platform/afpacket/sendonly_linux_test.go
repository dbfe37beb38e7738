package afpacket_test

import (
	"errors"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// A send-only port sends like any other, sees nothing of what arrives at
// its interface (a plain port on the same interface does), and its
// ReadBatch waits until Close.
func TestIntegrationSendOnly(t *testing.T) {
	netnstest.Require(t)
	ns, a, b := cable(t)
	only := openIn(t, ns, afpacket.Options{SendOnly: true, TXRing: true}, a)[0]
	ports := openIn(t, ns, afpacket.Options{}, a, b)
	plain, peer := ports[0], ports[1]

	out := platformtest.Frame(frame.MACOf(peer.HardwareAddr()), frame.MACOf(only.HardwareAddr()), 1, 60)
	if n, err := only.WriteBatch(platform.Batch{Frames: [][]byte{out}}); n != 1 || err != nil {
		t.Fatalf("send-only WriteBatch = %d, %v; want 1, nil", n, err)
	}
	if got := readSuiteFrames(t, peer, 1); len(got) != 1 {
		t.Fatalf("peer got %d frames, want 1", len(got))
	}

	in := platformtest.Frame(frame.MACOf(only.HardwareAddr()), frame.MACOf(peer.HardwareAddr()), 2, 60)
	if n, err := peer.WriteBatch(platform.Batch{Frames: [][]byte{in}}); n != 1 || err != nil {
		t.Fatalf("peer WriteBatch = %d, %v; want 1, nil", n, err)
	}
	readSuiteFrames(t, plain, 1) // it has arrived at the interface
	if c := only.Counters(); c.RxPackets != 0 || c.RxDropped != 0 {
		t.Errorf("send-only port counted %d received, %d dropped; want nothing", c.RxPackets, c.RxDropped)
	}

	done := make(chan error, 1)
	go func() {
		n, err := only.ReadBatch(platform.Batch{Frames: make([][]byte, only.BatchSize())})
		if n != 0 {
			err = errors.Join(err, errors.New("send-only ReadBatch returned frames"))
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("send-only ReadBatch returned before Close: %v", err)
	case <-time.After(50 * time.Millisecond): // it waits; Close must end it
	}
	_ = only.Close()
	select {
	case err := <-done:
		if !errors.Is(err, platform.ErrClosed) {
			t.Errorf("send-only ReadBatch after Close: %v, want ErrClosed", err)
		}
	case <-time.After(platformtest.Timeout):
		t.Fatal("send-only ReadBatch still blocked after Close")
	}
}

func TestOpenRefusesBadOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts afpacket.Options
		want string
	}{
		{"send-only with workers", afpacket.Options{SendOnly: true, Workers: 2}, "afpacket lo: a send-only port has no receive workers (workers 2)"},
		{"coalesce too long", afpacket.Options{Coalesce: time.Second}, "afpacket lo: coalesce 1s out of range 0-10ms"},
		{"coalesce negative", afpacket.Options{Coalesce: -time.Microsecond}, "afpacket lo: coalesce -1µs out of range 0-10ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := afpacket.Open("lo", tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Open(lo) = %v, want %q", err, tt.want)
			}
		})
	}
}
