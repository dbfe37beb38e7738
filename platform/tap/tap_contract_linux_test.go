package tap_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
	"github.com/swctl/swctl/platform/tap"
)

// The peer of a TAP is an AF_PACKET port on the TAP interface itself: what
// it sends on the interface the TAP's descriptor reads, and what the
// descriptor writes arrives on the interface. The suite runs on a plain
// TAP and on one with offloads (IFF_VNET_HDR), where plain frames cross
// as on a plain TAP.
func TestIntegrationContract(t *testing.T) {
	netnstest.Require(t)
	for _, offload := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "offload"}[offload], func(t *testing.T) {
			platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
				ns, dut := newTap(t, tap.Options{Up: true, Offload: offload})
				if dut.Offloads() != offload {
					t.Fatalf("a TAP created with Offload %v says Offloads() = %v", offload, dut.Offloads())
				}
				return dut, openPeer(t, ns, dut.Name(), afpacket.Options{})
			})
		})
	}
}

// openPeer opens the AF_PACKET port on the TAP interface name in ns,
// closed at cleanup.
func openPeer(t *testing.T, ns *netnstest.NS, name string, opts afpacket.Options) *afpacket.Port {
	t.Helper()
	var peer *afpacket.Port
	var err error
	ns.Do(func() { peer, err = afpacket.Open(name, opts) })
	if err != nil {
		t.Fatalf("afpacket.Open(%s): %v", name, err)
	}
	t.Cleanup(func() { peer.Close() })
	return peer
}

// TestIntegrationOffloadSuperFrames sends a TCP super-frame each way
// between a TAP with offloads and a packet socket with PACKET_VNET_HDR on
// its interface: each side reads it whole, with its GSO size, as the
// host stack and a VM would exchange it.
func TestIntegrationOffloadSuperFrames(t *testing.T) {
	ns, dut := newTap(t, tap.Options{Up: true, Offload: true})
	peer := openPeer(t, ns, dut.Name(), afpacket.Options{Offload: true})
	src := net.HardwareAddr{2, 0, 0, 0, 0x77, 1}
	super, o := platformtest.TCPFrame(t, dut.HardwareAddr(), src, 0, 4000, 1448)
	read := func(p platform.Port) ([]byte, platform.Offload) {
		t.Helper()
		b := platform.NewBatch(p.BatchSize())
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			n, err := p.ReadBatch(b)
			if err != nil {
				t.Fatalf("%s: ReadBatch: %v", p.Name(), err)
			}
			for i := range n {
				if len(b.Frames[i]) == len(super) {
					return bytes.Clone(b.Frames[i]), b.Offs[i]
				}
			}
		}
		t.Fatalf("%s: no %d-byte super-frame within 5s", p.Name(), len(super))
		return nil, platform.Offload{}
	}
	for _, dir := range []struct {
		name     string
		from, to platform.Port
	}{{"TAP to the host", dut, peer}, {"host to the TAP", peer, dut}} {
		if n, err := dir.from.WriteBatch(platform.Batch{Frames: [][]byte{super}, Offs: []platform.Offload{o}}); n != 1 || err != nil {
			t.Fatalf("%s: WriteBatch of a %d-byte super-frame = %d, %v (counters %+v)", dir.name, len(super), n, err, dir.from.Counters())
		}
		got, gotO := read(dir.to)
		if gotO.GSOType&^platform.GSOECN != platform.GSOTCPv4 || gotO.GSOSize != 1448 {
			t.Errorf("%s: read offload %+v, want TCPv4 GSO of 1448", dir.name, gotO)
		}
		if !bytes.Equal(got[:54], super[:54]) || !bytes.Equal(got[60:], super[60:]) {
			t.Errorf("%s: the super-frame's headers or payload changed", dir.name)
		}
	}
}

// TestIntegrationOffloadMergesSegments writes the segments of a TCP
// stream, interleaved with a frame of another kind, in one WriteBatch to
// a TAP with offloads: the host receives the segments as one super-frame
// of the segments' GSO size (userspace GRO), holding their payload, and
// the other frame as it was.
func TestIntegrationOffloadMergesSegments(t *testing.T) {
	ns, dut := newTap(t, tap.Options{Up: true, Offload: true})
	peer := openPeer(t, ns, dut.Name(), afpacket.Options{Offload: true})
	src := net.HardwareAddr{2, 0, 0, 0, 0x77, 1}
	const mss = 1448
	super, o := platformtest.TCPFrame(t, dut.HardwareAddr(), src, 0, 6*mss, mss)
	segs := segments(t)(super, o)
	other := testFrame(dut.HardwareAddr(), src, 0xd4, 300)
	batch := append([][]byte{segs[0], other}, segs[1:]...)
	if sent, err := dut.WriteBatch(platform.Batch{Frames: batch, Offs: make([]platform.Offload, len(batch))}); sent != len(batch) || err != nil {
		t.Fatalf("WriteBatch of %d frames = %d, %v (counters %+v)", len(batch), sent, err, dut.Counters())
	}
	if c := dut.Counters(); c.TxPackets != 2 {
		t.Errorf("the TAP wrote %d frames, want 2 (one super-frame, one other frame)", c.TxPackets)
	}
	b := platform.NewBatch(peer.BatchSize())
	var gotSuper, gotOther bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !(gotSuper && gotOther); {
		k, err := peer.ReadBatch(b)
		if err != nil {
			t.Fatalf("peer: ReadBatch: %v", err)
		}
		for i := range k {
			f, fo := b.Frames[i], b.Offs[i]
			switch {
			case bytes.Equal(f, other):
				gotOther = true
			case len(f) == len(super):
				gotSuper = true
				if fo.GSOType&^platform.GSOECN != platform.GSOTCPv4 || fo.GSOSize != mss {
					t.Errorf("the merged frame's offload %+v, want TCPv4 GSO of %d", fo, mss)
				}
				if !bytes.Equal(f[54:], super[54:]) {
					t.Error("the merged frame's payload differs from the segments'")
				}
			case len(f) == len(segs[0]):
				t.Fatalf("the host received a segment alone (offload %+v)", fo)
			}
		}
	}
	if !gotSuper || !gotOther {
		t.Fatalf("within 5s: super-frame received %v, other frame %v", gotSuper, gotOther)
	}
}
