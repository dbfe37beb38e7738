package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/promisc"
)

// engine is the daemon's object graph: the bridges, their ports, and the
// configuration that describes them. Every change goes through one method
// that checks it whole, applies it to the running objects (undoing what it
// did if a step fails), writes the configuration file, and only then
// counts as done: nothing is ever half-applied.
type engine struct {
	// mu serialises every change and every read of the graph; the
	// forwarding path never takes it.
	mu sync.Mutex
	// cfg is the configuration as last written; guarded by mu.
	cfg *config.Config
	// cfgPath is the file cfg is written to after every change.
	cfgPath string
	// sys opens ports and TAPs and watches links.
	sys system
	// clock is given to every bridge.
	clock clock.Clock
	// log receives one line per state change.
	log *slog.Logger
	// promisc counts the promiscuous memberships swctl holds.
	promisc *promisc.Registry
	// bridges are the running bridges by name; guarded by mu.
	bridges map[string]*bridgeObj
	// trunks are the running trunks by name; guarded by mu.
	trunks map[string]*trunkObj
	// stopping is set while the daemon shuts down: a trunk leaving a
	// bridge then gets no TAP back. Guarded by mu.
	stopping bool
	// version is what `swctl version` reports for the daemon.
	version api.VersionInfo
}

// bridgeObj is one running bridge and the ports the daemon opened for it.
type bridgeObj struct {
	// name is the bridge's name.
	name string
	// br forwards frames; it owns the open ports given to it.
	br *bridge.Bridge
	// local is the bridge's host TAP, nil without --local.
	local platform.Port
	// ports are members and span ports by interface name, attached or
	// absent.
	ports map[string]*portObj
}

// portObj is one member or span port of a bridge.
type portObj struct {
	// name is the interface name.
	name string
	// span is set for a span port.
	span bool
	// port is the open port, nil while the interface is absent. The
	// bridge owns it (closes it on removal).
	port platform.Port
	// guard keeps the member's own stack off bridged frames; nil for span
	// ports, absent members, trunks and members with stack on.
	guard io.Closer
	// trunk is set when the member is a swctl trunk (port is its Handle).
	trunk *trunkObj
}

func newEngine(cfgPath string, sys system, clk clock.Clock, log *slog.Logger) *engine {
	return &engine{
		cfg:     &config.Config{},
		cfgPath: cfgPath,
		sys:     sys,
		clock:   clk,
		log:     log,
		promisc: promisc.NewRegistry(),
		bridges: make(map[string]*bridgeObj),
		trunks:  make(map[string]*trunkObj),
	}
}

// load builds the running graph from a configuration read at start. Members
// that do not exist are left absent; anything else that fails undoes all
// and is returned: the daemon does not start half-configured.
func (e *engine) load(cfg *config.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	changed := cfg.ChooseAddrs(e.host())
	for i := range cfg.Trunks {
		t := &cfg.Trunks[i]
		if err := e.startTrunk(t, cfg); err != nil {
			e.closeAll()
			return err
		}
	}
	for i := range cfg.Bridges {
		b := &cfg.Bridges[i]
		if err := e.startBridge(b); err != nil {
			e.closeAll()
			return err
		}
	}
	e.cfg = cfg
	if changed {
		if err := e.cfg.WriteFile(e.cfgPath); err != nil {
			e.closeAll()
			return fmt.Errorf("save %s: %w", e.cfgPath, err)
		}
	}
	return nil
}

