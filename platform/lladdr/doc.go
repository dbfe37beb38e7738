// Package lladdr changes interfaces' hardware addresses (MACs) through a
// crash journal, so that whatever swctl changed is put back after a clean
// stop, a panic or SIGKILL.
//
// An interface's lladdr is not socket-owned: a change survives a crash.
// Trunks change their members' addresses (the lladdr policy of
// trunk(4)/lagg(4): the trunk takes its first port's address and writes it
// to every member, and each member gets its own back when it leaves), so
// every change goes through a Journal, a file in the state directory
// (STATE_DIR/lladdr.json, see JournalFile):
//
//   - SetLLAddr writes the entry (interface, ifindex, original address,
//     address set, owner, time) durably before it changes the address. A
//     second change of the same interface keeps the first original. If the
//     change fails the entry is taken back.
//   - RestoreLLAddr puts the original back and then drops the entry, but
//     only if the interface still carries the address swctl set and has
//     the journalled ifindex: an address someone changed since, or another
//     device of the same name, is left alone (the entry is dropped and a
//     line logged).
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
// `swctl recover` both hold its lock (platform/statedir) while they run.
//
// Changing an address is implemented with rtnetlink on Linux (in the
// network namespace of the calling thread) and with SIOCSIFLLADDR on
// OpenBSD and FreeBSD (platform/ifreq), journalled the same way on all
// three (link_*.go); elsewhere it returns "not implemented", while the
// journal itself works on every OS.
package lladdr
