package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"
)

// nopHandler answers every operation with zero values.
type nopHandler struct{}

func (nopHandler) Change(context.Context, Edit) error                       { return nil }
func (nopHandler) BridgeDelAddr(context.Context, DelAddrRequest) error      { return nil }
func (nopHandler) BridgeFlush(context.Context, FlushRequest) error          { return nil }
func (nopHandler) BridgeEnable(context.Context, EnableRequest) error        { return nil }
func (nopHandler) BridgeShow(context.Context, string) ([]BridgeInfo, error) { return nil, nil }
func (nopHandler) BridgeAddr(context.Context, BridgeAddrRequest) ([]AddrInfo, error) {
	return nil, nil
}
func (nopHandler) TrunkShow(context.Context, string) ([]TrunkInfo, error) { return nil, nil }
func (nopHandler) PortShow(context.Context, string) ([]PortInfo, error)   { return nil, nil }
func (nopHandler) LBShow(context.Context, string) ([]LBInfo, error)       { return nil, nil }
func (nopHandler) Version(context.Context) (VersionInfo, error)           { return VersionInfo{}, nil }
func (nopHandler) Stats(context.Context) ([]Sample, error)                { return nil, nil }
func (nopHandler) Capture(context.Context, CaptureRequest, CaptureSink) (CaptureEnd, error) {
	return CaptureEnd{}, nil
}

// FuzzDecodeRequest feeds arbitrary lines to the server's request path
// (decoder, deadline check, dispatcher): it must never panic, and every
// reply must be one line of valid JSON with exactly one of result and
// error.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"op":"version"}`,
		`{"version":1,"op":"stats"}`,
		`{"version":1,"op":"capture","args":{"stream_version":1,"name":"bridge0","direction":"both","count":10}}`,
		`{"version":1,"op":"bridge.create","args":{"name":"bridge0","local":true}}`,
		`{"version":2,"op":"lb.create","args":{"name":"web","iface":"eth1","vips":["192.0.2.100"],"health":"http:80/"}}`,
		`{"version":2,"op":"lb.backend.add","args":{"name":"web","addr":"192.0.2.11","weight":2}}`,
		`{"version":1,"op":"bridge.add","args":{"name":"bridge0","ifaces":["eth1","eth2"]}}`,
		`{"version":1,"op":"bridge.static","args":{"name":"b0","mac":"02:00:00:00:00:01","iface":"eth1","vlan":10}}`,
		`{"version":1,"op":"bridge.set","args":{"name":"b0","timeout":0,"maxaddr":10}}`,
		`{"version":1,"op":"bridge.port","args":{"name":"b0","iface":"eth1","learning":false}}`,
		`{"version":1,"op":"trunk.create","args":{"name":"t0","proto":"lacp","ports":["eth1","eth2"],"hash":"l3,l4"}}`,
		`{"version":1,"op":"trunk.add","args":{"name":"t0","ifaces":["eth3"],"priority":10,"lacp_port_priority":100}}`,
		`{"version":1,"op":"trunk.set","args":{"name":"t0","lacp_key":7,"lacp_timeout":"fast"}}`,
		`{"version":1,"op":"bridge.del","args":{"name":"b0","ifaces":["eth1"]},"deadline":"2025-01-02T03:04:05.123456789Z"}`,
		`{"version":1,"op":"version","deadline":"yesterday"}`,
		`{"version":2,"op":"version"}`,
		`{"version":1,"op":"nope"}`,
		`{"version":1,`,
		``,
	} {
		f.Add([]byte(s))
	}
	srv := &Server{Handler: nopHandler{}, Log: slog.New(slog.DiscardHandler), turn: make(chan struct{}, 1)}
	f.Fuzz(func(t *testing.T, line []byte) {
		reply := srv.serveLine(context.Background(), line)
		if len(reply) == 0 || reply[len(reply)-1] != '\n' {
			t.Fatalf("reply %q: expected one newline-terminated line", reply)
		}
		body := reply[:len(reply)-1]
		for _, b := range body {
			if b == '\n' {
				t.Fatalf("reply %q: expected no newline inside the line", reply)
			}
		}
		var rep Reply
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatalf("reply %q: expected valid JSON, got %v", reply, err)
		}
		if (rep.Error == "") == (len(rep.Result) == 0) {
			t.Fatalf("reply %q: expected exactly one of result and error", reply)
		}
	})
}

// FuzzCaptureStream feeds arbitrary bytes to the capture stream reader:
// it must never panic, every frame it returns must be one the daemon
// could send (checkFrame), encoding it again must give the bytes it came
// from, and an end message must end the stream.
func FuzzCaptureStream(f *testing.F) {
	frames := []CapturedFrame{
		{Port: "eth1", Dir: FrameIn, Time: time.Unix(1700000000, 1), Len: 60, Data: make([]byte, 60)},
		{Port: "bridge0", Dir: FrameOut, Time: time.Unix(0, 0), Len: 9000, Data: []byte{1, 2, 3}},
	}
	f.Add(EncodeStream(frames, &CaptureEnd{Sent: 2, Dropped: 1}))
	f.Add(EncodeStream(nil, &CaptureEnd{Error: "bridge0: the bridge went away"}))
	f.Add(EncodeStream(frames[:1], nil))
	f.Add([]byte("F\x00\x00\x00\x0e\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewCaptureStream(bytes.NewReader(data))
		for range 1000 {
			fr, end, err := s.Next()
			if err != nil {
				return
			}
			if end != nil {
				if _, _, err := s.Next(); err != io.EOF {
					t.Fatalf("Next after the end: expected io.EOF, got %v", err)
				}
				return
			}
			if err := checkFrame(fr); err != nil {
				t.Fatalf("frame %+v: %v", fr, err)
			}
			again := EncodeStream([]CapturedFrame{fr}, nil)
			if !bytes.Contains(data, again) {
				t.Fatalf("frame %+v encodes as %x, not found in the input", fr, again)
			}
		}
	})
}
