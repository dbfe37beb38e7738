package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/daemon"
)

// Defaults of the daemon command.
const (
	defaultStateDir = "/var/lib/swctl"
)

func daemonCommand() *cli.Command {
	return &cli.Command{
		Name:  "daemon",
		Usage: "run the switch engine in the foreground",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Value: config.DefaultPath, Usage: "configuration file `PATH`"},
			&cli.StringFlag{Name: "socket", Value: api.DefaultSocket, EnvVars: []string{"SWCTL_SOCKET"}, Usage: "control socket `PATH`"},
			&cli.StringFlag{Name: "state-dir", Value: defaultStateDir, Usage: "runtime state directory `PATH`"},
			&cli.StringFlag{Name: "socket-group", Usage: "`GROUP` whose members may use the control socket (mode 0660)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json"},
			&cli.IntFlag{Name: "workers", Value: min(runtime.NumCPU(), 64), DefaultText: "the number of CPUs", Usage: "forwarding goroutines per bridge member, `N` sockets in a PACKET_FANOUT group (1-64)"},
			&cli.StringFlag{Name: "tx", Value: daemon.TXRing, Usage: "how ports send: `MODE` ring (an mmap TX ring, one kick per batch) or mmsg (one sendmmsg per batch)"},
			&cli.IntFlag{Name: "rx-ring", Value: daemon.DefaultRXRingMiB, Usage: "receive ring of each member socket in `MiB` (1-1024; pinned kernel memory)"},
			&cli.DurationFlag{Name: "coalesce", Value: daemon.DefaultCoalesce, Usage: "after a read that emptied a ring, wait `DURATION` before the next, so that the frames arriving meanwhile come in one batch (interrupt moderation; 0 = off, at most 10ms; Linux)"},
			&cli.BoolFlag{Name: "qdisc-bypass", Usage: "send straight to the driver, skipping the interfaces' qdiscs and tc egress (PACKET_QDISC_BYPASS; Linux)"},
			&cli.BoolFlag{Name: "busy-poll", Usage: "readers poll their rings and never sleep: the lowest latency, for --workers cores at 100% all the time (Linux)"},
			&cli.DurationFlag{Name: "idle-timeout", Value: api.DefaultIdleTimeout, Usage: "close a control connection that sends no request for `DURATION` (1s-24h)"},
			&cli.IntFlag{Name: "max-clients", Value: api.DefaultMaxConns, Usage: "serve at most `N` control connections at once; refuse more with an error (1-10000)"},
			&cli.StringFlag{Name: "metrics", Usage: "serve Prometheus metrics at /metrics on `ADDR`: a loopback host:port (127.0.0.1:9477) or a unix socket path; off by default"},
		},
		Action: runDaemon,
	}
}

