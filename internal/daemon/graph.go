package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/promisc"
	"github.com/swctl/swctl/trunk"
)

// graph is the running half of the daemon: the bridges and trunks that
// exist, their ports and TAPs, and what they need from the system. A plan
// (reconcile.go) changes it to match a configuration; link events attach
// and detach members as their interfaces come and go. The engine's mutex
// guards all of it; the forwarding path never touches it.
type graph struct {
	// sys opens ports and TAPs and knows which interfaces exist.
	sys system
	// clock is given to every bridge and trunk.
	clock clock.Clock
	// log receives one line per state change.
	log *slog.Logger
	// promisc counts the promiscuous memberships swctl holds.
	promisc *promisc.Registry
	// bridges are the running bridges by name.
	bridges map[string]*bridgeObj
	// trunks are the running trunks by name.
	trunks map[string]*trunkObj
	// lbs are the running load balancers by name (lb.go); nil until the
	// first starts.
	lbs map[string]*lbObj
	// workers is the daemon's Options.Workers (0 means 1): every trunk
	// gets as many receive queues, so that a trunk in a bridge is
	// forwarded by as many goroutines as a plain member.
	workers int
}

func newGraph(sys system, clk clock.Clock, log *slog.Logger) *graph {
	return &graph{
		sys: sys, clock: clk, log: log, promisc: promisc.NewRegistry(),
		bridges: make(map[string]*bridgeObj), trunks: make(map[string]*trunkObj),
	}
}

// startBridge creates a running bridge from its configuration: its
// members, span ports, local TAP and the static entries of its attached
// members. A member that is a swctl trunk in cfg, the configuration c
// belongs to, is left for join. On error nothing is left running.
func (g *graph) startBridge(c *config.Bridge, cfg *config.Config) (_ *bridgeObj, err error) {
	opts := bridge.DefaultOptions()
	opts.Timeout = time.Duration(c.Timeout) * time.Second
	opts.MaxAddr = c.MaxAddr
	opts.Clock = g.clock
	opts.Logger = g.log
	b := &bridgeObj{g: g, name: c.Name, br: bridge.New(c.Name, opts), ports: make(map[string]*portObj)}
	defer func() {
		if err != nil {
			b.stop()
		}
	}()
	if err := b.startSTP(c); err != nil {
		return nil, err
	}
	for i := range c.Ports {
		if cfg.Trunk(c.Ports[i].Name) != nil {
			continue
		}
		po := &portObj{name: c.Ports[i].Name}
		b.ports[po.name] = po
		if err := b.attach(po, &c.Ports[i]); err != nil {
			return nil, err
		}
	}
	for _, s := range c.Spans {
		po := &portObj{name: s, span: true}
		b.ports[s] = po
		if err := b.attach(po, nil); err != nil {
			return nil, err
		}
	}
	if c.Local {
		if err := b.startLocal(c.LocalMAC); err != nil {
			return nil, err
		}
	}
	if err := b.addStatics(c.Statics, ""); err != nil {
		return nil, err
	}
	g.bridges[c.Name] = b
	g.log.Info("bridge up", "bridge", c.Name, "members", len(c.Ports), "spans", len(c.Spans), "local", c.Local)
	return b, nil
}

// stopBridge closes a running bridge and everything it opened. A trunk
// member leaves it without a TAP of its own: a plan that keeps the trunk
// has made it one.
func (g *graph) stopBridge(b *bridgeObj) {
	b.stop()
	delete(g.bridges, b.name)
	g.log.Info("bridge down", "bridge", b.name)
}

