// Package bsdbuild holds no code: its tests check rules the OpenBSD and
// FreeBSD builds must follow that the compiler does not enforce.
//
// OpenBSD 7.5 and later refuse system calls made other than through libc.
// Go's syscall and x/sys/unix go through libc there, and
// unix.Syscall(SYS_IOCTL, ...) is routed to libc's ioctl, but no other
// call by number is: current Go answers ENOSYS for it (RawSyscall always,
// Syscall6 even with SYS_IOCTL) and older toolchains made the raw call,
// which the kernel kills. The rule: in every file that builds for OpenBSD
// or FreeBSD (tests included), the only system call by number is
// Syscall(SYS_IOCTL, ...), and no other SYS_ number is named.
package bsdbuild
