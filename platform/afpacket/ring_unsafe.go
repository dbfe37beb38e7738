//go:build linux

package afpacket

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file holds every pointer conversion of the package: the RX and TX
// ring slot headers the kernel shares with us, and the system calls that
// take pointers (sendmmsg, ppoll, the TX ring's kick).

// hdr returns the tpacket2_hdr at the start of slot i.
func (r *ring) hdr(i int) *unix.Tpacket2Hdr {
	return (*unix.Tpacket2Hdr)(unsafe.Pointer(&r.mem[r.offset(i)]))
}

// status reads slot i's tp_status. The load orders the reads of the slot
// after it: the kernel writes the frame, then (after a write barrier) the
// status.
func (r *ring) status(i int) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.mem[r.offset(i)])))
}

// give hands slot i back to the kernel (TP_STATUS_KERNEL). The store
// orders every earlier access to the slot before it.
func (r *ring) give(i int) {
	storeRelease((*uint32)(unsafe.Pointer(&r.mem[r.offset(i)])), unix.TP_STATUS_KERNEL)
}

// storeRelease stores v at p after every earlier load and store of this
// goroutine: a release store, all a ring's status word needs (the
// kernel's side reads it with a read barrier, as C programs store it
// with __atomic_store_n(..., __ATOMIC_RELEASE)). On amd64 that is a
// plain store: the hardware keeps stores in order and never moves one
// before an earlier load, and Go's compiler keeps every store in program
// order. atomic.StoreUint32 there is an XCHG, a full barrier that stalls
// until the status word's cache line comes over from the core that
// wrote it last (the kernel's, in its softirq on the sender's core). It
// was 10% of the forwarder's core at 1 M frames/s (perf annotate of
// readQueue). Elsewhere atomic.StoreUint32 is the release store (STLR on
// arm64).
func storeRelease(p *uint32, v uint32) {
	if runtime.GOARCH == "amd64" {
		*p = v
		return
	}
	atomic.StoreUint32(p, v)
}

// sendmmsg sends msgs in one system call and returns how many were sent.
// It is not a raw system call: on veth the sender's context runs the
// receiver's softirq work, which can take long enough that the scheduler
// should be free to hand this P to another goroutine.
func sendmmsg(fd int, msgs []unix.Mmsghdr, flags int) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd),
		uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), uintptr(flags), 0, 0)
	return int(n), errno
}

// ppoll blocks until one of fds is ready (no timeout, no signal mask).
// It goes through Syscall6, never RawSyscall6: it blocks.
func ppoll(fds []unix.PollFd) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_PPOLL,
		uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), 0, 0, 0, 0)
	return int(n), errno
}

// status reads TX slot i's tp_status. The load orders the reads and
// writes of the slot after it: the kernel is done with a slot it has
// marked TP_STATUS_AVAILABLE.
func (t *txRing) status(i int) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&t.mem[t.offset(i)])))
}

// setLen sets TX slot i's tp_len, the bytes of data behind its header.
func (t *txRing) setLen(i, n int) {
	(*unix.Tpacket2Hdr)(unsafe.Pointer(&t.mem[t.offset(i)])).Len = uint32(n)
}

// dataLen reads TX slot i's tp_len.
func (t *txRing) dataLen(i int) int {
	return int((*unix.Tpacket2Hdr)(unsafe.Pointer(&t.mem[t.offset(i)])).Len)
}

// release takes TX slot i back from the kernel (TP_STATUS_AVAILABLE): only
// for a slot it left unsent.
func (t *txRing) release(i int) {
	storeRelease((*uint32)(unsafe.Pointer(&t.mem[t.offset(i)])), unix.TP_STATUS_AVAILABLE)
}

// request hands TX slot i to the kernel (TP_STATUS_SEND_REQUEST). The
// store orders the writes of the frame and its length before it.
func (t *txRing) request(i int) {
	storeRelease((*uint32)(unsafe.Pointer(&t.mem[t.offset(i)])), unix.TP_STATUS_SEND_REQUEST)
}

// kick asks the kernel to send every slot marked TP_STATUS_SEND_REQUEST:
// send(2) with no data, MSG_DONTWAIT. It is not a raw system call, like
// sendmmsg.
func kick(fd int) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	return int(n), errno
}

// outq returns the bytes fd's send buffer holds (SIOCOUTQ on a packet
// socket: sk_wmem_alloc, every skb sent from it and not yet freed, as
// the kernel counts its memory), or -1 if the kernel will not say. A raw
// system call: it never blocks.
func outq(fd int) int {
	var n int32
	_, _, errno := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCOUTQ, uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return -1
	}
	return int(n)
}
