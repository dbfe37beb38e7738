package api

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/supervise"
)

// DefaultSocket is where the daemon listens unless told otherwise.
const DefaultSocket = "/run/swctl/swctl.sock"

// refuseTimeout bounds how long a refused peer may take to send the
// request its refusal answers.
const refuseTimeout = 2 * time.Second

// replyTimeout bounds how long a reply may wait for its peer to read it:
// a peer that stops reading loses its connection instead of holding a
// goroutine forever.
const replyTimeout = 5 * time.Second

// shutdownGrace is how long a stopping Serve lets the requests under way
// be answered before it closes every connection.
const shutdownGrace = time.Second

// DefaultIdleTimeout is how long a connection may go without sending a
// request before the server closes it, unless Server.IdleTimeout says
// otherwise.
const DefaultIdleTimeout = 60 * time.Second

// DefaultMaxConns is how many connections a Server serves at once unless
// Server.MaxConns says otherwise: far more than any person or script
// needs, far fewer than the daemon's descriptors.
const DefaultMaxConns = 64

// refuseWriteTimeout bounds the write of the one reply that refuses a
// connection over the limit, which the accept loop makes itself.
const refuseWriteTimeout = 100 * time.Millisecond

// umaskMu serialises Listen's change of the process-wide umask.
var umaskMu sync.Mutex

// Listen creates the control socket at path and listens on it. The parent
// directory is created (0755) if missing. A socket left behind by a dead
// daemon is removed; one a live daemon answers on is not, and Listen fails.
// The socket is created with mode 0600, or with mode 0660 and owned by
// group when group (a name or a numeric ID) is not "".
func Listen(path, group string) (*net.UnixListener, error) {
	gid := -1
	if group != "" {
		g, err := lookupGroup(group)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		gid = g
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	umaskMu.Lock()
	old := unix.Umask(0o177) // the socket gets 0777 &^ 0177 = 0600
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapOp(err))
	}
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("%s: socket group %s: %w", path, group, err)
		}
		if err := os.Chmod(path, 0o660); err != nil {
			ln.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return ln, nil
}

// removeStale removes a socket at path that nothing answers on.
func removeStale(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if st.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s: exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("another daemon is listening on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: cannot tell whether a daemon is listening: %w", path, unwrapOp(err))
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: remove stale socket: %w", path, err)
	}
	return nil
}

// lookupGroup resolves a group name or numeric ID.
func lookupGroup(group string) (int, error) {
	if g, err := user.LookupGroup(group); err == nil {
		return strconv.Atoi(g.Gid)
	}
	if g, err := user.LookupGroupId(group); err == nil {
		return strconv.Atoi(g.Gid)
	}
	return 0, fmt.Errorf("socket group %q: no such group", group)
}

// unwrapOp strips the *net.OpError layer, whose text repeats the path.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// Peer is the process at the other end of a connection, as the kernel
// reports it.
type Peer struct {
	// UID is the peer's effective user ID.
	UID uint32
	// GIDs are the peer's group IDs the kernel reports: the effective
	// group first, then (on FreeBSD) the supplementary groups.
	GIDs []uint32
	// PID is the peer's process ID, 0 where the OS does not report it.
	PID int32
}

// Authorizer decides whether a peer may use the control socket. A non-nil
// error refuses it and is sent to the peer as the reply to its request.
type Authorizer interface {
	Authorize(p Peer) error
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(p Peer) error

// Authorize calls f.
func (f AuthorizerFunc) Authorize(p Peer) error { return f(p) }

// groupAuthorizer admits root, the daemon's own user and one group.
type groupAuthorizer struct {
	// self is the daemon's effective user ID.
	self uint32
	// group is the admitted group's name, "" for none.
	group string
	// gid is the admitted group's ID, valid when group is not "".
	gid uint32
}

// NewAuthorizer returns the daemon's access rule: root, the daemon's own
// user and, when group is not "", members of that group (by the peer's
// effective group, or by the group database for supplementary groups).
func NewAuthorizer(group string) (Authorizer, error) {
	a := &groupAuthorizer{self: uint32(os.Geteuid()), group: group}
	if group != "" {
		gid, err := lookupGroup(group)
		if err != nil {
			return nil, err
		}
		a.gid = uint32(gid)
	}
	return a, nil
}

func (a *groupAuthorizer) Authorize(p Peer) error {
	if p.UID == 0 || p.UID == a.self {
		return nil
	}
	if a.group != "" {
		if slices.Contains(p.GIDs, a.gid) {
			return nil
		}
		if u, err := user.LookupId(strconv.FormatUint(uint64(p.UID), 10)); err == nil {
			if ids, err := u.GroupIds(); err == nil && slices.Contains(ids, strconv.FormatUint(uint64(a.gid), 10)) {
				return nil
			}
		}
		return fmt.Errorf("permission denied: uid %d is not root, the daemon's user or in group %s", p.UID, a.group)
	}
	return fmt.Errorf("permission denied: uid %d is not root or the daemon's user", p.UID)
}

// PeerOf returns the credentials of the process at the other end of c.
func PeerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var p Peer
	var perr error
	if err := raw.Control(func(fd uintptr) { p, perr = peerCred(int(fd)) }); err != nil {
		return Peer{}, err
	}
	if perr != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", perr)
	}
	return p, nil
}

