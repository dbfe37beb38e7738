package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
)

// trunkShowDescription explains the columns of trunk show.
const trunkShowDescription = `Shows each trunk's settings, then a table of its ports: PORT, LINK,
PRIO (failover priority, higher preferred) and FLAGS (master, active,
collecting, distributing). For a lacp trunk also ACTOR-STATE, the partner's
system, key and port, PARTNER-STATE and SELECTED (with the reason when not).
LACP states are abbreviated: act(ivity), fast (short timeout), agg(regation),
sync(hronization), col(lecting), dist(ributing), def(aulted), exp(ired);
-o json gives the full words. Then a table of each port's counters: frames
and bytes received and sent, and the drops by reason: REFUSED (received
while not collecting), CONTROL (LACPDUs and markers the protocol took),
RX-DROP (dropped by the port; BAD-OFFLOAD of them had a bad offload header),
TX-DROP (not sent: full ring, link down), RING-DROP (the kernel's receive
ring was full) and ERRORS.`

// policyFlags are the link policy flags of trunk create and, with
// create false, of trunk set, where an omitted flag leaves the setting
// alone and help shows no default.
func policyFlags(create bool) []cli.Flag {
	num := func(name, usage, def string) cli.Flag {
		if create {
			return &cli.IntFlag{Name: name, Usage: usage, DefaultText: def}
		}
		return optIntFlag(name, usage)
	}
	preempt := "`on|off`: failover returns to the port of highest priority when it comes back (on), or stays"
	if create {
		preempt += " (default: on)"
	}
	return []cli.Flag{
		num("updelay", "`MS` a port's link must stay up before the trunk uses it, 0 to 3600000 (0 = at once)", "0"),
		num("downdelay", "`MS` a port's link must stay down before the trunk stops using it, 0 to 3600000 (0 = at once)", "0"),
		num("min-links", "`N` ports that must collect and distribute for the trunk's carrier to be up, 0 to 64 (0 = one)", "0"),
		&cli.StringFlag{Name: "preempt", Usage: preempt},
	}
}

// policyIfSet returns the link policy flags given: the delays, min-links
// and preempt, nil where not given.
func policyIfSet(c *cli.Context) (upDelay, downDelay, minLinks *int, preempt *bool, err error) {
	if c.IsSet("preempt") {
		v, err := onOff("preempt", c.String("preempt"))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		preempt = &v
	}
	return intIfSet(c, "updelay"), intIfSet(c, "downdelay"), intIfSet(c, "min-links"), preempt, nil
}

// queueFlags are trunk create's queue flags, one per
// config.TrunkQueueSettings keyword.
func queueFlags() []cli.Flag {
	usage := map[string]string{
		"tx-queue-bytes":        "`BYTES` each port's transmit backlog holds (what its ring or send buffer has no room for), 1 to 1073741824, or off (default: 1048576)",
		"tx-queue-delay":        "`MS` a frame may wait in a port's backlog, 1 to 1000 (default: 20)",
		"tx-queue-target":       "CoDel's target sojourn time `US` in a port's backlog, below the delay, or off (default: 1000)",
		"tx-queue-super-frames": "`on|off`: the backlogs hold super-frames the ports' send buffers have no room for (default: off)",
		"send-buffer":           "the ports' socket send buffer in `BYTES`, 1 to 1073741824 (default: the kernel's)",
	}
	var out []cli.Flag
	for _, kw := range config.TrunkQueueSettings {
		out = append(out, &cli.StringFlag{Name: kw, Usage: usage[kw]})
	}
	return out
}

// queueIfSet returns the queue settings the flags give, nil when none is
// given.
func queueIfSet(c *cli.Context) (*config.TrunkQueue, error) {
	var q *config.TrunkQueue
	for _, kw := range config.TrunkQueueSettings {
		if !c.IsSet(kw) {
			continue
		}
		if q == nil {
			q = new(config.TrunkQueue)
		}
		if err := q.Set(kw, c.String(kw)); err != nil {
			return nil, usagef("%s: create: %w", c.Args().Get(0), err)
		}
	}
	return q, nil
}

