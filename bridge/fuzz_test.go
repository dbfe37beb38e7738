package bridge

import (
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
)

// fuzzFrames cuts data into (ingress member, frame) pairs: each record is
// one control byte (ingress member in the low 2 bits, pad the frame past
// 1400 bytes when bit 2 is set, advance the clock by bits 3-7 seconds),
// one length byte, and that many frame bytes.
func fuzzFrames(data []byte, each func(in int, advance time.Duration, f []byte)) {
	for len(data) >= 2 {
		ctl, n := data[0], int(data[1])
		data = data[2:]
		n = min(n, len(data))
		f := data[:n:n]
		data = data[n:]
		if ctl&4 != 0 {
			f = append(append([]byte(nil), f...), make([]byte, 1400)...)
		}
		each(int(ctl&3), time.Duration(ctl>>3)*time.Second, f)
	}
}

// fuzzRecord encodes one fuzzFrames record.
func fuzzRecord(in int, pad bool, advance int, f []byte) []byte {
	ctl := byte(in&3) | byte(advance<<3)
	if pad {
		ctl |= 4
	}
	return append([]byte{ctl, byte(len(f))}, f...)
}

// FuzzForward feeds random frames to a bridge of four members with mixed
// flags, MTUs and link states, a span port, ageing on and a small table,
// and checks that it never panics and that its counters stay consistent.
func FuzzForward(f *testing.F) {
	seeds := [][]byte{
		fuzzRecord(0, false, 0, ip4(stB, stA)),
		append(fuzzRecord(1, false, 0, ip4(stA, stB)), fuzzRecord(0, false, 1, ip4(stB, stA))...),
		fuzzRecord(2, true, 0, ip4(frame.Broadcast, stC)),
		fuzzRecord(0, false, 0, tagged(stB, stA, frame.TypeVLAN, 7, frame.TypeIPv4, 64)),
		fuzzRecord(3, false, 0, eth(frame.MAC{0x01, 0x80, 0xc2, 0, 0, 2}, stA, frame.TypeSlow, 60)),
		fuzzRecord(1, false, 31, eth(stB, frame.Broadcast, 0x8137, 60)),
		fuzzRecord(0, false, 0, []byte{1, 2, 3}),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fx := newFixtureOpts(t, Options{Timeout: 10 * time.Second, MaxAddr: 16}, false, "a", "b")
		fx.add("c", PortFlags{Learning: true, BlockNonIP: true}, false)
		fx.add("d", PortFlags{Discover: true}, false)
		fx.ports["b"].mtu.Store(100)
		fx.ports["d"].SetLink(0)
		span := newTestPort("span0", false)
		span.mtu.Store(200)
		fx.b.AddSpan(span)
		names := []string{"a", "b", "c", "d"}
		fuzzFrames(data, func(in int, advance time.Duration, frm []byte) {
			fx.clk.Advance(advance)
			fx.send(names[in], frm)
		})
		s := fx.b.Stats()
		fates := s.Forwarded + s.Flooded + s.DroppedRunt + s.DroppedLinkLocal +
			s.DroppedBadSource + s.DroppedBlockNonIP + s.DroppedSamePort
		if fates != s.Received {
			t.Errorf("frames counted by fate: %d, want Received %d (%+v)", fates, s.Received, s)
		}
		var copies uint64
		for _, p := range fx.ports {
			copies += p.count.Load()
		}
		if copies != s.Sent {
			t.Errorf("members got %d copies, Sent = %d", copies, s.Sent)
		}
		if span.count.Load() != s.SpanSent || s.SpanSent > s.Forwarded+s.Flooded {
			t.Errorf("span got %d copies, SpanSent = %d, frames forwarded %d", span.count.Load(), s.SpanSent, s.Forwarded+s.Flooded)
		}
		if n := fx.b.fdb.len(); n > 16 {
			t.Errorf("table holds %d entries, want at most MaxAddr 16", n)
		}
		for _, a := range fx.b.Addrs() {
			if a.MAC.IsMulticast() || a.MAC.IsZero() {
				t.Errorf("learned bad address %s", a.MAC)
			}
			if a.Port == "d" {
				t.Errorf("learned %s on d, which has Learning off", a.MAC)
			}
		}
	})
}
