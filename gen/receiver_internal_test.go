package gen

import (
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform/memport"
)

func TestReceiverCounts(t *testing.T) {
	const run = 0x1234
	type want struct{ received, dups, reordered, late, ignored uint64 }
	tests := []struct {
		name  string
		flows int
		seqs  []uint64
		other int // frames of another run, counted as ignored
		want  want
	}{
		{name: "in order", flows: 1, seqs: []uint64{0, 1, 2, 3}, want: want{received: 4}},
		{name: "gaps are not counted here (loss is sent - received)", flows: 1, seqs: []uint64{0, 2, 5}, want: want{received: 3}},
		{name: "one swap: one reordered", flows: 1, seqs: []uint64{0, 2, 1, 3}, want: want{received: 4, reordered: 1}},
		{name: "late arrival after several", flows: 1, seqs: []uint64{1, 2, 3, 0}, want: want{received: 4, reordered: 1}},
		{name: "duplicate", flows: 1, seqs: []uint64{0, 1, 1, 2}, want: want{received: 3, dups: 1}},
		{name: "duplicate of a reordered frame", flows: 1, seqs: []uint64{0, 2, 1, 1}, want: want{received: 3, reordered: 1, dups: 1}},
		{name: "frame filling a gap is no duplicate", flows: 1, seqs: []uint64{0, 100, 50}, want: want{received: 3, reordered: 1}},
		{name: "order across flows does not count", flows: 2, seqs: []uint64{1, 0, 3, 2}, want: want{received: 4}},
		{name: "order within a flow counts", flows: 2, seqs: []uint64{2, 0}, want: want{received: 2, reordered: 1}},
		{name: "beyond the duplicate window: late", flows: 1, seqs: []uint64{dupWindow + 10, 5}, want: want{received: 2, reordered: 1, late: 1}},
		{name: "jump past the window forgets old bits", flows: 1, seqs: []uint64{3, 3 + dupWindow, 3 + dupWindow - 1}, want: want{received: 3, reordered: 1}},
		{name: "another run's frames are ignored", flows: 1, seqs: []uint64{0, 1}, other: 3, want: want{received: 2, ignored: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := memport.Pair("a", nil, "b", nil)
			s := Stream{Src: frame.MAC{2}, Dst: frame.MAC{2, 1}, Flows: tt.flows, RunID: run}
			r, err := NewReceiver(a, s)
			if err != nil {
				t.Fatal(err)
			}
			for _, seq := range tt.seqs {
				f, _ := s.Frame(seq, 0)
				r.count([][]byte{f}, 1)
			}
			other := s
			other.RunID = run + 1
			for i := range tt.other {
				f, _ := other.Frame(uint64(i), 0)
				r.count([][]byte{f}, 1)
			}
			st := r.Stats()
			got := want{st.Received, st.Duplicates, st.Reordered, st.Late, st.Ignored}
			if got != tt.want {
				t.Errorf("counts %+v, want %+v", got, tt.want)
			}
			if st.Bytes != tt.want.received*MinSize {
				t.Errorf("bytes %d, want %d", st.Bytes, tt.want.received*MinSize)
			}
		})
	}
}

func TestReceiverLatency(t *testing.T) {
	a, _ := memport.Pair("a", nil, "b", nil)
	s := Stream{Src: frame.MAC{2}, Dst: frame.MAC{2, 1}, RunID: 9}
	r, _ := NewReceiver(a, s)
	if r.Stats().Latency != nil {
		t.Fatal("latency before any frame")
	}
	// Sent at 1000, 2000 and 3000 ns, and one unstamped frame; all
	// arrive at 5000 ns.
	var batch [][]byte
	for i, sentAt := range []int64{1000, 2000, 3000, 0} {
		f, _ := s.Frame(uint64(i), sentAt)
		batch = append(batch, f)
	}
	r.count(batch, 5000)
	want := Latency{Samples: 3, Min: 2000, Avg: 3000, Max: 4000}
	if got := r.Stats().Latency; got == nil || *got != want {
		t.Errorf("latency %+v, want %+v", got, want)
	}
}

func TestReceiverBeginStartsAfresh(t *testing.T) {
	a, _ := memport.Pair("a", nil, "b", nil)
	s := Stream{Src: frame.MAC{2}, Dst: frame.MAC{2, 1}, RunID: 1}
	r, _ := NewReceiver(a, s)
	f1, _ := s.Frame(0, 0)
	r.count([][]byte{f1}, 1)
	r.Begin(2)
	r.count([][]byte{f1}, 1) // run 1's frame, late
	if st := r.Stats(); st.Received != 0 || st.Ignored != 1 {
		t.Errorf("after Begin(2): received %d, ignored %d; want 0, 1", st.Received, st.Ignored)
	}
}

func TestWaitReceivedReturnsOnTimeout(t *testing.T) {
	a, _ := memport.Pair("a", nil, "b", nil)
	r, _ := NewReceiver(a, Stream{RunID: 1})
	start := time.Now()
	if n := r.WaitReceived(0, 5*time.Millisecond); n != 0 {
		t.Errorf("WaitReceived = %d, want 0", n)
	}
	if d := time.Since(start); d < 4*time.Millisecond || d > time.Second {
		t.Errorf("WaitReceived returned after %v, want about 5ms", d)
	}
}
