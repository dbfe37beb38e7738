package ifreq

import "unsafe"

// Sizes and offsets of struct ifreq (sys/net/if.h, OpenBSD and FreeBSD).
const (
	// nameSize is IFNAMSIZ: ifr_name, NUL included.
	nameSize = 16
	// unionOffset is the offset of the ifr_ifru union.
	unionOffset = nameSize
	// Size is sizeof(struct ifreq): the name and a 16-byte union.
	Size = 32
	// flagsHighOffset is the offset of FreeBSD's ifr_flagshigh
	// (ifru_flags[1]); OpenBSD's ifr_flags is one short.
	flagsHighOffset = unionOffset + 2
)

// ifName is ifr_name.
type ifName [nameSize]byte

// sockaddr is struct sockaddr (sys/sys/socket.h): sa_len, sa_family,
// sa_data[14].
type sockaddr struct {
	// len is sa_len.
	len uint8
	// family is sa_family.
	family uint8
	// data is sa_data; for SIOCSIFLLADDR the hardware address.
	data [14]byte
}

// reqAddr is struct ifreq with ifr_addr (SIOCSIFLLADDR).
type reqAddr struct {
	// name is ifr_name.
	name ifName
	// addr is ifr_addr.
	addr sockaddr
}

// reqInt is struct ifreq with an int (ifr_mtu: SIOCSIFMTU, SIOCGIFMTU).
type reqInt struct {
	// name is ifr_name.
	name ifName
	// value is the int.
	value int32
	// _ is the rest of the union.
	_ [Size - unionOffset - 4]byte
}

// reqFlags is struct ifreq with ifr_flags (SIOCGIFFLAGS, SIOCSIFFLAGS).
type reqFlags struct {
	// name is ifr_name.
	name ifName
	// flags is ifr_flags: the low 16 bits of the interface flags.
	flags uint16
	// flagsHigh is FreeBSD's ifr_flagshigh, the high 16 bits; OpenBSD
	// ignores it.
	flagsHigh uint16
	// _ is the rest of the union.
	_ [Size - unionOffset - 4]byte
}

// reqData is struct ifreq with ifr_data, a pointer (FreeBSD SIOCSIFNAME:
// to the new name).
type reqData struct {
	// name is ifr_name.
	name ifName
	// data is ifr_data.
	data *byte
	// _ is the rest of the union.
	_ [Size - unionOffset - unsafe.Sizeof(uintptr(0))]byte
}

// The layouts must have struct ifreq's size and put the union where the
// header does: each pair of array types fails to compile when one differs.
var (
	_ [unsafe.Sizeof(reqAddr{}) - Size]byte
	_ [Size - unsafe.Sizeof(reqAddr{})]byte
	_ [unsafe.Offsetof(reqAddr{}.addr) - unionOffset]byte
	_ [unionOffset - unsafe.Offsetof(reqAddr{}.addr)]byte
	_ [unsafe.Sizeof(reqInt{}) - Size]byte
	_ [Size - unsafe.Sizeof(reqInt{})]byte
	_ [unsafe.Offsetof(reqInt{}.value) - unionOffset]byte
	_ [unionOffset - unsafe.Offsetof(reqInt{}.value)]byte
	_ [unsafe.Sizeof(reqFlags{}) - Size]byte
	_ [Size - unsafe.Sizeof(reqFlags{})]byte
	_ [unsafe.Offsetof(reqFlags{}.flags) - unionOffset]byte
	_ [unionOffset - unsafe.Offsetof(reqFlags{}.flags)]byte
	_ [unsafe.Offsetof(reqFlags{}.flagsHigh) - flagsHighOffset]byte
	_ [flagsHighOffset - unsafe.Offsetof(reqFlags{}.flagsHigh)]byte
	_ [unsafe.Sizeof(reqData{}) - Size]byte
	_ [Size - unsafe.Sizeof(reqData{})]byte
	_ [unsafe.Offsetof(reqData{}.data) - unionOffset]byte
	_ [unionOffset - unsafe.Offsetof(reqData{}.data)]byte
	_ [unsafe.Sizeof(sockaddr{}) - 16]byte
	_ [16 - unsafe.Sizeof(sockaddr{})]byte
)

// bytesOf is the memory of a request, as the kernel reads it; tests use it.
func bytesOf[T reqAddr | reqInt | reqFlags | reqData](r *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(r)), unsafe.Sizeof(*r))
}

// pointerOf is a request's address for the ioctl.
func pointerOf[T reqAddr | reqInt | reqFlags | reqData](r *T) unsafe.Pointer {
	return unsafe.Pointer(r)
}
