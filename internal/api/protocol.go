package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/swctl/swctl/internal/config"
)

// MaxRequestSize is the longest request line the server reads, newline
// included.
const MaxRequestSize = 1 << 20

// maxReplySize is the longest reply line the client reads: an address
// table at the largest maxaddr is far below it.
const maxReplySize = 1 << 30

// Operation is every request type: it names its operation (one of the Op
// constants) and checks its own fields, what can be checked without the
// daemon's state. Serve rejects a request that fails Validate, and the CLI
// calls it to catch usage errors before dialling.
type Operation interface {
	Op() string
	Validate() error
}

// Edit is the request of a state operation: Edit makes the operation's
// change to c, a copy of the daemon's configuration, with the checks of
// internal/config (h tells which interfaces exist), or says why not. The
// daemon then makes the running state match and saves the file, the same
// way for every Edit.
type Edit interface {
	Operation
	Edit(c *config.Config, h config.Host) error
}

// Handler is what the daemon implements: Change for every state operation,
// and one method for each operation that is not (mostly) state. The server
// calls it with requests that passed their Validate method, one request at
// a time (Server). ctx ends at the request's deadline, when the client gave
// one (not when the server stops): a method that can still back out checks
// it before it commits a change. A returned error is sent to the client as
// is, so it names the object and the cause.
type Handler interface {
	// Change runs a state operation: bridge and trunk create, destroy,
	// add, del, set and port, bridge static, stp, addspan and delspan.
	Change(ctx context.Context, req Edit) error
	// BridgeDelAddr removes an address: its static entries (a state
	// change, req's Edit), then what the address table still has of it.
	BridgeDelAddr(ctx context.Context, req DelAddrRequest) error
	// BridgeFlush removes the learned entries of an address table; with
	// All the static entries first (a state change, req's Edit).
	BridgeFlush(ctx context.Context, req FlushRequest) error
	// BridgeEnable enables a member its BPDU guard disabled.
	BridgeEnable(ctx context.Context, req EnableRequest) error
	// BridgeShow describes the bridge called name, or every bridge when
	// name is "".
	BridgeShow(ctx context.Context, name string) ([]BridgeInfo, error)
	// BridgeAddr lists a page of a bridge's address table, at most
	// req.PageSize() entries.
	BridgeAddr(ctx context.Context, req BridgeAddrRequest) ([]AddrInfo, error)
	// TrunkShow describes the trunk called name, or every trunk when
	// name is "".
	TrunkShow(ctx context.Context, name string) ([]TrunkInfo, error)
	// PortShow describes the port called name, or every port of every
	// bridge and trunk when name is "".
	PortShow(ctx context.Context, name string) ([]PortInfo, error)
	// LBShow describes the lb called name, or every lb when name is "".
	LBShow(ctx context.Context, name string) ([]LBInfo, error)
	// Version identifies the daemon's build.
	Version(ctx context.Context) (VersionInfo, error)
	// Stats returns every counter of the engine, as the metrics
	// endpoint serves them, sorted by name and labels.
	Stats(ctx context.Context) ([]Sample, error)
	// Capture runs a packet capture into sink: it calls sink.Start once
	// the capture is under way (an error before that is the request's
	// error reply), then sends frames until ctx is done (the client
	// stopped it, or the daemon is stopping), req.Count frames are sent,
	// or it fails (the error ends the stream). The server then sends the
	// end message, the returned CaptureEnd.
	Capture(ctx context.Context, req CaptureRequest, sink CaptureSink) (CaptureEnd, error)
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
	// Deadline, when set, is when the client stops waiting for the reply:
	// a server that reaches the request later refuses it unserved.
	Deadline time.Time `json:"deadline,omitzero"`
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
	// run performs the operation; nil for a stream operation.
	run func(ctx context.Context, h Handler) (any, error)
	// deadline is the request's Deadline, zero for none.
	deadline time.Time
	// stream performs a stream operation (stream.go); nil for others.
	stream streamRun
}

