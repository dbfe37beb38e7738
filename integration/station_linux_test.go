package integration

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
)

// testType is the ethertype of the frames the tests send (IEEE local
// experimental), so that stray kernel traffic is never counted.
const testType = 0x88b5

// station sends and receives raw frames on a host's eth0, the way a test
// set would: what arrives is kept (copied) for the test to look at.
type station struct {
	// h is the host the station runs on.
	h *host
	// port is an AF_PACKET port on h's eth0.
	port *afpacket.Port
	// mac is eth0's address.
	mac frame.MAC
	// mu guards got.
	mu sync.Mutex
	// got holds copies of received test frames (ethertype testType, or
	// tagged), in arrival order.
	got [][]byte
}

func openStation(t *testing.T, h *host) *station {
	t.Helper()
	var p *afpacket.Port
	var err error
	h.Do(func() { p, err = afpacket.Open("eth0", afpacket.Options{}) })
	if err != nil {
		t.Fatalf("%s: open eth0: %v", h.Name, err)
	}
	s := &station{h: h, port: p, mac: frame.MACOf(p.HardwareAddr())}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([][]byte, 64)
		for {
			n, err := p.ReadBatch(platform.Batch{Frames: buf})
			if err != nil {
				return
			}
			s.mu.Lock()
			for _, f := range buf[:n] {
				e := frame.Ethernet(f)
				if e.Valid() && (e.InnerType() == testType) {
					s.got = append(s.got, append([]byte(nil), f...))
				}
			}
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { p.Close(); <-done })
	return s
}

// testFrame builds a test frame from src to dst carrying id, optionally
// with an 802.1Q tag (vlan > 0), padded to 60 bytes.
func testFrame(dst, src frame.MAC, id uint32, vlan uint16) []byte {
	b := make([]byte, 60)
	off := 12
	copy(b[0:6], dst[:])
	copy(b[6:12], src[:])
	if vlan > 0 {
		binary.BigEndian.PutUint16(b[12:], frame.TypeVLAN)
		binary.BigEndian.PutUint16(b[14:], vlan)
		off = 16
	}
	binary.BigEndian.PutUint16(b[off:], testType)
	binary.BigEndian.PutUint32(b[off+2:], id)
	return b
}

// frameID returns the id testFrame put in f.
func frameID(f []byte) uint32 {
	e := frame.Ethernet(f)
	off := 14
	if e.IsTagged() {
		off = 18
	}
	return binary.BigEndian.Uint32(f[off:])
}

// send writes frames on the station's eth0.
func (s *station) send(t *testing.T, frames ...[]byte) {
	t.Helper()
	for len(frames) > 0 {
		n, err := s.port.WriteBatch(platform.Batch{Frames: frames})
		if err != nil {
			t.Fatalf("%s: send: %v", s.h.Name, err)
		}
		if n == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		frames = frames[n:]
	}
}

// received returns copies of the test frames received so far whose id
// satisfies keep (nil: all).
func (s *station) received(keep func(id uint32) bool) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, f := range s.got {
		if keep == nil || keep(frameID(f)) {
			out = append(out, f)
		}
	}
	return out
}

// has reports whether a frame with id arrived.
func (s *station) has(id uint32) bool {
	return len(s.received(func(i uint32) bool { return i == id })) > 0
}

// waitFor polls until a frame with id arrived, or fails the test.
func (s *station) waitFor(t *testing.T, id uint32, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !s.has(id) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: frame %d never arrived at %s", what, id, s.h.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// barrier sends a broadcast marker from s and waits until every station
// in others has received it: frames sent from s before it, to any of
// them, have arrived by then (a port keeps order).
func (s *station) barrier(t *testing.T, id uint32, others ...*station) {
	t.Helper()
	s.send(t, testFrame(frame.Broadcast, s.mac, id, 0))
	for _, o := range others {
		o.waitFor(t, id, "barrier")
	}
}

var _ platform.Port = (*afpacket.Port)(nil)

// hwaddr parses a MAC or panics (test constants only).
func hwaddr(s string) frame.MAC {
	m, err := frame.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

var _ = net.HardwareAddr(nil)
