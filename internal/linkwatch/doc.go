// Package linkwatch follows the state of the network interfaces of one
// network namespace from kernel events (rtnetlink RTM_NEWLINK and
// RTM_DELLINK on Linux), never by polling.
//
// A Watcher subscribes first and lists the existing interfaces second, so
// that no change is lost between the two: when New returns, Snapshot and
// Lookup know every interface, and Events delivers every change the kernel
// reported from then on (plus, possibly, changes the initial listing
// already showed). An Event carries the whole state of one interface, not
// a transition: a consumer applies it, and applying the same state twice
// does nothing. A deleted interface is reported as platform.LinkAbsent.
//
// The Watcher lives in the network namespace of the thread that called
// New: the daemon's, or a test's namespace entered with netnstest's NS.Do.
// It keeps a handle on that namespace, so it re-subscribes there if the
// kernel ever drops its subscription (a full socket buffer: ENOBUFS) and
// then reports what changed meanwhile.
//
// The daemon uses it to attach configured members when their interface
// appears, to mark them absent when it goes, and to give each Port its
// link state (platform.LinkSetter).
//
// Other systems get a stub whose New returns a "not implemented" error; the
// BSDs will read RTM_IFINFO from a routing socket.
package linkwatch
