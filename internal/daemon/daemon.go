// Package daemon is swctl's engine process: it owns the bridges and their
// ports, the control socket and the configuration file. The CLI reaches it
// only through internal/api.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/statedir"
)

// Default paths.
const (
	DefaultSocket   = "/run/swctl/swctl.sock"
	DefaultStateDir = "/var/lib/swctl"
)

// Options configures a daemon.
type Options struct {
	// ConfigPath is the configuration file loaded at start and rewritten
	// after every accepted change.
	ConfigPath string
	// SocketPath is the control socket.
	SocketPath string
	// StateDir holds runtime state (journals, the lock).
	StateDir string
	// SocketGroup, when not empty, is a group whose members may use the
	// control socket besides root.
	SocketGroup string
	// Version identifies this build in `swctl version`.
	Version api.VersionInfo
	// Logger receives one line per state change.
	Logger *slog.Logger
	// Workers is the number of receive queues, each with its own
	// forwarding goroutine, of every bridge member (PACKET_FANOUT in hash
	// mode) and of every host TAP (a bridge's local TAP, a trunk's:
	// IFF_MULTI_QUEUE); 0 means 1.
	Workers int
	// TXMode is how AF_PACKET ports send: TXRing (the default when
	// empty), an mmap TX ring with one kick per batch
	// (afpacket.Options.TXRing), or TXMmsg, one sendmmsg per batch.
	TXMode string
	// RXRingMiB is the size in MiB of the receive ring of every AF_PACKET
	// socket (each worker's, each member's); 0 means DefaultRXRingMiB.
	// A larger ring rides out longer stalls of the forwarder (a
	// descheduled reader) without dropping; it is pinned kernel memory.
	RXRingMiB int
	// BusyPoll makes every AF_PACKET member's readers poll their rings
	// instead of sleeping (afpacket.Options.BusyPoll): the lowest
	// latency, for a core spinning at 100% per running reader thread
	// (GOMAXPROCS; `swctl daemon --busy-poll` sets it to Workers).
	// Linux only.
	BusyPoll bool
	// QdiscBypass sends every AF_PACKET port's frames straight to the
	// driver, skipping the interface's qdisc and tc egress
	// (PACKET_QDISC_BYPASS; afpacket.Options.QdiscBypass). Linux only.
	QdiscBypass bool
	// Coalesce is how long an AF_PACKET reader pauses before it reads a
	// ring its last read emptied with a short batch
	// (afpacket.Options.Coalesce): fewer wakeups per frame at moderate
	// loads, for at most this much delay of frames that follow a short
	// batch. 0 turns it off; `swctl daemon` defaults to DefaultCoalesce.
	// Linux only; the BSDs' bpf buffer batches already.
	Coalesce time.Duration
	// IdleTimeout closes a control connection that sends no request for
	// this long; 0 means api.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxClients is how many control connections are served at once; one
	// over it is refused with an error naming the limit. 0 means
	// api.DefaultMaxConns.
	MaxClients int
	// Metrics, when not "", is where the Prometheus metrics endpoint
	// listens: a loopback host:port or the path of a unix socket
	// (metrics.Listen). Off by default.
	Metrics string
	// Hurry, when closed after ctx is done, cuts the shutdown short: the
	// control connections are closed at once instead of after a grace
	// period for the requests under way. The interfaces are given back
	// all the same.
	Hurry <-chan struct{}
}

// DefaultCoalesce is `swctl daemon --coalesce`'s default: of the pauses
// measured it cut the CPU per frame most at a moderate load without
// moving light-load latency or TCP (docs/BENCH.md, "Dated figures").
const DefaultCoalesce = 100 * time.Microsecond

// MaxCoalesce bounds Options.Coalesce (and `swctl daemon --coalesce`): a
// longer pause would hold frames long enough to overflow a ring at high
// rates. It is the AF_PACKET backend's own bound (afpacket.MaxCoalesce; a
// Linux test keeps the two equal), named here so that the portable daemon
// and the CLI check the option without importing a Linux backend.
const MaxCoalesce = 10 * time.Millisecond

// DefaultRXRingMiB is the receive ring of a member socket: 16 MiB, 128
// blocks of afpacket.DefaultBlockSize, four times afpacket's default; at
// a 1500-byte MTU a block holds 81 slots of 1,616 bytes, 10,368 in all.
// Losses at high rates come from the ring overflowing while the forwarder
// is descheduled, which a larger ring rides out (docs/BENCH.md, "Dated
// figures").
const DefaultRXRingMiB = 16