// startTrunk creates a running trunk from its configuration, with its
// ports, and with host set a TAP named after it that gives it to the host
// (without, it waits to join a bridge). On error nothing is left running
// and every port has its own MAC back.
func (g *graph) startTrunk(c *config.Trunk, host bool) (_ *trunkObj, err error) {
	proto, err := trunkProtocol(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	fields, err := lbHashFields(c)
	if err != nil {
		return nil, err
	}
	to := &trunkObj{g: g, name: c.Name, ports: make(map[string]*trunkPortObj)}
	opts := trunk.Options{
		Protocol: proto, Hash: fields, Seed: trunkSeed(c.Name),
		MAC: net.HardwareAddr(c.LLAddr[:]), Clock: g.clock, Logger: g.log, // trunk.New adds the trunk attribute
		Policy: trunkPolicy(c), RxQueues: max(g.workers, 1),
		OnActiveChange: to.setCarrier, OnDistributingChange: to.announce,
	}
	setTrunkQueue(&opts, c.Queue)
	tr, err := trunk.New(c.Name, opts)
	if err != nil {
		return nil, err
	}
	to.tr = tr
	defer func() {
		if err != nil {
			to.stop()
		}
	}()
	for i := range c.Ports {
		tpo := &trunkPortObj{name: c.Ports[i].Name}
		to.ports[tpo.name] = tpo
		if err := to.attachPort(c, tpo, &c.Ports[i]); err != nil {
			return nil, err
		}
	}
	if host {
		tap, caps, err := to.createTap(c.LLAddr)
		if err != nil {
			return nil, err
		}
		to.giveHost(tap, caps)
	}
	g.trunks[c.Name] = to
	g.log.Info("trunk up", "trunk", c.Name, "proto", c.Proto, "ports", len(c.Ports), "lladdr", c.LLAddr.String(), "promisc", c.Promisc)
	return to, nil
}

// stopTrunk closes a running trunk and gives every port back as it was.
func (g *graph) stopTrunk(to *trunkObj) {
	to.stop()
	delete(g.trunks, to.name)
	g.log.Info("trunk down", "trunk", to.name)
}

// join makes trunk to a member of bridge b, configured in c: its TAP goes
// first (a trunk has one consumer at a time), then the bridge reads it and
// its static entries are added. Adding a fresh Handle to a running bridge
// fails only on a name already taken, which the configuration rules out;
// should it fail, the trunk stays an absent member, as the configuration
// says it is a member.
func (g *graph) join(b *bridgeObj, to *trunkObj, c *config.Bridge) {
	to.takeHost()
	po := &portObj{name: to.name}
	b.ports[to.name] = po
	h := to.tr.Handle()
	if err := b.addMember(po, h, c.Port(to.name), to.tr); err != nil {
		h.Close()
		g.log.Error("trunk cannot join its bridge: shown absent there", "bridge", b.name, "trunk", to.name, "err", err)
		return
	}
	po.port, po.trunk = h, to
	if err := b.addStatics(c.Statics, to.name); err != nil {
		g.log.Warn("static entry", "bridge", b.name, "port", to.name, "err", err)
	}
}

// closeAll stops every bridge, then every trunk (daemon shutdown, or a
// failed start). Interfaces are left as they were before swctl took them.
func (g *graph) closeAll() {
	g.stopLBs()
	for _, b := range g.bridges {
		g.stopBridge(b)
	}
	for _, to := range g.trunks {
		g.stopTrunk(to)
	}
}

// names returns the name of every configured port of every bridge and
// trunk, and the interface of every lb.
func (g *graph) names() []string {
	var names []string
	for _, b := range g.bridges {
		for n := range b.ports {
			names = append(names, n)
		}
	}
	for _, to := range g.trunks {
		for n := range to.ports {
			names = append(names, n)
		}
	}
	return append(names, g.lbIfaces()...)
}

// linkChanged follows a link event: a configured port whose interface
// appeared is attached, one whose interface went is detached (and stays
// configured, absent), one whose MTU changed is reopened (follow.go), and
// any other change of state is passed on; an lb follows its interface
// (lbLinkChanged). A bridge member that is a swctl trunk follows its
// trunk, not links. Every local TAP then takes its members' smallest MTU
// again: a trunk member's may have changed.
func (g *graph) linkChanged(cfg *config.Config, ev linkEvent) {
	g.lbLinkChanged(cfg, ev.name, ev.state)
	for _, to := range g.trunks {
		if tpo := to.ports[ev.name]; tpo != nil {
			to.linkChanged(cfg.Trunk(to.name), tpo, ev)
		}
	}
	if g.trunks[ev.name] == nil {
		for _, b := range g.bridges {
			if po := b.ports[ev.name]; po != nil {
				b.linkChanged(cfg.Bridge(b.name), po, ev)
			}
		}
	}
	for _, b := range g.bridges {
		b.fitLocal()
	}
}
