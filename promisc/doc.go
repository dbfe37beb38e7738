// Package promisc counts the promiscuous memberships swctl holds on each
// interface, under the rule every change swctl makes to an interface's
// receive filter (promiscuity, multicast membership) follows. (A trunk's
// changes to its members' hardware addresses are platform/lladdr's.)
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
package promisc
