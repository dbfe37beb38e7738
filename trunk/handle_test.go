package trunk

import (
	"errors"
	"testing"
	"time"

	"github.com/swctl/swctl/platform"
)

// TestHandleCloseKeepsTheTrunk checks that closing a consumer's Handle
// wakes its ReadBatch and gives back the frames it held, and that a new
// Handle then receives what the members receive.
func TestHandleCloseKeepsTheTrunk(t *testing.T) {
	fx := newFixture(t, ProtoBroadcast, PortConfig{})
	h := fx.tr.Handle()
	buf := make([][]byte, 4)
	fx.sendFar(0, udp4(1, 1), udp4(1, 2))
	n, err := h.ReadBatch(platform.Batch{Frames: buf[:1]}) // holds the member batch, one frame left in it
	if n != 1 || err != nil {
		t.Fatalf("first handle ReadBatch = %d, %v; want 1, nil", n, err)
	}
	h.Close()
	if _, err := h.ReadBatch(platform.Batch{Frames: buf}); !errors.Is(err, platform.ErrClosed) {
		t.Fatalf("ReadBatch after Close: %v, want ErrClosed", err)
	}
	// A blocked reader of a second handle wakes on Close.
	h2 := fx.tr.Handle()
	done := make(chan error, 1)
	go func() { _, err := h2.ReadBatch(platform.Batch{Frames: buf}); done <- err }()
	h2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, platform.ErrClosed) {
			t.Fatalf("blocked ReadBatch woken by Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake a blocked ReadBatch")
	}
	// The trunk still works for the next consumer.
	h3 := fx.tr.Handle()
	defer h3.Close()
	fx.sendFar(0, udp4(1, 3))
	n, err = h3.ReadBatch(platform.Batch{Frames: buf})
	if err != nil || n != 1 || seqOf(buf[0]) != 3 {
		t.Fatalf("third handle: ReadBatch = %d, %v (seq %v); want the new frame 3", n, err, buf[:n])
	}
}
