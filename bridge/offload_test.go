package bridge

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/platformtest"
)

// offloadPort is a testPort that carries offloads: WriteBatch records
// each frame with its Offload.
type offloadPort struct {
	*testPort
	// omu guards offs.
	omu sync.Mutex
	// offs are the offloads of the frames recorded, in order.
	offs []platform.Offload
}

var _ platform.Port = (*offloadPort)(nil)

func (p *offloadPort) Offloads() bool { return true }

func (p *offloadPort) WriteBatch(b platform.Batch) (int, error) {
	n, err := p.testPort.WriteBatch(platform.Batch{Frames: b.Frames})
	if p.record {
		p.omu.Lock()
		for i := range b.Frames {
			p.offs = append(p.offs, b.Offload(i))
		}
		p.omu.Unlock()
	}
	return n, err
}

func (p *offloadPort) takeOffs() []platform.Offload {
	p.omu.Lock()
	defer p.omu.Unlock()
	o := p.offs
	p.offs = nil
	return o
}

// addOffload adds a member that carries offloads.
func (fx *fixture) addOffload(name string, record bool) *offloadPort {
	fx.t.Helper()
	p := &offloadPort{testPort: newTestPort(name, record)}
	if err := fx.b.AddPort(p, DefaultPortFlags()); err != nil {
		fx.t.Fatalf("AddPort(%s) = %v", name, err)
	}
	fx.ports[name] = p.testPort
	return p
}

// tcpFrame builds a TCP/IPv4 frame from src to dst with n payload bytes,
// behind an 802.1Q tag when vlan is not 0. With gso > 0 it is a
// super-frame with a partial checksum, as a local stack with TSO hands it
// to a veth: its Offload says TCPv4, GSO size gso, NEEDS_CSUM. With gso
// 0 it has a partial checksum and NEEDS_CSUM only.
func tcpFrame(t testing.TB, dst, src frame.MAC, vlan uint16, n, gso int) ([]byte, platform.Offload) {
	t.Helper()
	return platformtest.TCPFrame(t, net.HardwareAddr(dst[:]), net.HardwareAddr(src[:]), vlan, n, gso)
}

