// Package promisc owns every change swctl makes to an interface's receive
// filter (and, with trunks, to its hardware address).
//
// # The crash-safety rule
//
// Whatever swctl changes on an interface must go away when swctl goes
// away, however it goes: a clean stop, a panic, or SIGKILL. So receive
// filter changes are only ever socket-owned memberships: on Linux
// PACKET_ADD_MEMBERSHIP on the port's own AF_PACKET socket
// (PACKET_MR_PROMISC, PACKET_MR_ALLMULTI, PACKET_MR_MULTICAST), on the
// BSDs BIOCPROMISC on the port's bpf descriptor. The kernel counts them
// per socket and drops them when the descriptor closes, including when
// the process is killed. swctl never sets IFF_PROMISC (netlink, ioctl or
// `ip link set promisc on`): that flag survives a crash and would leave
// the interface promiscuous for good.
//
// The Registry counts the memberships swctl holds per interface, so that
// several users of one port share one membership and `port show` can say
// whether an interface is promiscuous because of swctl.
//
// # Hardware addresses
//
// An interface's MAC address (lladdr) is not socket-owned: a change
// survives a crash. Trunks change their members' addresses (the lladdr
// policy of trunk(4)/lagg(4): the trunk takes its first port's address and
// writes it to every member, and each member gets its own back when it
// leaves), so every change goes through a Journal, a file in the state
// directory (STATE_DIR/lladdr.json, see JournalFile):
//
//   - SetLLAddr writes the entry (interface, ifindex, original address,
//     address set, owner, time) durably before it changes the address. A
//     second change of the same interface keeps the first original. If the
//     change fails the entry is taken back.
//   - RestoreLLAddr puts the original back and then drops the entry, but
//     only if the interface still carries the address swctl set. The
//     interface is found by the journalled ifindex, whatever its name is
//     now: a member renamed since gets its address back, and another
//     device that took the journalled name is left alone. An address
//     someone changed since is left alone too (the entry is dropped and a
//     line logged). Entries are one per ifindex.
//   - RecoverAll does that for every entry: the daemon calls it when it
//     starts, and `swctl recover` (Recover) when no daemon runs. An entry
//     whose interface does not exist is kept, so a later recovery can
//     still put its address back when the interface returns, and reported
//     as absent; Forget drops it for good.
//
// The journal file is written atomically (a temporary file in the same
// directory, fsync, rename, fsync of the directory; mode 0600), so a crash
// leaves the old or the new journal, never a mix. A journal that cannot
// be decoded is an error naming the file: swctl will not start over it.
// One process at a time owns the state directory: the daemon and
// `swctl recover` both hold its lock (LockStateDir) while they run.
//
// Changing an address is implemented with rtnetlink on Linux (in the
// network namespace of the calling thread) and with SIOCSIFLLADDR on
// OpenBSD and FreeBSD (internal/ifreq), journalled the same way on all
// three; elsewhere it returns "not implemented", while the journal itself
// works on every OS.
package promisc