// opSpec is one row of the operation table.
type opSpec struct {
	// name is the operation's name.
	name string
	// decode decodes and validates the operation's arguments and returns
	// how to run it.
	decode func(args json.RawMessage) (func(context.Context, Handler) (any, error), error)
	// stream is decode for a stream operation (decode is nil then).
	stream func(args json.RawMessage) (streamRun, error)
}

// op builds the opSpec of an operation whose arguments are a Req, served
// by run.
func op[Req any, P interface {
	*Req
	Operation
}](run func(ctx context.Context, h Handler, req Req) (any, error)) opSpec {
	var zero Req
	return opSpec{name: P(&zero).Op(), decode: func(args json.RawMessage) (func(context.Context, Handler) (any, error), error) {
		var req Req
		if err := decodeStrict(args, P(&req)); err != nil {
			return nil, fmt.Errorf("malformed args: %v", err)
		}
		if err := P(&req).Validate(); err != nil {
			return nil, err
		}
		return func(ctx context.Context, h Handler) (any, error) { return run(ctx, h, req) }, nil
	}}
}

// state is the opSpec of a state operation: Handler.Change runs it.
func state[Req Edit, P interface {
	*Req
	Operation
}]() opSpec {
	return op[Req, P](func(ctx context.Context, h Handler, r Req) (any, error) { return nil, h.Change(ctx, r) })
}

// action is the opSpec of an operation that returns nothing, served by
// the Handler method run.
func action[Req any, P interface {
	*Req
	Operation
}](run func(h Handler, ctx context.Context, req Req) error) opSpec {
	return op[Req, P](func(ctx context.Context, h Handler, r Req) (any, error) { return nil, run(h, ctx, r) })
}

// list is the opSpec of an operation that returns a list, served by run;
// an empty list is [] on the wire, never null.
func list[Req any, T any, P interface {
	*Req
	Operation
}](run func(ctx context.Context, h Handler, req Req) ([]T, error)) opSpec {
	return op[Req, P](func(ctx context.Context, h Handler, r Req) (any, error) {
		res, err := run(ctx, h, r)
		if res == nil {
			res = []T{}
		}
		return res, err
	})
}

// ops is the table of operations, by name: its rows are beside the
// request types, in types.go, trunk.go and lb.go. A state operation needs only its
// request type, whose Edit method is the operation; the others name what
// serves them.
var ops = table(slices.Concat(bridgeOps, trunkOps, lbOps, statsOps, streamOps)...)

// table indexes operations by name.
func table(specs ...opSpec) map[string]opSpec {
	m := make(map[string]opSpec, len(specs))
	for _, s := range specs {
		if _, dup := m[s.name]; dup {
			panic("api: operation " + s.name + " twice in the table")
		}
		m[s.name] = s
	}
	return m
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
	case req.Version < 1 || req.Version > ProtocolVersion:
		return nil, fmt.Errorf("unsupported protocol version %d (this daemon speaks versions 1 to %d: restart the daemon after upgrading swctl)", req.Version, ProtocolVersion)
	case req.Op == "":
		return nil, errors.New("malformed request: missing op")
	}
	spec, ok := ops[req.Op]
	if !ok {
		return nil, fmt.Errorf("unknown op %q (want one of %s)", req.Op, strings.Join(Ops(), ", "))
	}
	if spec.stream != nil {
		stream, err := spec.stream(req.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.Op, err)
		}
		return &call{op: req.Op, stream: stream, deadline: req.Deadline}, nil
	}
	run, err := spec.decode(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	return &call{op: req.Op, run: run, deadline: req.Deadline}, nil
}

// answer runs the call against h and returns the reply line, newline
// included. The handler's ctx ends at the request's deadline only: a
// shutdown gives the requests under way their grace period to finish.
func (c *call) answer(ctx context.Context, h Handler) []byte {
	ctx = context.WithoutCancel(ctx)
	if !c.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, c.deadline)
		defer cancel()
	}
	if c.stream != nil {
		// Server.serveStream serves streams, on their connection.
		return errorReply(fmt.Errorf("%s: a stream operation, served on a connection of its own", c.op))
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
