package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// MaxRequestSize is the longest request line the server reads, newline
// included.
const MaxRequestSize = 1 << 20

// maxReplySize is the longest reply line the client reads: an address
// table at the largest maxaddr is far below it.
const maxReplySize = 1 << 30

// Handler is what the daemon implements: one method per operation. The
// server calls it with requests that passed their Validate method; it
// calls the methods of one connection one at a time, in order, but
// different connections concurrently. A returned error is sent to the
// client as is, so it names the object and the cause.
type Handler interface {
	// BridgeCreate creates a bridge.
	BridgeCreate(ctx context.Context, req BridgeCreateRequest) error
	// BridgeDestroy destroys a bridge and releases its members.
	BridgeDestroy(ctx context.Context, req BridgeDestroyRequest) error
	// BridgeAdd adds members to a bridge, all or none.
	BridgeAdd(ctx context.Context, req BridgeAddRequest) error
	// BridgeDel removes members from a bridge, all or none.
	BridgeDel(ctx context.Context, req BridgeDelRequest) error
	// BridgeShow describes the bridge called name, or every bridge when
	// name is "".
	BridgeShow(ctx context.Context, name string) ([]BridgeInfo, error)
	// BridgeAddr lists a bridge's address table.
	BridgeAddr(ctx context.Context, name string) ([]AddrInfo, error)
	// BridgeStatic adds a static address-table entry.
	BridgeStatic(ctx context.Context, req StaticRequest) error
	// BridgeDelAddr removes an address-table entry.
	BridgeDelAddr(ctx context.Context, req DelAddrRequest) error
	// BridgeFlush removes learned (with All, also static) entries.
	BridgeFlush(ctx context.Context, req FlushRequest) error
	// BridgeSet changes a bridge's timeout and capacity.
	BridgeSet(ctx context.Context, req BridgeSetRequest) error
	// BridgePort changes a member's flags.
	BridgePort(ctx context.Context, req BridgePortRequest) error
	// BridgeAddSpan adds a span port.
	BridgeAddSpan(ctx context.Context, req SpanRequest) error
	// BridgeDelSpan removes a span port.
	BridgeDelSpan(ctx context.Context, req SpanRequest) error
	// TrunkCreate creates a trunk, with its ports (all or none).
	TrunkCreate(ctx context.Context, req TrunkCreateRequest) error
	// TrunkDestroy destroys a trunk and releases its ports.
	TrunkDestroy(ctx context.Context, req TrunkDestroyRequest) error
	// TrunkAdd adds ports to a trunk, all or none.
	TrunkAdd(ctx context.Context, req TrunkAddRequest) error
	// TrunkDel removes ports from a trunk, all or none.
	TrunkDel(ctx context.Context, req TrunkDelRequest) error
	// TrunkSet changes a trunk's protocol, hash and LACP settings.
	TrunkSet(ctx context.Context, req TrunkSetRequest) error
	// TrunkShow describes the trunk called name, or every trunk when
	// name is "".
	TrunkShow(ctx context.Context, name string) ([]TrunkInfo, error)
	// PortShow describes the port called name, or every port of every
	// bridge and trunk when name is "".
	PortShow(ctx context.Context, name string) ([]PortInfo, error)
	// Version identifies the daemon's build.
	Version(ctx context.Context) (VersionInfo, error)
}

// Request is one request line.
type Request struct {
	// Version is the protocol version the client speaks (ProtocolVersion).
	Version int `json:"version"`
	// Op is the operation, one of the Op constants.
	Op string `json:"op"`
	// Args holds the operation's request type as JSON; absent for ops
	// without arguments.
	Args json.RawMessage `json:"args,omitempty"`
}

// Reply is one reply line: exactly one of Result and Error is set.
type Reply struct {
	// Result is the operation's result as JSON, null for operations that
	// return nothing.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the reason the request failed.
	Error string `json:"error,omitempty"`
}

// call is a decoded, validated request, ready to run against a Handler.
type call struct {
	// op is the operation's name.
	op string
	// run performs the operation.
	run func(ctx context.Context, h Handler) (any, error)
}

// opSpec decodes and validates an operation's arguments.
type opSpec func(args json.RawMessage) (func(context.Context, Handler) (any, error), error)

// op builds the opSpec of an operation whose arguments are a Req.
func op[Req any, P interface {
	*Req
	Validate() error
}](run func(ctx context.Context, h Handler, req Req) (any, error)) opSpec {
	return func(args json.RawMessage) (func(context.Context, Handler) (any, error), error) {
		var req Req
		if err := decodeStrict(args, P(&req)); err != nil {
			return nil, fmt.Errorf("malformed args: %v", err)
		}
		if err := P(&req).Validate(); err != nil {
			return nil, err
		}
		return func(ctx context.Context, h Handler) (any, error) { return run(ctx, h, req) }, nil
	}
}

// none adapts a method that returns only an error.
func none(err error) (any, error) { return nil, err }

