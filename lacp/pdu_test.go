package lacp

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/swctl/swctl/frame"
)

// samplePDU returns a LACPDU frame with distinct values in every field.
func samplePDU(version byte) []byte {
	return lacpFrame(version, sysX,
		PortInfo{SystemPriority: 0x1234, System: sysX, Key: 0x0a0b, PortPriority: 0x0c0d, Port: 0x0e0f, State: 0x3d},
		PortInfo{SystemPriority: 0x4321, System: sysY, Key: 0xb0a0, PortPriority: 0xd0c0, Port: 0xf0e0, State: 0x47})
}

// TestEncodeLACPLayout checks every octet of an encoded LACPDU against
// the layout of 802.1AX 6.4.2.3 (as Wireshark's dissector reads it).
func TestEncodeLACPLayout(t *testing.T) {
	got := samplePDU(1)
	want := "0180c2000002" + "02cc00000001" + "8809" + // Ethernet
		"01" + "01" + // subtype LACP, version 1
		"01" + "14" + "1234" + "02cc00000001" + "0a0b" + "0c0d" + "0e0f" + "3d" + "000000" + // actor
		"02" + "14" + "4321" + "02dd00000001" + "b0a0" + "d0c0" + "f0e0" + "47" + "000000" + // partner
		"03" + "10" + "0000" + "000000000000000000000000" + // collector
		"00" + "00" + // terminator
		hex.EncodeToString(make([]byte, 50)) // reserved
	if h := hex.EncodeToString(got); h != want {
		t.Errorf("encoded LACPDU:\ngot  %s\nwant %s", h, want)
	}
	if len(got) != 124 {
		t.Errorf("frame length: got %d, want 124", len(got))
	}
}

// TestEncodeMarkerLayout checks every octet of an encoded Marker Response
// against 802.1AX 6.5.3.3.
func TestEncodeMarkerLayout(t *testing.T) {
	got := make([]byte, FrameLen+4)
	n := EncodeMarker(got, sysX, &MarkerFields{Response: true, RequesterPort: 0x0102, RequesterSystem: sysY, TransactionID: 0xa1b2c3d4})
	want := "0180c2000002" + "02cc00000001" + "8809" +
		"02" + "01" + // subtype marker, version 1
		"02" + "10" + "0102" + "02dd00000001" + "a1b2c3d4" + "0000" + // response TLV
		"00" + "00" + hex.EncodeToString(make([]byte, 90))
	if h := hex.EncodeToString(got[:n]); h != want {
		t.Errorf("encoded marker response:\ngot  %s\nwant %s", h, want)
	}
}