func trunkCommand() *cli.Command {
	protoUsage := "protocol `P`: " + strings.Join(config.Protos, ", ")
	return &cli.Command{
		Name:   "trunk",
		Usage:  "create, change and show trunks (link aggregates)",
		Action: unknownCommand,
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "create a trunk, with ports (all or none)", ArgsUsage: "NAME [IFACE...]",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "proto", Usage: protoUsage, DefaultText: config.DefaultProto},
					&cli.StringSliceFlag{Name: "port", Usage: "member `IFACE`, the same as giving it after NAME (repeat for more)"},
					&cli.BoolFlag{Name: "promisc", Usage: "promisc policy: members keep their own MACs and are made promiscuous (otherwise they take the trunk's MAC)"},
					&cli.StringFlag{Name: "lacp-mode", Usage: "`MODE`: active or passive", DefaultText: config.DefaultLACPMode},
					&cli.StringFlag{Name: "lacp-timeout", Usage: "`T`: slow or fast", DefaultText: config.DefaultLACPTimeout},
					&cli.StringFlag{Name: "hash", Usage: "`FIELDS` hashed by loadbalance and lacp: a list of l2,l3,l4", DefaultText: config.DefaultHash},
					intFlag("lacp-system-priority", "LACP system priority `N`, 0 to 65535, lower wins", config.DefaultLACPSystemPriority),
					&cli.IntFlag{Name: "lacp-key", Usage: "LACP key `N`, 0 to 65535 (0 = derive)", DefaultText: "0"},
					intFlag("priority", "the ports' failover priority `N`, 0 to 65535, higher preferred", 0),
					intFlag("lacp-port-priority", "the ports' LACP port priority `N`, 0 to 65535, lower wins", config.DefaultLACPPortPriority),
					&cli.StringFlag{Name: "lladdr", Usage: "the trunk's `MAC` (default: its first port's, or a random one without ports)"},
				}, append(append(policyFlags(true), queueFlags()...), forceFlag(), outputFlag())...),
				Action: func(c *cli.Context) error {
					req := api.TrunkCreateRequest{
						Name: c.Args().Get(0), Proto: c.String("proto"), Promisc: c.Bool("promisc"),
						LACPMode: c.String("lacp-mode"), LACPTimeout: c.String("lacp-timeout"), Hash: c.String("hash"),
						LACPSystemPriority: intIfSet(c, "lacp-system-priority"), LACPKey: intIfSet(c, "lacp-key"),
						Priority: intIfSet(c, "priority"), LACPPortPriority: intIfSet(c, "lacp-port-priority"),
						LLAddr: c.String("lladdr"),
						Force:  c.Bool("force"),
					}
					var err error
					if req.UpDelay, req.DownDelay, req.MinLinks, req.Preempt, err = policyIfSet(c); err != nil {
						return err
					}
					if req.Queue, err = queueIfSet(c); err != nil {
						return err
					}
					if ports := append(tail(c), c.StringSlice("port")...); len(ports) > 0 {
						req.Ports = ports
					}
					for _, f := range []string{"proto", "lacp-mode", "lacp-timeout", "hash", "lladdr"} {
						if c.IsSet(f) && c.String(f) == "" {
							return usagef("--%s: empty value", f)
						}
					}
					return mutate(c, 1, -1, req)
				},
			},
			{
				Name: "destroy", Usage: "destroy a trunk and release its ports", ArgsUsage: "NAME",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.TrunkDestroyRequest{Name: c.Args().Get(0)}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "add", Usage: "add ports (all or none)", ArgsUsage: "NAME IFACE...",
				Flags: []cli.Flag{
					intFlag("priority", "failover priority `N`, 0 to 65535, higher preferred", 0),
					intFlag("lacp-port-priority", "LACP port priority `N`, 0 to 65535, lower wins", config.DefaultLACPPortPriority),
					forceFlag(),
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.TrunkAddRequest{Name: c.Args().Get(0), Ifaces: tail(c), Force: c.Bool("force")}
					req.Priority = intIfSet(c, "priority")
					req.LACPPortPriority = intIfSet(c, "lacp-port-priority")
					return mutate(c, 2, -1, req)
				},
			},
			{
				Name: "del", Usage: "remove ports (all or none)", ArgsUsage: "NAME IFACE...",
				Flags: []cli.Flag{outputFlag()},
				Action: func(c *cli.Context) error {
					req := api.TrunkDelRequest{Name: c.Args().Get(0), Ifaces: tail(c)}
					return mutate(c, 2, -1, req)
				},
			},
			{
				Name: "set", Usage: "change the protocol, the hash, the LACP settings or the link policy", ArgsUsage: "NAME",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "proto", Usage: protoUsage},
					&cli.StringFlag{Name: "lacp-mode", Usage: "`MODE`: active or passive"},
					&cli.StringFlag{Name: "lacp-timeout", Usage: "`T`: slow or fast"},
					optIntFlag("lacp-system-priority", "LACP system priority `N`, 0 to 65535, lower wins"),
					optIntFlag("lacp-key", "LACP key `N`, 0 to 65535 (0 = derive)"),
					&cli.StringFlag{Name: "promisc", Usage: "`on|off`: the promisc policy (members keep their MACs, promiscuous) or the lladdr policy (members take the trunk's MAC); the ports rejoin at once"},
					&cli.StringFlag{Name: "hash", Usage: "`FIELDS` hashed by loadbalance and lacp: a list of l2,l3,l4"},
				}, append(policyFlags(false), outputFlag())...),
				Action: func(c *cli.Context) error {
					req := api.TrunkSetRequest{
						Name:               c.Args().Get(0),
						Proto:              stringIfSet(c, "proto"),
						LACPMode:           stringIfSet(c, "lacp-mode"),
						LACPTimeout:        stringIfSet(c, "lacp-timeout"),
						Hash:               stringIfSet(c, "hash"),
						LACPSystemPriority: intIfSet(c, "lacp-system-priority"),
						LACPKey:            intIfSet(c, "lacp-key"),
					}
					var err error
					if req.UpDelay, req.DownDelay, req.MinLinks, req.Preempt, err = policyIfSet(c); err != nil {
						return err
					}
					if c.IsSet("promisc") {
						v, err := onOff("promisc", c.String("promisc"))
						if err != nil {
							return err
						}
						req.Promisc = &v
					}
					return mutate(c, 1, 1, req)
				},
			},
			{
				Name: "port", Usage: "change a port's failover or LACP port priority in place", ArgsUsage: "NAME IFACE",
				Flags: []cli.Flag{
					optIntFlag("priority", "failover priority `N`, 0 to 65535, higher preferred"),
					optIntFlag("lacp-port-priority", "LACP port priority `N`, 0 to 65535, lower wins"),
					outputFlag(),
				},
				Action: func(c *cli.Context) error {
					req := api.TrunkPortRequest{Name: c.Args().Get(0), Iface: c.Args().Get(1), Priority: intIfSet(c, "priority"),
						LACPPortPriority: intIfSet(c, "lacp-port-priority")}
					return mutate(c, 2, 2, req)
				},
			},
			{
				Name: "show", Usage: "show one trunk or all", ArgsUsage: "[NAME]",
				Description: trunkShowDescription,
				Flags:       []cli.Flag{outputFlag()},
				Action:      trunkShow,
			},
		},
	}
}

