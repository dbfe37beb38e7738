// Package apitest provides a fake api.Handler that records the calls it
// gets and answers from canned state, a helper that serves a Handler on a
// temporary unix socket for the length of a test, and a peer that never
// reads its replies.
package apitest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/api"
)

// Call is one call a Fake received.
type Call struct {
	// Op is the operation, one of the api.Op constants.
	Op string
	// Req is the request: the api request type for state operations,
	// deladdr, flush and BridgeAddr, the name (a string) for BridgeShow,
	// TrunkShow, LBShow and PortShow, nil for Version and Stats, the
	// CaptureRequest for Capture.
	Req any
}

// Fake is an api.Handler whose answers are set by the test. Set its
// fields before serving; read Calls (through Recorded) afterwards.
type Fake struct {
	// Bridges is what BridgeShow returns (filtered by name).
	Bridges []api.BridgeInfo
	// Addrs is the address table BridgeAddr pages through, by bridge
	// name.
	Addrs map[string][]api.AddrInfo
	// Trunks is what TrunkShow returns (filtered by name).
	Trunks []api.TrunkInfo
	// Ports is what PortShow returns (filtered by name).
	Ports []api.PortInfo
	// LBs is what LBShow returns (filtered by name).
	LBs []api.LBInfo
	// VersionInfo is what Version returns.
	VersionInfo api.VersionInfo
	// Samples is what Stats returns.
	Samples []api.Sample
	// Frames are what Capture sends (at most the request's count), before
	// it ends the stream with CaptureDropped frames dropped.
	Frames         []api.CapturedFrame
	CaptureDropped uint64
	// Errs makes an operation fail with the given error, by op name.
	Errs map[string]error

	// mu guards calls.
	mu sync.Mutex
	// calls records every call in order.
	calls []Call
}

var _ api.Handler = (*Fake)(nil)

// Recorded returns the calls received so far.
func (f *Fake) Recorded() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

func (f *Fake) record(op string, req any) error {
	f.mu.Lock()
	f.calls = append(f.calls, Call{Op: op, Req: req})
	f.mu.Unlock()
	return f.Errs[op]
}

// Change records a state operation.
func (f *Fake) Change(_ context.Context, r api.Edit) error {
	return f.record(r.Op(), r)
}

func (f *Fake) BridgeShow(_ context.Context, name string) ([]api.BridgeInfo, error) {
	if err := f.record(api.OpBridgeShow, name); err != nil {
		return nil, err
	}
	if name == "" {
		return f.Bridges, nil
	}
	for _, b := range f.Bridges {
		if b.Name == name {
			return []api.BridgeInfo{b}, nil
		}
	}
	return nil, fmt.Errorf("%s: no such bridge", name)
}

// BridgeAddr pages through Addrs[r.Name] in the order given there: the
// entries after the one r.After names, r.PageSize() at most.
func (f *Fake) BridgeAddr(_ context.Context, r api.BridgeAddrRequest) ([]api.AddrInfo, error) {
	if err := f.record(api.OpBridgeAddr, r); err != nil {
		return nil, err
	}
	a, ok := f.Addrs[r.Name]
	if !ok {
		return nil, fmt.Errorf("%s: no such bridge", r.Name)
	}
	if r.After != nil {
		i := slices.IndexFunc(a, func(e api.AddrInfo) bool { return e.MAC == r.After.MAC && e.VLAN == r.After.VLAN })
		a = a[i+1:]
	}
	return a[:min(len(a), r.PageSize())], nil
}

func (f *Fake) BridgeDelAddr(_ context.Context, r api.DelAddrRequest) error {
	return f.record(api.OpBridgeDelAddr, r)
}

func (f *Fake) BridgeFlush(_ context.Context, r api.FlushRequest) error {
	return f.record(api.OpBridgeFlush, r)
}

func (f *Fake) BridgeEnable(_ context.Context, r api.EnableRequest) error {
	return f.record(api.OpBridgeEnable, r)
}

func (f *Fake) TrunkShow(_ context.Context, name string) ([]api.TrunkInfo, error) {
	if err := f.record(api.OpTrunkShow, name); err != nil {
		return nil, err
	}
	if name == "" {
		return f.Trunks, nil
	}
	for _, t := range f.Trunks {
		if t.Name == name {
			return []api.TrunkInfo{t}, nil
		}
	}
	return nil, fmt.Errorf("%s: no such trunk", name)
}

