package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// dialTimeout bounds connecting to the daemon.
const dialTimeout = 5 * time.Second

// RemoteError is an error reply: the daemon refused the request.
type RemoteError struct {
	// Op is the operation that was refused.
	Op string
	// Message is the daemon's reason, naming the object and the cause.
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Client is a connection to the daemon. Its methods may be called from
// several goroutines; requests are sent one at a time. After a transport
// error (not a RemoteError) the connection is unusable: Dial again.
type Client struct {
	// path is the socket the client dialled.
	path string
	// mu serialises requests and guards conn, r and broken.
	mu sync.Mutex
	// conn is the connection to the daemon.
	conn *net.UnixConn
	// r buffers replies read from conn.
	r *bufio.Reader
	// broken is the transport error that made conn unusable, if any.
	broken error
}

// Dial connects to the daemon's control socket at path.
func Dial(path string) (*Client, error) {
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.Dial("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the daemon at %s: %v (is `swctl daemon` running?)", path, unwrapOp(err))
	}
	uc := c.(*net.UnixConn)
	return &Client{path: path, conn: uc, r: bufio.NewReaderSize(uc, 64<<10)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Call sends one request and decodes the result into result (which may be
// nil to ignore it). An error reply is returned as a *RemoteError. A
// deadline on ctx goes with the request: the daemon does not serve it
// once the deadline has passed, so a request Call gave up on is never
// applied later unless the daemon had already begun it.
func (c *Client) Call(ctx context.Context, op string, args, result any) error {
	if spec, ok := ops[op]; ok && spec.stream != nil {
		return fmt.Errorf("%s: a stream operation: use its own method (Client.Capture)", op)
	}
	return c.call(ctx, op, args, result)
}

// call is Call for any operation.
func (c *Client) call(ctx context.Context, op string, args, result any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	req := Request{Version: ProtocolVersion, Op: op}
	// The daemon refuses the request if it reaches it after the client
	// has stopped waiting.
	req.Deadline, _ = ctx.Deadline()
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return fmt.Errorf("%s: cannot encode the request: %v", op, err)
		}
		req.Args = raw
	}
	line, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: cannot encode the request: %v", op, err)
	}
	line = append(line, '\n')

	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(dl)
	} else {
		c.conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	_, werr := c.conn.Write(line)
	// Read the reply even when the write failed: the daemon may have
	// answered (a refusal, an oversize request) and closed.
	reply, rerr := readLine(c.r, maxReplySize)
	if rerr != nil && len(reply) == 0 {
		err := werr
		if err == nil {
			err = rerr
		}
		if cerr := ctxErr(ctx, err); cerr != nil {
			// A reply may still come: the stream is out of step for good.
			c.broken = fmt.Errorf("connection to the daemon at %s abandoned by an earlier request: %v", c.path, cerr)
			return fmt.Errorf("%s: %w", op, cerr)
		}
		c.broken = fmt.Errorf("lost the connection to the daemon at %s: %v", c.path, unwrapOp(err))
		return fmt.Errorf("%s: %w", op, c.broken)
	}
	var rep Reply
	if err := json.Unmarshal(reply, &rep); err != nil {
		c.broken = fmt.Errorf("malformed reply from the daemon at %s: %v", c.path, err)
		return fmt.Errorf("%s: %w", op, c.broken)
	}
	if rep.Error != "" {
		return &RemoteError{Op: op, Message: rep.Error}
	}
	if result != nil && len(rep.Result) > 0 {
		if err := json.Unmarshal(rep.Result, result); err != nil {
			return fmt.Errorf("%s: malformed result: %v", op, err)
		}
	}
	return nil
}

// Do sends the request of an operation and decodes its result into
// result (a pointer; nil to ignore it). An error reply is returned as a
// *RemoteError.
func (c *Client) Do(ctx context.Context, req Operation, result any) error {
	return c.Call(ctx, req.Op(), req, result)
}

// ctxErr returns the context's error when err is the deadline Call set
// from it, nil otherwise.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if dl, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
