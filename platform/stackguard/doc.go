// Package stackguard keeps an interface's own IP stack off the frames it
// receives, for interfaces whose frames the engine reads: bridge and trunk
// members. The Linux guard is a tcx program; the BSDs' are at the end.
//
// AF_PACKET copies frames, it does not take them from the kernel: every
// frame a member receives also goes up the member's stack. A member with no
// address would still answer ARP for the host's addresses (which live on
// the bridge's TAP) with its own MAC, and unicast to a trunk's MAC would be
// delivered twice. A Guard attaches a two-instruction tcx ingress program,
// "return TC_ACT_SHOT", to the interface. Packet sockets see a frame before
// tcx ingress runs, so the engine still reads everything; the stack sees
// nothing. That holds for sockets bound to ETH_P_ALL only (they are taps,
// delivered before ingress): a socket bound to one ethertype (ETH_P_ARP,
// say) is delivered after tcx ingress and sees nothing either.
//
// The program is built with cilium/ebpf's assembler (no clang) and attached
// as a BPF link (BPF_LINK_CREATE, BPF_TCX_INGRESS). The kernel keeps it
// attached exactly as long as a descriptor for the link is open, and that
// descriptor is close-on-exec and held only by this process: when the
// daemon exits or is killed, the drop goes with it, and the interface's
// stack answers again.
//
// On OpenBSD the Guard is a bpf descriptor of its own in filter-drop mode
// (bpf.DropFromStack, BIOCSFILDROP): the member's stack sees none of its
// frames, and the drop goes with the descriptor. FreeBSD's bpf has no
// filter-drop and swctl does not add firewall rules, so there a Guard
// holds nothing, and Attach refuses a member with IP addresses, whose
// stack would answer for them.
//
// Other systems get a stub whose Attach returns a "not implemented" error.
package stackguard
