package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
)

// lbShowDescription explains lb show.
const lbShowDescription = `Shows each load balancer: where it runs (interface, or bridge), the MAC
it answers for its VIPs with, its VIPs, method and health check, how many
backends serve (and "ALL BACKENDS DOWN" when none can take a flow), the
flows in its connection table, the frames and bytes it forwarded, the frames
to a VIP it dropped (no backend, backend MAC unknown) and the malformed ARP,
ND and IP frames it counted. Then a table of its backends: ADDRESS, MAC,
WEIGHT, STATE (serving, draining or down), HEALTH (up, down, unknown or none)
and since when, FRAMES and BYTES.`

func lbCommand() *cli.Command {
	backend := func(name, usage string, weight bool, req func(r api.LBBackendRequest) api.Operation) *cli.Command {
		flags := []cli.Flag{outputFlag()}
		if weight {
			flags = append([]cli.Flag{intFlag("weight", "the backend's share of new flows `N`, 1 to 1000", 1)}, flags...)
		}
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "NAME ADDR", Flags: flags,
			Action: func(c *cli.Context) error {
				r := api.LBBackendRequest{Name: c.Args().Get(0), Addr: c.Args().Get(1)}
				if weight {
					r.Weight = c.Int("weight")
				}
				return mutate(c, 2, 2, req(r))
			},
		}
	}
	return &cli.Command{
		Name:   "lb",
		Usage:  "create, change and show load balancers (direct server return)",
		Action: unknownCommand,
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "create a load balancer on an interface or a bridge", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "iface", Usage: "the `IFACE` it runs on"},
					&cli.StringFlag{Name: "bridge", Usage: "the swctl `BRIDGE` it sits on, instead of --iface"},
					&cli.StringSliceFlag{Name: "vip", Usage: "a virtual `ADDR`, IPv4 or IPv6 (repeat for more)"},
					&cli.StringFlag{Name: "method", Usage: "selection `M`: maglev, hash or roundrobin", DefaultText: "maglev"},
					&cli.StringFlag{Name: "health", Usage: "health `CHECK`: tcp:PORT, http:PORT/path, arp or none", DefaultText: "none"},
					&cli.DurationFlag{Name: "interval", Usage: "`DURATION` between two health checks of a backend", DefaultText: "2s"},
					&cli.DurationFlag{Name: "timeout", Usage: "`DURATION` a health check may take", DefaultText: "1s"},
					&cli.IntFlag{Name: "rise", Usage: "`N` passing checks that bring a down backend up", DefaultText: "2"},
					&cli.IntFlag{Name: "fall", Usage: "`N` failing checks that take an up backend down", DefaultText: "3"},
					&cli.StringSliceFlag{Name: "source", Usage: "the `ADDR` backends are resolved and checked from (default: the interface's or the bridge's local TAP's; repeat for IPv4 and IPv6)"},
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.LBCreateRequest{
						Name: c.Args().Get(0), Iface: c.String("iface"), Bridge: c.String("bridge"),
						VIPs: c.StringSlice("vip"), Method: c.String("method"), Health: c.String("health"),
						Rise: c.Int("rise"), Fall: c.Int("fall"), Sources: c.StringSlice("source"),
					}
					for flag, to := range map[string]*string{"interval": &req.Interval, "timeout": &req.Timeout} {
						if c.IsSet(flag) {
							*to = c.Duration(flag).String()
						}
					}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "destroy", Usage: "destroy a load balancer", ArgsUsage: "NAME",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					return mutate(c, 1, 1, api.LBDestroyRequest{Name: c.Args().Get(0)})
				},
			},
			{
				Name: "backend", Usage: "add, remove and drain backends", Action: unknownCommand,
				Subcommands: []*cli.Command{
					backend("add", "add a backend, or change its weight and serve it again after a drain", true,
						func(r api.LBBackendRequest) api.Operation { return api.LBBackendAddRequest(r) }),
					backend("del", "remove a backend", false,
						func(r api.LBBackendRequest) api.Operation { return api.LBBackendDelRequest(r) }),
					backend("drain", "give a backend no new flows; its established ones stay", false,
						func(r api.LBBackendRequest) api.Operation { return api.LBBackendDrainRequest(r) }),
				},
			},
			{
				Name: "show", Usage: "show one load balancer or all", ArgsUsage: "[NAME]",
				Description: lbShowDescription,
				Flags:       []cli.Flag{outputFlag()},
				Action:      lbShow,
			},
		},
	}
}

func lbShow(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 0, 1); err != nil {
		return err
	}
	req := api.LBShowRequest{Name: c.Args().Get(0)}
	if err := validate(req); err != nil {
		return err
	}
	return do(c, func(ctx context.Context, cl *api.Client) error {
		var ls []api.LBInfo
		if err := cl.Do(ctx, req, &ls); err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.App.Writer, nonNil(ls))
		}
		return formatLBs(c.App.Writer, ls)
	})
}

// formatLBs writes one block per lb: its settings and counters, then a
// table of its backends.
func formatLBs(w io.Writer, ls []api.LBInfo) error {
	if len(ls) == 0 {
		_, err := fmt.Fprintln(w, "no load balancers")
		return err
	}
	for i, l := range ls {
		if i > 0 {
			fmt.Fprintln(w)
		}
		t := newTable(w)
		fmt.Fprintf(t, "lb %s\n", l.Name)
		on := "iface " + l.Iface
		if l.Bridge != "" {
			on = "bridge " + l.Bridge
		}
		fmt.Fprintf(t, "  on\t%s\n", on)
		fmt.Fprintf(t, "  state\t%s\n", l.State)
		fmt.Fprintf(t, "  mac\t%s\n", orDash(l.MAC))
		fmt.Fprintf(t, "  vip\t%s\n", strings.Join(l.VIPs, " "))
		fmt.Fprintf(t, "  method\t%s\n", l.Method)
		fmt.Fprintf(t, "  health\t%s\n", l.Health)
		if len(l.Sources) > 0 {
			fmt.Fprintf(t, "  source\t%s\n", strings.Join(l.Sources, " "))
		}
		serving := fmt.Sprintf("%d of %d", l.Serving, len(l.Backends))
		if l.AllDown {
			serving += " (ALL BACKENDS DOWN: frames to the VIPs are dropped)"
		}
		fmt.Fprintf(t, "  serving\t%s\n", serving)
		fmt.Fprintf(t, "  flows\t%d\n", l.Flows)
		fmt.Fprintf(t, "  forwarded\t%d frames, %d bytes\n", l.Frames, l.Bytes)
		fmt.Fprintf(t, "  dropped\t%d no backend, %d backend MAC unknown\n", l.DroppedNoBackend, l.DroppedUnresolved)
		fmt.Fprintf(t, "  malformed\t%d ARP, %d ND, %d IP\n", l.MalformedARP, l.MalformedND, l.MalformedIP)
		if err := t.Flush(); err != nil {
			return err
		}
		if len(l.Backends) == 0 {
			continue
		}
		t = newTable(w)
		fmt.Fprintln(t, "  ADDRESS\tMAC\tWEIGHT\tSTATE\tHEALTH\tSINCE\tFRAMES\tBYTES")
		for _, b := range l.Backends {
			since := "-"
			if !b.HealthSince.IsZero() {
				since = b.HealthSince.Local().Format(time.DateTime)
			}
			fmt.Fprintf(t, "  %s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\n", b.Addr, orDash(b.MAC), b.Weight, b.State, b.Health, since, b.Frames, b.Bytes)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	return nil
}