func runDaemon(c *cli.Context) error {
	if err := wantArgs(c, 0, 0); err != nil {
		return err
	}
	if w := c.Int("workers"); w < 1 || w > 64 {
		return usagef("--workers: want 1-64, got %d", w)
	}
	if r := c.Int("rx-ring"); r < 1 || r > 1024 {
		return usagef("--rx-ring: want 1-1024 MiB, got %d", r)
	}
	if d := c.Duration("coalesce"); d < 0 || d > daemon.MaxCoalesce {
		return usagef("--coalesce: want 0-%v, got %v", daemon.MaxCoalesce, d)
	}
	if d := c.Duration("idle-timeout"); d < time.Second || d > 24*time.Hour {
		return usagef("--idle-timeout: want 1s-24h, got %v", d)
	}
	if n := c.Int("max-clients"); n < 1 || n > 10000 {
		return usagef("--max-clients: want 1-10000, got %d", n)
	}
	tx := c.String("tx")
	if tx != daemon.TXRing && tx != daemon.TXMmsg {
		return usagef("--tx: want ring or mmsg, got %q", tx)
	}
	var level slog.Level
	switch l := c.String("log-level"); l {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return usagef("--log-level: want debug, info, warn or error, got %q", l)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch f := c.String("log-format"); f {
	case "text":
		h = slog.NewTextHandler(c.App.ErrWriter, opts)
	case "json":
		h = slog.NewJSONHandler(c.App.ErrWriter, opts)
	default:
		return usagef("--log-format: want text or json, got %q", f)
	}
	socket := c.String("socket")
	if !slices.Contains(c.LocalFlagNames(), "socket") && len(c.Lineage()) > 1 {
		socket = c.Lineage()[1].String("socket") // the global --socket
	}
	log := slog.New(h)
	if c.Bool("busy-poll") {
		// The spinning readers share the scheduler's threads: as many as
		// there are workers, so the daemon takes --workers cores.
		runtime.GOMAXPROCS(c.Int("workers"))
		log.Info("busy polling: readers never sleep", "threads", c.Int("workers"))
	}
	ctx, hurry, stop := stopSignals(c.Context, log)
	defer stop()
	return daemon.Run(ctx, daemon.Options{
		ConfigPath:  c.String("config"),
		SocketPath:  socket,
		StateDir:    c.String("state-dir"),
		SocketGroup: c.String("socket-group"),
		Workers:     c.Int("workers"),
		TXMode:      tx,
		RXRingMiB:   c.Int("rx-ring"),
		BusyPoll:    c.Bool("busy-poll"),
		QdiscBypass: c.Bool("qdisc-bypass"),
		Coalesce:    c.Duration("coalesce"),
		IdleTimeout: c.Duration("idle-timeout"),
		MaxClients:  c.Int("max-clients"),
		Metrics:     c.String("metrics"),
		Version:     api.Build(),
		Logger:      log,
		Hurry:       hurry,
	})
}

// stopSignals returns a context done at the first SIGTERM or SIGINT, and
// a channel closed at the second, which makes the daemon stop without
// waiting for its control connections. stop stops catching the signals.
func stopSignals(parent context.Context, log *slog.Logger) (ctx context.Context, hurry <-chan struct{}, stop func()) {
	// Room for both signals: the second may come before the first is
	// taken.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	ctx, cancel := context.WithCancel(parent)
	h, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			log.Warn("second signal: stopping without waiting for the control connections", "signal", sig)
			close(h)
		case <-done:
		}
	}()
	return ctx, h, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func bridgeCommand() *cli.Command {
	return &cli.Command{
		Name:   "bridge",
		Usage:  "create, change and show bridges",
		Action: unknownCommand,
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "create a bridge", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "local", Usage: "give the host a TAP interface named after the bridge"},
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.BridgeCreateRequest{Name: c.Args().Get(0), Local: c.Bool("local")}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "destroy", Usage: "destroy a bridge and release its members", ArgsUsage: "NAME",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.BridgeDestroyRequest{Name: c.Args().Get(0)}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "add", Usage: "add members (all or none)", ArgsUsage: "NAME IFACE...",
				Flags: []cli.Flag{forceFlag(), outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.BridgeAddRequest{Name: c.Args().Get(0), Ifaces: tail(c), Force: c.Bool("force")}
					return mutate(c, 2, -1, req)
				},
			},
			{
				Name: "del", Usage: "remove members (all or none)", ArgsUsage: "NAME IFACE...",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.BridgeDelRequest{Name: c.Args().Get(0), Ifaces: tail(c)}
					return mutate(c, 2, -1, req)
				},
			},
			{
				Name: "show", Usage: "show one bridge or all", ArgsUsage: "[NAME]",
				Flags:  []cli.Flag{outputFlag()},
				Action: bridgeShow,
			},
			{
				Name: "addr", Usage: "show the address table", ArgsUsage: "NAME",
				Flags: []cli.Flag{outputFlag(),
					&cli.IntFlag{Name: "limit", Usage: fmt.Sprintf("show at most `N` entries, 1 to %d (without it, all, fetched %d at a time)", api.MaxAddrPage, api.MaxAddrPage)},
					&cli.StringFlag{Name: "after", Usage: "start after the entry `[VLAN/]MAC` (the last one shown by the previous --limit)"},
				},
				Action: bridgeAddr,
			},
			{
				Name: "static", Usage: "add a static address", ArgsUsage: "NAME MAC IFACE",
				Flags: []cli.Flag{
					intFlag("vlan", "VLAN `ID` (0 = untagged)", 0),
					&cli.BoolFlag{Name: "replace", Usage: "move the address's static entry in this VLAN from another member to IFACE (without it, refused)"},
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					vlan := c.Int("vlan")
					if err := config.CheckVLAN(vlan); err != nil {
						return usagef("--vlan: %v", err)
					}
					req := api.StaticRequest{Name: c.Args().Get(0), MAC: c.Args().Get(1), Iface: c.Args().Get(2), VLAN: uint16(vlan), Replace: c.Bool("replace")}
					return mutate(c, 3, 3, req)
				},
			},
			{
				Name: "deladdr", Usage: "remove an address, learned or static", ArgsUsage: "NAME MAC",
				Flags: []cli.Flag{
					optIntFlag("vlan", "only in VLAN `ID` (0 = untagged; without it, every VLAN)"),
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.DelAddrRequest{Name: c.Args().Get(0), MAC: c.Args().Get(1)}
					if c.IsSet("vlan") {
						vlan := c.Int("vlan")
						if err := config.CheckVLAN(vlan); err != nil {
							return usagef("--vlan: %v", err)
						}
						v := uint16(vlan)
						req.VLAN = &v
					}
					return mutate(c, 2, 2, req)
				},
			},
			{
				Name: "flush", Usage: "remove learned addresses", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "all", Usage: "remove static addresses too"},
					&cli.StringFlag{Name: "port", Usage: "only the addresses on member `IFACE`"},
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.FlushRequest{Name: c.Args().Get(0), All: c.Bool("all"), Port: c.String("port")}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "set", Usage: "change the ageing time, the table size or the forward mask", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					optIntFlag("timeout", fmt.Sprintf("ageing time in `SECONDS` (0 = never; a new bridge has %d)", config.DefaultTimeout)),
					optIntFlag("maxaddr", fmt.Sprintf("address-table capacity `N` (a new bridge has %d)", config.DefaultMaxAddr)),
					fwdMaskFlag(),
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.BridgeSetRequest{Name: c.Args().Get(0)}
					if c.IsSet("timeout") {
						v := c.Int("timeout")
						req.Timeout = &v
					}
					if c.IsSet("maxaddr") {
						v := c.Int("maxaddr")
						req.MaxAddr = &v
					}
					if err := fwdMaskRequest(c, &req); err != nil {
						return err
					}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "port", Usage: "change a member's flags and spanning tree settings", ArgsUsage: "NAME IFACE",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "learning", Usage: "`on|off`: learn source addresses"},
					&cli.StringFlag{Name: "discover", Usage: "`on|off`: flood unknown unicast to this port"},
					&cli.StringFlag{Name: "blocknonip", Usage: "`on|off`: drop frames that are not IPv4, IPv6, ARP or RARP"},
					&cli.StringFlag{Name: "stack", Usage: "`on|off`: let frames reach the host's own stack on this interface"},
					&cli.StringFlag{Name: "promisc", Usage: "`on|off`: hold the member in promiscuous mode (a new member is; off only for measurements on links that deliver every frame, such as veth)"},
					optIntFlag("storm-limit", "flood at most `PPS` broadcast, multicast and unknown-unicast frames per second received on this port, dropping the rest (0 = no limit, as a new member has)"),
					&cli.StringFlag{Name: "bpdu-guard", Usage: "`on|off`: disable the port when it receives a BPDU (with the spanning tree on: only an edge port)"},
					&cli.BoolFlag{Name: "enable", Usage: "enable the port again after its BPDU guard disabled it (give it alone)", DisableDefaultText: true},
					outputFlag(),
				}, portSTPFlags()...),
				Action: func(c *cli.Context) error {
					if c.Bool("enable") {
						for _, f := range c.Command.Flags {
							if n := f.Names()[0]; n != "enable" && n != "output" && c.IsSet(n) {
								return usagef("--enable is an action: give it without --%s", n)
							}
						}
						return mutate(c, 2, 2, api.EnableRequest{Name: c.Args().Get(0), Iface: c.Args().Get(1)})
					}
					req := api.BridgePortRequest{Name: c.Args().Get(0), Iface: c.Args().Get(1)}
					intFlags(c, map[string]**int{"storm-limit": &req.StormLimit})
					for _, f := range []struct {
						name  string
						field **bool
					}{
						{"learning", &req.Learning}, {"discover", &req.Discover},
						{"blocknonip", &req.BlockNonIP}, {"stack", &req.Stack}, {"promisc", &req.Promisc},
						{"bpdu-guard", &req.BPDUGuard},
					} {
						if !c.IsSet(f.name) {
							continue
						}
						v, err := onOff(f.name, c.String(f.name))
						if err != nil {
							return err
						}
						*f.field = &v
					}
					if err := portSTPRequest(c, &req); err != nil {
						return err
					}
					return mutate(c, 2, 2, req)
				},
			},
			bridgeSTPCommand(),
			{
				Name: "addspan", Usage: "add a span port", ArgsUsage: "NAME IFACE",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.AddSpanRequest{Name: c.Args().Get(0), Iface: c.Args().Get(1)}
					return mutate(c, 2, 2, req)
				},
			},
			{
				Name: "delspan", Usage: "remove a span port", ArgsUsage: "NAME IFACE",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.DelSpanRequest{Name: c.Args().Get(0), Iface: c.Args().Get(1)}
					return mutate(c, 2, 2, req)
				},
			},
		},
	}
}

