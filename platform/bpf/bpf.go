package bpf

import (
	"cmp"
	"fmt"
	"log/slog"

	"github.com/swctl/swctl/platform"
)

// Defaults for the zero Options.
const (
	// DefaultBufferSize is the bpf buffer size Open asks for with
	// BIOCSBLEN: about 1,400 full-size frames per read(2). The kernel
	// clamps it to its net.bpf.maxbufsize (OpenBSD's default is 2 MiB,
	// BPF_MAXBUFSIZE; FreeBSD's is 512 KiB); BufferSize reports what it
	// granted.
	DefaultBufferSize = 2 << 20
	// minBufferSize is BPF_MINBUFSIZE (sys/net/bpf.h, both OSes): the
	// kernel refuses anything smaller.
	minBufferSize = 32
)

// Options tune a port. The zero value gives the defaults.
type Options struct {
	// BatchSize is the most frames one ReadBatch returns and one
	// WriteBatch takes per round; 0 means platform.DefaultBatchSize. bpf
	// has no batch write: WriteBatch makes one write(2) per frame.
	BatchSize int
	// BufferSize is the bpf buffer size in bytes to ask for (BIOCSBLEN);
	// 0 means DefaultBufferSize. The kernel may grant less (see
	// DefaultBufferSize); it keeps two buffers of the granted size per
	// port, and one read(2) returns at most one buffer of frames.
	BufferSize int
	// Promisc takes a promiscuous membership at Open, as SetPromisc(true)
	// does.
	Promisc bool
	// Logger receives the port's rare warnings (a corrupt read buffer,
	// logged once per port); nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills in zero fields and checks the rest.
func (o Options) withDefaults(name string) (Options, error) {
	batch, err := platform.CheckBatchSize("bpf", name, o.BatchSize)
	if err != nil {
		return o, err
	}
	o.BatchSize, o.Logger = batch, cmp.Or(o.Logger, slog.Default())
	o.BufferSize = cmp.Or(o.BufferSize, DefaultBufferSize)
	if o.BufferSize < minBufferSize || o.BufferSize > 1<<30 {
		return o, fmt.Errorf("bpf %s: buffer size %d out of range %d-%d", name, o.BufferSize, minBufferSize, 1<<30)
	}
	return o, nil
}
