// Package afpacket is the Linux platform.Port backend: one AF_PACKET
// SOCK_RAW socket per interface, bound to its ifindex for every protocol
// (ETH_P_ALL), with
//
//   - an mmap TPACKET_V2 receive ring: ReadBatch returns views of ring
//     slots, no copy and, while frames are waiting, no system call;
//   - PACKET_RESERVE headroom in front of every slot, where the 802.1Q or
//     802.1ad tag the kernel stripped (TP_STATUS_VLAN_VALID) is put back in
//     place: the 12 MAC bytes move left by 4 and the tag is written between
//     them and the ethertype, so ReadBatch returns the frame as it was on
//     the wire without copying the payload;
//   - PACKET_IGNORE_OUTGOING, so the port never reads back what it sent;
//   - batched transmission with one sendmmsg(2) per WriteBatch
//     (MSG_DONTWAIT: a full queue drops and counts, it never blocks), or,
//     with Options.TXRing, through an mmap TPACKET_V2 TX ring with one
//     send(2) kick per batch (see TX ring below);
//   - blocking only in ppoll(2) on the socket and an eventfd that Close
//     signals, entered through unix.Syscall6 so the Go scheduler can run
//     other goroutines meanwhile.
//
// # Ownership and lifetime
//
// A frame ReadBatch returns is a view into the ring. It is valid until the
// next ReadBatch or Close on that port: the next ReadBatch hands its slot
// back to the kernel, and Close unmaps the ring, so touching a frame after
// Close is a memory fault, not just stale data. WriteBatch copies every
// frame into the kernel (or its TX ring) before it returns.
//
// # Receive filter and crash safety
//
// SetPromisc, SetAllMulti and JoinMulticast use PACKET_ADD_MEMBERSHIP on
// the port's own socket (PACKET_MR_PROMISC, PACKET_MR_ALLMULTI,
// PACKET_MR_MULTICAST). The kernel counts such memberships per socket and
// drops them when the socket goes away, also when the process is killed
// with SIGKILL. The package never sets IFF_PROMISC, which would survive a
// crash. The descriptors are opened close-on-exec so a child process never
// keeps them alive.
//
// # Offloads
//
// With Options.Offload the socket has PACKET_VNET_HDR (set before the ring,
// which the kernel requires) and the Port implements platform.Port:
// the kernel writes a virtio_net_hdr right in front of each frame in its
// slot, ReadBatch returns it (offsets moved by a restored tag), and
// WriteBatch passes one in front of each frame as the first iovec
// of its sendmmsg message, so GSO super-frames and partial checksums cross
// userspace untouched. The ring keeps slots sized for the MTU, and
// PACKET_COPY_THRESH is on: a frame too large for a slot (a super-frame)
// gets only its head in the slot, marked TP_STATUS_COPY, and the kernel
// queues the whole frame on the socket's receive queue (in ring order,
// bounded by Options.CopyQueue); ReadBatch reads it with read(2) into one
// of Options.CopyBuffers preallocated 64 KiB buffers, where it stays valid
// until the next ReadBatch like a slot. Options.OffloadSlots gives instead
// a ring of 64 KiB slots (about 64.1 KiB of kernel memory each). Plain
// ReadBatch on such a port finishes partial checksums in place and drops
// super-frames; plain WriteBatch sends a zero header.
//
// # TX ring
//
// With Options.TXRing the port sends from a TPACKET_V2 TX ring that
// belongs to a second socket, bound to the interface for no protocol so
// that it receives nothing (the receive sockets ignore outgoing frames
// whoever sent them), and which has PACKET_VNET_HDR whether the port has
// Offload or not. WriteBatch copies each frame into the next slot the
// kernel has given back (TP_STATUS_AVAILABLE, maybe with timestamp bits),
// behind a virtio_net_hdr: the frame's Offload, or none, with hdr_len
// asking the kernel to copy the whole frame into the socket buffer (on
// veth that costs less than leaving it in the ring as page fragments,
// which every receiver then pulls its headers out of). It marks the slot
// TP_STATUS_SEND_REQUEST and, once per batch, kicks the kernel with
// send(fd, NULL, 0, MSG_DONTWAIT), which sends every requested slot in
// ring order; a slot stays TP_STATUS_SENDING until the kernel frees the
// frame. The kernel stops at the first slot it cannot send: it leaves it
// TP_STATUS_SEND_REQUEST (send buffer full, transmit dropped, link down)
// or marks it TP_STATUS_WRONG_FORMAT (a virtio_net_hdr it refuses, such as
// an unknown GSO type; WriteBatch's own checks make that rare). Such slots
// are always the last ones filled, so WriteBatch takes them back and moves
// its position back to the kernel's: they are dropped and counted, a
// refusal also in Errors and logged once per port, and nothing waits in
// the ring when WriteBatch returns. When the next slot is still in flight,
// WriteBatch kicks what it has filled and looks once more; if the ring is
// still full, the frame is dropped and counted (it never waits). Slots are
// sized for the MTU: a larger frame (a super-frame with Offload) goes with
// sendmmsg on the receive socket, after a kick for the frames before it,
// so the order holds. Options.QdiscBypass sets PACKET_QDISC_BYPASS on the
// sending sockets.
//
// # Fanout
//
// With Options.Workers N > 1 the port opens N receive sockets, each with
// its own ring, in one PACKET_FANOUT group in hash mode: the kernel picks
// the socket by flow hash, so a flow stays in order on one socket.
// ReadQueue(q) reads socket q only, for one reader goroutine per socket;
// ReadBatch takes every socket in turn. Sending and memberships use the
// first socket.
//
// # Limits
//
// The ring slot is sized for the interface MTU at Open, plus two tags (or
// for a 64 KiB super-frame with OffloadSlots). Larger frames (GSO
// super-frames without Offload, frames after an MTU increase) arrive
// truncated and are dropped, counted in RxDropped and logged once per port;
// with Offload they are copied instead, up to 64 KiB (BIG TCP frames are
// dropped) and while the copy queue has room.
//
// # Files
//
// port.go is the API, the same on every system; options.go the Options.
// On Linux the work is split by direction:
//
//   - socket_linux.go opens the sockets (options, rings, fanout group,
//     the transmitter), holds the memberships, reads the statistics and
//     closes it all;
//   - receive_linux.go is the receive side, a frame's whole way in: the
//     queues, collecting the ring's slots (tags restored, offload headers
//     checked), coalescing, busy polling and waiting; rxring_linux.go the
//     receive ring's geometry and setup;
//   - send_linux.go is the send side, a frame's whole way out: the checks
//     every frame passes, and the transmitter interface with its two
//     implementations, chosen at Open: the TX ring (txRing.send; its
//     geometry and setup in txring_linux.go) and sendmmsg;
//   - tpacket_linux.go is the slot layout and virtio_net_hdr both rings
//     share, ring_unsafe.go every pointer conversion.
//
// Other systems get a stub whose Open returns a "not implemented" error.
package afpacket
