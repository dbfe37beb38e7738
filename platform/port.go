// Package platform defines the Port contract: a named frame endpoint with
// batch I/O that every swctl backend (AF_PACKET, bpf, TAP, in-memory)
// implements, and that a trunk implements on top of other Ports.
//
// # Ownership of frames
//
// ReadBatch fills frames[:n] with views into memory the port owns (a ring
// slot, or a buffer reused by the next call). A frame read from a port is
// valid until the next ReadBatch or Close on that port; whoever needs it
// longer copies it. WriteBatch copies what it keeps before it returns: the
// caller may reuse or release the frames it passed as soon as it returns.
//
// # Concurrency
//
// One goroutine at a time may call ReadBatch. WriteBatch is safe for
// concurrent use by any number of goroutines (forwarding workers of several
// ingress ports, protocol timers). Close is safe to call from any goroutine,
// at any time, more than once; it wakes a blocked ReadBatch, which then
// returns ErrClosed.
package platform

import (
	"errors"
	"net"

	"github.com/swctl/swctl/frame"
)

// ErrClosed is returned by ReadBatch and WriteBatch once Close has been called.
var ErrClosed = errors.New("port closed")

// DefaultBatchSize is the number of frames a backend moves per call unless
// it says otherwise.
const DefaultBatchSize = 64

// LinkState is the carrier state of a port as the engine last saw it.
type LinkState uint8

const (
	// LinkDown means the interface exists but has no carrier or is
	// administratively down.
	LinkDown LinkState = iota
	// LinkUp means the interface can send and receive.
	LinkUp
	// LinkAbsent means a configured interface does not exist (yet).
	LinkAbsent
)

// String returns the word the CLI and JSON use for the state.
func (s LinkState) String() string {
	switch s {
	case LinkUp:
		return "up"
	case LinkDown:
		return "down"
	default:
		return "absent"
	}
}

// Counters is a snapshot of a port's counters, as the engine saw them.
type Counters struct {
	// RxPackets and RxBytes count frames ReadBatch returned.
	RxPackets, RxBytes uint64
	// TxPackets and TxBytes count frames WriteBatch handed to the kernel
	// (or to the peer, for in-memory ports).
	TxPackets, TxBytes uint64
	// RxDropped counts frames the port read but refused (runts, oversize).
	RxDropped uint64
	// RxBadOffload counts the frames of RxDropped refused because their
	// offload metadata (virtio_net_hdr) does not describe them
	// (CheckOffload): never segmented, never forwarded.
	RxBadOffload uint64
	// TxDropped counts frames WriteBatch dropped: full TX ring, oversize,
	// link down.
	TxDropped uint64
	// RingDropped counts frames the kernel dropped because the receive
	// ring was full (PACKET_STATISTICS on Linux, bs_drop on BSD).
	RingDropped uint64
	// Errors counts failed system calls.
	Errors uint64
}

// Port is a named frame endpoint with batch I/O. See the package
// documentation for the ownership and concurrency rules.
type Port interface {
	// Name is the interface name (at most 15 bytes).
	Name() string
	// HardwareAddr is the port's MAC address.
	HardwareAddr() net.HardwareAddr
	// MTU is the largest L2 payload the port sends, not counting the
	// 14-byte Ethernet header nor one 802.1Q tag.
	MTU() int
	// Headroom is the number of bytes the port keeps free in its own
	// buffer in front of every frame ReadBatch returns, so that a tag the
	// kernel stripped (802.1Q) or a metadata header (virtio_net_hdr) can be
	// put back in place without a copy.
	Headroom() int
	// BatchSize is the largest number of frames one ReadBatch returns and
	// one WriteBatch sends in one system call.
	BatchSize() int
	// Offloads reports whether the port carries offload metadata with
	// its frames (AF_PACKET with PACKET_VNET_HDR, a TAP with
	// IFF_VNET_HDR): super-frames and partial checksums then cross
	// userspace untouched and the kernel finishes them on the way out.
	// Decided when the port opens; it never changes. A port that does
	// not carry offloads reads plain frames (zero Offloads) and drops,
	// counting them, frames written with an Offload that is not plain:
	// a sender finishes those in software first (Egress does).
	Offloads() bool
	// ReadBatch blocks until at least one frame is available, then fills
	// b.Frames[:n] with views of up to len(b.Frames) received frames and,
	// unless b.Offs is nil, b.Offs[:n] with their offloads (b.Offs is
	// then at least as long as b.Frames). The views stay valid until the
	// next ReadBatch or Close. A caller that passes no Offs takes plain
	// frames only: a port that carries offloads finishes partial
	// checksums in place and drops super-frames, counted in RxDropped.
	// It returns ErrClosed after Close.
	ReadBatch(b Batch) (n int, err error)
	// WriteBatch sends b's frames, with their offloads (b.Offs nil: all
	// plain), and never blocks: a frame that does not fit (full ring,
	// too large, link down, an offload the port does not carry) is
	// dropped and counted. A super-frame is checked against the MTU by
	// the size of its segments (frame.SegmentPayloadLen), not by its
	// length. It returns the number sent. WriteBatch copies what it
	// keeps, frames and offloads both.
	WriteBatch(b Batch) (n int, err error)
	// Link returns the port's current link state.
	Link() LinkState
	// Counters returns a snapshot of the port's counters.
	Counters() Counters
	// Close releases the port: its descriptors, rings and any
	// promiscuous membership it held. It wakes a blocked ReadBatch.
	Close() error
}

