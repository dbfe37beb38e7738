// Package capture is swctl's packet capture: a Session copies the frames
// a bridge's tap sees into a bounded queue of its own, which a slow reader
// cannot make block forwarding (what does not fit is dropped and
// counted); a Hub is a bridge's tap, shared by the sessions on that
// bridge and removed from it when the last one ends; a Writer writes
// captured frames as pcapng or pcap (gopacket/pcapgo) for tshark.
package capture

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/bridge"
)

// Frame is one captured frame.
type Frame struct {
	// Port is the bridge port it crossed; Dir which way.
	Port string
	Dir  bridge.Direction
	// Time is when the bridge read its batch.
	Time time.Time
	// Len is the frame's length; Data its first bytes, at most the
	// session's snap length. Data belongs to the session: it is valid
	// until the Frame is given back with Release.
	Len  int
	Data []byte
}

// initialFrameCap is the capacity each queued frame's buffer starts with:
// a full-size tagged frame. Larger frames (super-frames) grow it once.
const initialFrameCap = 1536 + 4

// ErrHubClosed ends the sessions of a hub whose bridge went away.
var ErrHubClosed = errors.New("the bridge went away")

// Session is one capture: the frames of one port of a bridge, or of all,
// in the directions it asked for, queued for one reader. Capture (called
// by the hub on the forwarding path) never blocks: a frame that finds the
// queue full is dropped and counted.
type Session struct {
	// port is the port captured, "" for every port; immutable.
	port string
	// dirs are the directions captured; immutable.
	dirs bridge.Direction
	// snaplen is the most bytes kept of a frame; immutable.
	snaplen int
	// free holds the frames ready to be filled, ready the filled ones in
	// order. Together they hold every frame of the session, so sending
	// to either never blocks.
	free, ready chan *Frame
	// queued and dropped count the frames copied into the queue and the
	// frames that found it full. Atomic.
	queued, dropped atomic.Uint64
	// done is closed by the hub when its bridge goes away.
	done <-chan struct{}
}

// NewSession returns a session capturing port ("" for every port) in
// dirs, keeping at most snaplen bytes of each frame, with a queue of
// queue frames.
func NewSession(port string, dirs bridge.Direction, snaplen, queue int) *Session {
	s := &Session{port: port, dirs: dirs, snaplen: snaplen,
		free: make(chan *Frame, queue), ready: make(chan *Frame, queue)}
	for range queue {
		s.free <- &Frame{Data: make([]byte, 0, min(initialFrameCap, snaplen))}
	}
	return s
}

// Capture copies the frames that match the session into its queue, and
// counts those that find it full. It is bridge.Tap's method, called by
// the hub.
func (s *Session) Capture(port string, dir bridge.Direction, frames [][]byte, now time.Time) {
	if s.dirs&dir == 0 || (s.port != "" && s.port != port) {
		return
	}
	for _, f := range frames {
		select {
		case fr := <-s.free:
			fr.Port, fr.Dir, fr.Time, fr.Len = port, dir, now, len(f)
			fr.Data = append(fr.Data[:0], f[:min(len(f), s.snaplen)]...)
			s.ready <- fr
			s.queued.Add(1)
		default:
			s.dropped.Add(1)
		}
	}
}

// TryNext returns the oldest queued frame without waiting, or false.
func (s *Session) TryNext() (*Frame, bool) {
	select {
	case fr := <-s.ready:
		return fr, true
	default:
		return nil, false
	}
}

// Next waits for the oldest queued frame. It fails with ctx's error when
// ctx is done first, and with ErrHubClosed when the bridge went away.
func (s *Session) Next(ctx context.Context) (*Frame, error) {
	select {
	case fr := <-s.ready:
		return fr, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, ErrHubClosed
	}
}

// Release gives a frame from Next or TryNext back to the queue.
func (s *Session) Release(fr *Frame) { s.free <- fr }

// Counts returns how many frames the session queued and dropped so far.
func (s *Session) Counts() (queued, dropped uint64) { return s.queued.Load(), s.dropped.Load() }

// Hub is the tap of one bridge: it hands what the bridge sees to every
// session on it. It installs itself on the bridge with its first session
// and takes itself off with its last, so a bridge nobody captures pays
// only its one atomic load per batch.
type Hub struct {
	// setTap installs the hub on its bridge (nil takes it off).
	setTap func(bridge.Tap)
	// sessions are the sessions under way. Atomic: Capture reads it
	// without a lock; replaced whole under mu.
	sessions atomic.Pointer[[]*Session]
	// done is closed by Close.
	done chan struct{}

	// mu serialises Add, Remove and Close, and guards the fields below.
	mu sync.Mutex
	// closed is set by Close.
	closed bool
	// queued and dropped are the counts of the sessions that ended.
	queued, dropped uint64
	// cut counts the sessions whose reader stalled (CountCut).
	cut uint64
}

// NewHub returns a hub that installs itself with setTap (a bridge's
// SetTap).
func NewHub(setTap func(bridge.Tap)) *Hub {
	h := &Hub{setTap: setTap, done: make(chan struct{})}
	h.sessions.Store(&[]*Session{})
	return h
}

// Capture implements bridge.Tap.
func (h *Hub) Capture(port string, dir bridge.Direction, frames [][]byte, now time.Time) {
	for _, s := range *h.sessions.Load() {
		s.Capture(port, dir, frames, now)
	}
}

// Add starts s on the hub's bridge; it fails once the bridge went away.
func (h *Hub) Add(s *Session) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrHubClosed
	}
	s.done = h.done
	old := *h.sessions.Load()
	h.sessions.Store(new(append(slices.Clip(old), s)))
	if len(old) == 0 {
		h.setTap(h)
	}
	return nil
}

// Remove ends s: the bridge's frames stop reaching it (a reader may still
// be in its Capture), and its counts join the hub's.
func (h *Hub) Remove(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.sessions.Load()
	i := slices.Index(old, s)
	if i < 0 {
		return
	}
	rest := slices.Delete(slices.Clone(old), i, i+1)
	if len(rest) == 0 && !h.closed {
		h.setTap(nil)
	}
	h.sessions.Store(&rest)
	q, d := s.Counts()
	h.queued += q
	h.dropped += d
}

// CountCut counts a session ended because its reader stalled.
func (h *Hub) CountCut() {
	h.mu.Lock()
	h.cut++
	h.mu.Unlock()
}

// Stats are a hub's counts since it was made, over every session.
type Stats struct {
	// Sessions is the number of sessions under way.
	Sessions int
	// Queued and Dropped count the frames the sessions queued and the
	// frames they dropped because their queue was full.
	Queued, Dropped uint64
	// Cut counts the sessions ended because their reader stalled.
	Cut uint64
}

// Stats returns the hub's counts.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := Stats{Queued: h.queued, Dropped: h.dropped, Cut: h.cut}
	for _, s := range *h.sessions.Load() {
		q, d := s.Counts()
		st.Sessions++
		st.Queued += q
		st.Dropped += d
	}
	return st
}

// Close ends every session (their Next fails with ErrHubClosed) and
// refuses new ones: the bridge is going away. It is safe on a nil hub and
// more than once.
func (h *Hub) Close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}
