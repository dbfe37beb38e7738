// Package bpf is the platform.Port backend of OpenBSD and FreeBSD: one
// bpf(4) descriptor per interface, from /dev/bpf, that reads and sends
// whole Ethernet frames.
//
// # Receiving
//
// Open asks for a large buffer (BIOCSBLEN, Options.BufferSize) and learns
// what the kernel granted (BIOCGBLEN, BufferSize); it sets immediate mode
// (BIOCIMMEDIATE), so a read returns as soon as a frame is there, and
// leaves out the frames the interface sends, the port's own included
// (OpenBSD BIOCSDIRFILT with BPF_DIRECTION_OUT, FreeBSD BIOCSDIRECTION
// with BPF_D_IN). One read(2) returns a buffer of records, each a
// struct bpf_hdr, padding, the frame, and padding to the next
// BPF_WORDALIGN boundary; ReadBatch hands them out as views into that
// buffer, without copies, up to len(frames) at a time, and reads again
// only when every record has been taken. The frames stay valid until the
// next ReadBatch or Close. ReadBatch blocks in poll(2) on the descriptor
// and on a pipe that Close writes to.
//
// The record parser (parse.go) is portable and takes the header geometry
// as a value, so it is tested on any OS with buffers laid out as OpenBSD
// and FreeBSD lay them out; the BSD build takes the running system's
// geometry from x/sys/unix's BpfHdr.
//
// # Sending
//
// bpf has no batch write: WriteBatch makes one write(2) per frame. The
// descriptor has BIOCSHDRCMPLT set, so the kernel sends each frame as
// given, with the caller's source MAC. The kernel checks the frame less
// its 14-byte Ethernet header against the MTU with no allowance for a tag,
// so on the BSDs a tagged frame whose payload is the full MTU is dropped
// (the platform contract allows one tag; see WriteBatch).
//
// # Promiscuous mode
//
// BIOCPROMISC has no inverse: the kernel leaves promiscuous mode when the
// descriptor that asked closes, even if the process is killed. A port
// holds its membership (Options.Promisc, SetPromisc) on a second
// descriptor that captures nothing, and SetPromisc(false) closes it.
//
// # Keeping the stack off (OpenBSD)
//
// bpf copies frames: the interface's own stack still gets them. On OpenBSD
// DropFromStack opens one more descriptor on the interface in filter-drop
// mode (BIOCSFILDROP, BPF_FILDROP_DROP) with no read filter, so it matches
// every incoming frame and captures none; the kernel frees a frame that
// any descriptor wants dropped after all of them have seen it, before
// ether_input, so the port still reads it and the stack, vlan(4), carp(4)
// and pf do not. The drop lasts as long as the descriptor: StackDrop.Close,
// or the process ending. FreeBSD's bpf has no such mode; DropFromStack
// fails there, and the daemon does not reach for the firewall (ipfw
// layer-2 rules, pf ether rules) instead.
//
// # Link state
//
// Open takes the link state from the interface flags (up and running);
// the daemon's watcher, or gen.WaitLinkUp, keeps it current with SetLink.
//
// # Testing
//
// The Port contract suite (platformtest) cannot run on the Linux machines
// that build swctl: it needs a BSD host with two interfaces cabled to each
// other. There, as root:
//
//	SWCTL_BPF_PAIR=em1,em2 go test -run TestIntegration ./platform/bpf/
//
// Expect its MTU subtest to report the tagged full-MTU frame as dropped,
// for the reason above. On Linux the tests cover the record parser with
// buffers laid out as each kernel lays them out (and a fuzz target), and
// the I/O half of a Port (ReadBatch, WriteBatch, Close, the counters: all
// but the ioctls) over a SOCK_SEQPACKET socketpair that carries one bpf
// buffer per message inwards and one frame per message outwards. Open
// returns a "not implemented" error on systems other than the two BSDs.
//
// # Files
//
// port.go is the API, the same on every system; device.go reads and sends
// (on the BSDs, and on Linux for the tests); port_bsd.go opens the
// descriptor, takes promiscuous mode and reads the statistics, with
// ioctls; stackdrop.go is DropFromStack, with its OpenBSD half in
// stackdrop_openbsd.go.
package bpf
