package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/api/apitest"
)

// capture is what a capture stream carried.
type capture struct {
	frames []api.CapturedFrame
	end    api.CaptureEnd
}

// readCapture runs a capture to its end and returns what it carried.
func readCapture(ctx context.Context, c *api.Client, req api.CaptureRequest) (capture, error) {
	s, err := c.Capture(ctx, req)
	if err != nil {
		return capture{}, err
	}
	defer s.Close()
	var got capture
	for {
		f, end, err := s.Next()
		if err != nil {
			return got, err
		}
		if end != nil {
			got.end = *end
			if _, _, err := s.Next(); err != io.EOF {
				return got, errors.New("Next after the end: expected io.EOF")
			}
			return got, nil
		}
		f.Data = slices.Clone(f.Data)
		f.Time = f.Time.In(time.Local)
		got.frames = append(got.frames, f)
	}
}

func TestCaptureRequestValidate(t *testing.T) {
	ok := api.CaptureRequest{StreamVersion: api.StreamVersion, Name: "bridge0"}
	tests := []struct {
		name string
		edit func(r *api.CaptureRequest)
		want string
	}{
		{"valid", func(*api.CaptureRequest) {}, ""},
		{"every field", func(r *api.CaptureRequest) { r.Direction, r.Count, r.Snaplen = "out", 10, 96 }, ""},
		{"another stream version", func(r *api.CaptureRequest) { r.StreamVersion = 2 }, "capture: stream version 2 not spoken here (this side speaks 1)"},
		{"no name", func(r *api.CaptureRequest) { r.Name = "" }, "capture: bridge or interface name is empty"},
		{"bad direction", func(r *api.CaptureRequest) { r.Direction = "up" }, `capture bridge0: direction "up": want in, out or both`},
		{"negative count", func(r *api.CaptureRequest) { r.Count = -1 }, "capture bridge0: count -1: want 0 (no limit) or more"},
		{"snap length too short", func(r *api.CaptureRequest) { r.Snaplen = 13 }, "capture bridge0: snap length 13: want 14 to 262144"},
		{"snap length too long", func(r *api.CaptureRequest) { r.Snaplen = api.MaxSnaplen + 1 }, "capture bridge0: snap length 262145: want 14 to 262144"},
	}
	for _, tt := range tests {
		r := ok
		tt.edit(&r)
		err := r.Validate()
		if got := errString(err); got != tt.want {
			t.Errorf("%s: expected %q, got %q", tt.name, tt.want, got)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCaptureRefusedBeforeItBegins(t *testing.T) {
	fake := fakeState()
	fake.Errs = map[string]error{api.OpCapture: errors.New("nosuch: not a bridge or a port of one")}
	c, err := api.Dial(apitest.Serve(t, fake))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Capture(context.Background(), api.CaptureRequest{Name: "nosuch"})
	var re *api.RemoteError
	if !errors.As(err, &re) || re.Message != "nosuch: not a bridge or a port of one" {
		t.Fatalf("expected the handler's refusal as a RemoteError, got %#v", err)
	}
	// A refused capture leaves the connection for ordinary requests.
	if _, err := get[api.VersionInfo](context.Background(), c, api.VersionRequest{}); err != nil {
		t.Errorf("request after a refused capture: expected no error, got %v", err)
	}
}

func TestCaptureOwnsItsConnection(t *testing.T) {
	c, err := api.Dial(apitest.Serve(t, fakeState()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Do(ctx, api.CaptureRequest{Name: "bridge0"}, nil); err == nil || !strings.Contains(err.Error(), "use its own method") {
		t.Errorf("Do of a capture: expected a refusal naming Client.Capture, got %v", err)
	}
	s, err := c.Capture(ctx, api.CaptureRequest{Name: "bridge0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Start.StreamVersion != api.StreamVersion || s.Start.Bridge != "bridge0" {
		t.Errorf("start: expected stream version %d for bridge0, got %+v", api.StreamVersion, s.Start)
	}
	if _, err := get[api.VersionInfo](ctx, c, api.VersionRequest{}); err == nil || !strings.Contains(err.Error(), "carries a capture stream") {
		t.Errorf("request on a capture's connection: expected a refusal, got %v", err)
	}
}

// streamer is a handler whose captures send frames of size bytes until
// the sink fails or ctx is done; it reports how the capture ended.
type streamer struct {
	*apitest.Fake
	size  int
	ended chan error
}

func (h *streamer) Capture(ctx context.Context, req api.CaptureRequest, sink api.CaptureSink) (api.CaptureEnd, error) {
	if err := sink.Start(api.CaptureStart{Bridge: req.Name, Direction: "in", Snaplen: api.DefaultSnaplen}); err != nil {
		return api.CaptureEnd{}, err
	}
	f := api.CapturedFrame{Port: "eth1", Dir: api.FrameIn, Time: time.Now(), Len: h.size, Data: make([]byte, h.size)}
	var end api.CaptureEnd
	for {
		if h.size == 0 {
			<-ctx.Done()
			h.ended <- context.Cause(ctx)
			return end, nil
		}
		if err := sink.Frame(f); err != nil {
			h.ended <- err
			return end, err
		}
		if err := sink.Flush(); err != nil {
			h.ended <- err
			return end, err
		}
		end.Sent++
		if ctx.Err() != nil {
			h.ended <- context.Cause(ctx)
			return end, nil
		}
	}
}

// serveStreamer serves h with a short stall time and returns the socket
// and a function that stops the server.
func serveStreamer(t *testing.T, h api.Handler, stall time.Duration) (string, context.CancelFunc) {
	t.Helper()
	return serveStreamerIdle(t, h, stall, 0)
}

// serveStreamerIdle is serveStreamer with an idle timeout.
func serveStreamerIdle(t *testing.T, h api.Handler, stall, idle time.Duration) (string, context.CancelFunc) {
	t.Helper()
	path := apitest.SocketPath(t)
	ln, err := api.Listen(path, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := &api.Server{Handler: h, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), IdleTimeout: idle}
	srv.SetStreamStall(stall)
	srv.SetTimeouts(0, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return path, cancel
}

func waitEnded(t *testing.T, h *streamer, what string) error {
	t.Helper()
	select {
	case err := <-h.ended:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the capture did not end within 10s", what)
		return nil
	}
}

// TestCaptureStreamStallCutsTheStream: a client that reads nothing has
// its stream cut after the stall time, and the handler learns it from its
// sink with ErrStreamStalled.
func TestCaptureStreamStallCutsTheStream(t *testing.T) {
	h := &streamer{Fake: fakeState(), size: 9000, ended: make(chan error, 1)}
	path, _ := serveStreamer(t, h, 200*time.Millisecond)
	c, err := api.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Capture(context.Background(), api.CaptureRequest{Name: "bridge0"}); err != nil {
		t.Fatal(err)
	}
	// Never read again.
	if err := waitEnded(t, h, "a stalled client"); !errors.Is(err, api.ErrStreamStalled) {
		t.Errorf("the handler's sink: expected ErrStreamStalled, got %v", err)
	}
}

// TestCaptureStopByClient: a client that stops its capture gets the end
// message, without an error; a daemon that stops ends it with one.
func TestCaptureStopByClientOrDaemon(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stop    func(s *api.CaptureStream, stopServer context.CancelFunc)
		wantErr string
	}{
		{"the client stops", func(s *api.CaptureStream, _ context.CancelFunc) { s.Stop() }, ""},
		{"the daemon stops", func(_ *api.CaptureStream, stopServer context.CancelFunc) { stopServer() }, "the daemon is stopping"},
	} {
		h := &streamer{Fake: fakeState(), ended: make(chan error, 1)}
		path, stopServer := serveStreamer(t, h, time.Second)
		c, err := api.Dial(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Capture(context.Background(), api.CaptureRequest{Name: "bridge0"})
		if err != nil {
			t.Fatal(err)
		}
		tt.stop(s, stopServer)
		waitEnded(t, h, tt.name)
		_, end, err := s.Next()
		if err != nil || end == nil || end.Error != tt.wantErr {
			t.Errorf("%s: expected the end message with error %q, got %+v, %v", tt.name, tt.wantErr, end, err)
		}
		s.Close()
	}
}

// TestCaptureStreamLostConnection: a stream that breaks off before its
// end is an error, not a quiet end.
func TestCaptureStreamLostConnection(t *testing.T) {
	srv, cli := net.Pipe()
	go func() {
		srv.Write([]byte("F\x00\x00"))
		srv.Close()
	}()
	defer cli.Close()
	s := api.NewCaptureStream(cli)
	if _, _, err := s.Next(); err == nil || !strings.Contains(err.Error(), "before the end of the capture") {
		t.Errorf("expected a lost stream, got %v", err)
	}
}

// TestCaptureStreamDecode feeds whole and broken streams to the reader.
func TestCaptureStreamDecode(t *testing.T) {
	good := api.EncodeStream([]api.CapturedFrame{{Port: "eth1", Dir: api.FrameOut, Time: time.Unix(0, 42), Len: 100, Data: []byte{1, 2, 3}}}, &api.CaptureEnd{Sent: 1})
	frameMsg := good[:len(good)-len(api.EncodeStream(nil, &api.CaptureEnd{Sent: 1}))]
	tests := []struct {
		name   string
		stream []byte
		want   string // the error, "" for a frame then the end
	}{
		{"a frame and the end", good, ""},
		{"unknown type", []byte("X\x00\x00\x00\x00"), "unknown message type 0x58"},
		{"frame too long", []byte("F\x7f\xff\xff\xff"), "frame message of 2147483647 bytes: longer than"},
		{"end too long", []byte("E\x00\x10\x00\x01"), "end message of 1048577 bytes: longer than 65536"},
		{"short frame header", []byte("F\x00\x00\x00\x03abc"), "shorter than its header"},
		{"name beyond the payload", append([]byte("F\x00\x00\x00\x0e"), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9), "port name of 9 bytes does not fit"},
		{"bad direction", replaceAt(frameMsg, 5+12, 3), "direction 3"},
		{"length below the data", replaceAt(frameMsg, 5+11, 1), "length 1 with 3 bytes captured"},
		{"end with unknown fields", []byte("E\x00\x00\x00\x09{\"x\":1}  "), "end message"},
		{"no end", frameMsg, "before the end of the capture"},
	}
	for _, tt := range tests {
		s := api.NewCaptureStream(bytes.NewReader(tt.stream))
		var err error
		for err == nil {
			var end *api.CaptureEnd
			var f api.CapturedFrame
			f, end, err = s.Next()
			if err == nil && end == nil && (f.Port != "eth1" || f.Dir != api.FrameOut || f.Len != 100 || !bytes.Equal(f.Data, []byte{1, 2, 3}) || f.Time.UnixNano() != 42) {
				t.Errorf("%s: frame decoded as %+v", tt.name, f)
			}
			if end != nil {
				break
			}
		}
		if got := errString(err); (tt.want == "" && got != "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: expected %q, got %q", tt.name, tt.want, got)
		}
	}
}

func replaceAt(b []byte, i int, v byte) []byte {
	b = slices.Clone(b)
	b[i] = v
	return b
}

// TestCaptureStreamIsNotARequest: a running stream is bounded neither by
// the idle timeout nor by its request's deadline, and does not hold up
// the requests of other connections; a stream whose deadline passed
// before the daemon reached it does not begin.
func TestCaptureStreamIsNotARequest(t *testing.T) {
	h := &streamer{Fake: fakeState(), ended: make(chan error, 1)}
	const idle = 100 * time.Millisecond
	path, _ := serveStreamerIdle(t, h, time.Second, idle)
	c, err := api.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), idle)
	s, err := c.Capture(ctx, api.CaptureRequest{Name: "bridge0"})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	// A connection opened now, idle, is closed by the idle timeout: once
	// it is, the stream has run longer than that and than its deadline.
	idler, ir := rawDial(t, path)
	if line, err := ir.ReadString('\n'); err != nil || !strings.Contains(line, "no request for") {
		t.Fatalf("an idle connection: expected the idle timeout's notice, got %q, %v", line, err)
	}
	idler.Close()
	other, err := api.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := get[api.VersionInfo](context.Background(), other, api.VersionRequest{}); err != nil {
		t.Fatalf("a request while a stream runs: expected an answer, got %v", err)
	}
	select {
	case err := <-h.ended:
		t.Fatalf("the stream ended by itself (%v): expected it to run past the idle timeout and its deadline", err)
	default:
	}
	s.Stop()
	if _, end, err := s.Next(); err != nil || end == nil || end.Error != "" {
		t.Errorf("stopped stream: expected its end without an error, got %+v, %v", end, err)
	}

	conn, r := rawDial(t, path)
	line := fmt.Sprintf(`{"version":1,"op":"capture","args":{"stream_version":1,"name":"bridge0"},"deadline":%q}`,
		time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano))
	if got, want := exchange(t, conn, r, line), `{"error":"capture: not begun: the request's deadline passed before the daemon could serve it"}`; got != want {
		t.Errorf("a capture past its deadline:\nexpected %s\ngot      %s", want, got)
	}
}