// tail returns the positional arguments after the first.
func tail(c *cli.Context) []string {
	if c.NArg() < 2 {
		return nil
	}
	return c.Args().Slice()[1:]
}

// onOff parses the value of an on|off flag.
func onOff(flag, v string) (bool, error) {
	on, err := config.ParseOnOff(flag, v)
	if err != nil {
		return false, usagef("--%s: want on or off, got %q", flag, v)
	}
	return on, nil
}

// mutate checks the arguments and the request, then sends it. Commands
// that change state print nothing on success.
func mutate(c *cli.Context, min, max int, req api.Operation) error {
	if _, err := jsonOutput(c); err != nil {
		return err
	}
	if err := wantArgs(c, min, max); err != nil {
		return err
	}
	if err := validate(req); err != nil {
		return err
	}
	return do(c, func(ctx context.Context, cl *api.Client) error { return cl.Do(ctx, req, nil) })
}

func bridgeShow(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 0, 1); err != nil {
		return err
	}
	req := api.BridgeShowRequest{Name: c.Args().Get(0)}
	if err := validate(req); err != nil {
		return err
	}
	return do(c, func(ctx context.Context, cl *api.Client) error {
		var bs []api.BridgeInfo
		if err := cl.Do(ctx, req, &bs); err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.App.Writer, nonNil(bs))
		}
		return formatBridges(c.App.Writer, bs)
	})
}

