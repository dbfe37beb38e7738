package pump

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
	"github.com/swctl/swctl/platform/platformtest"
)

// failingPort is a port whose reads return at once, with the errors of a
// script: a nil error reads one frame. The last entry repeats, as the
// error of a TAP whose host side hung up does. It records when each read
// came.
type failingPort struct {
	*memport.Port
	// mu guards script and reads.
	mu sync.Mutex
	// script are the results of the next reads.
	script []error
	// reads are the times of the ReadBatch calls.
	reads []time.Time
}

func newFailingPort(script ...error) *failingPort {
	a, _ := memport.Pair("tap0", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "peer0", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	return &failingPort{Port: a, script: script}
}

func (f *failingPort) ReadBatch(b platform.Batch) (int, error) {
	frames := b.Frames
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, time.Now())
	err := f.script[0]
	if len(f.script) > 1 {
		f.script = f.script[1:]
	}
	if err != nil {
		return 0, err
	}
	frames[0] = make([]byte, 60)
	return 1, nil
}

func (f *failingPort) setScript(script ...error) {
	f.mu.Lock()
	f.script = script
	f.mu.Unlock()
}

func (f *failingPort) readTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reads)
}

// logRecords is a slog handler that keeps every record's level and message.
type logRecords struct {
	mu   sync.Mutex
	recs []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Level.String()+" "+r.Message)
	l.mu.Unlock()
	return nil
}

func (l *logRecords) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// runCopy runs one direction of a pump from src to dst; ended is closed
// when it returns.
func runCopy(src, dst platform.Port) (logs *logRecords, ended chan struct{}) {
	logs, ended = &logRecords{}, make(chan struct{})
	p := &Pump{log: slog.New(logs), done: make(chan struct{})}
	p.wg.Add(1)
	go p.copy(src, dst, src.ReadBatch, "tap", "trunk")
	go func() { p.wg.Wait(); close(ended) }()
	return logs, ended
}

// waitEnded fails the test unless ended is closed within 10 s.
func waitEnded(t *testing.T, ended chan struct{}) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the pump still runs 10 s after its source reported ErrClosed")
	}
}

func TestBackoff(t *testing.T) {
	var b backoff
	var got []time.Duration
	for range 12 {
		got = append(got, b.next())
	}
	ms := time.Millisecond
	want := []time.Duration{1 * ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms, 32 * ms, 64 * ms, 128 * ms, 256 * ms, 512 * ms, time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays = %v, want %v", got, want)
	}
	b.reset()
	if d := b.next(); d != retryMin {
		t.Errorf("after reset: delay %v, want %v", d, retryMin)
	}
}

// TestPumpBacksOffOnReadErrors feeds the pump a source whose reads always
// fail: it must not spin (each retry waits at least the backoff, so ten
// reads take at least 1+2+...+256 ms, where a spinning pump makes them in
// microseconds), log the failure once, and stop when the source reports
// ErrClosed.
func TestPumpBacksOffOnReadErrors(t *testing.T) {
	src := newFailingPort(errors.New("tap0: read: input/output error"))
	dst, _ := memport.Pair("trunk0", net.HardwareAddr{2, 0, 0, 0, 0, 3}, "peer1", net.HardwareAddr{2, 0, 0, 0, 0, 4})
	logs, ended := runCopy(src, dst)

	const reads = 10
	netnstest.Eventually(t, 10*time.Second, "fewer than 10 reads", func() bool { return len(src.readTimes()) >= reads })
	times := src.readTimes()[:reads]
	var b backoff
	var minWindow time.Duration
	for i := 1; i < reads; i++ {
		wait := b.next()
		minWindow += wait
		if gap := times[i].Sub(times[i-1]); gap < wait {
			t.Errorf("read %d came %v after read %d, want at least the backoff %v", i+1, gap, i, wait)
		}
	}
	if window := times[reads-1].Sub(times[0]); window < minWindow {
		t.Errorf("%d failing reads within %v, want them spread over at least %v", reads, window, minWindow)
	}
	if got, want := logs.lines(), []string{"WARN pump: read failed, retrying with backoff"}; !slices.Equal(got, want) {
		t.Errorf("log after %d failed reads = %q, want only %q", reads, got, want)
	}

	src.setScript(platform.ErrClosed)
	waitEnded(t, ended)
}

// TestPumpStopEndsBackoff stops a pump whose trunk side keeps failing even
// after Close: only the stop, not a read, can end its wait.
func TestPumpStopEndsBackoff(t *testing.T) {
	h := newFailingPort(errors.New("trunk0: read: no buffer space available"))
	tap, _ := memport.Pair("trunk0", net.HardwareAddr{2, 0, 0, 0, 0, 3}, "peer1", net.HardwareAddr{2, 0, 0, 0, 0, 4})
	p := New(h, tap, [2]string{"trunk", "tap"}, slog.New(slog.DiscardHandler))
	netnstest.Eventually(t, 10*time.Second, "fewer than 3 reads", func() bool { return len(h.readTimes()) >= 3 })
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop has not returned after 10 s")
	}
}