func (f *Fake) LBShow(_ context.Context, name string) ([]api.LBInfo, error) {
	if err := f.record(api.OpLBShow, name); err != nil {
		return nil, err
	}
	if name == "" {
		return f.LBs, nil
	}
	for _, l := range f.LBs {
		if l.Name == name {
			return []api.LBInfo{l}, nil
		}
	}
	return nil, fmt.Errorf("%s: no such lb", name)
}

func (f *Fake) PortShow(_ context.Context, name string) ([]api.PortInfo, error) {
	if err := f.record(api.OpPortShow, name); err != nil {
		return nil, err
	}
	if name == "" {
		return f.Ports, nil
	}
	for _, p := range f.Ports {
		if p.Name == name {
			return []api.PortInfo{p}, nil
		}
	}
	return nil, fmt.Errorf("%s: not a port of any bridge", name)
}

func (f *Fake) Version(context.Context) (api.VersionInfo, error) {
	if err := f.record(api.OpVersion, nil); err != nil {
		return api.VersionInfo{}, err
	}
	return f.VersionInfo, nil
}

func (f *Fake) Stats(context.Context) ([]api.Sample, error) {
	if err := f.record(api.OpStats, nil); err != nil {
		return nil, err
	}
	return f.Samples, nil
}

// Capture records the request, then (unless Errs refuses it) starts the
// stream, sends Frames (at most req.Count) and ends it.
func (f *Fake) Capture(ctx context.Context, req api.CaptureRequest, sink api.CaptureSink) (api.CaptureEnd, error) {
	if err := f.record(api.OpCapture, req); err != nil {
		return api.CaptureEnd{}, err
	}
	dir := req.Direction
	if dir == "" {
		dir = api.DirectionBoth
	}
	if err := sink.Start(api.CaptureStart{Bridge: req.Name, Direction: dir, Snaplen: api.DefaultSnaplen}); err != nil {
		return api.CaptureEnd{}, err
	}
	end := api.CaptureEnd{Dropped: f.CaptureDropped}
	for _, fr := range f.Frames {
		if req.Count > 0 && end.Sent == uint64(req.Count) {
			break
		}
		if err := sink.Frame(fr); err != nil {
			return end, err
		}
		end.Sent++
	}
	return end, sink.Flush()
}

// SocketPath returns a fresh socket path in a short temporary directory
// (t.TempDir can exceed the 104-108 bytes a unix socket path may have),
// removed when the test ends.
func SocketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "swctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "swctl.sock")
}

// Serve serves h on a new socket until the test ends, with no credential
// check, and returns the socket's path.
func Serve(t testing.TB, h api.Handler) string {
	t.Helper()
	return ServeAuth(t, h, nil)
}

// ServeAuth is Serve with an Authorizer.
func ServeAuth(t testing.TB, h api.Handler, auth api.Authorizer) string {
	t.Helper()
	path := SocketPath(t)
	ln, err := api.Listen(path, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&api.Server{Handler: h, Auth: auth}).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("api.Server.Serve: expected nil after cancel, got %v", err)
		}
	})
	return path
}

// NonReader connects to the socket at path and sends n version requests
// without ever reading a reply: a peer that leaves the server blocked in
// a write once the socket's buffer is full. It returns when a reply is
// waiting unread, with the connection (closed when the test ends) and a
// channel that gets the sending's outcome: nil once all n are sent, or
// the error that stopped it (the connection closed).
func NonReader(t testing.TB, path string, n int) (*net.UnixConn, <-chan error) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.(*net.UnixConn)
	t.Cleanup(func() { conn.Close() })
	line := fmt.Sprintf(`{"version":%d,"op":%q}`+"\n", api.ProtocolVersion, api.OpVersion)
	sent := make(chan error, 1)
	go func() {
		_, err := conn.Write(bytes.Repeat([]byte(line), n))
		sent <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !replyWaiting(t, conn) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no reply within 10s of sending %d requests", path, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return conn, sent
}

// replyWaiting reports whether c has bytes to read, without reading them.
func replyWaiting(t testing.TB, c *net.UnixConn) bool {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var b [1]byte
	if err := raw.Control(func(fd uintptr) {
		n, _, _ = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	}); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
