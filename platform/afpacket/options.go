package afpacket

import (
	"fmt"

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
	switch {
	case o.BatchSize < 0 || o.BatchSize > 1024:
		return o, fmt.Errorf("afpacket %s: batch size %d out of range 1-1024", name, o.BatchSize)
	case o.Headroom < 0 || o.Headroom > 1024:
		return o, fmt.Errorf("afpacket %s: headroom %d out of range 0-1024", name, o.Headroom)
	case o.BlockSize < 0:
		return o, fmt.Errorf("afpacket %s: block size %d is negative", name, o.BlockSize)
	case o.BlockCount < 0:
		return o, fmt.Errorf("afpacket %s: block count %d is negative", name, o.BlockCount)
	}
	return o, nil
}
