package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/platform"
)

// engine is the daemon's control plane: the configuration (the desired
// state, as in the file), the running graph, and the one way between them.
// A state operation is an edit of a copy of the configuration
// (internal/config says what is allowed); then the new file is written
// beside the old one, a plan makes the graph match it (reconcile.go), and
// the rename makes it current. If writing fails, nothing has changed; if
// the plan or the rename fails, the graph is rolled back to the old
// configuration and the new file removed. After any failure the running
// state and the file agree. Operations that are not state (flushing
// learned addresses, the queries) go to the graph directly and never
// touch the file.
type engine struct {
	// mu serialises every change and every read of the configuration and
	// the graph; the forwarding path never takes it.
	mu sync.Mutex
	// cfg is the configuration the graph runs, as in the file; guarded by
	// mu.
	cfg *config.Config
	// file is where the configuration is written.
	file configFile
	// host answers the edits' questions about interfaces.
	host config.Host
	// graph is the running bridges and trunks; guarded by mu.
	graph *graph
	// log receives one line per state change.
	log *slog.Logger
	// fault, when not nil, is called before each step of a plan and after
	// the last; an error from it fails the plan there (plan.apply). Tests
	// set it.
	fault func() error
	// version is what `swctl version` reports for the daemon.
	version api.VersionInfo
	// started is when the engine was made: the metrics' uptime counts
	// from it.
	started time.Time
}

// configFile is where the engine keeps its configuration: write puts the
// new text beside the file, and the pending write then replaces it or is
// discarded. Tests make either step fail.
type configFile interface {
	write(c *config.Config) (pendingWrite, error)
}

// pendingWrite is a configuration written, not yet in its place
// (config.Pending).
type pendingWrite interface {
	Commit() error
	Discard()
}

// diskFile is the configuration file at a path.
type diskFile string

func (f diskFile) write(c *config.Config) (pendingWrite, error) {
	p, err := c.WritePending(string(f))
	if err != nil {
		return nil, err
	}
	return p, nil
}

// sysHost is a config.Host over a system.
type sysHost struct{ sys system }

func (h sysHost) Exists(name string) bool { return h.sys.LinkState(name) != platform.LinkAbsent }

func (h sysHost) HardwareAddr(name string) (net.HardwareAddr, error) {
	return h.sys.HardwareAddr(name)
}

func (h sysHost) DefaultRouteIfaces() ([]string, error) { return h.sys.DefaultRouteIfaces() }

func newEngine(cfgPath string, sys system, clk clock.Clock, log *slog.Logger) *engine {
	return &engine{
		cfg:     &config.Config{},
		file:    diskFile(cfgPath),
		host:    sysHost{sys},
		graph:   newGraph(sys, clk, log),
		log:     log,
		started: clk.Now(),
	}
}

// load builds the running graph from a configuration read at start,
// saving it when it had to choose MACs. Members that do not exist are
// left absent; anything else that fails undoes all and is returned: the
// daemon does not start half-configured.
func (e *engine) load(cfg *config.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := cfg.Clone()
	if err := next.Validate(); err != nil {
		return err
	}
	return e.commit(context.Background(), next, next.ChooseAddrs(e.host))
}

// change runs one state operation: edit turns a copy of the configuration
// into the new one, or says why not.
func (e *engine) change(ctx context.Context, edit func(c *config.Config) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changeLocked(ctx, edit)
}

// changeLocked is change with mu held. An edit that leaves the file as it
// is changes nothing and writes nothing.
func (e *engine) changeLocked(ctx context.Context, edit func(c *config.Config) error) error {
	if err := ctx.Err(); err != nil {
		return notInTime(err)
	}
	next := e.cfg.Clone()
	if err := edit(next); err != nil {
		return err
	}
	if err := next.Validate(); err != nil {
		return err
	}
	if bytes.Equal(next.Format(), e.cfg.Format()) {
		return nil
	}
	return e.commit(ctx, next, true)
}

// notInTime is the error of a change whose client stopped waiting (ctx,
// the request's deadline) before it was made.
func notInTime(err error) error {
	return fmt.Errorf("not applied: the request's deadline passed before the daemon could make the change (%w)", err)
}

// commit makes next the configuration: with save, write it beside the
// file; make the graph match it; unless ctx is done by then, with save,
// rename it into place; when ctx is done (the client stopped waiting) the
// graph is rolled back instead. Call with mu held.
func (e *engine) commit(ctx context.Context, next *config.Config, save bool) error {
	var pend pendingWrite
	if save {
		p, err := e.file.write(next)
		if err != nil {
			return notSaved(err)
		}
		pend = p
	}
	p := e.graph.plan(e.cfg, next)
	if err := p.apply(e.fault); err != nil {
		p.rollback()
		if pend != nil {
			pend.Discard()
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		p.rollback()
		if pend != nil {
			pend.Discard()
		}
		return notInTime(err)
	}
	if pend != nil {
		if err := pend.Commit(); err != nil {
			if !errors.Is(err, config.ErrDirSync) {
				p.rollback()
				return notSaved(err)
			}
			e.log.Warn("configuration saved, but a crash now may lose the change", "err", err)
		}
	}
	p.release()
	e.cfg = next
	return nil
}

// notSaved says that a change was refused because the file could not be
// written.
func notSaved(err error) error {
	return fmt.Errorf("not changed: cannot save the configuration: %w", err)
}

// Close stops everything.
func (e *engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.graph.closeAll()
}

// resync replays the current state of every configured port, for links
// that changed before the watcher started.
func (e *engine) resync() {
	e.mu.Lock()
	names := e.graph.names()
	e.mu.Unlock()
	for _, n := range names {
		e.linkChanged(linkEvent{name: n, state: e.graph.sys.LinkState(n)})
	}
}

// linkChanged is called by the link watcher for every link event. A
// configured interface renamed is followed (follow.go); any other event
// goes to the graph.
func (e *engine) linkChanged(ev linkEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ev.renamed != "" && e.followRename(ev.name, ev.renamed) {
		return
	}
	e.graph.linkChanged(e.cfg, ev)
}

// errNoBridge names a bridge that does not exist.
func errNoBridge(name string) error { return fmt.Errorf("%s: no such bridge", name) }
