// Package bridge is swctl's learning bridge: it forwards Ethernet frames
// between member Ports as OpenBSD's bridge(4) does and, where bridge(4) is
// silent, as the Linux bridge does.
//
// # Forwarding rules
//
// Every frame a member receives goes through these steps, in this order;
// the first that applies decides its fate and exactly one counter of
// Stats counts it:
//
//  1. Shorter than an Ethernet header (14 bytes): dropped (DroppedRunt).
//  2. Destination 01:80:c2:00:00:00 to 01:80:c2:00:00:0f (IEEE 802.1D
//     reserved group addresses: STP, LACP, LLDP, pause): handed to the
//     member's link-local handler if it has one (SetLinkLocalHandler),
//     else dropped (DroppedLinkLocal either way), except the groups the
//     bridge forwards, which go on to step 3 like any multicast: BPDUs
//     (01:80:c2:00:00:00) while no spanning tree runs (SetSpanningTree),
//     as the Linux bridge with STP off does, so that an outer spanning
//     tree still sees loops through the bridge; and the groups of the
//     forward mask (SetForwardMask), which never includes pause or slow
//     protocols.
//  3. Source multicast, broadcast or all zeros: dropped, never learned
//     (DroppedBadSource).
//  4. Member flagged BlockNonIP and outer ethertype not IPv4, IPv6, ARP or
//     RARP (a tagged frame is not IP, as in bridge(4)): dropped
//     (DroppedBlockNonIP).
//  5. The source address is learned on the member, keyed by (VLAN ID,
//     MAC), if the member has Learning set (see the address table below)
//     and its gate, if it has one, learns (SetPortGate: the member's
//     spanning-tree port state).
//  6. Member whose gate does not forward (discarding or learning):
//     dropped (DroppedDiscarding).
//  7. Unicast destination found in the address table:
//     - learned on the ingress member itself: dropped (DroppedSamePort);
//     - else sent to that one member (Forwarded).
//  8. Anything else is flooded (Flooded) to every other member; unknown
//     unicast only to members with Discover set, broadcast and multicast
//     to all of them whatever their Discover flag, as bridge(4) does.
//
// Then, for each egress member, the copy is dropped and counted (once per
// egress member) when the member is flagged BlockNonIP and the frame is not
// IP (DroppedBlockNonIPOut), when its link is not up (DroppedLinkDown),
// when its gate does not forward (DroppedDiscardingOut), or when the
// frame's L2 payload, one VLAN tag allowed, exceeds its MTU
// (DroppedOversize). Nothing is ever sent back out of the ingress member.
// A member's gate is read once per frame it receives (one atomic load
// for a spanning-tree port) and once per batch of copies it is sent.
//
// The bridge never rewrites a frame: 802.1Q and 802.1ad tags cross intact.
// An untagged frame, and a priority-tagged one (VID 0), belong to VLAN 0.
//
// # Span ports
//
// A span port (AddSpan) receives one copy of every frame the bridge
// forwards (counted in Forwarded or Flooded, whatever then happens at each
// egress member), subject to its own link state and MTU. What a span port
// receives is read and discarded: it is never learned from nor forwarded.
//
// # Address table
//
// The table maps (VLAN ID, MAC) to a member. Dynamic entries are learned
// from traffic; a station that shows up on another member moves there at
// once. A dynamic entry not seen for the ageing timeout (default 240 s; 0
// means never) is treated as unknown by lookups at once, and deleted by a
// sweep that runs every second (every timeout/10 when that is shorter).
// Ages are measured on the bridge's injected clock.
//
// Static entries (AddStatic) never age and never move: frames from a
// static address arriving on another member are still forwarded, and the
// entry stays where it was put. Flush(false) keeps them.
//
// The table holds at most MaxAddr entries (default 8192), static entries
// included, as bridge(4) counts them. When it is full a new address is not
// learned (Exceeded counts it) and frames to it keep being flooded.
// Lowering MaxAddr below the number of entries trims the table as
// bridge(4) does: expired entries first, then the dynamic entries seen
// least recently, until it fits; static entries are never trimmed, so a
// table of statics alone may stay above the new limit (it then learns
// nothing until it drains).
//
// When a member is removed, its dynamic and static entries go with it.
// When a member's link goes down (LinkChanged), its dynamic entries are
// flushed; its static entries stay.
//
// # Concurrency and cost
//
// Each member has a reader goroutine that reads batches from its Port and
// calls Forward; readers of several members run at once. Forward takes no
// lock for writing per frame and allocates nothing for known traffic:
// the port table is an immutable snapshot behind an atomic pointer,
// replaced under a mutex when ports change; the address table is sharded,
// each shard a map behind a sync.RWMutex, and the last-seen time of an
// entry is refreshed with atomics under the read lock; the write lock of
// one shard is taken only for a new or moved address. Each reader owns a
// Worker that collects the frames for each egress member so that one
// WriteBatch sends them, and counts in plain integers summed into the
// bridge's atomic counters once per batch.
//
// # Frames
//
// Frames passed to Forward are views owned by the ingress port, valid
// until its next ReadBatch; the bridge hands them to the egress ports'
// WriteBatch, which copies what it keeps, before Forward returns, and
// keeps no reference to them afterwards. A link-local handler gets the
// same view and must copy what it keeps.
package bridge
