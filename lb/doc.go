// Package lb holds flow hashing and member selection for swctl's trunks
// (loadbalance and LACP distribution) and the backend selection of the L2
// server load balancer (direct server return). Everything here is pure,
// does no I/O, and allocates nothing per frame: a Hasher and a Selector
// are small values, safe for concurrent use once built; nothing keeps a
// reference to the frames it reads. The health of backends is in the
// subpackage health.
//
// # Hashing
//
// A Hasher computes a keyed 32-bit hash of a frame's flow: source and
// destination MAC and the outer VLAN ID (L2), IPv4 or IPv6 source and
// destination addresses and the IPv6 flow label (L3), and the transport
// protocol with its source and destination ports for TCP, UDP, UDP-Lite,
// SCTP and DCCP (L4). HashFields selects which of the three are used. The
// key comes from a per-trunk seed, so two trunks (or two daemons) do not
// send the same flows down the same-numbered ports, and a remote host
// cannot predict the mapping without the seed. The mix is an xxHash64-style
// multiply-rotate over 64-bit words with a keyed initial state and a keyed
// finaliser: fast and well spread, not a cryptographic MAC.
//
// Headers are found by frame.FlowOf, on the one header walk of swctl, which
// checks bounds before every read: any input, truncated or absurd, gives
// a hash and never a panic. Up to two VLAN tags (802.1Q 0x8100, 802.1ad
// 0x88a8, the old QinQ 0x9100) are skipped; the outer tag's VLAN ID is
// hashed. IPv4 fragments (MF set or a non-zero offset) and IPv6 packets
// with a fragment header hash on L2 and L3 only, so all fragments of a
// datagram (only the first carries the ports) leave by the same port.
// IPv6 hop-by-hop, routing, destination options and AH headers are walked
// (at most 8) to find the transport header. A frame that is neither IPv4
// nor IPv6, or whose IPv4 header length is under 20 bytes or runs past
// the frame, hashes on L2 only; with L2 off such frames all hash alike.
//
// # Selection
//
// A Selector picks one member from a Set (a bitmask of member IDs 0 to 63)
// by rendezvous hashing (highest random weight): each (flow hash, member
// ID) pair gets a pseudo-random weight and the member with the highest
// weight among those in the set wins. Selection is therefore stable: when
// a member leaves the set only the flows that were on it move (each to its
// second choice), and when it comes back exactly those flows return. The
// cost is one 64-bit mix per member in the set.
//
// # Load balancing
//
// FlowKeyOf reads a frame's flow key through the same header walk as the
// Hasher: protocol, addresses and ports for TCP, UDP, UDP-Lite, SCTP and
// DCCP; the addresses alone for other IP packets and for every fragment,
// the first one included, so that a datagram never reaches two backends.
// MACs, VLAN and the IPv6 flow label are left out: a host may change a
// connection's flow label (Linux does on a retransmission timeout), and
// the flow must stay where it is. FlowKey.Hash uses fixed seeds, so
// every host computes the same hash for a flow.
//
// A Maglev table (Eisenbud et al., NSDI 2016) maps the hash onto the
// serving backends: a prime number of entries (DefaultTableSize unless
// set), each naming a backend. Each backend has a preference order over
// the entries (an offset and a skip from two fixed-seed hashes of its
// address); backends take turns claiming their most preferred free entry
// until the table is full, and a heavier backend takes more turns, in
// proportion to its weight. Backends take turns in address order, never
// in the order they were given, so the table depends only on the set of
// addresses and weights: several hosts behind one ECMP router build the
// same table and send a flow to the same backend. The tests hold the
// table to these bounds at the default size: with equal weights the
// busiest backend holds at most 1% more entries than the idlest, removing
// one of N backends (3 to 10) changes at most 1/N + 1% of the entries,
// adding one at most 1/(N+1) + 1%, and each backend's share is its
// weight's share within 1%.
//
// A ConnTable remembers each flow's backend: a fixed number of flows,
// forgetting the least recently used when full and any flow idle longer
// than its idle time (DefaultConnIdle unless set). Its memory is
// allocated once; it is split into up to 64 shards, each with its own
// lock and its own LRU order, once it holds enough flows for the split
// to pay.
//
// A Balancer picks the backend of each flow of one service by its Method:
//
//   - maglev (the default): the Maglev table; TCP flows also go through
//     the connection table, so that an established connection keeps its
//     backend when backends are added, drained or reweighted. Other
//     flows follow the table.
//   - hash: the flow hash modulo the number of serving backends (in
//     address order). No connection table: a change of the set moves
//     most flows.
//   - roundrobin: each new flow takes the next serving backend and keeps
//     it through the connection table; every flow is tracked.
//
// A backend is Serving (new and established flows), Draining (only the
// flows the connection table already has on it) or Down (nothing: a
// flow tracked on it moves, as with one removed). With no backend for a
// flow, Pick answers -1 and the caller drops and counts the frame. The
// backend set is replaced whole (SetBackends) and read through an atomic
// pointer, so Pick takes no lock of the Balancer's. A TCP segment that
// is itself fragmented goes where its addresses lead, like any fragment,
// not necessarily to its connection's backend; ICMP errors about a flow
// go where their own addresses lead.
package lb
