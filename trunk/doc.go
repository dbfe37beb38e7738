// Package trunk is swctl's link aggregation: a Trunk bundles member
// platform.Ports into one, and is itself a platform.Port, so it can be
// given to the host as a TAP or be a bridge member. Nothing here knows
// about bridges.
//
// # Protocols
//
// A Protocol decides, for each member, whether it is collecting (frames
// it receives are passed up) and distributing (frames may leave by it),
// and says how frames are spread over the distributing members
// (Distribution). The Trunk does the per-frame work from those states,
// so a protocol never sees data frames, only slow-protocol frames. The
// built-in protocols (NewProtocol):
//
//	proto        TX                                          RX accepted
//	failover     primary (highest priority, first added)     active port only
//	             if up, else the next up port; returns to
//	             the primary when it is up again
//	roundrobin   next up port per frame                      any up port
//	loadbalance  lb flow hash over up ports (stable)         any up port
//	broadcast    every up port                               any up port
//	none         nothing                                     nothing
//
// LACP (package lacp) implements Protocol: it receives LACPDUs and marker
// frames through Input, sends its own through Control.Send out of one
// given member, runs its timers in Tick, and marks members collecting and
// distributing through Control.SetState; frames are then spread by the lb
// hash over the distributing members. Install it with SetProtocol.
//
// Every call into a Protocol is made under the trunk's lock, one at a
// time: on AddPort, RemovePort, LinkChanged (the daemon calls it when a
// member's carrier changes: failover moves traffic before it returns),
// Tick (Options.TickInterval, on the trunk clock) and for each
// slow-protocol frame a member receives.
//
// # Link policy
//
// Options.Policy (SetPolicy to change it) holds the knobs of Linux
// bonding: UpDelay and DownDelay (a member's link change counts only once
// it has held that long, so a link that flaps faster never flaps the
// trunk; Tick applies them), MinLinks (the trunk is Active, and its TAP's
// carrier up, only while that many members distribute) and NoPreempt
// (failover stays on the member it uses while that link is up, instead
// of returning to the primary). SetPortPriority changes a member's
// failover priority in place.
//
// # Data path and frame ownership
//
// Each member has a reader goroutine. It reads a batch from its member
// port, hands slow-protocol frames (01:80:c2:00:00:02, ethertype 0x8809)
// to the protocol, drops data frames if the member is not collecting
// (counted: Stats.RxRefused), and offers the rest through a channel to
// whichever consumer takes them first: ReadBatch, or ReadQueue of the
// member's receive queue (a Trunk is a platform.MultiQueuePort: queue q
// carries the members whose ID mod Options.RxQueues is q, so a bridge
// forwards each member on a goroutine of its own). The consumer returns
// views into the member port's buffers, not copies, and then holds the
// port: at its next call it reads the member itself without waiting
// (platform.ReadyReader), slow-protocol frames sorted out inline, so
// that under load frames reach it with no channel and no goroutine
// switch. It gives the port back to the member's reader, which waits for
// frames, when nothing is ready, another member's batch waits for it, or
// the member leaves. Either way the views stay valid until the
// consumer's next call or Close, as the Port contract says. Nothing
// allocates per batch.
//
// WriteBatch asks, per frame, which member (or members) it leaves by,
// groups the frames per member and calls each member's WriteBatch once
// per batch; the members copy what they keep. It is safe for concurrent
// use and allocation-free: scratch slots are preallocated, each with its
// own lock. A member whose port says what its TX ring takes now (TxRoom)
// has a transmit backlog (package txq, bounded by Options.TxQueueBytes
// and TxQueueDelay, and kept short by CoDel's law at TxQueueTarget): the
// frames its ring (or, for super-frames with TxQueueSuperFrames, its
// send buffer: TxFit) has no room for wait there, as in a qdisc, and a flusher goroutine offers
// them to the ring as it drains (backlog.go).
//
// # Offloads
//
// A Trunk is a platform.Port: frames may carry checksum and
// segmentation metadata (platform.Offload, the virtio_net_hdr fields), as
// frames from hosts with the default veth offloads do (partial checksums,
// GSO super-frames). A member that carries offloads (an AF_PACKET port
// with PACKET_VNET_HDR) is read with ReadBatch, and its offloads
// stay with the batch; ReadBatch hands them out with the frames,
// as views. WriteBatch spreads frames as WriteBatch does and gives
// each its offload at the chosen member's WriteBatch; for a member
// without offloads the trunk finishes checksums and cuts super-frames
// into segments in software first (platform.SoftwareFinisher, the code
// the bridge uses too). Plain ReadBatch, for a consumer without offloads
// (the daemon's TAP pump), does the same for received frames, into an
// arena of the trunk's, so that it never returns a frame the far end
// would drop for a bad checksum. Slow-protocol frames are sent plain. A
// frame whose offload the software cannot do is dropped and counted
// (Stats.OffloadDropped).
//
// # Ownership of ports
//
// AddPort takes ownership of the port: the trunk reads it and closes it.
// RemovePort closes it at once, unless the consumer still holds frames
// read from it (returned by the last ReadBatch); then it is closed at the
// consumer's next ReadBatch, or at the trunk's Close. Close closes every
// member. A port given to AddPort must not be used by anyone else, but
// for the link watcher (platform.LinkSetter) and the daemon's
// LinkChanged calls.
package trunk
