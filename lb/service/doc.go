// Package service runs one layer-2 load balancer (direct server return)
// on a platform.Port: the engine around lb's Balancer. The service owns
// virtual addresses (VIPs) on the port's segment; each frame to a VIP
// goes to the backend the Balancer picks, with only its MACs rewritten,
// and the backends, which hold the VIP on a loopback, answer the client
// directly.
//
// A frame read from the port takes these steps (receive.go):
//
//  1. An ARP request for an IPv4 VIP is answered with the port's MAC; a
//     neighbour solicitation for an IPv6 VIP with a solicited
//     neighbour advertisement. ARP and ND from a backend's address
//     teach the service that backend's MAC. Nothing else is answered.
//  2. An IPv4 or IPv6 packet to the port's MAC and a VIP is given its
//     flow key (lb.FlowKeyOf) and the Balancer's pick.
//  3. Its destination MAC becomes the backend's, its source MAC the
//     port's, and it goes back out of the port in the same batch.
//  4. Every other frame is left alone: the host's stack, which sees
//     every frame too, handles it. The stack guard (AttachAddrs) keeps
//     the frames to VIPs from it, so that the host does not forward
//     them a second time.
//
// ARP and ND are answered and learned from untagged frames only; IP
// frames to a VIP are forwarded tagged or not, their tags untouched.
//
// No backend (none serving, all down) drops the frame and counts it, as
// does a backend whose MAC is not known yet. ARP, ND and IP headers
// that are cut short or inconsistent are counted as malformed and
// dropped. The per-frame path parses headers by hand, after checking
// lengths, and allocates nothing; replies and requests, which are rare,
// are built with github.com/mdlayher/ethernet and gopacket.
//
// Beside the reader, two goroutines run: the resolver asks each
// backend's MAC (ARP from the service's IPv4 source address, ND from its
// IPv6 one, or from the unspecified address with AskAnonymously) every
// second until it answers, and again every ResolveInterval, so that a
// MAC that changes is followed; and the
// prober checks each backend's health (tcp, http or arp, Check) every
// Check.Interval and feeds the result to the backend's health.Machine.
// A backend takes new flows while it is configured serving, its MAC is
// known and, with a health check, its last state is up.
package service
