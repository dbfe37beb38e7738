package gen

import (
	"context"
	"fmt"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
)

// RefuseTimeout is how long an AddressSender goes on offering a frame its
// port keeps refusing (a full queue drains in microseconds; a port whose
// link is down refuses for ever) before Run gives up with an error.
const RefuseTimeout = time.Second

// AddressBlock is Count consecutive unicast MAC addresses from First,
// counted as 48-bit numbers (MAC i is First+i): the stations of an
// address-table test, RFC 2889 sections 5.7 (address caching capacity)
// and 5.8 (address learning rate).
type AddressBlock struct {
	// First is the block's first address: unicast, not zero.
	First frame.MAC
	// Count is the number of addresses, 1 to MaxFlows.
	Count int
}

// MAC returns address i of the block, 0 <= i < Count.
func (a AddressBlock) MAC(i int) frame.MAC { return frame.MACFromKey(a.First.Key() + uint64(i)) }

// Index returns the place of m in the block, or false when m is not in it.
func (a AddressBlock) Index(m frame.MAC) (int, bool) {
	k, f := m.Key(), a.First.Key()
	if k < f || k-f >= uint64(a.Count) {
		return 0, false
	}
	return int(k - f), true
}

// Check says what makes the block unusable: a count out of range, a
// first address that is zero or multicast, or a block that runs into the
// next first octet (where the group bit of the later addresses could be
// set).
func (a AddressBlock) Check() error {
	switch {
	case a.Count < 1 || a.Count > MaxFlows:
		return fmt.Errorf("address block of %d: want 1-%d addresses", a.Count, MaxFlows)
	case a.First.IsZero() || a.First.IsMulticast():
		return fmt.Errorf("address block from %v: want a unicast, non-zero first address", a.First)
	case a.First.Key()+uint64(a.Count-1) > a.First.Key()|(1<<40-1):
		return fmt.Errorf("address block from %v: %d addresses run past the first octet", a.First, a.Count)
	}
	return nil
}

// AddressField says which MAC of an AddressSender's frames walks the
// block.
type AddressField uint8

const (
	// VarySource makes learning frames: frame i comes from address i of
	// the block and goes to the Stream's Dst.
	VarySource AddressField = iota
	// VaryDestination makes test frames: frame i comes from the Stream's
	// Src and goes to address i of the block.
	VaryDestination
)

// String names the field.
func (f AddressField) String() string {
	if f == VarySource {
		return "source"
	}
	return "destination"
}

// AddressStats counts what an AddressSender did in one run.
type AddressStats struct {
	// Sent is the number of frames the port accepted: one per address of
	// the run unless the context ended first.
	Sent uint64 `json:"sent"`
	// Refused counts frames the port refused (its queue was full); each
	// was offered again.
	Refused uint64 `json:"refused,omitempty"`
	// Bursts is the number of WriteBatch calls.
	Bursts uint64 `json:"bursts"`
	// Rebased counts the times a paced run fell more than MaxLag behind
	// its schedule and started the schedule again from then, rather than
	// catch up in a burst: the rate it offered is then below the rate
	// asked for (see PerSecond).
	Rebased uint64 `json:"rebased,omitempty"`
	// FirstSend is the time from the run's start to its first send.
	FirstSend time.Duration `json:"first_send_ns"`
	// Elapsed is the time from the run's start to its last send.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// PerSecond is the rate the run offered: the frames after the first over
// the time from the first send to the last (a paced run of n frames at
// rate r takes (n-1)/r), or 0 for fewer than two frames.
func (st AddressStats) PerSecond() float64 {
	d := st.Elapsed - st.FirstSend
	if st.Sent < 2 || d <= 0 {
		return 0
	}
	return float64(st.Sent-1) / d.Seconds()
}

// AddressSender sends one frame per address of an AddressBlock on a port:
// frame i is the Stream's frame with sequence number i (the Receiver
// counts it as such) whose source (VarySource) or destination
// (VaryDestination) MAC is address i of the block; it carries no send
// time. Frames the port refuses are offered again, so every address of a
// run is sent exactly once, in order. Buffers are one batch, made at
// NewAddressSender; Run allocates nothing. One goroutine at a time may use
// an AddressSender.
type AddressSender struct {
	// snd sends the frames; its walk is this AddressSender.
	snd *Sender
	// block is the addresses walked.
	block AddressBlock
	// mac is the offset in a frame of the MAC that walks the block: 0
	// (destination) or 6 (source).
	mac int
}

// NewAddressSender returns a sender of s's frames on port, one per
// address of block, the address in field. s.Flows must be 1 (the default):
// the addresses are the flows. The frame size must fit the port's MTU.
func NewAddressSender(port platform.Port, s Stream, block AddressBlock, field AddressField) (*AddressSender, error) {
	snd, err := newSender("address sender", port, s, nil)
	switch {
	case err != nil:
		return nil, err
	case snd.stream.Flows != 1:
		return nil, fmt.Errorf("%s: flows %d: the block's addresses are the flows, want 1", snd.name, snd.stream.Flows)
	case field != VarySource && field != VaryDestination:
		return nil, fmt.Errorf("%s: address field %d: want VarySource or VaryDestination", snd.name, field)
	}
	if err := block.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", snd.name, err)
	}
	a := &AddressSender{snd: snd, block: block}
	if field == VarySource {
		a.mac = 6
	}
	snd.walk = a
	return a, nil
}

// SetRunID makes the next Run send frames of run id.
func (a *AddressSender) SetRunID(id uint32) { a.snd.SetRunID(id) }

// Put writes frame i of the block into b, which must be as long as the
// Stream's frames and hold its template. It does not allocate.
func (a *AddressSender) Put(b []byte, i int) {
	a.snd.stream.stamp(b, a.snd.base, a.snd.srcIP, uint64(i), 0)
	m := a.block.MAC(i)
	copy(b[a.mac:a.mac+6], m[:])
}

// Frame returns a new copy of frame i, for tests and tools; Run does not
// use it.
func (a *AddressSender) Frame(i int) []byte {
	b, _ := a.snd.stream.Frame(0, 0) // a template to Put frame i into: the stream is valid
	a.Put(b, i)
	return b
}

// Run sends the frames of addresses first to first+n-1 (of the block) in
// order, paced at rate frames/s (bursts of rate*BurstInterval frames, as
// Sender does), or as fast as the port takes them for rate 0, and returns
// what it did. A paced run more than MaxLag behind its schedule does not
// catch up: it starts its schedule again (AddressStats.Rebased). The end
// of ctx stops it early, without error; a port that refuses every frame
// for RefuseTimeout (its link is down, say) is an error.
func (a *AddressSender) Run(ctx context.Context, first, n int, rate float64) (AddressStats, error) {
	if first < 0 || n < 0 || first+n > a.block.Count {
		return AddressStats{}, fmt.Errorf("%s: addresses %d-%d: the block has %d", a.snd.name, first, first+n-1, a.block.Count)
	}
	a.snd.seq = uint64(first)
	st, err := a.snd.Run(ctx, Load{Rate: rate, Count: uint64(n)})
	return AddressStats{Sent: st.Sent, Refused: st.TxDropped, Bursts: st.Bursts, Rebased: st.rebased, FirstSend: st.firstSend, Elapsed: st.Elapsed}, err
}
