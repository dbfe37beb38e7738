package api

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/swctl/swctl/internal/config"
)

// Streams. A stream operation (capture) is one request line like any
// other, and its reply line, {"result": ...}, says the stream has begun.
// Then the connection carries the stream's messages, from the daemon
// only, until the daemon ends it with an end message and closes the
// connection. The client stops a stream by closing its side of the
// connection for writing (anything it sends stops it too), and then reads
// to the end message. The stream's format has its own version,
// StreamVersion, which the request names: a daemon refuses a version it
// does not speak, and the protocol's version stays what it is.
//
// A message is a type byte, the length of its payload (4 bytes,
// big-endian) and the payload:
//
//	'F' a captured frame: its time (Unix nanoseconds, 8 bytes), its
//	    length on the wire (4 bytes), its direction (1 byte: 1 received
//	    by the port, 2 sent by it), the length of the port's name (1
//	    byte, 1 to 15), the name, then the frame's first bytes (at most
//	    the snap length, at most its length);
//	'E' the end: a CaptureEnd as JSON.
//
// A stream's writes have their own stall rule, apart from the reply
// timeout of ordinary requests: a client that takes nothing of what the
// daemon sends for StreamStall (a capture's reader may pause longer
// than a CLI reading its answer) has its stream cut, and the daemon
// counts it.

// OpCapture names the capture stream in a request's "op".
const OpCapture = "capture"

// StreamVersion is the version of the stream format this package speaks.
const StreamVersion = 1

// StreamStall is how long a stream waits for its client to take what it
// sends before it cuts the stream.
const StreamStall = 10 * time.Second

// Snap lengths of a capture: the default, and the bounds.
const (
	DefaultSnaplen = 65535
	MinSnaplen     = 14 // an Ethernet header
	MaxSnaplen     = 262144
)

// Directions in CaptureRequest.Direction.
const (
	DirectionIn   = "in"
	DirectionOut  = "out"
	DirectionBoth = "both"
)

// Directions of a CapturedFrame.
const (
	// FrameIn is a frame the port received.
	FrameIn = 1
	// FrameOut is a frame the bridge sent by the port.
	FrameOut = 2
)

// ErrStreamStalled is the error of a stream's sends once its client has
// taken nothing for StreamStall: the stream is cut.
var ErrStreamStalled = errors.New("stream cut: the client read nothing")

// CaptureRequest starts a packet capture of a bridge or of one of its
// ports (swctl capture).
type CaptureRequest struct {
	// StreamVersion is the stream format the client reads: StreamVersion.
	StreamVersion int `json:"stream_version"`
	// Name is a bridge, or a port of one (a member, a span port, its
	// local TAP).
	Name string `json:"name"`
	// Direction is DirectionIn, DirectionOut or DirectionBoth; "" is in
	// for a bridge (each frame once, as it came in), both for a port.
	Direction string `json:"direction,omitempty"`
	// Count ends the capture after this many frames; 0 runs it until the
	// client stops it.
	Count int `json:"count,omitempty"`
	// Snaplen is the most bytes sent of each frame; 0 is DefaultSnaplen.
	Snaplen int `json:"snaplen,omitempty"`
}

// Validate checks the request's fields.
func (r CaptureRequest) Validate() error {
	if r.StreamVersion != StreamVersion {
		return fmt.Errorf("capture: stream version %d not spoken here (this side speaks %d)", r.StreamVersion, StreamVersion)
	}
	if err := config.CheckName("bridge or interface", r.Name); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	switch r.Direction {
	case "", DirectionIn, DirectionOut, DirectionBoth:
	default:
		return fmt.Errorf("capture %s: direction %q: want in, out or both", r.Name, r.Direction)
	}
	if r.Count < 0 {
		return fmt.Errorf("capture %s: count %d: want 0 (no limit) or more", r.Name, r.Count)
	}
	if r.Snaplen != 0 && (r.Snaplen < MinSnaplen || r.Snaplen > MaxSnaplen) {
		return fmt.Errorf("capture %s: snap length %d: want %d to %d", r.Name, r.Snaplen, MinSnaplen, MaxSnaplen)
	}
	return nil
}

func (CaptureRequest) Op() string { return OpCapture }