// stringIfSet returns the value of a string flag, nil when not given.
func stringIfSet(c *cli.Context, name string) *string {
	if !c.IsSet(name) {
		return nil
	}
	v := c.String(name)
	return &v
}

// intIfSet returns the value of an int flag, nil when not given.
func intIfSet(c *cli.Context, name string) *int {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Int(name)
	return &v
}

func trunkShow(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, 0, 1); err != nil {
		return err
	}
	req := api.TrunkShowRequest{Name: c.Args().Get(0)}
	if err := validate(req); err != nil {
		return err
	}
	return do(c, func(ctx context.Context, cl *api.Client) error {
		var ts []api.TrunkInfo
		if err := cl.Do(ctx, req, &ts); err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.App.Writer, nonNil(ts))
		}
		return formatTrunks(c.App.Writer, ts)
	})
}

// lacpStateAbbrev shortens the LACP state words in trunk show's table.
var lacpStateAbbrev = map[string]string{
	"activity":        "act",
	"timeout":         "fast",
	"aggregation":     "agg",
	"synchronization": "sync",
	"collecting":      "col",
	"distributing":    "dist",
	"defaulted":       "def",
	"expired":         "exp",
}

// lacpState abbreviates a LACP state for the table; "-" when no bit is set.
// Words it does not know are shown as they are.
func lacpState(words []string) string {
	if len(words) == 0 {
		return "-"
	}
	out := make([]string, len(words))
	for i, w := range words {
		if a, ok := lacpStateAbbrev[w]; ok {
			w = a
		}
		out[i] = w
	}
	return strings.Join(out, ",")
}

