package afpacket

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/swctl/swctl/platform"
)

// Defaults for the zero Options.
const (
	// DefaultHeadroom is the PACKET_RESERVE headroom: room for a restored
	// tag and a virtio-net header in front of every received frame.
	DefaultHeadroom = 16
	// DefaultBlockSize is the size of one ring block in bytes.
	DefaultBlockSize = 128 << 10
	// DefaultBlockCount is the number of ring blocks: a 4 MiB ring; at a
	// 1500-byte MTU and DefaultHeadroom a block holds 81 slots of 1,616
	// bytes (frameSizeFor), 2,592 in all.
	DefaultBlockCount = 32
	// DefaultCopyQueue is the receive buffer in bytes of a port with
	// Offload and small slots: the kernel queues the copies of
	// super-frames there (counted by their truesize, about 70 KiB for a
	// 64 KiB TSO frame), so about 200 super-frames can wait for the
	// engine. The memory is taken only while they wait.
	DefaultCopyQueue = 16 << 20
	// DefaultCopyBuffers is the number of 64 KiB copy buffers of a port
	// with Offload and small slots: the most super-frames one ReadBatch
	// returns.
	DefaultCopyBuffers = 8
	// offloadSlotsPerBlock is how many super-frame slots share one ring
	// block (a block is a whole number of pages; slots never cross
	// blocks): 4 slots waste 3.5 KiB per block, 1.4%, where one slot per
	// block would waste 6%.
	offloadSlotsPerBlock = 4
	// MaxCoalesce bounds Options.Coalesce: a longer pause would hold
	// frames long enough to overflow a ring at high rates.
	MaxCoalesce = 10 * time.Millisecond
	// DefaultTXRingFrames is the number of slots of a TX ring: about
	// 1 MiB for a 1500-byte MTU, eight batches of 64 frames in flight.
	DefaultTXRingFrames = 512
)

