// Package lb holds flow hashing and member selection for swctl's trunks
// (loadbalance and LACP distribution) and for the L2 server load balancer.
// Everything here is pure and allocation-free: a Hasher and a Selector are
// small values, safe for concurrent use once built, and neither keeps a
// reference to the frames it reads.
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
// Headers are found by frame.Walk, the one header walk of swctl, which
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
package lb