// TX modes (Options.TXMode).
const (
	// TXRing sends through an mmap TPACKET_V2 TX ring.
	TXRing = "ring"
	// TXMmsg sends with sendmmsg.
	TXMmsg = "mmsg"
)

// Run starts the daemon and serves until ctx is done; then it closes the
// control connections (see Options.Hurry) and stops every bridge and
// trunk, which gives every interface back as it was.
func Run(ctx context.Context, opts Options) error {
	if opts.ConfigPath == "" {
		opts.ConfigPath = config.DefaultPath
	}
	if opts.SocketPath == "" {
		opts.SocketPath = DefaultSocket
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir
	}
	switch opts.TXMode {
	case "", TXRing, TXMmsg:
	default:
		return fmt.Errorf("daemon: TX mode %q: want %q or %q", opts.TXMode, TXRing, TXMmsg)
	}
	if opts.RXRingMiB == 0 {
		opts.RXRingMiB = DefaultRXRingMiB
	}
	if opts.Coalesce < 0 || opts.Coalesce > MaxCoalesce {
		return fmt.Errorf("daemon: coalesce %v: want 0-%v", opts.Coalesce, MaxCoalesce)
	}
	if opts.RXRingMiB < 1 || opts.RXRingMiB > 1024 {
		return fmt.Errorf("daemon: receive ring %d MiB: want 1-1024", opts.RXRingMiB)
	}
	if opts.IdleTimeout < 0 || opts.MaxClients < 0 {
		return fmt.Errorf("daemon: idle timeout %v, max clients %d: want positive values, or 0 for the defaults", opts.IdleTimeout, opts.MaxClients)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	unlock, err := statedir.Lock(opts.StateDir)
	if err != nil {
		return err
	}
	defer unlock()
	// Put back the hardware addresses a previous run left changed.
	journal, err := lladdr.OpenJournal(opts.StateDir)
	if err != nil {
		return err
	}
	if rep, err := journal.RecoverAll(log); err != nil {
		log.Warn("lladdr journal: recovery incomplete", "err", err, "report", rep.String())
	} else if !rep.Empty() {
		log.Info("lladdr journal: recovered", "report", rep.String())
	}

	// From here on a panic in any goroutine the daemon starts gives the
	// interfaces back and exits non-zero (crash.go).
	cr := &crash{log: log, stateDir: opts.StateDir, timeout: crashRelease, exit: os.Exit}
	defer supervise.Handle(cr.handle)()

	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		return err
	}
	sys, err := newSystem(journal, log, opts)
	if err != nil {
		return err
	}
	defer sys.Close()
	cr.setRelease(func() { sys.Close() })

	e := newEngine(opts.ConfigPath, sys, clock.System{}, log)
	e.version = opts.Version
	e.graph.workers = opts.Workers
	if err := e.load(cfg); err != nil {
		return err
	}
	defer e.Close()
	cr.setRelease(func() { e.Close(); sys.Close() })
	if err := sys.Watch(e.linkChanged); err != nil {
		return err
	}
	// Links may have changed between the load and the watch.
	e.resync()
	if opts.Metrics != "" {
		stop, err := e.serveMetrics(ctx, opts.Metrics, log)
		if err != nil {
			return err
		}
		defer stop()
	}

	ln, err := api.Listen(opts.SocketPath, opts.SocketGroup)
	if err != nil {
		return err
	}
	defer os.Remove(opts.SocketPath)
	auth, err := api.NewAuthorizer(opts.SocketGroup)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("swctl daemon started", "socket", opts.SocketPath, "config", opts.ConfigPath,
		"state_dir", opts.StateDir, "bridges", len(cfg.Bridges), "pid", os.Getpid())
	srv := &api.Server{Handler: e, Auth: auth, Log: log, Hurry: opts.Hurry,
		IdleTimeout: opts.IdleTimeout, MaxConns: opts.MaxClients}
	err = srv.Serve(ctx, ln)
	log.Info("swctl daemon stopping")
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Version implements api.Handler.
func (e *engine) Version(context.Context) (api.VersionInfo, error) {
	v := e.version
	if v.Go == "" {
		v.Go = runtime.Version()
	}
	v.Protocol = api.ProtocolVersion
	return v, nil
}