// TestPumpLogsEachRunOfFailures checks that a good read ends a run of
// failures: the pump says so, and the next failure starts a new run,
// logged again.
func TestPumpLogsEachRunOfFailures(t *testing.T) {
	fail := errors.New("tap0: read: input/output error")
	src := newFailingPort(fail, fail, fail, nil, fail, platform.ErrClosed)
	dst, far := memport.Pair("trunk0", net.HardwareAddr{2, 0, 0, 0, 0, 3}, "peer1", net.HardwareAddr{2, 0, 0, 0, 0, 4})
	logs, ended := runCopy(src, dst)
	waitEnded(t, ended)
	want := []string{
		"WARN pump: read failed, retrying with backoff",
		"INFO pump: reads work again",
		"WARN pump: read failed, retrying with backoff",
	}
	if got := logs.lines(); !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}
	if got := far.Pending(); got != 1 {
		t.Errorf("frames delivered = %d, want the one good read's 1", got)
	}
}

// superSource is a port that carries offloads and reads one batch, a
// TCP super-frame of 3 segments and a plain frame, then ErrClosed.
type superSource struct {
	*memport.Port
	// batch is what the one read returns.
	frames [][]byte
	offs   []platform.Offload
	// read is set after the first read.
	read bool
}

func (s *superSource) Offloads() bool { return true }

func (s *superSource) ReadBatch(b platform.Batch) (int, error) {
	if s.read {
		return 0, platform.ErrClosed
	}
	s.read = true
	n := copy(b.Frames, s.frames)
	copy(b.Offs, s.offs)
	return n, nil
}

// TestPumpFinishesOffloadsForAPlainPort checks that what a trunk hands
// the pump with offloads (a super-frame) reaches a port without offloads
// (a TAP without IFF_VNET_HDR) cut into its segments, through the pump's
// egress.
func TestPumpFinishesOffloadsForAPlainPort(t *testing.T) {
	p := platformtest.Packet{Payload: platformtest.Payload(3 * 1000)}
	super, o := p.Partial(p.Build(t))
	o.GSOType, o.GSOSize = platform.GSOTCPv4, 1000
	plain := platformtest.Packet{Payload: platformtest.Payload(10)}.Build(t)
	a, _ := memport.Pair("trunk0", net.HardwareAddr{2, 0, 0, 0, 0, 5}, "x", net.HardwareAddr{2, 0, 0, 0, 0, 6})
	src := &superSource{Port: a, frames: [][]byte{super, plain}, offs: []platform.Offload{o, {}}}
	dst, far := memport.Pair("tap0", net.HardwareAddr{2, 0, 0, 0, 0, 7}, "host", net.HardwareAddr{2, 0, 0, 0, 0, 8})
	_, ended := runCopy(src, dst)
	waitEnded(t, ended)
	if got := far.Pending(); got != 4 {
		t.Fatalf("the plain port's peer got %d frames, want 4: the super-frame's 3 segments and the plain frame", got)
	}
}

// queuedSource is a port with several receive queues: ReadQueue(q)
// returns one frame whose first byte is q, count times per queue, then
// ErrClosed; ReadBatch must not be called.
type queuedSource struct {
	*memport.Port
	// left is how many frames each queue has still to give.
	left []int
	// mu guards left and batchReads.
	mu sync.Mutex
	// batchReads counts ReadBatch calls.
	batchReads int
}

func (s *queuedSource) RxQueues() int { return len(s.left) }

func (s *queuedSource) ReadQueue(q int, b platform.Batch) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left[q] == 0 {
		return 0, platform.ErrClosed
	}
	s.left[q]--
	f := make([]byte, 60)
	f[0] = byte(q)
	b.Frames[0] = f
	return 1, nil
}

func (s *queuedSource) ReadBatch(platform.Batch) (int, error) {
	s.mu.Lock()
	s.batchReads++
	s.mu.Unlock()
	return 0, platform.ErrClosed
}

// TestPumpReadsEveryQueue checks that a source with several receive
// queues (a multi-queue TAP) is read queue by queue, each by its own
// goroutine: every queue's frames cross, and ReadBatch is never called.
func TestPumpReadsEveryQueue(t *testing.T) {
	a, _ := memport.Pair("tap0", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "x", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	src := &queuedSource{Port: a, left: []int{5, 7, 3}}
	dst, far := memport.Pair("trunk0", net.HardwareAddr{2, 0, 0, 0, 0, 3}, "y", net.HardwareAddr{2, 0, 0, 0, 0, 4})
	p := &Pump{log: slog.New(&logRecords{}), done: make(chan struct{})}
	p.start(src, dst, "tap", "trunk")
	ended := make(chan struct{})
	go func() { p.wg.Wait(); close(ended) }()
	waitEnded(t, ended)
	perQueue := make([]int, 3)
	buf := make([][]byte, 64)
	for n, _ := far.TryReadBatch(buf); n > 0; n, _ = far.TryReadBatch(buf) {
		for _, f := range buf[:n] {
			perQueue[f[0]]++
		}
	}
	if !slices.Equal(perQueue, []int{5, 7, 3}) || src.batchReads != 0 {
		t.Errorf("expected 5, 7 and 3 frames from queues 0-2 and no ReadBatch; got %v and %d ReadBatch calls", perQueue, src.batchReads)
	}
}
