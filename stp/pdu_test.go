package stp

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
)

// srcMAC is the source of the frames the codec tests build.
var srcMAC = [6]byte{0x02, 0xaa, 0, 0, 0, 0x11}

// sampleFields are the fields of the BPDUs the codec tests build.
var sampleFields = Fields{
	Flags:        FlagTC | FlagProposal | uint8(RoleBitsDesignated)<<flagRoleShift | FlagLearning | FlagAgreement,
	Root:         NewBridgeID(4096, [6]byte{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}),
	RootPathCost: 20000,
	Bridge:       NewBridgeID(32768, [6]byte{0x02, 0xaa, 0, 0, 0, 0x01}),
	Port:         NewPortID(128, 3),
	MessageAge:   1 * time.Second,
	MaxAge:       20 * time.Second,
	HelloTime:    2 * time.Second,
	ForwardDelay: 15 * time.Second,
}

// encoded returns a frame of kind (KindConfig, KindRST or KindTCN) with
// sampleFields.
func encoded(k Kind) []byte {
	b := make([]byte, FrameLen)
	switch k {
	case KindConfig:
		EncodeConfig(b, srcMAC, &sampleFields)
	case KindRST:
		EncodeRST(b, srcMAC, &sampleFields)
	case KindTCN:
		EncodeTCN(b, srcMAC)
	}
	return b
}

// edit returns a copy of f changed by fn.
func edit(f []byte, fn func(b []byte)) []byte {
	b := bytes.Clone(f)
	fn(b)
	return b
}

// setLength sets the 802.3 length field of a frame.
func setLength(b []byte, n int) { binary.BigEndian.PutUint16(b[12:14], uint16(n)) }

// TestEncodeWire checks the octets of each encoded frame against the
// layout of 802.1D-2004 clause 9, written out by hand.
func TestEncodeWire(t *testing.T) {
	head := "0180c2000000" + "02aa00000011"
	body := "0000" // protocol identifier
	fields := "1000021122334455" + "00004e20" + "800002aa00000001" + "8003" + "0100" + "1400" + "0200" + "0f00"
	tests := []struct {
		kind Kind
		want string
	}{
		{KindConfig, head + "0026" + "424203" + body + "00" + "00" + "01" + fields},
		{KindRST, head + "0027" + "424203" + body + "02" + "02" + "5f" + fields + "00"},
		{KindTCN, head + "0007" + "424203" + body + "00" + "80"},
	}
	for _, tc := range tests {
		got := encoded(tc.kind)
		want, _ := hex.DecodeString(tc.want)
		want = append(want, make([]byte, FrameLen-len(want))...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s BPDU frame:\ngot  %x\nwant %x", tc.kind, got, want)
		}
	}
}

// TestDecodeRoundTrip checks that what the encoders write decodes to the
// same fields.
func TestDecodeRoundTrip(t *testing.T) {
	for _, k := range []Kind{KindConfig, KindRST, KindTCN} {
		f := encoded(k)
		got, c := Decode(f)
		if got != k || c != CauseNone {
			t.Fatalf("%s BPDU: Decode got %s, %q; want %s, valid", k, got, c, k)
		}
		p := Payload(f)
		if k == KindTCN {
			if p.Type() != TypeTCN || len(p) != TCNLen {
				t.Errorf("TCN payload: got type %#x, %d octets; want 0x80, 4", p.Type(), len(p))
			}
			continue
		}
		wantFlags := sampleFields.Flags
		if k == KindConfig {
			wantFlags &= FlagTC | FlagTCAck
		}
		got2 := p.Fields()
		want := sampleFields
		want.Flags = wantFlags
		if got2 != want {
			t.Errorf("%s BPDU fields:\ngot  %+v\nwant %+v", k, got2, want)
		}
	}
	if r := Payload(encoded(KindRST)).Role(); r != RoleBitsDesignated {
		t.Errorf("RST BPDU role: got %d, want designated (3)", r)
	}
}

