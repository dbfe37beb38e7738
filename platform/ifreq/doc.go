// Package ifreq makes the interface ioctls of OpenBSD and FreeBSD that take
// a struct ifreq (sys/net/if.h): set the hardware address (SIOCSIFLLADDR),
// the MTU (SIOCSIFMTU) and the flags (SIOCGIFFLAGS, SIOCSIFFLAGS), rename
// (SIOCSIFNAME, FreeBSD), create (SIOCIFCREATE) and destroy
// (SIOCIFDESTROY) an interface, patch two pair(4) interfaces together
// (SIOCSIFPAIR, OpenBSD), and read the name a device's ioctl writes into
// ifr_name (FreeBSD's TAPGIFNAME). promisc uses it to change a trunk
// member's MAC, platform/tap to set up its interface, and swctl selftest
// to read IFF_PROMISC and to make and take down a pair of its own.
//
// struct ifreq is the interface name (IFNAMSIZ, 16 bytes) and a union of
// 16 bytes on both systems (the largest members: struct sockaddr, and
// FreeBSD's struct ifreq_buffer of a size_t and a pointer), 32 bytes in
// all. Each use of the union has its own Go type (ifreq_unsafe.go) whose
// size and field offsets are checked at compile time against those
// numbers, and, on the BSDs, against the size every ioctl number encodes
// (IOCPARM_LEN, sys/sys/ioccom.h). The layouts build on every OS, so that
// the tests that fill them run on Linux.
//
// Every ioctl goes through unix.Syscall with SYS_IOCTL, which Go routes
// to libc on OpenBSD 7.5 and later, where other system calls are refused.
//
// Other systems get functions that return a "not implemented" error.
package ifreq
