// Package tap is the host-facing Port: a TAP interface whose frames are
// exchanged with the host's own IP stack. A bridge or a trunk gives itself
// to the host through one (tap "bridge0", tap "trunk0").
//
// On Linux the interface is made through /dev/net/tun with IFF_TAP and
// IFF_NO_PI and is not persistent: it exists while the Port's descriptor is
// open and disappears with it, so a daemon that crashes leaves nothing
// behind. The price is that the host's addresses on the interface go with
// it; a restarted daemon makes the interface again (with the MAC address the
// configuration keeps) but the host must put its addresses back.
//
// On OpenBSD, Create opens the first /dev/tapN whose interface does not
// exist yet; opening it creates tapN and closing it destroys it (tun(4)),
// so the TAP is not persistent either. OpenBSD cannot rename an interface:
// the Port's Name is tapN, whatever name Create was given, and the daemon
// shows it (`bridge show`, `trunk show`). On FreeBSD, Create opens the
// cloning /dev/tap, learns the new tapN with TAPGIFNAME and renames it to
// the name asked for (SIOCSIFNAME); where the kernel refuses (a jail
// without the privilege, a name in use) it keeps tapN. A FreeBSD tap
// outlives its descriptor, so Close destroys it (SIOCIFDESTROY); one left
// by a crash (down, its addresses purged by the kernel) is taken back by
// the next Create of its name, through the /dev alias FreeBSD made when it
// was renamed. MAC, MTU and up are set with interface ioctls
// (platform/ifreq) on both; Options.QueueLen has no per-interface
// equivalent there and is ignored.
//
// # Frames
//
// ReadBatch returns views into buffers the Port owns, one per batch slot,
// each with Headroom bytes free in front of the frame. A frame read is
// valid until the next ReadBatch or Close. WriteBatch writes each frame
// with its own write(2) (a TAP takes one frame per write), copies nothing
// it keeps, and never blocks: a frame the kernel refuses or one larger than
// the MTU (one 802.1Q/802.1ad tag allowed) is dropped and counted.
//
// A TAP with offloads (Options.Offload, Linux) writes fewer frames than it
// is given: WriteBatch first merges each batch's in-sequence TCP segments
// of one flow into a super-frame (frame.GRO, software GRO), which the host
// stack takes as one packet, as its own GRO would have, so that a trunk
// whose members receive MTU-sized segments makes one system call per
// super-frame rather than per segment. Frames of one flow keep their
// order; a merged frame leaves where its first segment was.
//
// The host's own super-frames are bounded the other way: a TAP with
// offloads has gso_max_segs SuperFrameSegments (43 segments at a
// 1,500-byte MTU, kept current by SetInterfaceMTU), so that a super-frame
// takes at most SuperFrameWire (64 KiB) on a member's wire. A qdisc
// schedules such a super-frame as one packet; a larger one tbf cuts into
// segments and times each with its own watchdog timer, which on a trunk
// over two tbf-shaped links cost six times the CPU of the kernel's own
// path per byte. The host's TCP builds no larger super-frame; UDP
// segmentation over the bound is done by the kernel before the TAP.
//
// # Carrier
//
// A TAP's carrier is up while its descriptor is open. On Linux SetCarrier
// changes it (TUNSETCARRIER): a trunk's TAP follows the trunk, up while any
// of its ports is active. Neither OpenBSD's nor FreeBSD's tap has an ioctl
// for the link state, so there SetCarrier returns an error wrapping
// errors.ErrUnsupported and a trunk's TAP stays up while the trunk has no
// active port: the host keeps routing to it and the trunk drops what it
// cannot send.
//
// The name parsing (tapname.go) is portable and tested on Linux; the BSD
// code is compiled there for both systems but runs only on them.
//
// Other systems get a stub whose Create returns a "not implemented" error.
package tap
