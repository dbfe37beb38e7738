package trunk

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
)

// fakeProto is a protocol with a control plane, standing in for LACP: it
// sends a hello out of each port it is given, starts every port
// distributing but not collecting, toggles a port's collecting on each
// slow-protocols frame the port receives, and records its ticks.
type fakeProto struct {
	// ctl is the Control from Attach.
	ctl Control
	// inputs are copies of the frames Input received, with their port.
	inputs []string
	// ticks are the times Tick was called with.
	ticks []time.Time
	// detached is set by Detach.
	detached bool
	// sendErr is the error of the last Send.
	sendErr error
	// last is the last member added.
	last *Member
}

// helloFrame is what fakeProto sends out of each new port.
func helloFrame(src []byte) []byte {
	b := make([]byte, 60)
	frame.Encode(b, frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, frame.MACOf(src), frame.TypeSlow)
	copy(b[14:], "hello")
	return b
}

func (f *fakeProto) Name() Proto                { return ProtoLACP }
func (f *fakeProto) Distribution() Distribution { return DistributeHash }
func (f *fakeProto) Attach(c Control)           { f.ctl = c }
func (f *fakeProto) Detach()                    { f.detached = true }
func (f *fakeProto) PortRemoved(*Member)        {}
func (f *fakeProto) LinkChanged(*Member)        {}
func (f *fakeProto) Tick(now time.Time)         { f.ticks = append(f.ticks, now) }

func (f *fakeProto) PortAdded(m *Member) {
	f.last = m
	f.sendErr = f.ctl.Send(m, helloFrame(m.HardwareAddr()))
	f.ctl.SetState(m, false, true)
}

func (f *fakeProto) Input(m *Member, fr []byte) {
	f.inputs = append(f.inputs, m.Name()+":"+string(bytes.TrimRight(fr[14:19], "\x00")))
	f.ctl.SetState(m, !m.Collecting(), m.Distributing())
}

func (f *fakeProto) PortDetail(m *Member) any { return "detail of " + m.Name() }

// TestProtocolHook drives the protocol interface with fakeProto: control
// frames out of one given port, control frames in, state changes that
// the data path obeys, ticks on the trunk clock, detach on replacement.
func TestProtocolHook(t *testing.T) {
	fx := newFixture(t, ProtoFailover)
	fp := &fakeProto{}
	if err := fx.tr.SetProtocol(fp); err != nil {
		t.Fatal(err)
	}
	fx.add(PortConfig{})
	fx.add(PortConfig{})
	if fp.sendErr != nil {
		t.Fatalf("Control.Send: %v", fp.sendErr)
	}
	// Each far end got exactly its own port's hello.
	for i := range fx.far {
		got := fx.drain(i)
		if len(got) != 1 || !bytes.Equal(got[0], helloFrame(nearMAC(i))) {
			t.Fatalf("peer%d got %d frames (%q), want its port's hello only", i, len(got), got)
		}
	}
	fx.consume()
	// Not collecting yet: data is refused.
	fx.sendFar(0, udp4(1, 1))
	fx.settled(1)
	if s := fx.tr.Stats(); s.RxRefused != 1 || s.RxPackets != 0 {
		t.Fatalf("before collecting: RxRefused, RxPackets = %d, %d; want 1, 0", s.RxRefused, s.RxPackets)
	}
	// A control frame on port 0 turns its collecting on; then data passes.
	ctl := slowFrame(farMAC(0))
	copy(ctl[14:], "lacp!")
	fx.sendFar(0, ctl, udp4(1, 2))
	fx.settled(3)
	waitFor(t, "the data frame to be read", func() bool { return len(fx.rx) > 0 })
	got := fx.received()
	if len(got) != 1 || seqOf(got[0]) != 2 {
		t.Fatalf("after the control frame, ReadBatch gave %d frames, want the data frame (seq 2)", len(got))
	}
	if want := []string{"eth0:lacp!"}; !slices.Equal(fp.inputs, want) {
		t.Errorf("Input got %q, want %q", fp.inputs, want)
	}
	// Port 1 still refuses.
	fx.sendFar(1, udp4(1, 3))
	fx.settled(4)
	if s := fx.tr.Stats(); s.RxRefused != 2 {
		t.Errorf("port 1 not collecting: RxRefused = %d, want 2", s.RxRefused)
	}
	// Ports and the detail hook.
	var flags, details []string
	for _, p := range fx.tr.Ports() {
		flags = append(flags, strings.Join(p.Flags, ","))
		details = append(details, p.Detail.(string))
	}
	if want := []string{"master,active,collecting,distributing", "active,distributing"}; !slices.Equal(flags, want) {
		t.Errorf("flags = %q, want %q", flags, want)
	}
	if want := []string{"detail of eth0", "detail of eth1"}; !slices.Equal(details, want) {
		t.Errorf("details = %q, want %q", details, want)
	}
	// Ticks carry the trunk clock's time.
	fx.clk.Advance(time.Second)
	fx.tr.Tick()
	if len(fp.ticks) != 1 || !fp.ticks[0].Equal(fx.clk.Now()) {
		t.Errorf("ticks = %v, want one at %v", fp.ticks, fx.clk.Now())
	}
	// Replaced: detached, and its Control does nothing any more.
	if err := fx.tr.SetProtocol(builtin(t, ProtoBroadcast)); err != nil {
		t.Fatal(err)
	}
	if !fp.detached {
		t.Errorf("replaced protocol not detached")
	}
	if err := fp.ctl.Send(fp.last, helloFrame(nearMAC(1))); err == nil {
		t.Errorf("Send after Detach succeeded, want an error")
	}
}
