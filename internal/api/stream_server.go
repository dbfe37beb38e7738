package api

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/swctl/swctl/internal/supervise"
)

// errStreamStopped is the cause of a stream's context when its client
// stopped it.
var errStreamStopped = errors.New("stopped by the client")

// streamRun serves a decoded stream operation.
type streamRun func(ctx context.Context, h Handler, sink CaptureSink) (CaptureEnd, error)

// streamOps are the rows of the stream operations in the operation table.
var streamOps = []opSpec{{name: OpCapture, stream: func(args json.RawMessage) (streamRun, error) {
	var req CaptureRequest
	if err := decodeStrict(args, &req); err != nil {
		return nil, fmt.Errorf("malformed args: %v", err)
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, h Handler, sink CaptureSink) (CaptureEnd, error) {
		return h.Capture(ctx, req, sink)
	}, nil
}}}

// serveStream serves a stream operation on c, whose requests r reads:
// the handler answers through a sink whose writes follow the stream's
// stall rule, then the stream ends with its end message, and the
// connection with it (done). A handler that refuses before the stream
// begins gets an error reply, as an ordinary request does, and the
// connection stays usable unless that reply fails.
//
// A stream does not take the handler's turn: it would hold it for as
// long as it runs. Its request's deadline is checked before it begins (a
// client that gave up gets no stream), and neither the deadline nor the
// idle timeout bounds it once it has begun; the server's stop does.
func (s *Server) serveStream(ctx context.Context, c *net.UnixConn, r *bufio.Reader, cl *call) (done bool) {
	if late := time.Since(cl.deadline); !cl.deadline.IsZero() && late >= 0 {
		cmp.Or(s.Log, slog.Default()).Warn("control request refused: its deadline passed before it could be served", "op", cl.op, "late", late)
		return s.reply(c, errorReply(fmt.Errorf("%s: not begun: the request's deadline passed before the daemon could serve it", cl.op))) != nil
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sink := &streamSink{c: c, stall: cmp.Or(s.streamStall, StreamStall), log: cmp.Or(s.Log, slog.Default())}
	sink.w = bufio.NewWriterSize(stallWriter{sink}, 64<<10)
	sink.begun = func() {
		c.SetReadDeadline(time.Time{}) // the idle timeout is for requests
		supervise.Go("control stream reader", func() {
			// Whatever the client sends, or its closing, stops the
			// stream. This read ends when the connection is closed.
			r.ReadByte()
			cancel(errStreamStopped)
		})
	}
	end, err := cl.stream(ctx, s.Handler, sink)
	switch {
	case !sink.started:
		if err == nil {
			err = fmt.Errorf("%s: the daemon ended the stream before it began", cl.op)
		}
		return s.reply(c, errorReply(err)) != nil
	case sink.broken != nil:
		return true // nothing more can reach this client
	case err != nil:
		end.Error = err.Error()
	case parent.Err() != nil:
		end.Error = "the daemon is stopping"
	}
	sink.w.Write(appendEnd(nil, end))
	sink.Flush()
	return true
}

// streamSink is a CaptureSink on a connection.
type streamSink struct {
	// c is the connection; w buffers what is sent on it.
	c *net.UnixConn
	w *bufio.Writer
	// stall is how long a write may wait for the client.
	stall time.Duration
	// log receives a line when the stream is cut.
	log *slog.Logger
	// started is set by Start, which then calls begun.
	started bool
	begun   func()
	// broken is the error that ended the stream, nil while it runs.
	broken error
	// scratch holds a frame message's header.
	scratch []byte
}

// stallWriter writes to the sink's connection, each write within the
// stream's stall time.
type stallWriter struct{ k *streamSink }

func (sw stallWriter) Write(p []byte) (int, error) {
	sw.k.c.SetWriteDeadline(time.Now().Add(sw.k.stall))
	return sw.k.c.Write(p)
}

// fail records the error that broke the stream and returns it.
func (k *streamSink) fail(err error) error {
	if k.broken != nil {
		return k.broken
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		k.broken = fmt.Errorf("%w for %v", ErrStreamStalled, k.stall)
		args := []any{"stall", k.stall}
		if p, perr := PeerOf(k.c); perr == nil {
			args = append(args, "peer_uid", p.UID, "peer_pid", p.PID)
		}
		k.log.Warn("capture stream cut: the client read nothing", args...)
	} else {
		k.broken = fmt.Errorf("stream: %v", unwrapOp(err))
	}
	return k.broken
}

// Start sends the reply line.
func (k *streamSink) Start(st CaptureStart) error {
	if k.started {
		return errors.New("stream: started twice")
	}
	k.started = true
	st.StreamVersion = StreamVersion
	body, err := json.Marshal(st)
	if err != nil {
		return k.fail(err)
	}
	out, _ := json.Marshal(Reply{Result: body})
	k.w.Write(append(out, '\n'))
	if err := k.Flush(); err != nil {
		return err
	}
	k.begun()
	return nil
}

// Frame queues a frame message.
func (k *streamSink) Frame(f CapturedFrame) error {
	switch {
	case k.broken != nil:
		return k.broken
	case !k.started:
		return errors.New("stream: frame before Start")
	}
	if err := checkFrame(f); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	k.scratch = appendFrameHeader(k.scratch[:0], f)
	k.w.Write(k.scratch)
	if _, err := k.w.Write(f.Data); err != nil {
		return k.fail(err)
	}
	return nil
}

// Flush sends what is queued.
func (k *streamSink) Flush() error {
	if k.broken != nil {
		return k.broken
	}
	if err := k.w.Flush(); err != nil {
		return k.fail(err)
	}
	return nil
}