// Server serves the control protocol: each connection gets a goroutine,
// and its requests are served one at a time, in order. The handler is
// called for one request at a time across all connections, and a request
// whose deadline (Request.Deadline) has passed when its turn comes is
// refused, not served: a client that gave up never has its change
// applied later, whether its request waited behind others, in the
// listen queue while the daemon was out of descriptors, or in the socket.
type Server struct {
	// Handler serves the requests.
	Handler Handler
	// Auth, when not nil, decides which peers may use the socket: a
	// refused peer gets the refusal as the reply to its first request,
	// and the connection is closed.
	Auth Authorizer
	// Log receives a line for every connection closed because its peer
	// did not read a reply in time; nil means slog.Default().
	Log *slog.Logger
	// Hurry, when closed during a shutdown, ends its grace period at
	// once.
	Hurry <-chan struct{}
	// IdleTimeout closes a connection that has not sent a whole request
	// for this long since it was opened or last answered, with an error
	// line saying so; 0 means DefaultIdleTimeout. A request being served
	// is never cut by it.
	IdleTimeout time.Duration
	// MaxConns is how many connections are served at once; 0 means
	// DefaultMaxConns. A connection over it gets one error reply naming
	// the limit and is closed at once, without its request being read.
	MaxConns int

	// replyTimeout is replyTimeout unless a test shortens it.
	replyTimeout time.Duration
	// grace is shutdownGrace unless a test changes it.
	grace time.Duration
	// turn holds a token while the handler serves a request: one at a
	// time, so that a request's deadline is checked after it has waited
	// for the others. Made by Serve.
	turn chan struct{}
	// streamStall is StreamStall unless a test shortens it.
	streamStall time.Duration
}

// Serve accepts connections on ln and serves their requests until ctx is
// done. Then it stops accepting and reading requests, gives the requests
// under way shutdownGrace (or until Hurry is closed) to be answered,
// closes every connection and ln, and returns nil once the handler calls
// under way have returned: no peer can hold it up.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	var (
		mu       sync.Mutex
		conns    = map[*net.UnixConn]struct{}{}
		wg       sync.WaitGroup
		maxConns = cmp.Or(s.MaxConns, DefaultMaxConns)
		// refusing is set while connections are refused for the
		// limit, so that a flood is logged once.
		refusing bool
	)
	s.turn = make(chan struct{}, 1)
	each := func(fn func(c *net.UnixConn) error) {
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			fn(c)
		}
	}
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		// Idle connections end now, busy ones after their reply.
		each(func(c *net.UnixConn) error { return c.SetReadDeadline(time.Now()) })
	})
	defer stop()
	defer func() {
		ln.Close()
		served := make(chan struct{})
		go func() { wg.Wait(); close(served) }()
		grace := time.NewTimer(cmp.Or(s.grace, shutdownGrace))
		defer grace.Stop()
		select {
		case <-served:
			return
		case <-grace.C:
		case <-s.Hurry:
		}
		// Whatever a connection still waits for (a peer that does not
		// read, a refused peer that sends nothing) ends with it.
		each((*net.UnixConn).Close)
		<-served
	}()

	backoff := time.Duration(0)
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors or similar: wait and try again, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		backoff = 0
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			c.Close()
			return nil
		}
		if n := len(conns); n >= maxConns {
			mu.Unlock()
			if !refusing {
				cmp.Or(s.Log, slog.Default()).Warn("control connections refused: at the limit", "open", n, "limit", maxConns)
				refusing = true
			}
			s.refuseOverLimit(c, maxConns)
			continue
		}
		refusing = false
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		supervise.Go("control connection", func() {
			defer wg.Done()
			s.serveConn(ctx, c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			c.Close()
		})
	}
}