// yesNo formats a boolean.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// formatTrunks writes one block per trunk: its settings, then a table of
// its ports, with the LACP columns when the protocol is lacp.
func formatTrunks(w io.Writer, ts []api.TrunkInfo) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no trunks")
		return err
	}
	for i, tr := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		t := newTable(w)
		fmt.Fprintf(t, "trunk %s\n", tr.Name)
		fmt.Fprintf(t, "  proto\t%s\n", tr.Proto)
		if tr.Tap != "" && tr.Tap != tr.Name {
			// The OS named the host interface (OpenBSD): say which.
			fmt.Fprintf(t, "  tap\t%s\n", tr.Tap)
		}
		lladdr := tr.LLAddr
		if lladdr == "" {
			lladdr = "not chosen yet"
		}
		fmt.Fprintf(t, "  lladdr\t%s\n", lladdr)
		policy := "lladdr (members take the trunk's MAC)"
		if tr.Promisc {
			policy = "promisc (members keep their MACs, promiscuous)"
		}
		fmt.Fprintf(t, "  policy\t%s\n", policy)
		fmt.Fprintf(t, "  hash\t%s\n", tr.Hash)
		lacp := tr.Proto == config.ProtoLACP
		if lacp {
			key := fmt.Sprint(tr.LACPKey)
			if tr.LACPKey == 0 {
				key = "0 (derived)"
			}
			fmt.Fprintf(t, "  lacp\tmode %s, timeout %s, system priority %d, key %s\n", tr.LACPMode, tr.LACPTimeout, tr.LACPSystemPriority, key)
		}
		fmt.Fprintf(t, "  links\tupdelay %d ms, downdelay %d ms, min-links %d\n", tr.UpDelay, tr.DownDelay, max(tr.MinLinks, 1))
		if tr.Proto == config.ProtoFailover {
			fmt.Fprintf(t, "  preempt\t%s\n", onOffWord(tr.Preempt))
		}
		fmt.Fprintf(t, "  queue\t%s\n", queueLine(tr.Queue))
		fmt.Fprintf(t, "  active\t%s\n", yesNo(tr.Active))
		fmt.Fprintf(t, "  rx\t%d packets, %d bytes, %d dropped\n", tr.RxPackets, tr.RxBytes, tr.RxDropped)
		fmt.Fprintf(t, "  tx\t%d packets, %d bytes, %d dropped\n", tr.TxPackets, tr.TxBytes, tr.TxDropped)
		if tr.Proto == config.ProtoFailover {
			fmt.Fprintf(t, "  announced\t%d frames (gratuitous ARP, unsolicited NA) after failovers\n", tr.Announced)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		if len(tr.Ports) == 0 {
			fmt.Fprintln(w, "  no ports")
			continue
		}
		t = newTable(w)
		if lacp {
			fmt.Fprintln(t, "  PORT\tLINK\tPRIO\tFLAGS\tACTOR-STATE\tPARTNER(SYSTEM,KEY,PORT)\tPARTNER-STATE\tSELECTED")
		} else {
			fmt.Fprintln(t, "  PORT\tLINK\tPRIO\tFLAGS")
		}
		for _, p := range tr.Ports {
			flags := "-"
			if len(p.Flags) > 0 {
				flags = strings.Join(p.Flags, ",")
			}
			if !lacp {
				fmt.Fprintf(t, "  %s\t%s\t%d\t%s\n", p.Name, p.Link, p.Priority, flags)
				continue
			}
			actor, partner, pstate, selected := "-", "-", "-", "-"
			if l := p.LACP; l != nil {
				actor, pstate = lacpState(l.Actor.State), lacpState(l.Partner.State)
				if l.Partner.System != "" {
					partner = fmt.Sprintf("%s,%d,%d", l.Partner.System, l.Partner.Key, l.Partner.Port)
				}
				selected = yesNo(l.Selected)
				if !l.Selected && l.Reason != "" {
					selected += ": " + l.Reason
				}
			}
			fmt.Fprintf(t, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Link, p.Priority, flags, actor, partner, pstate, selected)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		if err := formatTrunkCounters(w, tr.Ports); err != nil {
			return err
		}
	}
	return nil
}

