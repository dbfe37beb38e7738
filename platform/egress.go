package platform

import "github.com/swctl/swctl/frame"

// Egress is the one place where a batch of frames meets a port's limits:
// every sender (the bridge's workers, a trunk's members, the TAP pump)
// writes through one. Send leaves out the frames too large for the port
// (a super-frame is measured by its segments), finishes offloads in
// software for a port that carries none (partial checksums finished,
// super-frames cut into segments), and writes the rest in chunks of the
// port's batch size. An Egress is scratch for one goroutine at a time;
// after its first batches it allocates nothing. Its zero value is ready
// to use.
type Egress struct {
	// fit holds a batch with its oversize frames left out.
	fit Batch
	// soft finishes offloads for ports without them.
	soft SoftwareFinisher
}

// EgressStats counts what one Send did with its frames.
type EgressStats struct {
	// Sent is the number of frames the port accepted; a super-frame cut
	// in software counts once per segment.
	Sent int
	// Oversize is the number of frames left out: shorter than an
	// Ethernet header, or larger on the wire than the port's MTU.
	Oversize int
	// Finished is the number of frames whose offload was done in
	// software, and Segments the number of frames they became.
	Finished, Segments int
	// OffloadDropped is the number of frames whose offload the software
	// cannot do; Err and ErrOffload say why the first was, for a log
	// line.
	OffloadDropped int
	Err            error
	ErrOffload     Offload
}

// Lost returns how many of the in frames given to Send did not go out:
// left out, dropped for their offload, or refused by the port (a frame
// cut into segments counts as lost as far as the port refused segments,
// up to in).
func (s EgressStats) Lost(in int) int {
	tried := in - s.Oversize - s.OffloadDropped - s.Finished + s.Segments
	return min(s.Oversize+s.OffloadDropped+max(tried-s.Sent, 0), in)
}

// Send writes b to p. Neither b's frames nor its offloads are changed;
// p copies what it keeps. Send does not look at p's link: the caller
// decides what a port that is down gets.
func (e *Egress) Send(p Port, b Batch) (st EgressStats) {
	e.send(p, b, -1, &st)
	return st
}

// SendChecked is Send for a batch whose every frame the caller has
// already passed through frame.FitsMTU with mtu (a trunk, against its
// smallest member MTU): while p's MTU is at least mtu none of them can be
// oversize for p, and the second walk over the frames is skipped. A port
// whose MTU has dropped below mtu since gets Send's check.
func (e *Egress) SendChecked(p Port, b Batch, mtu int) (st EgressStats) {
	e.send(p, b, mtu, &st)
	return st
}

// send is Send, skipping the MTU check when p's MTU is at least checked
// (the MTU the caller checked b's frames against; negative: none). It
// counts into st, which Send and SendChecked return: being small and
// inlined, they leave st in their caller's frame, so the common batch
// (plain, fitting, written whole) copies no stats and no batch.
func (e *Egress) send(p Port, b Batch, checked int, st *EgressStats) {
	if b.Len() == 0 {
		return
	}
	mtu, bs := p.MTU(), p.BatchSize()
	// The common batch (a trunk's to a member) needs none of the steps
	// below: its frames checked against an MTU the port meets, nothing
	// to finish, and one chunk.
	if checked >= 0 && mtu >= checked && b.Len() <= bs && (b.Offs == nil || p.Offloads()) {
		n, _ := p.WriteBatch(b)
		st.Sent = max(n, 0)
		return
	}
	if checked < 0 || mtu < checked {
		b, st.Oversize = e.fitting(mtu, b)
	}
	if bs <= 0 {
		bs = max(b.Len(), 1)
	}
	if b.Offs != nil && !p.Offloads() && !allPlain(b.Offs) {
		e.finish(p, bs, b, st)
	} else {
		for b.Len() > 0 {
			k := min(bs, b.Len())
			n, _ := p.WriteBatch(b.Slice(0, k))
			st.Sent += max(n, 0)
			b = b.Slice(k, b.Len())
		}
	}
	if len(e.fit.Frames) > 0 {
		e.forget()
	}
}

// finish writes b to p, which carries no offloads, in chunks of bs, its
// offloads finished in software, and counts into st.
func (e *Egress) finish(p Port, bs int, b Batch, st *EgressStats) {
	fs := e.soft.WriteTo(p, bs, b)
	st.Sent, st.Finished, st.Segments = fs.Sent, fs.Finished, fs.Segments
	st.OffloadDropped, st.Err, st.ErrOffload = fs.Dropped, fs.Err, fs.ErrOffload
}

// forget empties the scratch of fitting, so that it holds on to no
// caller's frames.
func (e *Egress) forget() {
	clear(e.fit.Frames)
	e.fit.Frames = e.fit.Frames[:0]
	e.fit.Offs = e.fit.Offs[:0]
}

// fitting returns b without the frames that are shorter than an Ethernet
// header or whose largest frame on the wire exceeds mtu, and how many it
// left out. The frames that fit are copied into scratch only when some
// do not, so that the caller's batch (maybe shared by several ports) is
// never changed.
func (e *Egress) fitting(mtu int, b Batch) (Batch, int) {
	fits := func(i int) bool { return frame.FitsMTU(b.Frames[i], b.Offload(i), mtu) }
	first := -1
	for i, f := range b.Frames {
		// A frame within the MTU past an untagged header fits whatever
		// its offload (FitsMTU's first test), without reading it.
		if len(f) >= frame.HeaderLen && len(f)-frame.HeaderLen <= mtu {
			continue
		}
		if !fits(i) {
			first = i
			break
		}
	}
	if first < 0 {
		return b, 0
	}
	e.fit.Frames = append(e.fit.Frames[:0], b.Frames[:first]...)
	if b.Offs != nil {
		e.fit.Offs = append(e.fit.Offs[:0], b.Offs[:first]...)
	}
	left := 0
	for i := first; i < b.Len(); i++ {
		if !fits(i) {
			left++
			continue
		}
		e.fit.Frames = append(e.fit.Frames, b.Frames[i])
		if b.Offs != nil {
			e.fit.Offs = append(e.fit.Offs, b.Offs[i])
		}
	}
	out := Batch{Frames: e.fit.Frames}
	if b.Offs != nil {
		out.Offs = e.fit.Offs
	}
	return out, left
}

// allPlain reports whether every offload in offs is plain.
func allPlain(offs []Offload) bool {
	for _, o := range offs {
		if !o.IsPlain() {
			return false
		}
	}
	return true
}