// ops maps every operation to its decoder.
var ops = map[string]opSpec{
	OpBridgeCreate: op(func(ctx context.Context, h Handler, r BridgeCreateRequest) (any, error) {
		return none(h.BridgeCreate(ctx, r))
	}),
	OpBridgeDestroy: op(func(ctx context.Context, h Handler, r BridgeDestroyRequest) (any, error) {
		return none(h.BridgeDestroy(ctx, r))
	}),
	OpBridgeAdd: op(func(ctx context.Context, h Handler, r BridgeAddRequest) (any, error) {
		return none(h.BridgeAdd(ctx, r))
	}),
	OpBridgeDel: op(func(ctx context.Context, h Handler, r BridgeDelRequest) (any, error) {
		return none(h.BridgeDel(ctx, r))
	}),
	OpBridgeShow: op(func(ctx context.Context, h Handler, r BridgeShowRequest) (any, error) {
		res, err := h.BridgeShow(ctx, r.Name)
		if res == nil {
			res = []BridgeInfo{}
		}
		return res, err
	}),
	OpBridgeAddr: op(func(ctx context.Context, h Handler, r BridgeAddrRequest) (any, error) {
		res, err := h.BridgeAddr(ctx, r.Name)
		if res == nil {
			res = []AddrInfo{}
		}
		return res, err
	}),
	OpBridgeStatic: op(func(ctx context.Context, h Handler, r StaticRequest) (any, error) {
		return none(h.BridgeStatic(ctx, r))
	}),
	OpBridgeDelAddr: op(func(ctx context.Context, h Handler, r DelAddrRequest) (any, error) {
		return none(h.BridgeDelAddr(ctx, r))
	}),
	OpBridgeFlush: op(func(ctx context.Context, h Handler, r FlushRequest) (any, error) {
		return none(h.BridgeFlush(ctx, r))
	}),
	OpBridgeSet: op(func(ctx context.Context, h Handler, r BridgeSetRequest) (any, error) {
		return none(h.BridgeSet(ctx, r))
	}),
	OpBridgePort: op(func(ctx context.Context, h Handler, r BridgePortRequest) (any, error) {
		return none(h.BridgePort(ctx, r))
	}),
	OpBridgeAddSpan: op(func(ctx context.Context, h Handler, r SpanRequest) (any, error) {
		return none(h.BridgeAddSpan(ctx, r))
	}),
	OpBridgeDelSpan: op(func(ctx context.Context, h Handler, r SpanRequest) (any, error) {
		return none(h.BridgeDelSpan(ctx, r))
	}),
	OpTrunkCreate: op(func(ctx context.Context, h Handler, r TrunkCreateRequest) (any, error) {
		return none(h.TrunkCreate(ctx, r))
	}),
	OpTrunkDestroy: op(func(ctx context.Context, h Handler, r TrunkDestroyRequest) (any, error) {
		return none(h.TrunkDestroy(ctx, r))
	}),
	OpTrunkAdd: op(func(ctx context.Context, h Handler, r TrunkAddRequest) (any, error) {
		return none(h.TrunkAdd(ctx, r))
	}),
	OpTrunkDel: op(func(ctx context.Context, h Handler, r TrunkDelRequest) (any, error) {
		return none(h.TrunkDel(ctx, r))
	}),
	OpTrunkSet: op(func(ctx context.Context, h Handler, r TrunkSetRequest) (any, error) {
		return none(h.TrunkSet(ctx, r))
	}),
	OpTrunkShow: op(func(ctx context.Context, h Handler, r TrunkShowRequest) (any, error) {
		res, err := h.TrunkShow(ctx, r.Name)
		if res == nil {
			res = []TrunkInfo{}
		}
		return res, err
	}),
	OpPortShow: op(func(ctx context.Context, h Handler, r PortShowRequest) (any, error) {
		res, err := h.PortShow(ctx, r.Name)
		if res == nil {
			res = []PortInfo{}
		}
		return res, err
	}),
	OpVersion: op(func(ctx context.Context, h Handler, _ VersionRequest) (any, error) {
		return h.Version(ctx)
	}),
}

// Ops returns the names of every operation, sorted.
func Ops() []string {
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data. Empty input and null leave v at its zero value.
func decodeStrict(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// decodeRequest decodes and validates one request line.
func decodeRequest(line []byte) (*call, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, errors.New("malformed request: empty line")
	}
	var req Request
	if err := decodeStrict(line, &req); err != nil {
		return nil, fmt.Errorf("malformed request: %v", err)
	}
	switch {
	case req.Version == 0:
		return nil, errors.New("malformed request: missing version")
	case req.Version != ProtocolVersion:
		return nil, fmt.Errorf("unsupported protocol version %d (this daemon speaks version %d)", req.Version, ProtocolVersion)
	case req.Op == "":
		return nil, errors.New("malformed request: missing op")
	}
	spec, ok := ops[req.Op]
	if !ok {
		return nil, fmt.Errorf("unknown op %q (want one of %s)", req.Op, strings.Join(Ops(), ", "))
	}
	run, err := spec(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	return &call{op: req.Op, run: run}, nil
}

// handleLine serves one request line and returns the reply line, newline
// included.
func handleLine(ctx context.Context, h Handler, line []byte) []byte {
	c, err := decodeRequest(line)
	if err != nil {
		return errorReply(err)
	}
	res, err := c.run(ctx, h)
	if err != nil {
		return errorReply(err)
	}
	body, err := json.Marshal(res)
	if err != nil {
		return errorReply(fmt.Errorf("%s: cannot encode the result: %v", c.op, err))
	}
	out, _ := json.Marshal(Reply{Result: body})
	return append(out, '\n')
}

// errorReply encodes an error reply line.
func errorReply(err error) []byte {
	msg := err.Error()
	if msg == "" {
		msg = "unknown error"
	}
	out, _ := json.Marshal(Reply{Error: msg})
	return append(out, '\n')
}