// tcpChecksumOK reports whether f's TCP/IPv4 checksum verifies (f may
// carry one tag).
func tcpChecksumOK(f []byte) bool {
	l3 := 14
	if frame.Ethernet(f).IsTagged() {
		l3 += 4
	}
	l4 := l3 + int(f[l3]&0xf)*4
	s := uint32(6 + len(f) - l4)
	for i := l3 + 12; i < l3+20; i += 2 {
		s += uint32(binary.BigEndian.Uint16(f[i:]))
	}
	for i := l4; i < len(f); i += 2 {
		if i+1 < len(f) {
			s += uint32(binary.BigEndian.Uint16(f[i:]))
		} else {
			s += uint32(f[i]) << 8
		}
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return s == 0xffff
}

// TestForwardKeepsOffloads checks that frames keep their offloads to a port that
// carries them and are finished in software for one that does not.
func TestForwardKeepsOffloads(t *testing.T) {
	fx := newFixture(t, "plain")
	in := fx.addOffload("in", true)
	off := fx.addOffload("off", true)
	_ = in
	m := fx.b.Member("in")
	stOff, stPlain := mac(0x10), mac(0x11)
	// Teach the bridge where the stations are.
	fx.send("off", ip4(stA, stOff))
	fx.send("plain", ip4(stA, stPlain))
	fx.reset()
	off.takeOffs()

	t.Run("partial checksum flooded", func(t *testing.T) {
		f, o := tcpFrame(t, frame.Broadcast, stA, 0, 1000, 0)
		orig := bytes.Clone(f)
		before := fx.b.Stats()
		fx.b.Forward(fx.w, m, platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}, fx.clk.Now())
		if got := off.take(); len(got) != 1 || !bytes.Equal(got[0], orig) {
			t.Fatalf("offload port got %d frames, want the partial frame unchanged", len(got))
		}
		if got := off.takeOffs(); len(got) != 1 || got[0] != o {
			t.Fatalf("offload port got offloads %+v, want [%+v]", got, o)
		}
		got := fx.ports["plain"].take()
		if len(got) != 1 || len(got[0]) != len(f) || !tcpChecksumOK(got[0]) {
			t.Fatalf("plain port got %d frames (checksum ok: %v), want one with its checksum finished", len(got), len(got) == 1 && tcpChecksumOK(got[0]))
		}
		if !bytes.Equal(f, orig) {
			t.Fatal("Forward changed the ingress frame")
		}
		wantDelta(t, "partial checksum", before, fx.b.Stats(), map[string]uint64{
			"Received": 1, "Flooded": 1, "Sent": 2, "SoftwareOffload": 1, "Segments": 1})
	})

	for _, vlan := range []uint16{0, 7} {
		t.Run("super-frame segmented for a plain port, vlan "+string(rune('0'+vlan)), func(t *testing.T) {
			f, o := tcpFrame(t, stPlain, stA, vlan, 10000, 1448)
			fx.b.Forward(fx.w, m, platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}, fx.clk.Now())
			got := fx.ports["plain"].take()
			if len(got) != 7 { // ceil(10000/1448)
				t.Fatalf("plain port got %d frames, want 7 segments", len(got))
			}
			total := 0
			for i, s := range got {
				if !tcpChecksumOK(s) {
					t.Errorf("segment %d: TCP checksum does not verify", i)
				}
				if !bytes.Equal(s[:12], f[:12]) || (vlan != 0 && frame.Ethernet(s).VLAN() != vlan) {
					t.Errorf("segment %d: L2 header % x, want % x (tag kept)", i, s[:18], f[:18])
				}
				hdr := 54
				if vlan != 0 {
					hdr += 4
				}
				total += len(s) - hdr
				if frame.Ethernet(s).PayloadLen() > 1500 {
					t.Errorf("segment %d: %d bytes of payload, over the MTU", i, frame.Ethernet(s).PayloadLen())
				}
			}
			if total != 10000 {
				t.Errorf("segments carry %d payload bytes, want 10000", total)
			}
		})
	}

	t.Run("super-frame to an offload port passes whole", func(t *testing.T) {
		fx.reset()
		off.takeOffs()
		f, o := tcpFrame(t, stOff, stA, 0, 30000, 1448)
		fx.b.Forward(fx.w, m, platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}, fx.clk.Now())
		if got := off.take(); len(got) != 1 || !bytes.Equal(got[0], f) {
			t.Fatalf("offload port got %d frames, want the super-frame whole", len(got))
		}
		if got := off.takeOffs(); len(got) != 1 || got[0] != o {
			t.Fatalf("offload port got offloads %+v, want [%+v]", got, o)
		}
	})

	t.Run("MTU is checked by segment size", func(t *testing.T) {
		f, o := tcpFrame(t, stOff, stA, 0, 30000, 1461) // 1461+40 > 1500
		before := fx.b.Stats()
		fx.b.Forward(fx.w, m, platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}, fx.clk.Now())
		if got := off.take(); len(got) != 0 {
			t.Fatalf("offload port got %d frames, want the oversize super-frame dropped", len(got))
		}
		wantDelta(t, "oversize segments", before, fx.b.Stats(), map[string]uint64{
			"Received": 1, "Forwarded": 1, "DroppedOversize": 1})
	})

	t.Run("unsupported offload dropped for a plain port, logged once", func(t *testing.T) {
		var logBuf bytes.Buffer
		fx.b.log = slogTo(&logBuf)
		// UFO, not done in software; small enough for the MTU check
		// (a super-frame that cannot be parsed counts at its own size).
		f, o := tcpFrame(t, stPlain, stA, 0, 1000, 500)
		o.GSOType = platform.GSOUDP
		before := fx.b.Stats()
		for range 2 {
			fx.b.Forward(fx.w, m, platform.Batch{Frames: [][]byte{f}, Offs: []platform.Offload{o}}, fx.clk.Now())
		}
		if got := fx.ports["plain"].take(); len(got) != 0 {
			t.Fatalf("plain port got %d frames, want none", len(got))
		}
		wantDelta(t, "unsupported offload", before, fx.b.Stats(), map[string]uint64{
			"Received": 2, "Forwarded": 2, "DroppedOffload": 2})
		if n := strings.Count(logBuf.String(), "offload cannot be done in software"); n != 1 {
			t.Fatalf("logged %d times, want once:\n%s", n, logBuf.String())
		}
	})
}

// TestForwardWithOffloadsAllocatesNothing checks the offload path, both to a
// port that carries offloads and through software segmentation.
func TestForwardWithOffloadsAllocatesNothing(t *testing.T) {
	fx := newFixtureOpts(t, Options{Timeout: DefaultTimeout}, false, "plain")
	fx.addOffload("in", false)
	fx.addOffload("off", false)
	stOff, stPlain := mac(0x10), mac(0x11)
	fx.send("off", ip4(stA, stOff))
	fx.send("plain", ip4(stA, stPlain))
	m, now := fx.b.Member("in"), fx.clk.Now()
	toOff, o1 := tcpFrame(t, stOff, stA, 0, 60000, 1448)
	toPlain, o2 := tcpFrame(t, stPlain, stA, 100, 60000, 1448)
	partial, o3 := tcpFrame(t, frame.Broadcast, stA, 0, 1400, 0)
	keep := bytes.Clone(toPlain)
	frames := [][]byte{toOff, toPlain, partial, toOff, toPlain}
	offs := []platform.Offload{o1, o2, o3, o1, o2}
	run := func() { fx.b.Forward(fx.w, m, platform.Batch{Frames: frames, Offs: offs}, now) }
	run()
	if got := testing.AllocsPerRun(100, run); got != 0 {
		t.Errorf("Forward: %v allocations per run, want 0", got)
	}
	if !bytes.Equal(keep, toPlain) {
		t.Error("software segmentation changed the ingress frame")
	}
}

// slogTo returns a logger writing text lines to w.
func slogTo(w *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
