package platform

import "github.com/swctl/swctl/frame"

// minFinisherArena is the first size of a SoftwareFinisher's arena: a few
// super-frames' worth.
const minFinisherArena = 256 << 10

// SoftwareFinisher turns frames with offloads into plain frames for a port
// that carries none: partial checksums finished, super-frames cut into
// segments (FinishChecksum, Segment). It builds a batch of plain frames:
// plain input frames as they are (views, not copies), finished ones and
// segments in an arena the finisher owns and reuses. After its first
// batches it allocates nothing. A SoftwareFinisher is used by one
// goroutine at a time; its zero value is ready to use.
//
// The frames it returns (Frames) are views into the caller's frames and
// into its arena: they stay valid until the next Reset or WriteTo (an Add
// that grows the arena leaves them in place). The caller's frames are
// never changed.
type SoftwareFinisher struct {
	// batch is the plain frames built since the last Reset.
	batch [][]byte
	// arena holds the bytes of the finished frames and segments in batch;
	// used is how much of it they take.
	arena []byte
	used  int
}

// FinishStats counts what a SoftwareFinisher did with one batch.
type FinishStats struct {
	// Sent is the number of plain frames (segments count one each) the
	// port accepted.
	Sent int
	// Finished is the number of input frames whose offload was done in
	// software; Segments the number of frames they became.
	Finished, Segments int
	// Dropped is the number of input frames whose offload the software
	// cannot do (frame.ErrOffloadUnsupported, frame.ErrOffloadBadFrame); they were
	// left out.
	Dropped int
	// Err and ErrOffload are the cause and the offload of the first
	// frame dropped, for a log line.
	Err        error
	ErrOffload Offload
}

// Reset empties the batch; the arena is reused.
func (s *SoftwareFinisher) Reset() {
	clear(s.batch)
	s.batch = s.batch[:0]
	s.used = 0
}

// Frames returns the plain frames added since the last Reset.
func (s *SoftwareFinisher) Frames() [][]byte { return s.batch }

// Full reports whether adding f would grow the arena while the batch
// holds frames: a writer sends Frames and Resets first, so that the
// arena keeps its size.
func (s *SoftwareFinisher) Full(f []byte, o Offload) bool {
	if o.IsPlain() || s.used == 0 {
		return false
	}
	need, err := frame.SegmentedLen(f, o)
	return err == nil && s.used+need > len(s.arena)
}

// Add appends f to the batch as plain frames: f itself when o is plain,
// else a finished copy of it or its segments, written into the arena
// (which grows when it has no room; frames added before stay valid). It
// returns the number of frames appended. A frame whose offload the
// software cannot do is not added, and its error returned.
func (s *SoftwareFinisher) Add(f []byte, o Offload) (int, error) {
	if o.IsPlain() {
		s.batch = append(s.batch, f)
		return 1, nil
	}
	need, err := frame.SegmentedLen(f, o)
	if err != nil {
		return 0, err
	}
	if s.used+need > len(s.arena) {
		// A new arena: the old one stays alive as long as the views
		// into it in batch.
		s.arena = make([]byte, max(need, 2*len(s.arena), minFinisherArena))
		s.used = 0
	}
	n := len(s.batch)
	s.batch, err = frame.Segment(f, o, s.arena[s.used:s.used+need:s.used+need], s.batch)
	if err != nil {
		s.batch = s.batch[:n]
		return 0, err
	}
	s.used += need
	return len(s.batch) - n, nil
}

// WriteTo writes b's frames, with their offloads (nil: plain frames), to
// p as plain frames, in batches of at most bs (p.BatchSize() when bs <=
// 0): frames whose offload is not plain are finished in software first. A
// frame the software cannot finish is dropped and counted. The finisher
// is Reset when WriteTo returns.
func (s *SoftwareFinisher) WriteTo(p Port, bs int, b Batch) FinishStats {
	var st FinishStats
	if bs <= 0 {
		bs = p.BatchSize()
	}
	s.Reset()
	for i, f := range b.Frames {
		o := b.Offload(i)
		if s.Full(f, o) {
			st.Sent += s.write(p, bs)
		}
		n, err := s.Add(f, o)
		switch {
		case err != nil:
			if st.Dropped == 0 {
				st.Err, st.ErrOffload = err, o
			}
			st.Dropped++
		case !o.IsPlain():
			st.Finished++
			st.Segments += n
		}
	}
	st.Sent += s.write(p, bs)
	return st
}

// write sends the batch to p in chunks of bs, Resets, and returns how
// many frames p accepted.
func (s *SoftwareFinisher) write(p Port, bs int) int {
	if bs <= 0 {
		bs = max(len(s.batch), 1)
	}
	sent := 0
	for i := 0; i < len(s.batch); i += bs {
		n, _ := p.WriteBatch(Batch{Frames: s.batch[i:min(i+bs, len(s.batch))]})
		sent += max(n, 0)
	}
	s.Reset()
	return sent
}
