package selftest

import (
	"encoding/binary"
	"testing"

	"github.com/swctl/swctl/frame"
)

var (
	macA = frame.MAC{0x02, 0, 0, 0, 0, 0x0a}
	macB = frame.MAC{0x02, 0, 0, 0, 0, 0x0b}
)

// A test frame is a minimal Ethernet frame (60 bytes, 64 with a tag) that
// decodes to what it was made with, tagged or not.
func TestTestFrameRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		tf   testFrame
		tag  tag
		len  int
	}{
		{"untagged", testFrame{run: 1<<63 | 5, kind: kindData, seq: 7}, tag{}, 60},
		{"802.1Q", testFrame{run: 9, kind: kindVLAN, seq: 0}, tag{frame.TypeVLAN, 42}, 64},
		{"802.1ad", testFrame{run: 9, kind: kindVLAN, seq: 1}, tag{frame.TypeQinQ, 4095}, 64},
	} {
		f := c.tf.encode(macB, macA, c.tag)
		if len(f) != c.len {
			t.Errorf("%s: %d bytes, want %d", c.name, len(f), c.len)
		}
		e := frame.Ethernet(f)
		if e.Destination() != macB || e.Source() != macA || e.InnerType() != testType {
			t.Errorf("%s: header %x, want %s from %s, ethertype %#x", c.name, f[:18], macB, macA, testType)
		}
		if c.tag.tpid != 0 && (e.Type() != c.tag.tpid || e.VLAN() != c.tag.vid) {
			t.Errorf("%s: tag %#x VID %d, want %#x VID %d", c.name, e.Type(), e.VLAN(), c.tag.tpid, c.tag.vid)
		}
		got, ok := decodeTest(f)
		if !ok || got != c.tf {
			t.Errorf("%s: decodes to %+v, %v; want %+v", c.name, got, ok, c.tf)
		}
	}
}

// Anything but a whole test frame is refused.
func TestDecodeTestRefuses(t *testing.T) {
	good := testFrame{run: 3, kind: kindData, seq: 1}.encode(macB, macA, tag{})
	tagged := testFrame{run: 3, kind: kindVLAN, seq: 1}.encode(macB, macA, tag{frame.TypeVLAN, 5})
	bodyEnd := frame.HeaderLen + testBody
	cases := []struct {
		name string
		f    []byte
	}{
		{"empty", nil},
		{"header only", good[:frame.HeaderLen]},
		{"body cut by one byte", good[:bodyEnd-1]},
		{"tagged, body cut by one byte", tagged[:bodyEnd+frame.TagLen-1]},
		{"tag only", tagged[:frame.HeaderLen+frame.TagLen]},
		{"other ethertype", func() []byte {
			f := append([]byte(nil), good...)
			binary.BigEndian.PutUint16(f[12:], frame.TypeIPv4)
			return f
		}()},
		{"other magic", func() []byte {
			f := append([]byte(nil), good...)
			f[frame.HeaderLen] ^= 1
			return f
		}()},
	}
	for _, c := range cases {
		if got, ok := decodeTest(c.f); ok {
			t.Errorf("%s: decodes to %+v, want refused", c.name, got)
		}
	}
	if _, ok := decodeTest(good[:bodyEnd]); !ok {
		t.Errorf("a frame that ends with the body (no padding): refused, want decoded")
	}
}

func FuzzDecodeTest(f *testing.F) {
	f.Add(testFrame{run: 1, kind: kindData, seq: 2}.encode(macB, macA, tag{}))
	f.Add(testFrame{run: 1, kind: kindVLAN, seq: 2}.encode(macB, macA, tag{frame.TypeQinQ, 7}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, ok := decodeTest(b)
		if !ok {
			return
		}
		// What decodes re-encodes to a frame that decodes the same.
		again, ok := decodeTest(tf.encode(macB, macA, tag{}))
		if !ok || again != tf {
			t.Fatalf("%x decodes to %+v, which re-encodes to %+v, %v", b, tf, again, ok)
		}
	})
}
