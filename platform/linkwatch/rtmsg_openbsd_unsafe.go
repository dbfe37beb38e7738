//go:build openbsd

package linkwatch

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// openbsdLayout's offsets must be those of x/sys/unix's structs, which are
// generated from OpenBSD's sys/net/if.h: each pair of array types fails to
// compile when one differs.
var (
	_ [obsdIfmFlags - unsafe.Offsetof(unix.IfMsghdr{}.Flags)]byte
	_ [unsafe.Offsetof(unix.IfMsghdr{}.Flags) - obsdIfmFlags]byte
	_ [obsdIfmIndex - unsafe.Offsetof(unix.IfMsghdr{}.Index)]byte
	_ [unsafe.Offsetof(unix.IfMsghdr{}.Index) - obsdIfmIndex]byte
	_ [obsdIfmData - unsafe.Offsetof(unix.IfMsghdr{}.Data)]byte
	_ [unsafe.Offsetof(unix.IfMsghdr{}.Data) - obsdIfmData]byte
	_ [obsdIfiLinkState - unsafe.Offsetof(unix.IfData{}.Link_state)]byte
	_ [unsafe.Offsetof(unix.IfData{}.Link_state) - obsdIfiLinkState]byte
	_ [obsdIfiMTU - unsafe.Offsetof(unix.IfData{}.Mtu)]byte
	_ [unsafe.Offsetof(unix.IfData{}.Mtu) - obsdIfiMTU]byte
	_ [obsdIfanIndex - unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Index)]byte
	_ [unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Index) - obsdIfanIndex]byte
	_ [obsdIfanWhat - unsafe.Offsetof(unix.IfAnnounceMsghdr{}.What)]byte
	_ [unsafe.Offsetof(unix.IfAnnounceMsghdr{}.What) - obsdIfanWhat]byte
	_ [obsdIfanName - unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Name)]byte
	_ [unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Name) - obsdIfanName]byte
	_ [obsdIfanSize - unix.SizeofIfAnnounceMsghdr]byte
	_ [unix.SizeofIfAnnounceMsghdr - obsdIfanSize]byte
	_ [unix.SizeofIfMsghdr - (obsdIfmData + obsdIfiMTU + 4)]byte // what is read lies in the header
)
