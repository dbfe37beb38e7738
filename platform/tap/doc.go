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
// # Frames
//
// ReadBatch returns views into buffers the Port owns, one per batch slot,
// each with Headroom bytes free in front of the frame. A frame read is
// valid until the next ReadBatch or Close. WriteBatch writes each frame
// with its own write(2) (a TAP takes one frame per write), copies nothing
// it keeps, and never blocks: a frame the kernel refuses or one larger than
// the MTU (one 802.1Q/802.1ad tag allowed) is dropped and counted.
//
// # Carrier
//
// A TAP's carrier is up while its descriptor is open. SetCarrier changes it
// (TUNSETCARRIER): a trunk's TAP follows the trunk, up while any of its
// ports is active.
//
// Other systems get a stub whose Create returns a "not implemented" error.
package tap
