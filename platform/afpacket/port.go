package afpacket

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/platform"
)

// Port is an AF_PACKET port on one interface. It implements
// platform.Port, platform.MultiQueuePort, platform.LinkSetter and
// platform.Promiscuous. One goroutine at a time may call ReadBatch (or,
// with Workers, one per queue ReadQueue); every other method is safe for
// concurrent use, Close included. AF_PACKET is Linux's: elsewhere Open
// fails and no Port is ever made.
type Port struct {
	// portState is what every part of the port reads and counts into.
	portState
	// headroom is the PACKET_RESERVE in bytes, the guaranteed free space
	// in front of every frame ReadBatch returns.
	headroom int
	// rx is the receive side: the sockets with their rings, and how a
	// reader waits for frames (receive_linux.go); nothing off Linux.
	rx receiver
	// tx is the send side: the checks every frame passes, then the
	// transmitter Open chose (send_linux.go); nothing off Linux.
	tx sender
	// ctl is the control path: the memberships of the first socket, and
	// the lock statistics reads share with Close (socket_linux.go);
	// nothing off Linux.
	ctl control
	// teardown, when not nil, runs in Close between the moment every
	// user has left and the teardown itself; tests set it to hold a
	// Close there.
	teardown func()
}

// portState is a port's name, limits, state and counters: what the
// receive side, the send side and the control path read and count into,
// each through a pointer set at Open.
type portState struct {
	// Iface is the interface's name, MAC address, MTU, batch size and
	// link state, and the Port methods that report them. SetMTU changes
	// the MTU WriteBatch enforces; the receive ring keeps the slot size
	// of Open: after an increase, frames larger than the old MTU are
	// dropped on receive until the port is reopened.
	platform.Iface
	// offload is set when the socket has PACKET_VNET_HDR: every frame in
	// the ring and every frame sent carries a virtio_net_hdr. Immutable.
	offload bool
	// promisc is set while the socket holds a PACKET_MR_PROMISC
	// membership; written under ctl.mu.
	promisc atomic.Bool
	// allmulti is set while the socket holds a PACKET_MR_ALLMULTI
	// membership; written under ctl.mu.
	allmulti atomic.Bool
	// counters are the port's counters. RxDropped counts runt and
	// truncated frames refused by ReadBatch; RingDropped accumulates
	// tp_drops from PACKET_STATISTICS (the kernel resets it on every
	// read); Errors counts failed system calls.
	counters platform.PortCounters
	// log receives the rare warnings; immutable.
	log *slog.Logger
	// closed is set first thing by Close; every part checks it under
	// its mutex before it touches a socket or a ring.
	closed atomic.Bool
	// closeOnce runs Close's teardown once.
	closeOnce sync.Once
}

// Compile-time checks of the interfaces Port implements.
var (
	_ platform.Port           = (*Port)(nil)
	_ platform.MultiQueuePort = (*Port)(nil)
	_ platform.LinkSetter     = (*Port)(nil)
	_ platform.Promiscuous    = (*Port)(nil)
	_ platform.ReadyReader    = (*Port)(nil)
)

// Open opens an AF_PACKET port on the interface name. The MTU, MAC address
// and initial link state (up when the interface is up and running) come
// from the interface. Open must run in the network namespace of the
// interface; the socket stays there. Off Linux it fails with "afpacket
// NAME: not implemented on GOOS".
func Open(name string, opts Options) (*Port, error) { return openPort(name, opts) }

// Headroom implements platform.Port: the PACKET_RESERVE. A frame whose tag
// was restored still has at least this much free in front of it.
func (p *Port) Headroom() int { return p.headroom }

// ReadBatch implements platform.Port. It first gives the slots of the
// previous call back to the kernel, then returns views of up to
// min(b.Len(), BatchSize()) received frames, blocking in ppoll while the
// ring is empty, with their virtio_net_hdr in b.Offs (zero without
// Offload), offsets counted from the restored tag. The views point into
// the ring and are valid until the next ReadBatch or Close; a tag the
// kernel stripped is back in place. A frame whose virtio_net_hdr does not
// describe it is dropped (Counters.RxBadOffload). With b.Offs nil, a
// port opened with Offload returns plain frames only: it finishes partial
// checksums in place and drops super-frames (counted in RxDropped). Only
// one goroutine at a time may call ReadBatch.
func (p *Port) ReadBatch(b platform.Batch) (int, error) {
	frames, offs := readable(b)
	return p.rx.read(frames, offs, true)
}

// ReadReady implements platform.ReadyReader: ReadBatch that returns 0
// frames at once when no ring has one ready (it still pauses for
// Coalesce after a short batch, as ReadBatch does).
func (p *Port) ReadReady(b platform.Batch) (int, error) {
	frames, offs := readable(b)
	return p.rx.read(frames, offs, false)
}

// readable returns b's frames and offloads, cut to the same length.
func readable(b platform.Batch) ([][]byte, []platform.Offload) {
	if b.Offs == nil {
		return b.Frames, nil
	}
	return b.Frames[:min(len(b.Frames), len(b.Offs))], b.Offs
}

// Offloads implements platform.Port: whether the port was opened with
// Offload (PACKET_VNET_HDR).
func (p *Port) Offloads() bool { return p.offload }