// Options tune a port. The zero value gives the defaults.
type Options struct {
	// BatchSize is the most frames one ReadBatch returns and one
	// WriteBatch system call sends; 0 means platform.DefaultBatchSize.
	BatchSize int
	// Headroom is the number of bytes kept free in front of every
	// received frame (PACKET_RESERVE); 0 means DefaultHeadroom.
	Headroom int
	// BlockSize is the size in bytes of one receive ring block, a
	// multiple of the page size; 0 means DefaultBlockSize. It is raised
	// to hold at least one frame slot.
	BlockSize int
	// BlockCount is the number of receive ring blocks; 0 means
	// DefaultBlockCount.
	BlockCount int
	// Offload turns on PACKET_VNET_HDR: the port implements
	// platform.Port, receives GSO super-frames and partial
	// checksums with their metadata (ReadBatch) and hands them to
	// the kernel, which segments and checksums them on the way out
	// (WriteBatch). The receive ring keeps slots for the MTU
	// (BlockSize, BlockCount) and PACKET_COPY_THRESH is on: a frame too
	// large for a slot, a super-frame, waits as a full copy on the
	// socket's receive queue (CopyQueue bytes) and ReadBatch reads it into
	// one of CopyBuffers buffers, so small frames keep the thousands of
	// slots of a plain port.
	Offload bool
	// OffloadSlots, when not 0, gives a port with Offload a receive ring
	// of that many 64 KiB slots instead (a multiple of 4; about 64.1 KiB
	// of kernel memory each, BlockSize and BlockCount ignored): no copies,
	// but few slots for small frames or much memory.
	OffloadSlots int
	// CopyQueue is the receive buffer in bytes for the copies of
	// super-frames with Offload and small slots; 0 means
	// DefaultCopyQueue. Raising it beyond net.core.rmem_max needs
	// CAP_NET_ADMIN.
	CopyQueue int
	// CopyBuffers is the number of copy buffers with Offload and small
	// slots, the most super-frames one ReadBatch returns; 0 means
	// DefaultCopyBuffers.
	CopyBuffers int
	// Workers, when more than 1, opens that many receive sockets, each
	// with its own ring, in a PACKET_FANOUT group in hash mode: the
	// kernel spreads the frames by flow hash, so each flow stays in order
	// on one socket, and one reader goroutine per socket (ReadQueue) can
	// forward on its own core. 0 or 1 means one socket. Sending and
	// memberships use the first socket.
	Workers int
	// TXRing sends through an mmap TPACKET_V2 TX ring instead of
	// sendmmsg: WriteBatch copies each frame (behind a virtio_net_hdr,
	// with Offload or not) into a ring slot and kicks the kernel with one
	// send(2) per batch. The ring belongs to a second socket, bound to
	// the interface for no protocol, so it receives nothing; a frame
	// larger than a slot (a super-frame with Offload) still goes with
	// sendmmsg on the receive socket, after the ring has been kicked so
	// the order holds. A full ring drops and counts, it never waits.
	TXRing bool
	// TXRingFrames is the number of TX ring slots, each sized for the
	// MTU; 0 means DefaultTXRingFrames. It is rounded up to whole ring
	// blocks.
	TXRingFrames int
	// SendBuffer bounds, in bytes, what the socket that sendmmsg sends
	// from may have in flight (queued in the qdisc and the device, as the
	// kernel counts a frame's memory): the frames of a port without
	// TXRing, the super-frames too large for a ring slot with it. 0 keeps
	// the kernel's default (net.core.wmem_default, about 200 KiB, three
	// 64 KiB super-frames): behind a shaped link the port then drops what
	// the link's own queue would have held. A larger buffer drops less
	// but lets a TCP sender behind a TAP (which TCP small queues cannot
	// see through) fill the link's queue: measured with bench-trunk, 4 MiB
	// took a trunk's member drops to 0 but its RTT under load from
	// 16-19 ms to 43-122 ms (the single link's: 14-16 ms), for no more
	// throughput. Without CAP_NET_ADMIN it is capped by
	// net.core.wmem_max.
	SendBuffer int
	// BusyPoll makes ReadBatch poll instead of sleeping: while the ring
	// is empty it yields its goroutine (runtime.Gosched) and looks
	// again, never blocking in ppoll. A frame then needs no wakeup, which
	// costs a cross-core interrupt and an idle exit (about 100 µs on a
	// virtual machine), so light-load latency drops to near the kernel
	// bridge's; the price is a core that spins at 100% even when no
	// frame comes. Readers of several busy ports share the Go scheduler's
	// threads (GOMAXPROCS): each yields to the others when its ring is
	// empty. Close still stops a ReadBatch.
	BusyPoll bool
	// Coalesce, when not 0, is how long a reader pauses (nanosleep)
	// before it reads a ring that its previous read emptied with a short
	// batch (two frames or more, less than 32 KiB): frames arriving
	// meanwhile come in one batch instead of a wakeup each. This is interrupt moderation, like a NIC's rx-usecs or
	// NAPI's gro_flush_timeout. A frame on an idle port is still read at
	// once, because the reader waits for it in ppoll. Only frames that
	// follow a short batch wait, and at most Coalesce. Each wakeup costs a
	// cross-core interrupt and an idle exit, so at a steady moderate load
	// this divides the forwarder's CPU per frame (about 3x at 200 k
	// frames/s of 60 bytes with 100 µs on the test VM). No effect with
	// BusyPoll, which never sleeps. At most MaxCoalesce.
	Coalesce time.Duration
	// SendOnly opens a port that sends and receives nothing: its socket
	// is bound to the interface for no protocol, so the kernel never
	// hands it a frame (no copy into a ring, no wakeup: a traffic
	// generator's port, or a tester's port that only sends a few
	// learning frames while an interface counter counts arrivals).
	// ReadBatch blocks until Close. Workers must be 0 or 1.
	SendOnly bool
	// QdiscBypass sets PACKET_QDISC_BYPASS on the sending sockets: frames
	// go straight to the driver, skipping the interface's qdisc (and its
	// queueing, shaping and tc egress hooks); a full driver queue drops.
	QdiscBypass bool
	// Logger receives the port's rare warnings (a frame too large for its
	// ring slot, logged once per port); nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills in zero fields and checks the rest.
func (o Options) withDefaults(name string) (Options, error) {
	batch, err := platform.CheckBatchSize("afpacket", name, o.BatchSize)
	if err != nil {
		return o, err
	}
	o.BatchSize, o.Logger = batch, cmp.Or(o.Logger, slog.Default())
	o.Headroom = cmp.Or(o.Headroom, DefaultHeadroom)
	o.BlockSize, o.BlockCount = cmp.Or(o.BlockSize, DefaultBlockSize), cmp.Or(o.BlockCount, DefaultBlockCount)
	o.CopyQueue, o.CopyBuffers = cmp.Or(o.CopyQueue, DefaultCopyQueue), cmp.Or(o.CopyBuffers, DefaultCopyBuffers)
	o.TXRingFrames = cmp.Or(o.TXRingFrames, DefaultTXRingFrames)
	switch {
	case o.Coalesce < 0 || o.Coalesce > MaxCoalesce:
		return o, fmt.Errorf("afpacket %s: coalesce %v out of range 0-%v", name, o.Coalesce, MaxCoalesce)
	case o.SendOnly && o.Workers > 1:
		return o, fmt.Errorf("afpacket %s: a send-only port has no receive workers (workers %d)", name, o.Workers)
	case o.Headroom < 0 || o.Headroom > 1024:
		return o, fmt.Errorf("afpacket %s: headroom %d out of range 0-1024", name, o.Headroom)
	case o.BlockSize < 0:
		return o, fmt.Errorf("afpacket %s: block size %d is negative", name, o.BlockSize)
	case o.BlockCount < 0:
		return o, fmt.Errorf("afpacket %s: block count %d is negative", name, o.BlockCount)
	case o.Workers < 0 || o.Workers > 64:
		return o, fmt.Errorf("afpacket %s: workers %d out of range 1-64", name, o.Workers)
	case o.CopyQueue < 0:
		return o, fmt.Errorf("afpacket %s: copy queue %d is negative", name, o.CopyQueue)
	case o.CopyBuffers < 0 || o.CopyBuffers > 1024:
		return o, fmt.Errorf("afpacket %s: copy buffers %d out of range 1-1024", name, o.CopyBuffers)
	case o.TXRing && (o.TXRingFrames < o.BatchSize || o.TXRingFrames > 1<<16):
		return o, fmt.Errorf("afpacket %s: TX ring of %d frames out of range %d (the batch size)-65536", name, o.TXRingFrames, o.BatchSize)
	case o.SendBuffer < 0 || o.SendBuffer > 1<<30:
		return o, fmt.Errorf("afpacket %s: send buffer of %d bytes out of range 0-%d", name, o.SendBuffer, 1<<30)
	case o.OffloadSlots < 0 || o.OffloadSlots%offloadSlotsPerBlock != 0:
		return o, fmt.Errorf("afpacket %s: offload slots %d is not a positive multiple of %d", name, o.OffloadSlots, offloadSlotsPerBlock)
	}
	return o, nil
}