// CaptureStart is the reply to a CaptureRequest: the capture is under
// way.
type CaptureStart struct {
	// StreamVersion is the format of the stream that follows.
	StreamVersion int `json:"stream_version"`
	// Bridge is the bridge captured; Port the port, "" for all of them.
	Bridge string `json:"bridge"`
	Port   string `json:"port,omitempty"`
	// Direction is the direction captured.
	Direction string `json:"direction"`
	// Snaplen is the most bytes sent of a frame.
	Snaplen int `json:"snaplen"`
}

// CaptureEnd is a capture's last message.
type CaptureEnd struct {
	// Sent counts the frames the stream carried.
	Sent uint64 `json:"sent"`
	// Dropped counts the frames the capture lost because its client did
	// not take them as fast as they came (its queue was full).
	Dropped uint64 `json:"dropped"`
	// Error says why the capture ended, when neither the client nor its
	// count ended it.
	Error string `json:"error,omitempty"`
}

// CapturedFrame is one frame of a capture stream.
type CapturedFrame struct {
	// Port is the port it crossed; Dir which way (FrameIn, FrameOut).
	Port string
	Dir  uint8
	// Time is when the bridge read it.
	Time time.Time
	// Len is its length; Data its first bytes (Len at most).
	Len  int
	Data []byte
}

// CaptureSink is where the daemon's Handler.Capture sends a capture:
// Start answers the request, then Frame queues frames, which Flush sends.
// An error from Frame or Flush (the client stalled, ErrStreamStalled, or
// went away) ends the capture: the sink is unusable.
type CaptureSink interface {
	Start(CaptureStart) error
	Frame(f CapturedFrame) error
	Flush() error
}

// Message types of a stream.
const (
	msgFrame byte = 'F'
	msgEnd   byte = 'E'
)

// Lengths of the stream's encoding.
const (
	// msgHeaderLen is a message's type and payload length.
	msgHeaderLen = 1 + 4
	// frameHeaderLen is a frame message's payload up to the port's name.
	frameHeaderLen = 8 + 4 + 1 + 1
	// maxEndLen bounds an end message's JSON.
	maxEndLen = 64 << 10
	// maxMessageLen is the longest payload a client accepts.
	maxMessageLen = frameHeaderLen + config.MaxNameLen + MaxSnaplen
)

// appendFrameHeader appends the message header and the payload up to the
// frame's data.
func appendFrameHeader(b []byte, f CapturedFrame) []byte {
	b = append(b, msgFrame)
	b = binary.BigEndian.AppendUint32(b, uint32(frameHeaderLen+len(f.Port)+len(f.Data)))
	b = binary.BigEndian.AppendUint64(b, uint64(f.Time.UnixNano()))
	b = binary.BigEndian.AppendUint32(b, uint32(f.Len))
	b = append(b, f.Dir, byte(len(f.Port)))
	return append(b, f.Port...)
}

// appendEnd appends an end message.
func appendEnd(b []byte, end CaptureEnd) []byte {
	body, _ := json.Marshal(end)
	b = append(b, msgEnd)
	b = binary.BigEndian.AppendUint32(b, uint32(len(body)))
	return append(b, body...)
}

// checkFrame says what is wrong with a frame for the stream, if anything.
func checkFrame(f CapturedFrame) error {
	switch {
	case f.Dir != FrameIn && f.Dir != FrameOut:
		return fmt.Errorf("direction %d: want %d or %d", f.Dir, FrameIn, FrameOut)
	case len(f.Port) == 0 || len(f.Port) > config.MaxNameLen:
		return fmt.Errorf("port name of %d bytes: want 1 to %d", len(f.Port), config.MaxNameLen)
	case len(f.Data) > MaxSnaplen:
		return fmt.Errorf("%d bytes of frame: want at most %d", len(f.Data), MaxSnaplen)
	case f.Len < len(f.Data) || uint64(f.Len) > 1<<32-1:
		return fmt.Errorf("length %d with %d bytes captured", f.Len, len(f.Data))
	}
	return nil
}

// decodeFrame decodes a frame message's payload; Data aliases p.
func decodeFrame(p []byte) (CapturedFrame, error) {
	if len(p) < frameHeaderLen {
		return CapturedFrame{}, fmt.Errorf("frame message of %d bytes: shorter than its header (%d)", len(p), frameHeaderLen)
	}
	n := int(p[13])
	if len(p) < frameHeaderLen+n {
		return CapturedFrame{}, fmt.Errorf("frame message of %d bytes: port name of %d bytes does not fit", len(p), n)
	}
	f := CapturedFrame{
		Time: time.Unix(0, int64(binary.BigEndian.Uint64(p))),
		Len:  int(binary.BigEndian.Uint32(p[8:])),
		Dir:  p[12],
		Port: string(p[frameHeaderLen : frameHeaderLen+n]),
		Data: p[frameHeaderLen+n:],
	}
	if err := checkFrame(f); err != nil {
		return CapturedFrame{}, fmt.Errorf("frame message: %w", err)
	}
	return f, nil
}