// TestDecode checks what Decode accepts and why it drops the rest: one
// case per cause, and the forward-compatible cases it must accept.
func TestDecode(t *testing.T) {
	cfg, rst, tcn := encoded(KindConfig), encoded(KindRST), encoded(KindTCN)
	bpdu := func(b []byte) []byte { return b[HeaderLen:] }
	tests := []struct {
		name  string
		frame []byte
		kind  Kind
		cause Cause
	}{
		{"configuration BPDU", cfg, KindConfig, CauseNone},
		{"RST BPDU", rst, KindRST, CauseNone},
		{"TCN BPDU", tcn, KindTCN, CauseNone},
		{"RST BPDU of version 3 (MSTP) is read as RSTP", edit(rst, func(b []byte) { bpdu(b)[offVersion] = 3 }), KindRST, CauseNone},
		{"RST BPDU of version 200 is read as RSTP", edit(rst, func(b []byte) { bpdu(b)[offVersion] = 200 }), KindRST, CauseNone},
		{"MST BPDU with its MST part (102 octets) is read as RSTP", mstFrame(), KindRST, CauseNone},
		{"configuration BPDU of version 2 is a configuration BPDU", edit(cfg, func(b []byte) { bpdu(b)[offVersion] = 2 }), KindConfig, CauseNone},
		{"TCN BPDU of version 2 is a TCN BPDU", edit(tcn, func(b []byte) { bpdu(b)[offVersion] = 2 }), KindTCN, CauseNone},
		{"unpadded frame (length exactly the BPDU)", rst[:HeaderLen+RSTLen], KindRST, CauseNone},
		{"RST BPDU with an unknown role in its flags", edit(rst, func(b []byte) { bpdu(b)[offFlags] &^= flagRoleMask }), KindRST, CauseNone},

		{"shorter than an Ethernet header", rst[:10], KindNone, CauseTruncated},
		{"Ethernet header only", rst[:frame.HeaderLen], KindNone, CauseTruncated},
		{"not to the bridge group address (LLDP's)", edit(rst, func(b []byte) { b[5] = 0x0e }), KindNone, CauseNotBPDU},
		{"Ethernet II frame (an ethertype, not a length)", edit(rst, func(b []byte) { setLength(b, 0x0800) }), KindNone, CauseNotBPDU},
		{"802.1Q-tagged frame", edit(rst, func(b []byte) { setLength(b, 0x8100) }), KindNone, CauseNotBPDU},
		{"LLC other than 42 42 03 (SNAP)", edit(rst, func(b []byte) { b[14], b[15] = 0xaa, 0xaa }), KindNone, CauseNotBPDU},
		{"LLC control other than UI", edit(rst, func(b []byte) { b[16] = 0x13 }), KindNone, CauseNotBPDU},
		{"LLC header cut", rst[:frame.HeaderLen+2], KindNone, CauseTruncated},
		{"802.3 length longer than the frame", edit(rst, func(b []byte) { setLength(b, 100) }), KindNone, CauseTruncated},
		{"802.3 length leaves less than 4 BPDU octets", edit(tcn, func(b []byte) { setLength(b, llcLen+3) }), KindNone, CauseTruncated},
		{"frame cut inside the BPDU", tcn[:HeaderLen+2], KindNone, CauseTruncated},
		{"configuration BPDU of 34 octets", edit(cfg, func(b []byte) { setLength(b, llcLen+ConfigLen-1) }), KindNone, CauseTruncated},
		{"RST BPDU of 35 octets", edit(rst, func(b []byte) { setLength(b, llcLen+RSTLen-1) }), KindNone, CauseTruncated},
		{"protocol identifier 1", edit(rst, func(b []byte) { bpdu(b)[1] = 1 }), KindNone, CauseProtocol},
		{"BPDU type 0x01", edit(rst, func(b []byte) { bpdu(b)[offType] = 0x01 }), KindNone, CauseType},
		{"BPDU type 0x81", edit(tcn, func(b []byte) { bpdu(b)[offType] = 0x81 }), KindNone, CauseType},
		{"RST BPDU of version 0", edit(rst, func(b []byte) { bpdu(b)[offVersion] = 0 }), KindNone, CauseVersion},
		{"RST BPDU of version 1", edit(rst, func(b []byte) { bpdu(b)[offVersion] = 1 }), KindNone, CauseVersion},
		{"configuration BPDU with message age = max age", edit(cfg, func(b []byte) {
			copy(bpdu(b)[offMessageAge:], bpdu(b)[offMaxAge:offMaxAge+2])
		}), KindNone, CauseMessageAge},
	}
	for _, tc := range tests {
		k, c := Decode(tc.frame)
		if k != tc.kind || c != tc.cause {
			t.Errorf("%s: got %s, %q; want %s, %q", tc.name, k, c, tc.kind, tc.cause)
		}
	}
}

// mstFrame returns an MST BPDU (version 3, 102 octets: the CIST part of an
// RST BPDU, a version 3 length and the MST configuration).
func mstFrame() []byte {
	rst := encoded(KindRST)
	const mstLen = 102
	b := make([]byte, HeaderLen+mstLen)
	copy(b, rst[:HeaderLen+RSTLen])
	setLength(b, llcLen+mstLen)
	p := b[HeaderLen:]
	p[offVersion] = 3
	binary.BigEndian.PutUint16(p[36:], 64) // version 3 length
	return b
}

// TestIDs checks the identifiers' parts and formats.
func TestIDs(t *testing.T) {
	b := NewBridgeID(61440, [6]byte{0x02, 0xab, 0xcd, 0, 0, 0x01})
	if b.Priority() != 61440 || b.MAC() != [6]byte{0x02, 0xab, 0xcd, 0, 0, 0x01} || b.String() != "f000.02abcd000001" {
		t.Errorf("bridge ID: got priority %d, MAC %x, %q; want 61440, 02abcd000001, \"f000.02abcd000001\"", b.Priority(), b.MAC(), b)
	}
	if NewBridgeID(4096, [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) >= NewBridgeID(8192, [6]byte{}) {
		t.Errorf("bridge IDs: the lower priority does not win over any address")
	}
	p := NewPortID(240, 4095)
	if p.Priority() != 240 || p.Number() != 4095 || p.String() != "ffff" {
		t.Errorf("port ID: got priority %d, number %d, %q; want 240, 4095, \"ffff\"", p.Priority(), p.Number(), p)
	}
	if q := NewPortID(128, 1); q.String() != "8001" || q >= NewPortID(144, 0) {
		t.Errorf("port ID 128/1: got %q, or not below 144/0", q)
	}
}
