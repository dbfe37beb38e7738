package lacp

import (
	"testing"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
)

// TestSteadyStateAllocatesNothing checks that, once negotiated, receiving
// LACPDUs and markers, ticking (periodic transmissions included) and the
// data-path queries allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	clk := clock.NewFake()
	var last [FrameLen]byte // what we sent last, copied without allocating
	sends := 0
	a := New(Config{Timeout: Fast, SystemMAC: sysA}, clk, func(_ int, f []byte) { copy(last[:], f); sends++ }, nil)
	if err := a.AddPort(1, "eth1", portMAC(sysA, 1), DefaultPortPriority, true); err != nil {
		t.Fatal(err)
	}
	peer := PortInfo{SystemPriority: 1, System: sysX, Key: 7, PortPriority: 1, Port: 3, State: partnerState | StateTimeout}
	pdu := make([]byte, FrameLen)
	reply := func() {
		EncodeLACP(pdu, sysX, &LACPFields{Actor: peer, Partner: LACPDU(last[frame.HeaderLen:]).Actor()})
		a.Receive(1, pdu)
	}
	for range 50 {
		clk.Advance(tick)
		reply()
		a.Tick()
	}
	if !a.Distributing(1) {
		t.Fatalf("port 1 not distributing after 5 s: %+v", a.Ports())
	}
	reply()
	marker := markerFrame(1, 1, 16)
	tests := []struct {
		name string
		run  func()
	}{
		{"Receive a LACPDU and Tick, 100 ms apart", func() { clk.Advance(tick); a.Receive(1, pdu); a.Tick() }},
		{"a second apart: Receive, then Tick sending a periodic LACPDU", func() { clk.Advance(time.Second); a.Receive(1, pdu); a.Tick() }},
		{"Receive a marker", func() { a.Receive(1, marker) }},
		{"Collecting and Distributing", func() { _ = a.Collecting(1) && a.Distributing(1) }},
	}
	for _, tc := range tests {
		before := sends
		// AllocsPerRun truncates its average; count the allocations of
		// 200 runs as one, so that a single allocation shows.
		if got := testing.AllocsPerRun(1, func() {
			for range 200 {
				tc.run()
			}
		}); got != 0 {
			t.Errorf("%s: got %v allocations in 200 runs, want 0", tc.name, got)
		}
		if !a.Distributing(1) {
			t.Errorf("%s: port 1 stopped distributing", tc.name)
		}
		t.Logf("%s: %d frames sent", tc.name, sends-before)
	}
}