// CaptureStream is the client's end of a capture: Next reads it message
// by message. It owns the client's connection: Close closes it.
type CaptureStream struct {
	// Start is the daemon's answer to the request.
	Start CaptureStart
	// c is the client whose connection carries the stream; nil when
	// the stream is read from elsewhere (tests).
	c *Client
	// r reads the stream.
	r *bufio.Reader
	// buf holds the last message's payload.
	buf []byte
	// ended is set once the end message was read.
	ended bool
}

// Next reads the next message: a frame (whose Data is valid until the
// next call), or the end, after which the stream is over and Next
// returns io.EOF. A malformed message, or a connection that ends without
// an end message, is an error.
func (s *CaptureStream) Next() (CapturedFrame, *CaptureEnd, error) {
	if s.ended {
		return CapturedFrame{}, nil, io.EOF
	}
	var h [msgHeaderLen]byte
	if _, err := io.ReadFull(s.r, h[:]); err != nil {
		return CapturedFrame{}, nil, s.lost(err)
	}
	n := binary.BigEndian.Uint32(h[1:])
	switch {
	case h[0] == msgFrame && n > maxMessageLen:
		return CapturedFrame{}, nil, fmt.Errorf("capture stream: frame message of %d bytes: longer than %d", n, maxMessageLen)
	case h[0] == msgEnd && n > maxEndLen:
		return CapturedFrame{}, nil, fmt.Errorf("capture stream: end message of %d bytes: longer than %d", n, maxEndLen)
	case h[0] != msgFrame && h[0] != msgEnd:
		return CapturedFrame{}, nil, fmt.Errorf("capture stream: unknown message type 0x%02x", h[0])
	}
	if cap(s.buf) < int(n) {
		s.buf = make([]byte, n)
	}
	p := s.buf[:n]
	if _, err := io.ReadFull(s.r, p); err != nil {
		return CapturedFrame{}, nil, s.lost(err)
	}
	if h[0] == msgEnd {
		var end CaptureEnd
		if err := decodeStrict(p, &end); err != nil {
			return CapturedFrame{}, nil, fmt.Errorf("capture stream: end message: %v", err)
		}
		s.ended = true
		return CapturedFrame{}, &end, nil
	}
	f, err := decodeFrame(p)
	if err != nil {
		return CapturedFrame{}, nil, fmt.Errorf("capture stream: %w", err)
	}
	return f, nil, nil
}

// lost describes a stream that broke off before its end message.
func (s *CaptureStream) lost(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("capture stream: the daemon closed the connection before the end of the capture")
	}
	return fmt.Errorf("capture stream: %v", unwrapOp(err))
}

// Buffered reports whether a message (or part of one) has arrived and is
// not read yet: a reader that writes what it read flushes its output when
// there is none, before Next waits.
func (s *CaptureStream) Buffered() bool { return s.r.Buffered() > 0 }

// Stop asks the daemon to end the capture: it answers with the end
// message, which Next returns.
func (s *CaptureStream) Stop() error {
	if s.c == nil {
		return nil
	}
	return s.c.conn.CloseWrite()
}

// Close closes the connection.
func (s *CaptureStream) Close() error {
	if s.c == nil {
		return nil
	}
	return s.c.Close()
}

// Capture sends req (its StreamVersion set to StreamVersion when zero)
// and returns the stream once the daemon has begun it. The client's
// connection then belongs to the stream: the client refuses any other
// request, and closing the stream closes it.
func (c *Client) Capture(ctx context.Context, req CaptureRequest) (*CaptureStream, error) {
	if req.StreamVersion == 0 {
		req.StreamVersion = StreamVersion
	}
	var start CaptureStart
	if err := c.call(ctx, OpCapture, req, &start); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.broken = fmt.Errorf("the connection to the daemon at %s carries a capture stream", c.path)
	c.conn.SetDeadline(time.Time{})
	if start.StreamVersion != StreamVersion {
		return nil, fmt.Errorf("%s: the daemon began stream version %d, this client reads %d", OpCapture, start.StreamVersion, StreamVersion)
	}
	return &CaptureStream{Start: start, c: c, r: c.r}, nil
}