// ReadyReader is implemented by ports that can read without waiting. A
// consumer that just emptied a batch may read again this way on its own
// goroutine, and leave the waiting for frames to another (a trunk's
// member reader), so that a port under load hands its frames over with
// no goroutine switch.
type ReadyReader interface {
	// ReadReady is ReadBatch without the wait: it returns 0 frames at
	// once when none is ready. It follows ReadBatch's ownership rules,
	// and counts as a ReadBatch call for them (one goroutine at a time
	// calls either).
	ReadReady(b Batch) (n int, err error)
}

// LinkSetter is implemented by ports whose link state is observed outside
// the port itself (by a netlink or routing-socket watcher, or by a test).
type LinkSetter interface {
	SetLink(LinkState)
}

// Promiscuous is implemented by ports that can hold a promiscuous
// membership on their interface that the kernel drops when the port's
// descriptor closes.
type Promiscuous interface {
	// Name is the interface the membership is held on.
	Name() string
	// SetPromisc takes (on) or releases (off) the port's membership.
	SetPromisc(on bool) error
	// Promisc reports whether the port holds a membership.
	Promisc() bool
}

// Offload is the checksum and segmentation metadata of one frame
// (frame.Offload: the fields of Linux's struct virtio_net_hdr).
type Offload = frame.Offload

// Offload flags and GSO types, as frame names them.
const (
	OffloadNeedsCsum = frame.OffloadNeedsCsum
	OffloadDataValid = frame.OffloadDataValid
	GSONone          = frame.GSONone
	GSOTCPv4         = frame.GSOTCPv4
	GSOUDP           = frame.GSOUDP
	GSOTCPv6         = frame.GSOTCPv6
	GSOUDPL4         = frame.GSOUDPL4
	GSOECN           = frame.GSOECN
)

// Batch is what crosses a port in one call: frames and the offload of
// each. Offs[i] goes with Frames[i]; a zero Offload is a plain frame,
// and a nil Offs means every frame is plain. A Batch is a pair of slice
// headers, passed by value: making one from slices the caller owns
// allocates nothing.
type Batch struct {
	// Frames are views; who owns them and for how long is the port
	// contract's business (see the package documentation).
	Frames [][]byte
	// Offs are the frames' offloads, parallel to Frames, or nil.
	Offs []Offload
}

// NewBatch returns a Batch with room for n frames and their offloads.
func NewBatch(n int) Batch {
	return Batch{Frames: make([][]byte, n), Offs: make([]Offload, n)}
}

// Len returns the number of frames.
func (b Batch) Len() int { return len(b.Frames) }

// Slice returns frames i to j and their offloads.
func (b Batch) Slice(i, j int) Batch {
	s := Batch{Frames: b.Frames[i:j]}
	if b.Offs != nil {
		s.Offs = b.Offs[i:j]
	}
	return s
}

// Offload returns the offload of frame i: zero when Offs is nil.
func (b Batch) Offload(i int) Offload {
	if b.Offs == nil {
		return Offload{}
	}
	return b.Offs[i]
}

// Plain returns a Batch of frames alone: every frame plain.
func Plain(frames ...[]byte) Batch { return Batch{Frames: frames} }

// MultiQueuePort is a port that receives on several queues, each read by
// its own goroutine (afpacket with Options.Workers: the sockets of a
// PACKET_FANOUT group in hash mode, so each flow stays on one queue, in
// order). A forwarder starts one reader per queue.
type MultiQueuePort interface {
	Port
	// RxQueues is the number of receive queues, fixed for the port's life.
	RxQueues() int
	// ReadQueue is ReadBatch for queue q only.
	ReadQueue(q int, b Batch) (int, error)
}
