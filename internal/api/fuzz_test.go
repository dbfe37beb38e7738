package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

// nopHandler answers every operation with zero values.
type nopHandler struct{}

func (nopHandler) Change(context.Context, Edit) error                       { return nil }
func (nopHandler) BridgeDelAddr(context.Context, DelAddrRequest) error      { return nil }
func (nopHandler) BridgeFlush(context.Context, FlushRequest) error          { return nil }
func (nopHandler) BridgeShow(context.Context, string) ([]BridgeInfo, error) { return nil, nil }
func (nopHandler) BridgeAddr(context.Context, string) ([]AddrInfo, error)   { return nil, nil }
func (nopHandler) TrunkShow(context.Context, string) ([]TrunkInfo, error)   { return nil, nil }
func (nopHandler) PortShow(context.Context, string) ([]PortInfo, error)     { return nil, nil }
func (nopHandler) Version(context.Context) (VersionInfo, error)             { return VersionInfo{}, nil }
func (nopHandler) Stats(context.Context) ([]Sample, error)                  { return nil, nil }

// FuzzDecodeRequest feeds arbitrary lines to the server's request path
// (decoder, deadline check, dispatcher): it must never panic, and every
// reply must be one line of valid JSON with exactly one of result and
// error.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"op":"version"}`,
		`{"version":1,"op":"stats"}`,
		`{"version":1,"op":"bridge.create","args":{"name":"bridge0","local":true}}`,
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
