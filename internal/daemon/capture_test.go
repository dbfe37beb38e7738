package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

// testSink is a CaptureSink that records what it gets. With block set,
// Frame waits until block is closed: a client that does not read.
type testSink struct {
	mu     sync.Mutex
	start  *api.CaptureStart
	frames []string
	// block, when not nil, holds every Frame until it is closed.
	block chan struct{}
	// frameErr, when set, is what Frame returns.
	frameErr error
}

func (s *testSink) Start(st api.CaptureStart) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = &st
	return nil
}

func (s *testSink) Frame(f api.CapturedFrame) error {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frameErr != nil {
		return s.frameErr
	}
	dir := map[uint8]string{api.FrameIn: "in", api.FrameOut: "out"}[f.Dir]
	s.frames = append(s.frames, fmt.Sprintf("%s %s %d %02x", f.Port, dir, f.Len, f.Data[11]))
	return nil
}

func (s *testSink) Flush() error { return nil }

func (s *testSink) started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start != nil
}

// broadcast returns a 60-byte broadcast frame from station 02:bb:..:id.
func broadcast(id byte) []byte {
	f := make([]byte, 60)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xbb, 0, 0, 0, id, 0x88, 0xb5})
	return f
}

// captureResult is how a capture ended.
type captureResult struct {
	end api.CaptureEnd
	err error
}

// runCapture starts a capture and waits until it has begun.
func runCapture(t *testing.T, ctx context.Context, e *engine, req api.CaptureRequest, sink *testSink) <-chan captureResult {
	t.Helper()
	done := make(chan captureResult, 1)
	go func() {
		end, err := e.Capture(ctx, req, sink)
		done <- captureResult{end, err}
	}()
	netnstest.Eventually(t, 10*time.Second, "the capture began", func() bool {
		select {
		case r := <-done:
			t.Fatalf("capture %+v ended before it began: %v", req, r.err)
		default:
		}
		return sink.started()
	})
	return done
}

func waitCapture(t *testing.T, done <-chan captureResult) captureResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the capture did not end within 10s")
		return captureResult{}
	}
}

// TestEngineCapture captures a bridge and one of its members, each for a
// count of frames, and checks the frames, the directions and the start.
func TestEngineCapture(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))
	tests := []struct {
		req       api.CaptureRequest
		start     api.CaptureStart
		send      map[string][]byte
		want      []string
		wantTotal int
	}{
		{api.CaptureRequest{Name: "bridge0", Count: 2},
			api.CaptureStart{Bridge: "bridge0", Direction: "in", Snaplen: api.DefaultSnaplen},
			map[string][]byte{"eth1": broadcast(1), "eth2": broadcast(2)},
			[]string{"eth1 in 60 01", "eth2 in 60 02"}, 2},
		{api.CaptureRequest{Name: "eth2", Count: 2, Snaplen: 100},
			api.CaptureStart{Bridge: "bridge0", Port: "eth2", Direction: "both", Snaplen: 100},
			map[string][]byte{"eth1": broadcast(3), "eth2": broadcast(4)},
			[]string{"eth2 out 60 03", "eth2 in 60 04"}, 2},
		{api.CaptureRequest{Name: "eth1", Direction: "out", Count: 1},
			api.CaptureStart{Bridge: "bridge0", Port: "eth1", Direction: "out", Snaplen: api.DefaultSnaplen},
			map[string][]byte{"eth1": broadcast(5), "eth2": broadcast(6)},
			[]string{"eth1 out 60 06"}, 1},
	}
	for _, tt := range tests {
		sink := &testSink{}
		done := runCapture(t, bg, e, tt.req, sink)
		for _, n := range []string{"eth1", "eth2"} {
			if _, err := sys.far[n].WriteBatch(platform.Batch{Frames: [][]byte{tt.send[n]}}); err != nil {
				t.Fatal(err)
			}
		}
		r := waitCapture(t, done)
		if r.err != nil || r.end.Sent != uint64(tt.wantTotal) {
			t.Errorf("capture %+v: expected %d frames sent, no error; got %+v, %v", tt.req, tt.wantTotal, r.end, r.err)
		}
		if *sink.start != tt.start {
			t.Errorf("capture %+v: start\nexpected %+v\ngot      %+v", tt.req, tt.start, *sink.start)
		}
		slices.Sort(sink.frames)
		slices.Sort(tt.want)
		if !slices.Equal(sink.frames, tt.want) {
			t.Errorf("capture %+v: frames\nexpected %q\ngot      %q", tt.req, tt.want, sink.frames)
		}
	}
	if e.graph.bridges["bridge0"].capture.Stats().Sessions != 0 {
		t.Errorf("sessions left running after every capture ended")
	}
}

