package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/supervise"
)

// readerThatPanics stands for a data-path goroutine with a bug.
func readerThatPanics() { panic("index out of range in the reader") }

// TestCrashGivesBackAndExits: a panic in a supervised goroutine is logged
// with its goroutine and stack, the release runs (or is given up on after
// the timeout when it hangs, or logged when it panics itself), and the
// process exits with status 2, once, however many goroutines panic.
func TestCrashGivesBackAndExits(t *testing.T) {
	tests := []struct {
		name string
		// release is the daemon's release; it may block until hang is
		// closed, at the end of the test.
		release func(released chan<- struct{}, hang <-chan struct{})
		wantLog string
	}{
		{"release finishes", func(r chan<- struct{}, _ <-chan struct{}) { close(r) }, "interfaces given back after the panic"},
		{"release hangs", func(r chan<- struct{}, hang <-chan struct{}) { close(r); <-hang }, "interfaces not all given back in time"},
		{"release panics", func(r chan<- struct{}, _ <-chan struct{}) { close(r); panic("second bug") }, "panic while giving the interfaces back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Written by the handler's goroutines, read after the exit
			// they send.
			var logs bytes.Buffer
			exits := make(chan int, 2)
			released := make(chan struct{})
			c := &crash{log: slog.New(slog.NewTextHandler(&logs, nil)), stateDir: t.TempDir(),
				timeout: 200 * time.Millisecond, exit: func(code int) { exits <- code }}
			hang := make(chan struct{})
			defer close(hang)
			c.setRelease(func() { tt.release(released, hang) })
			defer supervise.Handle(c.handle)()
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				supervise.Go("bridge0 reader p1", func() { defer wg.Done(); readerThatPanics() })
			}
			wg.Wait() // the panicked goroutines end: the release need not wait for them
			select {
			case code := <-exits:
				if code != 2 {
					t.Errorf("exit status %d, want 2", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no exit within 10s; log:\n%s", logs.String())
			}
			select {
			case <-released:
			default:
				t.Error("exited without running the release")
			}
			select {
			case code := <-exits:
				t.Errorf("a second exit (%d): want one for the first panic only", code)
			case <-time.After(100 * time.Millisecond):
			}
			out := logs.String()
			for _, want := range []string{"goroutine=\"bridge0 reader p1\"", "index out of range in the reader", "daemon.readerThatPanics", tt.wantLog} {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
			if n := strings.Count(out, "panic: giving the interfaces back"); n != 1 {
				t.Errorf("%d panic lines, want 1 (the first panic)", n)
			}
		})
	}
}
