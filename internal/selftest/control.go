package selftest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/swctl/swctl/internal/api"
)

// versionOnly serves the version request and nothing else: the control
// check sends no other. The embedded Handler is nil; any other request
// would panic, and no one else can reach the socket (mode 0600, in the
// selftest's own temporary directory).
type versionOnly struct{ api.Handler }

// Version answers with this binary's build.
func (versionOnly) Version(context.Context) (api.VersionInfo, error) { return api.Build(), nil }

// checkControl listens on a control socket as the daemon does (mode
// 0600, peer credentials checked), sends it one request with the CLI's
// client, and checks the answer and the credentials the OS reported.
func checkControl(ctx context.Context, s *session) Outcome {
	path := filepath.Join(s.tmp, "swctl.sock")
	subject := []string{filepath.Base(path)}
	ln, err := api.Listen(path, "")
	if err != nil {
		return fail(CheckControl, subject, "listen: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		ln.Close()
		return fail(CheckControl, subject, "%v", err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		ln.Close()
		return fail(CheckControl, subject, "socket mode %#o, want 0600", perm)
	}
	auth, err := api.NewAuthorizer("")
	if err != nil {
		ln.Close()
		return fail(CheckControl, subject, "%v", err)
	}
	var mu sync.Mutex
	var peers []api.Peer
	srv := &api.Server{
		Handler: versionOnly{},
		Auth: api.AuthorizerFunc(func(p api.Peer) error {
			mu.Lock()
			peers = append(peers, p)
			mu.Unlock()
			return auth.Authorize(p)
		}),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() {
		stop()
		<-served
	}()

	cl, err := api.Dial(path)
	if err != nil {
		return fail(CheckControl, subject, "%v", err)
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	var v api.VersionInfo
	if err := cl.Do(rctx, api.VersionRequest{}, &v); err != nil {
		return fail(CheckControl, subject, "version request: %v", err)
	}
	if want := api.Build(); v.Version != want.Version || v.Protocol != want.Protocol {
		return fail(CheckControl, subject, "version request: answered %s protocol %d, want %s protocol %d", v.Version, v.Protocol, want.Version, want.Protocol)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(peers) != 1 {
		return fail(CheckControl, subject, "the server saw %d peers, want 1", len(peers))
	}
	p := peers[0]
	if p.UID != uint32(os.Geteuid()) {
		return fail(CheckControl, subject, "peer credentials: uid %d, want this process's %d", p.UID, os.Geteuid())
	}
	who := fmt.Sprintf("uid %d", p.UID)
	if p.PID != 0 {
		if p.PID != int32(os.Getpid()) {
			return fail(CheckControl, subject, "peer credentials: pid %d, want this process's %d", p.PID, os.Getpid())
		}
		who += fmt.Sprintf(", pid %d", p.PID)
	}
	return pass(CheckControl, subject, "a temporary socket, mode 0600: version request answered, peer credentials %s", who)
}