// TestDecode checks what Decode accepts and why it refuses the rest.
func TestDecode(t *testing.T) {
	set := func(f []byte, off int, v ...byte) []byte {
		copy(f[frame.HeaderLen+off:], v)
		return f
	}
	padded := append(samplePDU(1), make([]byte, 4)...)
	tests := []struct {
		name  string
		frame []byte
		kind  Kind
		cause Cause
	}{
		{"version 1", samplePDU(1), KindLACP, CauseNone},
		{"version 1 with trailing padding", padded, KindLACP, CauseNone},
		{"version 2 with extra TLVs", samplePDU(2), KindLACP, CauseNone},
		{"version 2, junk after the collector TLV", set(samplePDU(2), offTerminator, 0xff, 0xff, 0xff), KindLACP, CauseNone},
		{"version 255", samplePDU(255), KindLACP, CauseNone},
		{"version 0", samplePDU(0), KindNone, CauseVersion},
		{"empty", nil, KindNone, CauseNotSlow},
		{"13 bytes", samplePDU(1)[:13], KindNone, CauseNotSlow},
		{"ethertype IPv6", set(samplePDU(1), -2, 0x86, 0xdd), KindNone, CauseNotSlow},
		{"VLAN tagged", append(append(append([]byte{}, samplePDU(1)[:12]...), 0x81, 0x00, 0x00, 0x05), samplePDU(1)[12:]...), KindNone, CauseNotSlow},
		{"slow header, no subtype", samplePDU(1)[:14], KindNone, CauseTruncated},
		{"subtype 3 (OAM)", set(samplePDU(1), 0, 3), KindNone, CauseSubtype},
		{"subtype 0", set(samplePDU(1), 0, 0), KindNone, CauseSubtype},
		{"truncated after the partner TLV", samplePDU(1)[:14+42], KindNone, CauseTruncated},
		{"truncated reserved octets", samplePDU(1)[:14+109], KindNone, CauseTruncated},
		{"actor TLV type 0", set(samplePDU(1), offActorTLV, 0), KindNone, CauseTLVType},
		{"actor TLV length 21", set(samplePDU(1), offActorTLV+1, 21), KindNone, CauseTLVLength},
		{"actor TLV length 255", set(samplePDU(1), offActorTLV+1, 255), KindNone, CauseTLVLength},
		{"partner TLV type 3", set(samplePDU(1), offPartnerTLV, 3), KindNone, CauseTLVType},
		{"partner TLV length 0", set(samplePDU(1), offPartnerTLV+1, 0), KindNone, CauseTLVLength},
		{"collector TLV length 20", set(samplePDU(1), offCollectorTLV+1, 20), KindNone, CauseTLVLength},
		{"version 2, collector TLV type 5", set(samplePDU(2), offCollectorTLV, 5), KindNone, CauseTLVType},
		{"version 1, terminator type 4", set(samplePDU(1), offTerminator, 4), KindNone, CauseTLVType},
		{"version 1, terminator length 2", set(samplePDU(1), offTerminator+1, 2), KindNone, CauseTLVLength},
		{"marker information", markerFrame(1, 1, 16), KindMarkerInfo, CauseNone},
		{"marker response", markerFrame(1, 2, 16), KindMarkerResponse, CauseNone},
		{"marker version 2", markerFrame(2, 1, 16), KindMarkerInfo, CauseNone},
		{"marker version 0", markerFrame(0, 1, 16), KindNone, CauseVersion},
		{"marker TLV type 0", markerFrame(1, 0, 16), KindNone, CauseTLVType},
		{"marker TLV length 255", markerFrame(1, 1, 255), KindNone, CauseTLVLength},
		{"marker terminator length 1", set(markerFrame(1, 1, 16), offMarkerTerminator+1, 1), KindNone, CauseTLVLength},
		{"marker terminator type 1", set(markerFrame(1, 1, 16), offMarkerTerminator, 1), KindNone, CauseTLVType},
		{"marker truncated", markerFrame(1, 1, 16)[:14+20], KindNone, CauseTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, c := Decode(tc.frame)
			if k != tc.kind || c != tc.cause {
				t.Errorf("Decode: got kind %d cause %q, want kind %d cause %q", k, c, tc.kind, tc.cause)
			}
		})
	}
}

// TestLACPDUAccessors checks that a LACPDU of any accepted version reads
// back the version-1 fields it was built with.
func TestLACPDUAccessors(t *testing.T) {
	actor := PortInfo{SystemPriority: 0x1234, System: sysX, Key: 0x0a0b, PortPriority: 0x0c0d, Port: 0x0e0f, State: 0x3d}
	partner := PortInfo{SystemPriority: 0x4321, System: sysY, Key: 0xb0a0, PortPriority: 0xd0c0, Port: 0xf0e0, State: 0x47}
	for _, version := range []byte{1, 2, 200} {
		p := LACPDU(samplePDU(version)[frame.HeaderLen:])
		if p.Subtype() != SubtypeLACP || p.Version() != version {
			t.Errorf("version %d: got subtype %d version %d, want %d %d", version, p.Subtype(), p.Version(), SubtypeLACP, version)
		}
		if got := p.Actor(); got != actor {
			t.Errorf("version %d: Actor(): got %+v, want %+v", version, got, actor)
		}
		if got := p.Partner(); got != partner {
			t.Errorf("version %d: Partner(): got %+v, want %+v", version, got, partner)
		}
		if got := p.CollectorMaxDelay(); got != 0 {
			t.Errorf("version %d: CollectorMaxDelay(): got %d, want 0", version, got)
		}
	}
}

// TestStateString checks how state bits are shown.
func TestStateString(t *testing.T) {
	tests := []struct {
		s    State
		want string
	}{
		{0, "0x00<>"},
		{StateActivity | StateAggregation, "0x05<activity,aggregation>"},
		{0xff, "0xff<activity,timeout,aggregation,synchronization,collecting,distributing,defaulted,expired>"},
	}
	for _, tc := range tests {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("State(%#x).String(): got %q, want %q", uint8(tc.s), got, tc.want)
		}
	}
}

// TestDecodeAllocatesNothing checks that Decode and the accessors do not
// allocate.
func TestDecodeAllocatesNothing(t *testing.T) {
	f := samplePDU(2)
	var sink PortInfo
	got := testing.AllocsPerRun(100, func() {
		if k, _ := Decode(f); k == KindLACP {
			sink = LACPDU(f[frame.HeaderLen:]).Actor()
		}
	})
	if got != 0 {
		t.Errorf("Decode and Actor(): got %v allocations, want 0", got)
	}
	_ = sink
	if !bytes.Equal(f[:6], SlowProtocolsMAC[:]) {
		t.Errorf("destination: got % x, want % x", f[:6], SlowProtocolsMAC)
	}
}
