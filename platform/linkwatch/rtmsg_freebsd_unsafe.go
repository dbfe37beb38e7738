//go:build freebsd

package linkwatch

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// freebsdLayout's offsets must be those of x/sys/unix's structs, generated
// from FreeBSD's sys/net/if.h: each pair of array types fails to compile
// when one differs. x/sys/unix's exported IfData is the layout before
// FreeBSD 11 (64-bit ifi_mtu), but ifi_link_state and ifi_mtu start at the
// same offsets in both; the if_data of FreeBSD 11 and later is checked by
// the tests, on buffers laid out field by field.
var (
	_ [fbsdIfmFlags - unsafe.Offsetof(unix.IfMsghdr{}.Flags)]byte
	_ [unsafe.Offsetof(unix.IfMsghdr{}.Flags) - fbsdIfmFlags]byte
	_ [fbsdIfmIndex - unsafe.Offsetof(unix.IfMsghdr{}.Index)]byte
	_ [unsafe.Offsetof(unix.IfMsghdr{}.Index) - fbsdIfmIndex]byte
	_ [fbsdIfmData - unsafe.Offsetof(unix.IfMsghdr{}.Data)]byte
	_ [unsafe.Offsetof(unix.IfMsghdr{}.Data) - fbsdIfmData]byte
	_ [fbsdIfiLinkState - unsafe.Offsetof(unix.IfData{}.Link_state)]byte
	_ [unsafe.Offsetof(unix.IfData{}.Link_state) - fbsdIfiLinkState]byte
	_ [fbsdIfiMTU - unsafe.Offsetof(unix.IfData{}.Mtu)]byte
	_ [unsafe.Offsetof(unix.IfData{}.Mtu) - fbsdIfiMTU]byte
	_ [fbsdIfanIndex - unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Index)]byte
	_ [unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Index) - fbsdIfanIndex]byte
	_ [fbsdIfanWhat - unsafe.Offsetof(unix.IfAnnounceMsghdr{}.What)]byte
	_ [unsafe.Offsetof(unix.IfAnnounceMsghdr{}.What) - fbsdIfanWhat]byte
	_ [fbsdIfanName - unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Name)]byte
	_ [unsafe.Offsetof(unix.IfAnnounceMsghdr{}.Name) - fbsdIfanName]byte
	_ [fbsdIfanSize - unix.SizeofIfAnnounceMsghdr]byte
	_ [unix.SizeofIfAnnounceMsghdr - fbsdIfanSize]byte
)