// RxQueues returns the number of receive queues: Options.Workers sockets
// in a PACKET_FANOUT group, or 1.
func (p *Port) RxQueues() int { return p.rx.numQueues() }

// ReadQueue reads receive queue q only, one of RxQueues(), as ReadBatch
// reads every queue. Each queue may have its own reader goroutine; the
// frames of a flow (by the kernel's flow hash) all arrive on one queue,
// in order. A port is read either with ReadQueue, one goroutine per
// queue, or with ReadBatch, which takes every queue in turn, never both.
func (p *Port) ReadQueue(q int, b platform.Batch) (int, error) {
	if n := p.rx.numQueues(); q < 0 || q >= n {
		return 0, fmt.Errorf("afpacket %s: ReadQueue: queue %d of %d", p.Name(), q, n)
	}
	frames, offs := readable(b)
	return p.rx.readQueue(q, frames, offs)
}

// WriteBatch implements platform.Port. It sends b's frames with one
// sendmmsg (or, with Options.TXRing, one TX ring kick) per BatchSize()
// frames, each with its offload as the virtio_net_hdr on a port opened
// with Offload, so that the kernel segments super-frames and finishes
// partial checksums on the way out. It never blocks: a frame over the
// MTU (one 802.1Q or 802.1ad tag allowed; a super-frame by its segments),
// a frame shorter than an Ethernet header, a frame whose offload is not
// plain on a port without Offload, and every frame while the link is down
// or the kernel's queue (or the TX ring) is full (EAGAIN, ENOBUFS) is
// dropped and counted in TxDropped. The kernel (or the TX ring) has a
// copy of every sent frame when WriteBatch returns. Safe for concurrent
// use.
func (p *Port) WriteBatch(b platform.Batch) (int, error) {
	if b.Offs != nil && len(b.Offs) < len(b.Frames) {
		return 0, fmt.Errorf("afpacket %s: WriteBatch: %d offloads for %d frames", p.Name(), len(b.Offs), len(b.Frames))
	}
	return p.tx.write(b.Frames, b.Offs)
}

// TxRoom returns how many frames, up to max, WriteBatch would take now
// without dropping one for a full TX ring: the ring's free slots, with
// Options.TXRing (0 once the port is closed); -1 otherwise, whatever max
// (the kernel's socket queue tells only by refusing). A sender that keeps a backlog (a trunk) asks
// first, and keeps what the ring has no room for instead of seeing it
// dropped.
func (p *Port) TxRoom(max int) int { return p.tx.room(max) }

// TxFit returns how many of frames, from the first, WriteBatch would
// send now without dropping one for a full TX ring or a full send
// buffer, with Options.TXRing (0 once the port is closed); -1 otherwise.
// Unlike TxRoom it counts the frames too large for a ring slot (the
// super-frames of a port with Offload), which go with sendmmsg and
// which the kernel refuses once the socket's send buffer is full:
// SO_SNDBUF bounds the bytes in flight below the port like a byte
// queue limit, and a sender that asks first keeps the rest in its own
// backlog instead of seeing them dropped. The frames are only read.
func (p *Port) TxFit(frames [][]byte) int { return p.tx.fit(frames) }

// Counters implements platform.Port. It reads and accumulates the
// kernel's PACKET_STATISTICS drop count (the kernel resets it on read).
func (p *Port) Counters() platform.Counters {
	p.refreshStats()
	return p.counters.Snapshot()
}

// SetPromisc implements platform.Promiscuous with a PACKET_MR_PROMISC
// membership on the port's socket: the kernel counts it in the
// interface's promiscuity and drops it when the socket closes, even if
// the process is killed. Setting the state the port is already in does
// nothing. After Close, SetPromisc(false) succeeds (nothing is held).
func (p *Port) SetPromisc(on bool) error { return p.ctl.setPromisc(on) }

// Promisc implements platform.Promiscuous.
func (p *Port) Promisc() bool { return p.promisc.Load() }

// SetAllMulti takes (on) or releases (off) a PACKET_MR_ALLMULTI membership
// on the port's socket, so the interface passes every multicast frame.
// Like promiscuity it is dropped by the kernel when the socket closes.
func (p *Port) SetAllMulti(on bool) error { return p.ctl.setAllMulti(on) }

// AllMulti reports whether the port holds an all-multicast membership.
func (p *Port) AllMulti() bool { return p.allmulti.Load() }

// JoinMulticast adds a PACKET_MR_MULTICAST membership for the group mac to
// the port's socket (a trunk member joins 01:80:c2:00:00:02 for LACP).
// The membership lasts as long as the socket: Close drops it, and so does
// the kernel when the process dies.
func (p *Port) JoinMulticast(mac net.HardwareAddr) error { return p.ctl.join(mac) }

// Close implements platform.Port. It wakes a ReadBatch blocked in ppoll
// and waits for it to leave, waits for a WriteBatch in progress, gives the
// lent slots back, unmaps the ring and closes the socket, which drops
// every membership it held. Frames from the last ReadBatch are invalid
// once Close has begun. Safe to call from any goroutine, more than once:
// later calls wait for the first and return nil.
func (p *Port) Close() error { return p.close() }
