package tap

import (
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// Headroom is the number of bytes free in front of every frame ReadBatch
// returns: room for two VLAN tags (802.1ad + 802.1Q).
const Headroom = 8

// maxSuperFrame is the largest frame a TAP with offloads hands over: a
// 64 KiB IP packet (GSO's limit) behind an Ethernet header and two tags.
const maxSuperFrame = 65535 + frame.HeaderLen + 2*frame.TagLen

// SuperFrameWire is the most bytes a super-frame the host sends through
// a TAP with offloads takes on a link once cut into segments, every
// segment's Ethernet and IP headers counted: 64 KiB. A qdisc passes a
// super-frame within its burst whole and schedules it as one packet; one
// over it (tbf with a 64 KiB burst, the usual figure) is cut into
// segments in software, each timed on its own (measured on a trunk over
// two tbf-shaped links: one watchdog timer per 1,514-byte segment instead
// of one per super-frame, six times the CPU). NICs whose TSO engine
// counts the headers have the same bound.
const SuperFrameWire = 64 << 10

// SuperFrameSegments is the number of segments of a link with the given
// MTU that fit SuperFrameWire (43 at 1,500 bytes): Create gives a TAP
// with offloads that as its gso_max_segs, so that the host's TCP never
// builds a larger super-frame, and SetInterfaceMTU keeps it current.
func SuperFrameSegments(mtu int) int {
	const ipv4MinMTU = 68
	return max(1, SuperFrameWire/(max(mtu, ipv4MinMTU)+frame.HeaderLen))
}

// minFrameRoom is the smallest frame buffer a slot gets, whatever the MTU:
// a jumbo payload, an Ethernet header and one tag.
const minFrameRoom = 9216 + 14 + 4

// Options says how Create makes the interface.
type Options struct {
	// MAC is the interface's hardware address; nil keeps the random one
	// the kernel picks. Keep it in the configuration so that a restart
	// gives the host the same address.
	MAC net.HardwareAddr
	// MTU is the interface's MTU; 0 keeps the kernel's default (1500).
	MTU int
	// Up brings the interface administratively up.
	Up bool
	// BatchSize is the number of receive slots, the most frames one
	// ReadBatch returns; 0 means platform.DefaultBatchSize.
	BatchSize int
	// Offload opens the TAP with IFF_VNET_HDR and TUNSETOFFLOAD (Linux):
	// every frame crosses with its virtio_net_hdr, so TCP super-frames
	// and partial checksums go between the host stack and the engine
	// untouched (Port.Offloads). Create refuses it on other systems.
	Offload bool
	// QueueLen is the length of the queue of frames the host sent and
	// ReadBatch has not read yet; 0 means DefaultQueueLen. The kernel drops
	// what does not fit (a TAP has no backpressure), and its own default of
	// 1000 frames overflows under one TCP stream's bursts.
	QueueLen int
	// Queues is the number of receive queues (IFF_MULTI_QUEUE, Linux):
	// the host spreads the frames it sends by flow over them, and each is
	// read by its own goroutine (ReadQueue; the Port is then a
	// platform.MultiQueuePort). 0 and 1 mean one queue. Create refuses
	// more on other systems.
	Queues int
}

// MaxQueues bounds Options.Queues: the kernel's MAX_TAP_QUEUES.
const MaxQueues = 256

// DefaultQueueLen is the TAP queue length Create sets unless told
// otherwise.
const DefaultQueueLen = 10000

// Port is a TAP interface as a platform.Port. Make one with Create.
type Port struct {
	// name is the interface name the kernel gave the TAP.
	name string
	// index is the interface index.
	index int
	// mac is the hardware address read back after Create set it.
	mac net.HardwareAddr
	// mtu is the L2 payload limit WriteBatch enforces, read back after
	// Create set it, changed by SetMTU.
	mtu atomic.Int64
	// link is the platform.LinkState reported by Link, set by SetLink.
	link atomic.Uint32

	// fd is the descriptor that owns the interface: /dev/net/tun on
	// Linux, /dev/tapN on OpenBSD, the /dev/tap clone on FreeBSD.
	fd int
	// wakeFD is what Close writes to wake a ReadBatch blocked in poll: an
	// eventfd on Linux (which poll watches too), the write end of a pipe
	// on the BSDs.
	wakeFD int
	// wakeReadFD is the read end of the BSDs' pipe, which poll watches;
	// unused on Linux.
	wakeReadFD int
	// closed is set first thing by Close; ReadBatch and WriteBatch check it.
	closed atomic.Bool
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	// closeErr is what the first Close returned.
	closeErr error
	// fdMu is held shared by every system call on fd or the wake-up and
	// exclusively by Close while it closes them, so a descriptor number is
	// never used after it may have been reused.
	fdMu sync.RWMutex

	// rxq are the receive queues; rxq[0] reads fd, the others the
	// descriptors of the further queues of a multi-queue TAP (Linux).
	// Each queue's slots and poll set are touched only by its reader.
	rxq []rxQueue
	// flows hashes a frame's addresses and ports to the queue WriteBatch
	// writes it on, with several queues: the kernel sends the host's
	// frames of a flow on the queue the flow's frames last came in by
	// (tun's flow steering), so writing every flow on one queue would
	// leave the others idle. Immutable.
	flows lb.Hasher
	// pollAll is the poll set of ReadBatch: every queue's descriptor,
	// then the wake-up. Only the ReadBatch goroutine touches it.
	pollAll []pollFD
	// nextQ is the queue ReadBatch looks at first, so that no queue
	// starves the others. Only the ReadBatch goroutine touches it.
	nextQ int
	// frameRoom is the largest frame a slot holds; a longer read was
	// truncated by the kernel and is dropped.
	frameRoom int

	// offload is Options.Offload: every read and write carries a
	// virtio_net_hdr. Immutable.
	offload bool
	// gro are the coalescers of WriteBatch on a TAP with offloads, one
	// per concurrent writer up to groSlots; a writer that finds all busy
	// writes its frames as they are.
	gro [groSlots]groSlot

	// counters are the port's counters.
	counters platform.PortCounters
}

// groSlots is how many WriteBatch calls at once coalesce TCP segments:
// one per pump queue of a trunk with a few receive queues.
const groSlots = 4

// groSlot is a coalescer and the lock that gives it to one writer.
type groSlot struct {
	// mu is held by the writer using g.
	mu sync.Mutex
	// g is the coalescer, its buffers allocated on first use.
	g frame.GRO
}

// rxQueue is one receive queue of a Port.
type rxQueue struct {
	// fd is the queue's descriptor (the Port's fd for queue 0), closed
	// with the Port.
	fd int
	// bufs are the receive slots, each Headroom + frameRoom + 1 bytes
	// long; a read fills bufs[i] for frame i.
	bufs [][]byte
	// pollFDs is ReadQueue's poll set {fd, wake-up}, kept here so that
	// reading does not allocate.
	pollFDs [2]pollFD
}

var (
	_ platform.Port           = (*Port)(nil)
	_ platform.LinkSetter     = (*Port)(nil)
	_ platform.MultiQueuePort = (*Port)(nil)
)

// Create makes a non-persistent TAP interface called name (at most 15
// bytes; empty lets the kernel pick "tapN") in the calling thread's network
// namespace, sets its MAC address and MTU and brings it up as opts say. The
// interface disappears when the Port is closed or the process exits.
func Create(name string, opts Options) (*Port, error) {
	return create(name, opts)
}

// Name implements platform.Port.
func (p *Port) Name() string { return p.name }

// Index returns the interface index.
func (p *Port) Index() int { return p.index }

// HardwareAddr implements platform.Port.
func (p *Port) HardwareAddr() net.HardwareAddr { return p.mac }

// MTU implements platform.Port.
func (p *Port) MTU() int { return int(p.mtu.Load()) }

// SetMTU changes the MTU that WriteBatch enforces, when a link watcher
// sees the host change the interface's MTU. It does not change the
// interface. Receive buffers keep the size Create gave them (at least
// 9216 bytes of payload): a longer frame is dropped and counted.
func (p *Port) SetMTU(mtu int) { p.mtu.Store(int64(mtu)) }

// SetInterfaceMTU changes the MTU of the TAP interface ifname as the host
// sees it (rtnetlink on Linux, SIOCSIFMTU on the BSDs), and on Linux its
// gso_max_segs to SuperFrameSegments of the new MTU. A Port on it goes
// on enforcing the MTU it had until told with SetMTU.
func SetInterfaceMTU(ifname string, mtu int) error { return setInterfaceMTU(ifname, mtu) }

// Headroom implements platform.Port.
func (p *Port) Headroom() int { return Headroom }

// BatchSize implements platform.Port.
func (p *Port) BatchSize() int { return len(p.rxq[0].bufs) }

// RxQueues implements platform.MultiQueuePort: Options.Queues, at least 1.
func (p *Port) RxQueues() int { return len(p.rxq) }

// Link implements platform.Port: the state last given to SetLink, or, until
// then, up if Create brought the interface up and down otherwise.
func (p *Port) Link() platform.LinkState { return platform.LinkState(p.link.Load()) }

// SetLink implements platform.LinkSetter: a link watcher reports the
// interface's state. It does not change the interface (see SetCarrier).
func (p *Port) SetLink(s platform.LinkState) { p.link.Store(uint32(s)) }

// Counters implements platform.Port.
func (p *Port) Counters() platform.Counters { return p.counters.Snapshot() }

// Offloads implements platform.Port: whether the TAP was created with
// Options.Offload (IFF_VNET_HDR).
func (p *Port) Offloads() bool { return p.offload }

// ReadBatch implements platform.Port: it blocks until at least one frame
// has arrived from the host, then returns as many as are ready, up to
// b.Len() and BatchSize, with their offloads (zero without
// Options.Offload). A frame whose virtio_net_hdr does not describe it is
// dropped (Counters.RxBadOffload). With b.Offs nil the caller takes plain
// frames only: partial checksums are finished in place and super-frames
// dropped. The frames are views into the Port's buffers, valid until the
// next ReadBatch or Close. One goroutine at a time may call it. It
// returns platform.ErrClosed after Close.
//
// On a TAP with several queues ReadBatch takes them in turn, the frames
// of one queue per call; a TAP is read either with ReadBatch or with
// ReadQueue, one goroutine per queue, never both.
func (p *Port) ReadBatch(b platform.Batch) (int, error) { return p.readQueue(b, -1) }

// ReadQueue implements platform.MultiQueuePort: ReadBatch for queue q
// only.
func (p *Port) ReadQueue(q int, b platform.Batch) (int, error) {
	if q < 0 || q >= len(p.rxq) {
		return 0, fmt.Errorf("tap %s: ReadQueue: queue %d of %d", p.name, q, len(p.rxq))
	}
	return p.readQueue(b, q)
}

// readQueue is ReadBatch (only < 0) or ReadQueue(only).
func (p *Port) readQueue(b platform.Batch, only int) (int, error) {
	if p.offload {
		return p.readOffload(b, only)
	}
	n, _, err := p.readFrom(b.Frames, only)
	if b.Offs != nil && n > 0 {
		clear(b.Offs[:n])
	}
	return n, err
}

// WriteBatch implements platform.Port: it hands each frame to the host with
// one write (on a TAP with several queues, on the queue the frame's flow
// hashes to) (with Options.Offload, preceded by its virtio_net_hdr, so the
// host stack takes a super-frame whole) and never blocks. With
// Options.Offload it first merges the batch's consecutive TCP segments of
// each flow into super-frames (frame.GRO), so the host stack takes them
// as one, as its own GRO would; frames of one flow keep their order. A frame shorter
// than an Ethernet header, one whose payload exceeds the MTU (one VLAN tag
// allowed; a super-frame by its segments), or one the kernel refuses is
// dropped and counted, and so is a frame whose offload is not plain on a
// TAP without Options.Offload. It returns the number of the batch's
// frames sent (a merged frame counts its segments; the port's counters
// count what was written); it keeps
// nothing, so the caller may reuse frames when it returns. Safe for
// concurrent use.
func (p *Port) WriteBatch(b platform.Batch) (int, error) {
	if !p.offload {
		return platform.WritePlain(b, &p.counters, p.writeBatch)
	}
	return p.writeOffload(b)
}

// SetCarrier turns the interface's carrier on or off (TUNSETCARRIER), as
// the host sees it: with the carrier off the host reports NO-CARRIER and
// does not send on it. It does not change Link.
func (p *Port) SetCarrier(up bool) error { return p.setCarrier(up) }

// txFD returns the descriptor to write f on: the queue its flow hashes
// to (see flows), or the only one.
func (p *Port) txFD(f []byte) int {
	if len(p.rxq) <= 1 {
		return p.fd
	}
	return p.rxq[p.flows.Hash(f)%uint32(len(p.rxq))].fd
}

// Close implements platform.Port: it wakes a blocked ReadBatch and closes
// the descriptor, which removes the interface. Safe to call from any
// goroutine, more than once.
func (p *Port) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

// maxNameLen is IFNAMSIZ - 1 (Linux include/uapi/linux/if.h; OpenBSD
// and FreeBSD sys/net/if.h).
const maxNameLen = 15

// check validates Create's arguments. It returns the name to use in
// errors until the kernel has named the interface, and the batch size.
func check(name string, opts Options) (label string, batch int, err error) {
	label = name
	if label == "" {
		label = "(kernel-named)"
	}
	if len(name) > maxNameLen {
		return "", 0, fmt.Errorf("tap %s: name longer than %d bytes", name, maxNameLen)
	}
	if opts.MTU < 0 {
		return "", 0, fmt.Errorf("tap %s: MTU %d is negative", label, opts.MTU)
	}
	if opts.MAC != nil && len(opts.MAC) != 6 {
		return "", 0, fmt.Errorf("tap %s: MAC %s is not 6 bytes", label, opts.MAC)
	}
	if opts.Offload && runtime.GOOS != "linux" {
		return "", 0, fmt.Errorf("tap %s: offloads (IFF_VNET_HDR): not on %s", label, runtime.GOOS)
	}
	switch {
	case opts.Queues < 0 || opts.Queues > MaxQueues:
		return "", 0, fmt.Errorf("tap %s: %d queues: want 1 to %d", label, opts.Queues, MaxQueues)
	case opts.Queues > 1 && runtime.GOOS != "linux":
		return "", 0, fmt.Errorf("tap %s: %d queues (IFF_MULTI_QUEUE): not on %s", label, opts.Queues, runtime.GOOS)
	}
	batch = opts.BatchSize
	if batch <= 0 {
		batch = platform.DefaultBatchSize
	}
	return label, batch, nil
}
