package selftest

import (
	"bytes"
	"encoding/binary"

	"github.com/swctl/swctl/frame"
)

// A test frame is sent from one interface under test to the other:
//
//	destination, source      12 bytes
//	[TPID, TCI]              4 bytes, for the VLAN check
//	ethertype 0x88b5         IEEE 802 local experimental ethertype 1
//	"swctl-st"               8 bytes of magic
//	run                      8 bytes: this selftest's random ID
//	kind                     1 byte: which check sent it
//	seq                      4 bytes
//	zeros                    up to 60 bytes untagged, 64 tagged
//
// An IP stack ignores the ethertype, so on interfaces a user gives
// (--ifaces) the frames reach nothing but the packet ports.
const (
	// testType is the test frames' ethertype.
	testType = 0x88b5
	// testMagic follows the ethertype.
	testMagic = "swctl-st"
	// testBody is the length of magic, run, kind and seq.
	testBody = len(testMagic) + 8 + 1 + 4
	// testMinLen is an untagged test frame's length: the shortest
	// Ethernet frame without its FCS.
	testMinLen = 60
)

// Frame kinds, one per check that sends test frames.
const (
	kindData uint8 = 1 + iota
	kindVLAN
)

// testFrame is what a test frame carries.
type testFrame struct {
	// run is the selftest's ID: frames of another run are ignored.
	run uint64
	// kind says which check sent it.
	kind uint8
	// seq tells frames of one check apart.
	seq uint32
}

// tag is an 802.1Q or 802.1ad tag to put in a test frame: zero TPID for
// none.
type tag struct {
	// tpid is 0x8100 or 0x88a8; 0 means untagged.
	tpid uint16
	// vid is the VLAN ID.
	vid uint16
}

// encode returns the test frame tf from src to dst, tagged with t.
func (tf testFrame) encode(dst, src frame.MAC, t tag) []byte {
	n, off := testMinLen, frame.HeaderLen-2
	if t.tpid != 0 {
		n, off = testMinLen+frame.TagLen, off+frame.TagLen
	}
	b := make([]byte, n)
	frame.Encode(b, dst, src, testType)
	if t.tpid != 0 {
		binary.BigEndian.PutUint16(b[12:], t.tpid)
		binary.BigEndian.PutUint16(b[14:], t.vid&0x0fff)
	}
	binary.BigEndian.PutUint16(b[off:], testType)
	body := b[off+2:]
	copy(body, testMagic)
	binary.BigEndian.PutUint64(body[len(testMagic):], tf.run)
	body[len(testMagic)+8] = tf.kind
	binary.BigEndian.PutUint32(body[len(testMagic)+9:], tf.seq)
	return b
}

// decodeTest reads a test frame, untagged or with one tag; false for any
// other frame. It does not keep f.
func decodeTest(f []byte) (testFrame, bool) {
	e := frame.Ethernet(f)
	if !e.Valid() {
		return testFrame{}, false
	}
	off := frame.HeaderLen
	if e.IsTagged() {
		off += frame.TagLen
	}
	if e.InnerType() != testType || len(f) < off+testBody {
		return testFrame{}, false
	}
	body := f[off:]
	if !bytes.Equal(body[:len(testMagic)], []byte(testMagic)) {
		return testFrame{}, false
	}
	return testFrame{
		run:  binary.BigEndian.Uint64(body[len(testMagic):]),
		kind: body[len(testMagic)+8],
		seq:  binary.BigEndian.Uint32(body[len(testMagic)+9:]),
	}, true
}