// bridgeAddr shows the address table a page at a time: with --limit one
// page, without it every page, each written as it comes, so that neither
// the daemon nor this command holds more than a page of a large table.
func bridgeAddr(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 1, 1); err != nil {
		return err
	}
	req := api.BridgeAddrRequest{Name: c.Args().Get(0)}
	if c.IsSet("limit") {
		if req.Limit = c.Int("limit"); req.Limit < 1 || req.Limit > api.MaxAddrPage {
			return usagef("--limit: want 1 to %d entries, got %d", api.MaxAddrPage, req.Limit)
		}
	}
	if c.IsSet("after") {
		k, err := api.ParseAddrKey(c.String("after"))
		if err != nil {
			return usagef("--after: %v", err)
		}
		req.After = &k
	}
	if err := validate(req); err != nil {
		return err
	}
	var out addrWriter = &addrText{w: c.App.Writer}
	if asJSON {
		out = &addrJSON{w: c.App.Writer}
	}
	return do(c, func(ctx context.Context, cl *api.Client) error {
		for {
			var page []api.AddrInfo
			if err := cl.Do(ctx, req, &page); err != nil {
				return err
			}
			if err := out.write(page); err != nil {
				return err
			}
			// A short page is the last; so is a longer one, from a
			// daemon that does not page.
			if req.Limit != 0 || len(page) != req.PageSize() {
				return out.close()
			}
			last := page[len(page)-1]
			req.After = &api.AddrKey{MAC: last.MAC, VLAN: last.VLAN}
		}
	})
}

func portCommand() *cli.Command {
	return &cli.Command{
		Name:   "port",
		Usage:  "show ports",
		Action: unknownCommand,
		Subcommands: []*cli.Command{{
			Name: "show", Usage: "show the state and counters of one port or all", ArgsUsage: "[IFACE]",
			Flags: []cli.Flag{outputFlag()},
			Action: func(c *cli.Context) error {
				asJSON, err := jsonOutput(c)
				if err != nil {
					return err
				}
				if err := wantArgs(c, 0, 1); err != nil {
					return err
				}
				req := api.PortShowRequest{Name: c.Args().Get(0)}
				if err := validate(req); err != nil {
					return err
				}
				return do(c, func(ctx context.Context, cl *api.Client) error {
					var ps []api.PortInfo
					if err := cl.Do(ctx, req, &ps); err != nil {
						return err
					}
					if asJSON {
						return writeJSON(c.App.Writer, nonNil(ps))
					}
					return formatPorts(c.App.Writer, ps)
				})
			},
		}},
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "show the version of swctl and of the running daemon",
		Flags: []cli.Flag{outputFlag()},
		Action: func(c *cli.Context) error {
			asJSON, err := jsonOutput(c)
			if err != nil {
				return err
			}
			if err := wantArgs(c, 0, 0); err != nil {
				return err
			}
			// This binary's version is printed in any case; a daemon
			// that cannot be asked is an error all the same.
			out := versionOutput{VersionInfo: api.Build()}
			derr := do(c, func(ctx context.Context, cl *api.Client) error {
				var d api.VersionInfo
				err := cl.Do(ctx, api.VersionRequest{}, &d)
				if err == nil {
					out.Daemon = &d
				}
				return err
			})
			if derr != nil {
				out.DaemonError = derr.Error()
			}
			if asJSON {
				err = writeJSON(c.App.Writer, out)
			} else {
				err = formatVersion(c.App.Writer, out)
			}
			return cmp.Or(derr, err)
		},
	}
}

// nonNil makes a nil list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
