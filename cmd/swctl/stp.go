package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
)

// bridgeSTPCommand is `swctl bridge stp`.
func bridgeSTPCommand() *cli.Command {
	return &cli.Command{
		Name: "stp", Usage: "turn the spanning tree on or off, and change its settings", ArgsUsage: "NAME [on|off]",
		Description: `Runs the Rapid Spanning Tree Protocol (IEEE 802.1D-2004) on the bridge's
members, falling back to 802.1D STP towards neighbours that speak only
that. Settings given with the spanning tree off are kept for when it runs.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proto", Usage: "`rstp|stp`: RSTP, or 802.1D STP on every port (a new tree runs rstp)"},
			optIntFlag("priority", "bridge priority `N`, 0-61440 in steps of 4096, lowest is root (a new tree has 32768)"),
			optIntFlag("hellotime", "`SECONDS` between BPDUs, 1-10 (a new tree has 2)"),
			optIntFlag("fwddelay", "`SECONDS` a port discards, then learns, without an agreement, 4-30 (a new tree has 15)"),
			optIntFlag("maxage", "`SECONDS` root information lives, 6-40, within 2 x (fwddelay - 1) and 2 x (hellotime + 1) (a new tree has 20)"),
			optIntFlag("holdcnt", "`N` BPDUs a port sends a second at most, 1-10 (a new tree has 6)"),
			outputFlag(),
		},
		Action: func(c *cli.Context) error {
			req := api.BridgeSTPRequest{Name: c.Args().Get(0)}
			if c.NArg() > 1 {
				on, err := onOff("stp", c.Args().Get(1))
				if err != nil {
					return usagef("stp: want on or off, got %q", c.Args().Get(1))
				}
				req.On = &on
			}
			if c.IsSet("proto") {
				v := c.String("proto")
				req.Proto = &v
			}
			intFlags(c, map[string]**int{
				"priority": &req.Priority, "hellotime": &req.HelloTime, "fwddelay": &req.FwdDelay,
				"maxage": &req.MaxAge, "holdcnt": &req.HoldCount,
			})
			return mutate(c, 1, 2, req)
		},
	}
}

// portSTPFlags are `swctl bridge port`'s spanning tree flags.
func portSTPFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "stp", Usage: "`on|off`: take part in the spanning tree (a new member does)"},
		&cli.StringFlag{Name: "edge", Usage: "`on|off`: be an edge port from the start (a new member is not)"},
		&cli.StringFlag{Name: "autoedge", Usage: "`on|off`: become an edge port when no BPDU comes (a new member does)"},
		&cli.StringFlag{Name: "ptp", Usage: "`auto|on|off`: the link is point-to-point (a new member is auto: from the duplex)"},
		optIntFlag("ifpriority", "spanning tree port priority `N`, 0-240 in steps of 16 (a new member has 128)"),
		optIntFlag("ifcost", "spanning tree path cost `N`, 1-200000000; 0 from the link speed (as a new member has)"),
	}
}

// portSTPRequest fills the spanning tree fields of req from c's flags.
func portSTPRequest(c *cli.Context, req *api.BridgePortRequest) error {
	for _, f := range []struct {
		name  string
		field **bool
	}{{"stp", &req.STP}, {"edge", &req.Edge}, {"autoedge", &req.AutoEdge}} {
		if !c.IsSet(f.name) {
			continue
		}
		v, err := onOff(f.name, c.String(f.name))
		if err != nil {
			return err
		}
		*f.field = &v
	}
	if c.IsSet("ptp") {
		v := c.String("ptp")
		req.PTP = &v
	}
	intFlags(c, map[string]**int{"ifpriority": &req.IfPriority, "ifcost": &req.IfCost})
	return nil
}

// intFlags points each field at the value of its flag, when the flag is
// given.
func intFlags(c *cli.Context, fields map[string]**int) {
	for name, field := range fields {
		if c.IsSet(name) {
			v := c.Int(name)
			*field = &v
		}
	}
}

// fwdMaskFlag is `swctl bridge set --fwd-mask`.
func fwdMaskFlag() cli.Flag {
	return &cli.StringFlag{Name: "fwd-mask", Usage: "forward the reserved groups 01:80:c2:00:00:0n of bit n, as Linux's group_fwd_mask: `MASK` such as 0x4000 (LLDP) or 0x0008 (802.1X); bits 0, 1 and 2 are refused"}
}

// fwdMaskRequest sets req's forward mask from c's --fwd-mask.
func fwdMaskRequest(c *cli.Context, req *api.BridgeSetRequest) error {
	if !c.IsSet("fwd-mask") {
		return nil
	}
	m, err := config.ParseFwdMask(c.String("fwd-mask"))
	if err != nil {
		return usagef("--%v", err)
	}
	req.FwdMask = &m
	return nil
}

// formatSTPLines writes a bridge's forward mask and spanning tree lines
// into its settings table.
func formatSTPLines(t io.Writer, b api.BridgeInfo) {
	if b.FwdMask != 0 {
		fmt.Fprintf(t, "  fwd-mask\t0x%04x\n", b.FwdMask)
	}
	s := b.STP
	if s == nil {
		return
	}
	fmt.Fprintf(t, "  stp\t%s, priority %d, hellotime %d s, fwddelay %d s, maxage %d s, holdcnt %d\n",
		s.Proto, s.Priority, s.HelloTime, s.FwdDelay, s.MaxAge, s.HoldCount)
	fmt.Fprintf(t, "  bridge id\t%s\n", s.BridgeID)
	root := s.Root + " (this bridge)"
	if !s.IsRoot {
		root = fmt.Sprintf("%s, cost %d, by %s", s.Root, s.RootPathCost, s.RootPort)
	}
	fmt.Fprintf(t, "  root\t%s\n", root)
	tc := fmt.Sprintf("%d changes", s.TopologyChanges)
	if s.SinceTopologyChange != nil {
		tc += fmt.Sprintf(", the last %d s ago", *s.SinceTopologyChange)
	}
	if s.TopologyChange {
		tc += ", changing now"
	}
	fmt.Fprintf(t, "  topology\t%s\n", tc)
}

// formatSTPPorts writes the members of a bridge running a spanning tree,
// with their roles, states and BPDU counts.
func formatSTPPorts(w io.Writer, ports []api.BridgePortInfo) error {
	t := newTable(w)
	fmt.Fprintln(t, "  PORT\tFLAGS\tLINK\tROLE\tSTATE\tEDGE\tP2P\tCOST\tPROTO\tBPDU-IN\tBPDU-OUT")
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, p := range ports {
		flags := "-"
		if len(p.Flags) > 0 {
			flags = strings.Join(p.Flags, ",")
		}
		s := p.STP
		if s == nil {
			s = &api.PortSTPInfo{Role: "-", State: "-", Protocol: "-"}
		}
		role, proto := s.Role, s.Protocol
		if !s.Enabled {
			role, proto = "off", "-"
		}
		if proto == "" {
			proto = "-"
		}
		fmt.Fprintf(t, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\n", p.Name, flags, p.Link, role, s.State,
			yesNo(s.Edge), yesNo(s.PointToPoint), s.PathCost, proto, s.BPDUsIn, s.BPDUsOut)
	}
	return t.Flush()
}
