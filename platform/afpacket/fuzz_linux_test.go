package afpacket

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/fuzzcorpus"
	"github.com/swctl/swctl/platform"
)

// ringSlotHdr is how many leading bytes of a FuzzRingSlot input give the
// slot header's fields; the rest is the slot's memory.
const ringSlotHdr = 20

// ringSlotInput encodes a slot for FuzzRingSlot: tp_mac, tp_snaplen,
// tp_len, tp_status, tp_vlan_tci, tp_vlan_tpid, a flags byte (bit 0:
// vnet headers, bit 1: the caller takes plain frames only), then the
// slot's bytes.
func ringSlotInput(mac uint16, snap, length, status uint32, tci, tpid uint16, flags byte, slot []byte) []byte {
	b := make([]byte, ringSlotHdr, ringSlotHdr+len(slot))
	binary.LittleEndian.PutUint16(b[0:], mac)
	binary.LittleEndian.PutUint32(b[2:], snap)
	binary.LittleEndian.PutUint32(b[6:], length)
	binary.LittleEndian.PutUint32(b[10:], status)
	binary.LittleEndian.PutUint16(b[14:], tci)
	binary.LittleEndian.PutUint16(b[16:], tpid)
	b[18] = flags
	return append(b, slot...)
}

// ringSlotSeeds are FuzzRingSlot's seeds, by file name in
// testdata/fuzz/FuzzRingSlot.
func ringSlotSeeds() map[string][]byte {
	mac := uint16(netOffset(DefaultHeadroom) - 14)
	wire := wireFrame(0, 0, 60, 1)
	slot := make([]byte, int(mac)+len(wire))
	copy(slot[mac:], wire)
	vnetSlot := make([]byte, int(mac)+len(wire))
	copy(vnetSlot[mac:], wire)
	vnetSlot[int(mac)-vnetHdrLen] = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	return map[string][]byte{
		"plain":          ringSlotInput(mac, 60, 60, 0, 0, 0, 0, slot),
		"tagged":         ringSlotInput(mac, 60, 60, unix.TP_STATUS_VLAN_VALID|unix.TP_STATUS_VLAN_TPID_VALID, 7, 0x88a8, 0, slot),
		"truncated":      ringSlotInput(mac, 40, 60, 0, 0, 0, 0, slot),
		"runt":           ringSlotInput(mac, 10, 10, 0, 0, 0, 0, slot),
		"mac-past-slot":  ringSlotInput(0xffff, 60, 60, 0, 0, 0, 0, slot),
		"mac-in-header":  ringSlotInput(2, 60, 60, unix.TP_STATUS_VLAN_VALID, 1, 0, 0, slot),
		"vnet-csum":      ringSlotInput(mac, 60, 60, 0, 0, 0, 1, vnetSlot),
		"vnet-csum-only": ringSlotInput(mac, 60, 60, 0, 0, 0, 3, vnetSlot),
		"huge-snaplen":   ringSlotInput(mac, 0xffffffff, 0xffffffff, 0, 0, 0, 0, slot),
	}
}

// TestRingSlotFuzzCorpus checks that testdata/fuzz/FuzzRingSlot holds the
// seeds; AFPACKET_WRITE_FUZZ_CORPUS=1 writes them.
func TestRingSlotFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzRingSlot"), ringSlotSeeds(), "AFPACKET_WRITE_FUZZ_CORPUS")
}

// FuzzRingSlot feeds arbitrary slot headers (the kernel's tpacket2_hdr:
// offsets, lengths, status and tag) and slot contents to the receive
// ring's collect. It must never panic nor read outside the slot; every
// frame it lends holds at least an Ethernet header and lies inside the
// ring's memory.
func FuzzRingSlot(f *testing.F) {
	fuzzcorpus.Add(f, ringSlotSeeds())
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < ringSlotHdr {
			return
		}
		r := fakeRing(t, 2)
		r.vnet = b[18]&1 != 0
		s := r.slot(0)
		copy(s, b[ringSlotHdr:])
		h := r.hdr(0)
		h.Mac = binary.LittleEndian.Uint16(b[0:])
		h.Snaplen = binary.LittleEndian.Uint32(b[2:])
		h.Len = binary.LittleEndian.Uint32(b[6:])
		// A copy slot would read the socket: there is none here.
		h.Status = (binary.LittleEndian.Uint32(b[10:]) | unix.TP_STATUS_USER) &^ unix.TP_STATUS_COPY
		h.Vlan_tci = binary.LittleEndian.Uint16(b[14:])
		h.Vlan_tpid = binary.LittleEndian.Uint16(b[16:])
		frames := make([][]byte, 2)
		var offs []platform.Offload
		if b[18]&2 == 0 {
			offs = make([]platform.Offload, 2)
		}
		n, _, _ := r.collect(frames, offs)
		if n > 1 {
			t.Fatalf("collect returned %d frames from one ready slot", n)
		}
		for _, fr := range frames[:n] {
			if len(fr) < frame.HeaderLen {
				t.Fatalf("collect lent a %d-byte frame, want at least an Ethernet header", len(fr))
			}
			if cap(fr) > len(s) {
				t.Fatalf("collect lent a frame of capacity %d from a %d-byte slot", cap(fr), len(s))
			}
		}
		r.release()
	})
}
