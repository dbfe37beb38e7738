// Package selftest is `swctl selftest`: it exercises every part of swctl
// that talks to the kernel, on the host it runs on, and reports one
// PASS, FAIL or SKIP per check with a one-line reason. It is the first
// thing to run on a new system (OpenBSD and FreeBSD above all): it says
// exactly what works there.
//
// # Where it runs
//
// The checks need two interfaces cabled to each other. Given none
// (Options.Ifaces empty), the selftest makes a pair of its own: on Linux
// a veth pair in a network namespace that has no name, which goes with
// the process however it ends; on FreeBSD an epair(4); on OpenBSD two
// pair(4) interfaces patched together. A BSD pair outlives a selftest
// that is killed (its name is in the report; `ifconfig NAME destroy`
// removes it). Given two interfaces (--ifaces), it uses them and leaves
// them as it found them; it still makes its own pair, where the OS can,
// for the checks that take an interface down or change its stack.
//
// # The checks
//
// Each check is a small function that uses the same packages the daemon
// does, and verifies the effect through the OS's own view:
//
//   - open packet port: a packet port on each interface (platform/afpacket
//     on Linux, platform/bpf on the BSDs), both links up;
//   - promiscuity on/off: each port's membership taken and given back
//     through promisc.Registry; Linux's promiscuity count (netlink
//     IFLA_PROMISCUITY), the BSDs' IFF_PROMISC flag (SIOCGIFFLAGS), must
//     go up by one and back;
//   - send and receive: a test frame each way, arriving unchanged;
//   - VLAN tag restore: an 802.1Q and an 802.1ad tagged frame arrive with
//     their tags in place (on Linux the kernel strips them into the ring's
//     metadata and the port puts them back);
//   - TAP create/destroy: platform/tap makes a TAP the OS lists up with
//     the port's MAC, and after Close no longer lists;
//   - lladdr set/restore: the first interface's MAC changed and put back
//     through the lladdr.Journal, read back from the OS and from the
//     journal file each time. With --ifaces the journal is the daemon's
//     (Options.StateDir, whose lock the check holds), so `swctl recover`
//     puts the MAC back after a selftest that died half-way; a daemon
//     holding the directory makes the check SKIP;
//   - link events: the first interface of the selftest's own pair taken
//     down and up, each change seen as an platform/linkwatch event
//     (netlink on Linux, the routing socket on the BSDs);
//   - stack isolation (stack.go): the daemon's stack guard on the own
//     pair's second interface, which gets an address for the check
//     (platform/stackguard's tcx drop on Linux, in the namespace; on
//     OpenBSD bpf.DropFromStack, the address set and deleted with
//     ifconfig(8)); a UDP datagram to it reaches its packet port but not
//     its stack, and once the guard is gone the next one reaches the
//     stack. FreeBSD has no stack guard: SKIP;
//   - control socket: internal/api's Listen, Server and Client on a
//     temporary socket, one version request, the mode (0600) and the peer
//     credentials the OS reports checked.
//
// Test frames carry the IEEE 802 local experimental ethertype 0x88b5 and
// a random run ID (frame.go), so no IP stack takes them and frames of
// anything else are ignored.
//
// Everything a check changes is undone before Run returns, also on
// failure or when its context ends; what would outlive a crash is either
// socket-owned (promiscuity, the stack guard), not persistent (the TAP,
// the Linux namespace) or journalled (the MAC).
package selftest