// startBridge creates a running bridge from its configuration.
func (e *engine) startBridge(c *config.Bridge) (err error) {
	opts := bridge.DefaultOptions()
	opts.Timeout = time.Duration(c.Timeout) * time.Second
	opts.MaxAddr = c.MaxAddr
	opts.Clock = e.clock
	opts.Logger = e.log
	b := &bridgeObj{name: c.Name, br: bridge.New(c.Name, opts), ports: make(map[string]*portObj)}
	defer func() {
		if err != nil {
			e.stopBridge(b)
		}
	}()
	for _, p := range c.Ports {
		po := &portObj{name: p.Name}
		b.ports[p.Name] = po
		if err := e.attach(b, po, &p); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	for _, s := range c.Spans {
		po := &portObj{name: s, span: true}
		b.ports[s] = po
		if err := e.attach(b, po, nil); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	if c.Local {
		if err := e.startLocal(b, c); err != nil {
			return err
		}
	}
	for _, s := range c.Statics {
		if b.ports[s.Port] == nil || b.ports[s.Port].port == nil {
			continue // applied when the member appears
		}
		if err := b.br.AddStatic(s.MAC, s.VLAN, s.Port); err != nil {
			return err
		}
	}
	e.bridges[c.Name] = b
	e.log.Info("bridge up", "bridge", c.Name, "members", len(c.Ports), "spans", len(c.Spans), "local", c.Local)
	return nil
}

// startLocal creates the bridge's host TAP and makes it a member.
func (e *engine) startLocal(b *bridgeObj, c *config.Bridge) error {
	tp, err := e.sys.CreateTap(c.Name, net.HardwareAddr(c.LocalMAC[:]), e.localMTU(b))
	if err != nil {
		return fmt.Errorf("%s: local: %w", c.Name, err)
	}
	if err := b.br.AddPort(tp, bridge.DefaultPortFlags()); err != nil {
		tp.Close()
		return fmt.Errorf("%s: local: %w", c.Name, err)
	}
	b.local = tp
	return nil
}

// localMTU is the smallest MTU of the bridge's attached members, 1500
// without any.
func (e *engine) localMTU(b *bridgeObj) int {
	mtu := 0
	for _, p := range b.ports {
		if p.port != nil && !p.span && (mtu == 0 || p.port.MTU() < mtu) {
			mtu = p.port.MTU()
		}
	}
	if mtu == 0 {
		mtu = 1500
	}
	return mtu
}

// fitLocal sets the local TAP's MTU to the members' smallest.
func (e *engine) fitLocal(b *bridgeObj) {
	if b.local == nil {
		return
	}
	mtu := e.localMTU(b)
	if mtu == b.local.MTU() {
		return
	}
	if err := e.sys.SetTapMTU(b.local.Name(), mtu); err != nil {
		e.log.Warn("cannot set local TAP MTU", "bridge", b.name, "mtu", mtu, "err", err)
		return
	}
	if s, ok := b.local.(interface{ SetMTU(int) }); ok {
		s.SetMTU(mtu)
	}
}

// attach opens a configured port whose interface exists and gives it to
// the bridge; an interface that does not exist stays absent. p is the
// member's configuration, nil for a span port.
func (e *engine) attach(b *bridgeObj, po *portObj, p *config.Port) (err error) {
	if to := e.trunks[po.name]; to != nil && !po.span {
		// A trunk joins as itself: its TAP goes, the bridge reads it.
		e.stopTrunkTap(to)
		h := to.tr.Handle()
		if err := b.br.AddPort(h, portFlags(p)); err != nil {
			h.Close()
			if terr := e.startTrunkTap(to, e.cfgTrunkMAC(to.name)); terr != nil {
				e.log.Error("cannot give the trunk its TAP back", "trunk", to.name, "err", terr)
			}
			return fmt.Errorf("add %s: %w", po.name, err)
		}
		to.bridge = b.name
		po.port, po.trunk = h, to
		return nil
	}
	if e.sys.LinkState(po.name) == platform.LinkAbsent {
		e.log.Info("port absent", "bridge", b.name, "port", po.name)
		return nil
	}
	// Bridge ports carry offload metadata: TCP from hosts with default
	// offloads (partial checksums, GSO) crosses the bridge intact.
	port, err := e.sys.OpenPort(po.name, true)
	if err != nil {
		return fmt.Errorf("add %s: %w", po.name, err)
	}
	if po.span {
		if err := b.br.AddSpan(port); err != nil {
			port.Close()
			return fmt.Errorf("add %s: %w", po.name, err)
		}
		po.port = port
		return nil
	}
	var guard io.Closer
	defer func() {
		if err != nil {
			if guard != nil {
				guard.Close()
			}
			if pp, ok := port.(promisc.Port); ok && e.promisc.Users(pp) > 0 {
				e.promisc.Release(pp)
			}
			port.Close()
		}
	}()
	if pp, ok := port.(promisc.Port); ok && !p.NoPromisc {
		if err := e.promisc.Acquire(pp); err != nil {
			return fmt.Errorf("add %s: promiscuous mode: %w", po.name, err)
		}
	}
	if !p.Stack {
		if guard, err = e.sys.GuardStack(po.name); err != nil {
			return fmt.Errorf("add %s: %w", po.name, err)
		}
	}
	if err := b.br.AddPort(port, portFlags(p)); err != nil {
		return fmt.Errorf("add %s: %w", po.name, err)
	}
	po.port, po.guard = port, guard
	e.log.Debug("port attached", "bridge", b.name, "port", po.name, "link", port.Link().String(), "mtu", port.MTU(), "stack_guard", guard != nil)
	return nil
}

// detach takes an attached port out of its bridge and releases it; the
// port stays configured (absent) unless the caller forgets it.
func (e *engine) detach(b *bridgeObj, po *portObj) {
	if po.port == nil {
		return
	}
	if to := po.trunk; to != nil {
		if err := b.br.RemovePort(po.name); err != nil {
			e.log.Warn("remove port", "bridge", b.name, "port", po.name, "err", err)
		}
		po.port.Close()
		po.port, po.trunk = nil, nil
		to.bridge = ""
		if !e.stopping && e.trunks[to.name] == to {
			if err := e.startTrunkTap(to, e.cfgTrunkMAC(to.name)); err != nil {
				e.log.Error("cannot give the trunk its TAP back", "trunk", to.name, "err", err)
			}
		}
		return
	}
	if pp, ok := po.port.(promisc.Port); ok && e.promisc.Users(pp) > 0 {
		if err := e.promisc.Release(pp); err != nil {
			// Closing the port below drops the membership anyway.
			e.promisc.Forget(pp)
		}
	}
	var err error
	if po.span {
		err = b.br.RemoveSpan(po.name)
	} else {
		err = b.br.RemovePort(po.name)
	}
	if err != nil {
		e.log.Warn("remove port", "bridge", b.name, "port", po.name, "err", err)
	}
	po.port.Close() // the bridge closed it already; closing twice is allowed
	if po.guard != nil {
		po.guard.Close()
		po.guard = nil
	}
	po.port = nil
}

// stopBridge closes a running bridge and everything it opened.
func (e *engine) stopBridge(b *bridgeObj) {
	for _, po := range b.ports {
		e.detach(b, po)
	}
	b.br.Close()
	if b.local != nil {
		b.local.Close()
		b.local = nil
	}
}

// closeAll stops every bridge (daemon shutdown). Interfaces are left as
// they were before swctl took them.
func (e *engine) closeAll() {
	e.stopping = true
	defer func() { e.stopping = false }()
	for name, b := range e.bridges {
		e.stopBridge(b)
		delete(e.bridges, name)
		e.log.Info("bridge down", "bridge", name)
	}
	for name, to := range e.trunks {
		e.stopTrunk(to)
		delete(e.trunks, name)
		e.log.Info("trunk down", "trunk", name)
	}
}

// cfgTrunkMAC returns trunk name's configured MAC.
func (e *engine) cfgTrunkMAC(name string) frame.MAC {
	if t := e.cfg.Trunk(name); t != nil {
		return t.LLAddr
	}
	return frame.MAC{}
}

// Close stops everything.
func (e *engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closeAll()
}

func portFlags(p *config.Port) bridge.PortFlags {
	return bridge.PortFlags{Learning: p.Learning, Discover: p.Discover, BlockNonIP: p.BlockNonIP}
}

// resync replays the current state of every configured port, for links
// that changed before the watcher started.
func (e *engine) resync() {
	e.mu.Lock()
	var names []string
	for _, b := range e.bridges {
		for n := range b.ports {
			names = append(names, n)
		}
	}
	for _, to := range e.trunks {
		for n := range to.ports {
			names = append(names, n)
		}
	}
	e.mu.Unlock()
	for _, n := range names {
		e.linkChanged(n, e.sys.LinkState(n))
	}
}

// linkChanged is called by the link watcher for every link event.
func (e *engine) linkChanged(name string, state platform.LinkState) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.trunkLinkChanged(name, state)
	for _, b := range e.bridges {
		po := b.ports[name]
		if po == nil || po.trunk != nil || e.trunks[name] != nil {
			continue
		}
		c := e.cfg.Bridge(b.name)
		switch {
		case state == platform.LinkAbsent && po.port != nil:
			e.log.Info("port gone", "bridge", b.name, "port", name)
			e.detach(b, po)
			e.fitLocal(b)
		case state != platform.LinkAbsent && po.port == nil:
			var pc *config.Port
			if !po.span {
				pc = c.Port(name)
			}
			if err := e.attach(b, po, pc); err != nil {
				e.log.Warn("cannot attach port that appeared", "bridge", b.name, "port", name, "err", err)
				continue
			}
			if !po.span {
				for _, s := range c.Statics {
					if s.Port == name {
						if err := b.br.AddStatic(s.MAC, s.VLAN, s.Port); err != nil {
							e.log.Warn("static entry", "bridge", b.name, "mac", s.MAC.String(), "err", err)
						}
					}
				}
			}
			e.fitLocal(b)
		case po.port != nil:
			if ls, ok := po.port.(platform.LinkSetter); ok {
				old := po.port.Link()
				ls.SetLink(state)
				if old != state {
					e.log.Info("link "+state.String(), "bridge", b.name, "port", name)
				}
			}
			if !po.span {
				b.br.LinkChanged(name)
			}
		}
	}
}

// change runs one configuration change: edit turns a copy of the
// configuration into the new one (or says why not), apply makes the running
// graph match and returns how to undo that; then the file is written. If
// any step fails, what was done is undone and the error returned.
func (e *engine) change(edit func(c *config.Config) error, apply func(c *config.Config) (undo func(), err error)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.cfg.Clone()
	if err := edit(next); err != nil {
		return err
	}
	if err := next.Validate(); err != nil {
		return err
	}
	undo, err := apply(next)
	if err != nil {
		return err
	}
	if err := next.WriteFile(e.cfgPath); err != nil {
		if undo != nil {
			undo()
		}
		return fmt.Errorf("not changed: cannot save the configuration: %w", err)
	}
	e.cfg = next
	return nil
}

// errNoBridge names a bridge that does not exist.
func errNoBridge(name string) error { return fmt.Errorf("%s: no such bridge", name) }

// host answers the configuration's questions about interfaces from the
// system.
func (e *engine) host() config.Host { return sysHost{e.sys} }

// sysHost is a config.Host over a system.
type sysHost struct{ sys system }

func (h sysHost) Exists(name string) bool { return h.sys.LinkState(name) != platform.LinkAbsent }

func (h sysHost) HardwareAddr(name string) (net.HardwareAddr, error) {
	return h.sys.HardwareAddr(name)
}
