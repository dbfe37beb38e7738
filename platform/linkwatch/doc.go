// Package linkwatch follows the state of the network interfaces of one
// network namespace from kernel events (rtnetlink RTM_NEWLINK and
// RTM_DELLINK on Linux; the routing socket's RTM_IFINFO and RTM_IFANNOUNCE
// on OpenBSD and FreeBSD), never by polling.
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
// The messages are decoded here (decodeLink), every length checked before
// it is read, and fuzzed (FuzzDecodeLink): the netlink package's decoder
// trusts its input and panics on some malformed messages. A message that
// does not decode is skipped.
//
// The daemon uses it to attach configured members when their interface
// appears, to mark them absent when it goes, and to give each Port its
// link state (platform.LinkSetter).
//
// # OpenBSD and FreeBSD
//
// The Watcher reads an AF_ROUTE socket. RTM_IFINFO carries the interface's
// flags and its if_data (link state, MTU) but only its index; RTM_IFANNOUNCE
// says that an interface arrived or departed, with its name. For each, the
// Watcher reads that interface's entry of sysctl NET_RT_IFLIST (through
// golang.org/x/net/route) for its name and hardware address. A link is up
// when the interface is up, running, and its ifi_link_state is up: on
// OpenBSD by LINK_STATE_IS_UP (UP, HALF_DUPLEX, FULL_DUPLEX, or UNKNOWN,
// which drivers without link detection report); on FreeBSD UP or UNKNOWN.
// When the kernel dropped messages (OpenBSD's RTM_DESYNC, FreeBSD's
// ENOBUFS with SO_RERROR) the Watcher lists every interface again and
// reports what changed. A renamed interface (FreeBSD) departs under its old
// name and arrives under the new one. The decoding (rtmsg.go) is portable
// and tested on Linux with messages laid out as each BSD lays them out.
//
// Other systems get a stub whose New returns a "not implemented" error.
package linkwatch
