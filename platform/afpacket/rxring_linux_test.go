package afpacket

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeRing is a ring in ordinary memory, filled by the test as the kernel
// would fill it: no socket, no root.
func fakeRing(t *testing.T, frames int) *ring {
	t.Helper()
	const reserve = DefaultHeadroom
	fs := frameSizeFor(1500, reserve)
	r := &ring{slots: slots{blockSize: 2 * fs, frameSize: fs, framesPerBlock: 2, frames: frames}}
	r.mem = make([]byte, (frames+1)/2*r.blockSize)
	r.held = make([]int, 0, frames)
	return r
}

// deliver puts wire (with its tag, if any, stripped as the kernel does)
// into slot i and marks it ready.
func deliver(r *ring, i int, wire []byte, status uint32, tci, tpid uint16, snapCut int) {
	data := wire
	if status&unix.TP_STATUS_VLAN_VALID != 0 {
		data = append(append([]byte{}, wire[:12]...), wire[16:]...)
	}
	h := r.hdr(i)
	mac := netOffset(DefaultHeadroom) - 14
	s := r.slot(i)
	copy(s[mac:], data[:len(data)-snapCut])
	h.Mac = uint16(mac)
	h.Net = uint16(mac + 14)
	h.Len = uint32(len(data))
	h.Snaplen = uint32(len(data) - snapCut)
	h.Vlan_tci, h.Vlan_tpid = tci, tpid
	h.Status = status | unix.TP_STATUS_USER
}

func wireFrame(tpid, tci uint16, size int, seed byte) []byte {
	f := make([]byte, size)
	for i := range f {
		f[i] = seed + byte(i)
	}
	if tpid != 0 {
		binary.BigEndian.PutUint16(f[12:], tpid)
		binary.BigEndian.PutUint16(f[14:], tci)
		binary.BigEndian.PutUint16(f[16:], 0x88b5)
	} else {
		binary.BigEndian.PutUint16(f[12:], 0x88b5)
	}
	return f
}

func TestRingCollect(t *testing.T) {
	cases := []struct {
		name        string
		wire        []byte
		status      uint32
		tci, tpid   uint16
		snapCut     int
		wantDropped bool
	}{
		{name: "untagged 60", wire: wireFrame(0, 0, 60, 1)},
		{name: "untagged 1514", wire: wireFrame(0, 0, 1514, 2)},
		{name: "802.1Q without TPID_VALID restores 0x8100", wire: wireFrame(0x8100, 100, 64, 3),
			status: unix.TP_STATUS_VLAN_VALID, tci: 100},
		{name: "802.1Q with TPID_VALID", wire: wireFrame(0x8100, 0xe064, 1518, 4),
			status: unix.TP_STATUS_VLAN_VALID | unix.TP_STATUS_VLAN_TPID_VALID, tci: 0xe064, tpid: 0x8100},
		{name: "802.1ad", wire: wireFrame(0x88a8, 200, 64, 5),
			status: unix.TP_STATUS_VLAN_VALID | unix.TP_STATUS_VLAN_TPID_VALID, tci: 200, tpid: 0x88a8},
		{name: "priority tag VID 0", wire: wireFrame(0x8100, 0x6000, 64, 6),
			status: unix.TP_STATUS_VLAN_VALID, tci: 0x6000},
		{name: "runt", wire: wireFrame(0, 0, 60, 7)[:13], wantDropped: true},
		{name: "truncated", wire: wireFrame(0, 0, 1514, 8), snapCut: 100, wantDropped: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fakeRing(t, 4)
			want := bytes.Clone(c.wire)
			deliver(r, 0, c.wire, c.status, c.tci, c.tpid, c.snapCut)
			frames := make([][]byte, 4)
			n, nbytes, dropped := r.collect(frames, nil)
			if c.wantDropped {
				if n != 0 || dropped != 1 {
					t.Fatalf("collect = %d frames, %d dropped; want 0, 1", n, dropped)
				}
				if st := r.status(0); st != unix.TP_STATUS_KERNEL {
					t.Fatalf("dropped slot status %#x, want TP_STATUS_KERNEL", st)
				}
				return
			}
			if n != 1 || dropped != 0 || nbytes != len(want) {
				t.Fatalf("collect = %d frames, %d bytes, %d dropped; want 1, %d, 0", n, nbytes, dropped, len(want))
			}
			if !bytes.Equal(frames[0], want) {
				t.Fatalf("frame differs from the wire\ngot  % x\nwant % x", frames[0][:20], want[:20])
			}
			if cap(frames[0]) != len(frames[0]) {
				t.Errorf("frame cap %d > len %d: an append could overwrite the slot", cap(frames[0]), len(frames[0]))
			}
			if st := r.status(0); st&unix.TP_STATUS_USER == 0 {
				t.Fatalf("lent slot was given back before release")
			}
			r.release()
			if st := r.status(0); st != unix.TP_STATUS_KERNEL {
				t.Fatalf("released slot status %#x, want TP_STATUS_KERNEL", st)
			}
		})
	}
}

func TestRingOrderWrapAndLimit(t *testing.T) {
	r := fakeRing(t, 4)
	frames := make([][]byte, 3)
	seq := byte(0)
	// Three rounds over a 4-slot ring with batches of 3: slots wrap.
	for round := 0; round < 3; round++ {
		var sent [][]byte
		for k := 0; k < 3; k++ {
			i := (round*3 + k) % 4
			f := wireFrame(0, 0, 60+k, seq)
			seq++
			sent = append(sent, bytes.Clone(f))
			deliver(r, i, f, 0, 0, 0, 0)
		}
		n, _, _ := r.collect(frames[:2], nil)
		if n != 2 {
			t.Fatalf("round %d: collect with room for 2 = %d", round, n)
		}
		m, _, _ := r.collect(frames[2:], nil)
		if m != 1 {
			t.Fatalf("round %d: second collect = %d, want 1", round, m)
		}
		for k := range sent {
			if !bytes.Equal(frames[k], sent[k]) {
				t.Fatalf("round %d frame %d out of order or damaged", round, k)
			}
		}
		if got, _, _ := r.collect(frames, nil); got != 0 {
			t.Fatalf("round %d: collect on an empty ring = %d", round, got)
		}
		r.release()
	}
}

// The frames a close finds in the ring, filled and not read, are what it
// discards; a slot lent to a reader was read.
func TestRingUnread(t *testing.T) {
	r := fakeRing(t, 4)
	for i := 0; i < 3; i++ {
		deliver(r, i, wireFrame(0, 0, 60, byte(i)), 0, 0, 0, 0)
	}
	frames := make([][]byte, 1)
	if n, _, _ := r.collect(frames, nil); n != 1 {
		t.Fatalf("collect = %d frames, want 1", n)
	}
	r.release()
	if n := r.unread(); n != 2 {
		t.Errorf("unread = %d after one of three frames was read, want 2", n)
	}
	r.mem = nil
	if n := r.unread(); n != 0 {
		t.Errorf("unread of an unmapped ring = %d, want 0", n)
	}
}
