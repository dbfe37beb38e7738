package bpf

import (
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/platform"
)

// Port is a bpf(4) port on one interface. It implements platform.Port,
// platform.LinkSetter and platform.Promiscuous. One goroutine at a time
// may call ReadBatch; every other method is safe for concurrent use,
// Close included. bpf is OpenBSD's and FreeBSD's: elsewhere Open fails and
// no Port is ever made.
type Port struct {
	// Iface is the interface's name, MAC address, MTU, batch size and
	// link state, and the Port methods that report them (SetMTU: the
	// daemon calls it when the interface's MTU changes).
	platform.Iface
	// bufSize is the buffer size the kernel granted (BIOCGBLEN).
	bufSize int
	// counters are the port's counters. RxDropped counts records
	// ReadBatch refused: runts, and frames the kernel cut because they
	// were larger than the buffer. RingDropped is the kernel's bs_drop
	// (BIOCGSTATS) at the last read: frames lost because both buffers
	// were full; the kernel counts it from attach, so it is set, not
	// added. Errors counts failed system calls and unreadable read
	// buffers.
	counters platform.PortCounters
	// closeOnce runs the teardown once.
	closeOnce sync.Once

	// ctlmu serialises SetPromisc and statistics reads, and keeps Close
	// from closing descriptors under them.
	ctlmu sync.Mutex
	// promiscFD is the descriptor holding the promiscuous membership, -1
	// without one; guarded by ctlmu.
	promiscFD int
	// promisc is set while promiscFD is open; written under ctlmu.
	promisc atomic.Bool

	// device is the descriptor that reads and sends (device.go: on
	// OpenBSD and FreeBSD, and on Linux for the tests); nothing
	// elsewhere.
	device
}

// Compile-time checks of the interfaces Port implements.
var (
	_ platform.Port        = (*Port)(nil)
	_ platform.LinkSetter  = (*Port)(nil)
	_ platform.Promiscuous = (*Port)(nil)
	_ platform.ReadyReader = (*Port)(nil)
)

// Open opens a bpf port on the interface name: a /dev/bpf descriptor with
// a buffer of Options.BufferSize bytes (or what the kernel grants),
// attached to the interface, in immediate mode, with complete headers on
// send (the source MAC of every frame is the caller's) and without the
// frames the interface sends. The MTU, MAC address and initial link
// state (up when the interface is up and running) come from the
// interface. Off OpenBSD and FreeBSD it fails with "bpf NAME: not
// implemented on GOOS".
func Open(name string, opts Options) (*Port, error) { return openPort(name, opts) }

// Headroom implements platform.Port: 0, bpf puts its header, not free
// space, in front of a frame.
func (p *Port) Headroom() int { return 0 }

// BufferSize is the size of the descriptor's buffer as the kernel granted
// it: the most bytes of records one read(2) returns.
func (p *Port) BufferSize() int { return p.bufSize }

// ReadBatch implements platform.Port. It hands out the frames of the last
// read(2) (one bpf buffer, many records) up to len(frames) and
// BatchSize() at a time, and reads again only once they are all taken,
// blocking in poll while nothing has arrived. The frames are views into
// the port's read buffer, valid until the next ReadBatch or Close; their
// offloads are zero.
// Records shorter than an Ethernet header, or cut by the kernel (a frame
// larger than the buffer), are dropped and counted in RxDropped.
func (p *Port) ReadBatch(b platform.Batch) (int, error) { return platform.ReadPlain(b, p.readWait) }

// ReadReady implements platform.ReadyReader: ReadBatch that returns 0
// frames at once when the read buffer is drained and no new one has come.
func (p *Port) ReadReady(b platform.Batch) (int, error) { return platform.ReadPlain(b, p.readNow) }

// Offloads implements platform.Port: bpf(4) carries plain frames only.
func (p *Port) Offloads() bool { return false }

// WriteBatch implements platform.Port. bpf has no batch write: each frame
// is one write(2), which hands it to the interface's send queue and does
// not block. A frame shorter than an Ethernet header, a frame over the
// MTU, and every frame while the link is down are dropped and counted in
// TxDropped, as are frames the kernel refuses because the send queue is
// full (ENOBUFS) and frames whose offload is not plain. On the BSDs a tag gets no allowance: bpf(4) checks the
// frame less its 14-byte Ethernet header against the MTU (bpf_movein on
// FreeBSD, bpfwrite on OpenBSD), so WriteBatch applies the same rule and a
// tagged frame whose payload is the MTU is dropped. The kernel has a copy
// of every sent frame when WriteBatch returns. Safe for concurrent use.
func (p *Port) WriteBatch(b platform.Batch) (int, error) {
	return platform.WritePlain(b, &p.counters, p.write)
}

// Counters implements platform.Port. RingDropped is the kernel's bs_drop
// (BIOCGSTATS): frames lost because the port did not read fast enough.
func (p *Port) Counters() platform.Counters {
	p.refreshStats()
	return p.counters.Snapshot()
}

// SetPromisc implements platform.Promiscuous. bpf can put an interface in
// promiscuous mode (BIOCPROMISC) but not take it out: the kernel drops
// the membership only when the descriptor closes. So the membership lives
// on a second descriptor that captures nothing; SetPromisc(false) closes
// it, and so does the kernel if the process dies. Setting the state the
// port is already in does nothing. After Close, SetPromisc(false)
// succeeds (nothing is held).
func (p *Port) SetPromisc(on bool) error { return p.setPromisc(on) }

// Promisc implements platform.Promiscuous.
func (p *Port) Promisc() bool { return p.promisc.Load() }

// Close implements platform.Port. It wakes a ReadBatch blocked in poll and
// waits for it to leave, waits for the writes in progress, and closes the
// descriptors, which drops the promiscuous membership. Frames from the
// last ReadBatch are invalid once Close has begun. Safe to call from any
// goroutine, more than once: later calls wait for the first and return
// nil.
func (p *Port) Close() error { return p.close() }
