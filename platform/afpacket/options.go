package afpacket

import (
	"fmt"
	"log/slog"

	"github.com/swctl/swctl/platform"
)

// Defaults for the zero Options.
const (
	// DefaultHeadroom is the PACKET_RESERVE headroom: room for a restored
	// tag and a virtio-net header in front of every received frame.
	DefaultHeadroom = 16
	// DefaultBlockSize is the size of one ring block in bytes.
	DefaultBlockSize = 128 << 10
	// DefaultBlockCount is the number of ring blocks: a 4 MiB ring,
	// about 2,000 standard frames.
	DefaultBlockCount = 32
	// DefaultOffloadSlots is the number of receive ring slots of a port
	// with Offload: each slot holds a 64 KiB super-frame (about 64.1 KiB
	// with the headers), so the ring takes about 16.3 MiB of kernel memory,
	// the same bytes as 256 full-size TSO frames in flight towards the
	// engine (a 4 MiB TCP send window is 64 of them).
	DefaultOffloadSlots = 256
	// offloadSlotsPerBlock is how many super-frame slots share one ring
	// block (a block is a whole number of pages; slots never cross
	// blocks): 4 slots waste 3.5 KiB per block, 1.4%, where one slot per
	// block would waste 6%.
	offloadSlotsPerBlock = 4
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
	// platform.OffloadPort, receives GSO super-frames and partial
	// checksums with their metadata (ReadBatchOffload) and hands them to
	// the kernel, which segments and checksums them on the way out
	// (WriteBatchOffload). The receive ring then has OffloadSlots slots
	// of 64 KiB and more (BlockSize and BlockCount are ignored).
	Offload bool
	// OffloadSlots is the number of receive ring slots with Offload, a
	// multiple of 4; 0 means DefaultOffloadSlots.
	OffloadSlots int
	// Logger receives the port's rare warnings (a frame too large for its
	// ring slot, logged once per port); nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills in zero fields and checks the rest.
func (o Options) withDefaults(name string) (Options, error) {
	if o.BatchSize == 0 {
		o.BatchSize = platform.DefaultBatchSize
	}
	if o.Headroom == 0 {
		o.Headroom = DefaultHeadroom
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.BlockCount == 0 {
		o.BlockCount = DefaultBlockCount
	}
	if o.OffloadSlots == 0 {
		o.OffloadSlots = DefaultOffloadSlots
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.BatchSize < 0 || o.BatchSize > 1024:
		return o, fmt.Errorf("afpacket %s: batch size %d out of range 1-1024", name, o.BatchSize)
	case o.Headroom < 0 || o.Headroom > 1024:
		return o, fmt.Errorf("afpacket %s: headroom %d out of range 0-1024", name, o.Headroom)
	case o.BlockSize < 0:
		return o, fmt.Errorf("afpacket %s: block size %d is negative", name, o.BlockSize)
	case o.BlockCount < 0:
		return o, fmt.Errorf("afpacket %s: block count %d is negative", name, o.BlockCount)
	case o.OffloadSlots < 0 || o.OffloadSlots%offloadSlotsPerBlock != 0:
		return o, fmt.Errorf("afpacket %s: offload slots %d is not a positive multiple of %d", name, o.OffloadSlots, offloadSlotsPerBlock)
	}
	return o, nil
}