// formatTrunkCounters writes the table of a trunk's ports' counters:
// frames and bytes each way, then the drops by reason: refused (received
// while not collecting), control (slow-protocol frames the protocol
// took), the port's own receive drops (of which bad offload headers),
// transmit drops, receive-ring overflows and errors; then the transmit
// backlog: bytes held of its limit ("-" without one), frames dropped for
// a full backlog (Q-OVERFLOW) and for waiting too long (Q-STALE).
func formatTrunkCounters(w io.Writer, ports []api.TrunkPortInfo) error {
	t := newTable(w)
	fmt.Fprintln(t, "  PORT\tRX-PKTS\tRX-BYTES\tTX-PKTS\tTX-BYTES\tREFUSED\tCONTROL\tRX-DROP\tBAD-OFFLOAD\tTX-DROP\tRING-DROP\tERRORS\tTX-QUEUE\tQ-OVERFLOW\tQ-STALE")
	for _, p := range ports {
		queue := "-"
		if p.TxQueueLimit > 0 {
			queue = fmt.Sprintf("%d/%d", p.TxQueueBytes, p.TxQueueLimit)
		}
		fmt.Fprintf(t, "  %s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\n", p.Name, p.RxPackets, p.RxBytes, p.TxPackets, p.TxBytes,
			p.RxRefused, p.RxControl, p.RxDropped, p.RxBadOffload, p.TxDropped, p.RingDropped, p.Errors, queue, p.TxQueueOverflow, p.TxQueueStale)
	}
	return t.Flush()
}

// queueLine formats a trunk's queue settings for trunk show.
func queueLine(q api.TrunkQueueInfo) string {
	backlog := "backlog off"
	if q.TxQueueBytes > 0 {
		backlog = fmt.Sprintf("backlog %d bytes, %d ms", q.TxQueueBytes, q.TxQueueDelayMS)
	}
	codel := "codel off"
	if q.TxQueueTargetUS > 0 {
		codel = fmt.Sprintf("codel target %d us", q.TxQueueTargetUS)
	}
	send := "send buffer the kernel's"
	if q.SendBuffer > 0 {
		send = fmt.Sprintf("send buffer %d bytes", q.SendBuffer)
	}
	return fmt.Sprintf("%s, %s, super-frames %s, %s", backlog, codel, onOffWord(q.SuperFrames), send)
}

// onOffWord formats a boolean setting as its on|off flag takes it.
func onOffWord(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