// refuseOverLimit answers a connection over the limit of max with an error
// and closes it, without reading its request: the reply waits in the
// peer's socket for it to read after it has written.
func (s *Server) refuseOverLimit(c *net.UnixConn, max int) {
	c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	c.Write(errorReply(fmt.Errorf("too many control connections: the daemon serves at most %d at once (swctl daemon --max-clients); try again later", max)))
	c.Close()
}

// errTooLong reports a request line over MaxRequestSize.
var errTooLong = fmt.Errorf("request longer than %d bytes", MaxRequestSize)

// serveConn serves the requests of one connection until the peer closes
// it, ctx is done, the peer stays idle too long or a reply cannot be
// written.
func (s *Server) serveConn(ctx context.Context, c *net.UnixConn) {
	r := bufio.NewReaderSize(c, 64<<10)
	if s.Auth != nil {
		p, err := PeerOf(c)
		if err == nil {
			err = s.Auth.Authorize(p)
		}
		if err != nil {
			c.SetReadDeadline(time.Now().Add(refuseTimeout))
			readLine(r, MaxRequestSize)
			s.reply(c, errorReply(err))
			return
		}
	}
	idle := cmp.Or(s.IdleTimeout, DefaultIdleTimeout)
	for {
		c.SetReadDeadline(time.Now().Add(idle))
		// Checked after the deadline is set: a shutdown that set its
		// own deadline (now) just before is not overridden unseen.
		if ctx.Err() != nil {
			return
		}
		line, err := readLine(r, MaxRequestSize)
		switch {
		case errors.Is(err, errTooLong):
			s.reply(c, errorReply(err))
			return
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil:
			s.reply(c, errorReply(fmt.Errorf("control connection closed: no request for %v (swctl daemon --idle-timeout)", idle)))
			return
		}
		if err == nil || len(line) > 0 {
			cl, derr := decodeRequest(line)
			if derr == nil && cl.stream != nil {
				if s.serveStream(ctx, c, r, cl) {
					return
				}
			} else if s.reply(c, s.serveCall(ctx, cl, derr)) != nil {
				return
			}
		}
		if err != nil {
			return // end of stream, shutdown or a broken connection
		}
	}
}

// serveLine serves one request line when the handler is free, unless the
// request's deadline passes or the server stops first, and returns the
// reply line.
func (s *Server) serveLine(ctx context.Context, line []byte) []byte {
	cl, err := decodeRequest(line)
	return s.serveCall(ctx, cl, err)
}

// serveCall is serveLine once the line is decoded (err: why it could not
// be).
func (s *Server) serveCall(ctx context.Context, cl *call, err error) []byte {
	if err != nil {
		return errorReply(err)
	}
	var expired <-chan time.Time
	if !cl.deadline.IsZero() {
		t := time.NewTimer(time.Until(cl.deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case s.turn <- struct{}{}:
		defer func() { <-s.turn }()
	case <-expired:
	case <-ctx.Done():
	}
	// Checked again when the turn came: select picks any ready case.
	if ctx.Err() != nil {
		return errorReply(fmt.Errorf("%s: not applied: the daemon is stopping", cl.op))
	}
	if late := time.Since(cl.deadline); !cl.deadline.IsZero() && late >= 0 {
		cmp.Or(s.Log, slog.Default()).Warn("control request refused: its deadline passed before it could be served", "op", cl.op, "late", late)
		return errorReply(fmt.Errorf("%s: not applied: the request's deadline passed before the daemon could serve it", cl.op))
	}
	return cl.answer(ctx, s.Handler)
}

// reply writes one reply to c. A peer that has not read it within the
// reply timeout is logged; the caller then closes the connection.
func (s *Server) reply(c *net.UnixConn, b []byte) error {
	timeout := cmp.Or(s.replyTimeout, replyTimeout)
	c.SetWriteDeadline(time.Now().Add(timeout))
	_, err := c.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		args := []any{"timeout", timeout}
		if p, perr := PeerOf(c); perr == nil {
			args = append(args, "peer_uid", p.UID, "peer_pid", p.PID)
		}
		cmp.Or(s.Log, slog.Default()).Warn("control connection closed: the peer did not read its reply", args...)
	}
	return err
}

// readLine reads one line, without its newline, of at most max bytes
// (newline included). A last line without a newline is returned with
// io.EOF. A longer line gives errTooLong.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, errTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, io.EOF
		default:
			return nil, err
		}
	}
}
