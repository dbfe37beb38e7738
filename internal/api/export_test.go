package api

import (
	"bufio"
	"io"
	"time"
)

// SetTimeouts replaces s's reply timeout and shutdown grace period for a
// test; 0 keeps the default.
func (s *Server) SetTimeouts(reply, grace time.Duration) { s.replyTimeout, s.grace = reply, grace }

// SetStreamStall replaces s's stream stall time for a test.
func (s *Server) SetStreamStall(d time.Duration) { s.streamStall = d }

// NewCaptureStream reads a capture stream from r.
func NewCaptureStream(r io.Reader) *CaptureStream { return &CaptureStream{r: bufio.NewReader(r)} }

// EncodeStream encodes frames, then end when not nil, as the daemon sends
// them.
func EncodeStream(frames []CapturedFrame, end *CaptureEnd) []byte {
	var b []byte
	for _, f := range frames {
		b = append(appendFrameHeader(b, f), f.Data...)
	}
	if end != nil {
		b = appendEnd(b, *end)
	}
	return b
}
