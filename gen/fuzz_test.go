package gen_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
)

// FuzzDecode feeds arbitrary frames to the test-frame decoder, which
// reads whatever arrives on swctl bench's receiving port. It must never
// panic or change the frame, and it accepts only an IPv4 UDP frame (one
// tag at most) long enough for a mark.
func FuzzDecode(f *testing.F) {
	for _, size := range []int{60, 64, 1514} {
		fr, err := gen.Stream{Src: macA, Dst: macB, Size: size, RunID: 7}.Frame(3, 42)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fr)
		f.Add(append(append(append([]byte(nil), fr[:12]...), 0x81, 0x00, 0x00, 0x05), fr[12:]...))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, fr []byte) {
		orig := append([]byte(nil), fr...)
		_, ok := gen.Decode(fr)
		if !bytes.Equal(fr, orig) {
			t.Fatal("Decode changed the frame")
		}
		if !ok {
			return
		}
		ip := fr
		if frame.Ethernet(fr).IsTagged() {
			ip = fr[frame.TagLen:]
		}
		if len(ip) < gen.MinSize || binary.BigEndian.Uint16(ip[12:]) != frame.TypeIPv4 || ip[14] != 0x45 || ip[23] != 17 {
			t.Fatalf("Decode accepted a frame that is not a tagged or untagged IPv4 UDP test frame:\n% x", fr)
		}
	})
}