func TestEngineCaptureRefusals(t *testing.T) {
	sys := newFakeSystem("eth1")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1"}}))
	_, err := e.Capture(bg, api.CaptureRequest{Name: "eth9"}, &testSink{})
	if want := "capture eth9: not a bridge or a port of one"; errString(err) != want {
		t.Errorf("capture of an unknown name: expected %q, got %v", want, err)
	}
	ctx, cancel := context.WithCancel(bg)
	var running []<-chan captureResult
	for range maxCaptures {
		running = append(running, runCapture(t, ctx, e, api.CaptureRequest{Name: "bridge0"}, &testSink{}))
	}
	_, err = e.Capture(bg, api.CaptureRequest{Name: "eth1"}, &testSink{})
	if want := "capture eth1: bridge0 has 4 captures running already (at most 4)"; errString(err) != want {
		t.Errorf("one capture too many: expected %q, got %v", want, err)
	}
	cancel()
	for _, done := range running {
		if r := waitCapture(t, done); r.err != nil {
			t.Errorf("a capture stopped by its client: expected no error, got %v", r.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestEngineCaptureSlowReaderDropsWhileForwarding: a capture whose client
// reads nothing fills its queue, then drops and counts, and the bridge
// forwards every frame all the while.
func TestEngineCaptureSlowReaderDropsWhileForwarding(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))
	sink := &testSink{block: make(chan struct{})}
	ctx, cancel := context.WithCancel(bg)
	done := runCapture(t, ctx, e, api.CaptureRequest{Name: "bridge0"}, sink)

	const total = 3000
	got := 0
	buf := make([][]byte, 256)
	for sent := 0; sent < total; sent += 250 {
		batch := make([][]byte, 250)
		for i := range batch {
			batch[i] = broadcast(1)
		}
		if _, err := sys.far["eth1"].WriteBatch(platform.Batch{Frames: batch}); err != nil {
			t.Fatal(err)
		}
		netnstest.Eventually(t, 10*time.Second, "eth2 got the frames forwarded so far", func() bool {
			n, _ := sys.far["eth2"].TryReadBatch(buf)
			got += n
			return got == sent+250
		})
	}
	samples, err := e.Stats(bg)
	mustDo(t, err)
	queued, _ := sampleValue(samples, "swctl_bridge_capture_frames_total", map[string]string{"bridge": "bridge0", "fate": "queued"})
	dropped, _ := sampleValue(samples, "swctl_bridge_capture_frames_total", map[string]string{"bridge": "bridge0", "fate": "dropped"})
	if queued != captureQueue || dropped != total-captureQueue {
		t.Errorf("capture counts with a client that reads nothing: expected %d queued, %d dropped; got %v, %v",
			captureQueue, total-captureQueue, queued, dropped)
	}
	close(sink.block)
	cancel()
	r := waitCapture(t, done)
	if r.err != nil || r.end.Dropped != total-captureQueue || r.end.Sent != captureQueue {
		t.Errorf("end: expected %d sent, %d dropped, no error; got %+v, %v", captureQueue, total-captureQueue, r.end, r.err)
	}
}

// TestEngineCaptureEnds: a capture ends with an error when its bridge
// goes, and counts a client that stalled.
func TestEngineCaptureEnds(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2")
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}}))

	stalled := &testSink{frameErr: fmt.Errorf("%w for 10s", api.ErrStreamStalled)}
	done := runCapture(t, bg, e, api.CaptureRequest{Name: "bridge0"}, stalled)
	if _, err := sys.far["eth1"].WriteBatch(platform.Batch{Frames: [][]byte{broadcast(1)}}); err != nil {
		t.Fatal(err)
	}
	if r := waitCapture(t, done); !errors.Is(r.err, api.ErrStreamStalled) {
		t.Errorf("a stalled client: expected ErrStreamStalled, got %v", r.err)
	}
	samples, err := e.Stats(bg)
	mustDo(t, err)
	if cut, _ := sampleValue(samples, "swctl_bridge_capture_streams_cut_total", map[string]string{"bridge": "bridge0"}); cut != 1 {
		t.Errorf("streams cut: expected 1, got %v", cut)
	}

	done = runCapture(t, bg, e, api.CaptureRequest{Name: "eth1"}, &testSink{})
	mustDo(t, e.Change(bg, api.BridgeDestroyRequest{Name: "bridge0"}))
	if r := waitCapture(t, done); errString(r.err) != "bridge0: the bridge went away" {
		t.Errorf("capture of a destroyed bridge: expected %q, got %v", "bridge0: the bridge went away", r.err)
	}
}
