package daemon

import (
	"fmt"
	"io"
	"net"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/capture"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/platform"
)

// bridgeObj is one running bridge and the ports the daemon opened for it.
type bridgeObj struct {
	// g is the graph the bridge belongs to: its system, log and
	// promiscuity registry.
	g *graph
	// name is the bridge's name.
	name string
	// br forwards frames; it owns the open ports given to it.
	br *bridge.Bridge
	// local is the bridge's host TAP, nil without --local.
	local platform.Port
	// localCaps is local's capability set.
	localCaps platform.Caps
	// stp is the bridge's spanning tree, nil while it does not run.
	stp *stpObj
	// ports are members and span ports by interface name, attached or
	// absent.
	ports map[string]*portObj
	// capture is the bridge's packet-capture hub, nil until the first
	// capture (capture.go).
	capture *capture.Hub
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
	// caps is port's capability set; zero for a trunk.
	caps platform.Caps
	// guard keeps the member's own stack off bridged frames; nil for span
	// ports, absent members, trunks and members with stack on.
	guard io.Closer
	// trunk is set when the member is a swctl trunk (port is its Handle).
	trunk *trunkObj
	// reopenCounts keeps the counters of the ports reopens closed.
	reopenCounts
}

// link is the port's link state, absent while it is.
func (po *portObj) link() platform.LinkState {
	if po == nil || po.port == nil {
		return platform.LinkAbsent
	}
	return po.port.Link()
}

func portFlags(p *config.Port) bridge.PortFlags {
	return bridge.PortFlags{Learning: p.Learning, Discover: p.Discover, BlockNonIP: p.BlockNonIP}
}

// startLocal creates the bridge's host TAP and makes it a member.
func (b *bridgeObj) startLocal(mac frame.MAC) error {
	tp, caps, err := b.g.sys.CreateTap(b.name, net.HardwareAddr(mac[:]), b.localMTU())
	if err != nil {
		return fmt.Errorf("%s: local: %w", b.name, err)
	}
	if err := b.br.AddPort(tp, bridge.DefaultPortFlags()); err != nil {
		tp.Close()
		return fmt.Errorf("%s: local: %w", b.name, err)
	}
	b.local, b.localCaps = tp, caps
	return nil
}

// localMTU is the smallest MTU of the bridge's attached members, 1500
// without any.
func (b *bridgeObj) localMTU() int {
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
func (b *bridgeObj) fitLocal() {
	if b.local == nil {
		return
	}
	mtu := b.localMTU()
	if mtu == b.local.MTU() {
		return
	}
	if err := b.g.sys.SetTapMTU(b.local.Name(), mtu); err != nil {
		b.g.log.Warn("cannot set local TAP MTU", "bridge", b.name, "mtu", mtu, "err", err)
		return
	}
	if m := b.localCaps.MTU; m != nil {
		m.SetMTU(mtu)
	}
}

// attach opens a configured port whose interface exists and gives it to
// the bridge; an interface that does not exist stays absent. p is the
// member's configuration, nil for a span port. Trunks join through
// graph.join instead. On error nothing is left open.
func (b *bridgeObj) attach(po *portObj, p *config.Port) (err error) {
	g := b.g
	if g.sys.LinkState(po.name) == platform.LinkAbsent {
		g.log.Info("port absent", "bridge", b.name, "port", po.name)
		return nil
	}
	// Bridge ports carry offload metadata: TCP from hosts with default
	// offloads (partial checksums, GSO) crosses the bridge intact.
	port, caps, err := g.sys.OpenPort(po.name, true, 0)
	if err != nil {
		return fmt.Errorf("%s: add %s: %w", b.name, po.name, err)
	}
	if po.span {
		if err := b.br.AddSpan(port); err != nil {
			port.Close()
			return fmt.Errorf("%s: add %s: %w", b.name, po.name, err)
		}
		po.port, po.caps = port, caps
		return nil
	}
	var guard io.Closer
	defer func() {
		if err != nil {
			if guard != nil {
				guard.Close()
			}
			if pp := caps.Promisc; pp != nil && g.promisc.Users(pp) > 0 {
				g.promisc.Release(pp)
			}
			port.Close()
		}
	}()
	if pp := caps.Promisc; pp != nil && !p.NoPromisc {
		if err := g.promisc.Acquire(pp); err != nil {
			return fmt.Errorf("%s: add %s: promiscuous mode: %w", b.name, po.name, err)
		}
	}
	if !p.Stack {
		if guard, err = g.sys.GuardStack(po.name); err != nil {
			return fmt.Errorf("%s: add %s: %w", b.name, po.name, err)
		}
	}
	if err := b.addMember(po, port, p, nil); err != nil {
		return fmt.Errorf("%s: add %s: %w", b.name, po.name, err)
	}
	po.port, po.caps, po.guard = port, caps, guard
	g.log.Debug("port attached", "bridge", b.name, "port", po.name, "link", port.Link().String(), "mtu", port.MTU(), "stack_guard", guard != nil)
	return nil
}

// detach takes an attached port out of the bridge and releases it; the
// port stays configured (absent) unless the caller forgets it. A trunk
// leaves without a TAP of its own: that is the plan's to give.
func (b *bridgeObj) detach(po *portObj) {
	if po.port == nil {
		return
	}
	g := b.g
	b.leaveSTP(po)
	if po.trunk != nil {
		if err := b.br.RemovePort(po.name); err != nil {
			g.log.Warn("remove port", "bridge", b.name, "port", po.name, "err", err)
		}
		po.port.Close()
		po.port, po.trunk = nil, nil
		return
	}
	if pp := po.caps.Promisc; pp != nil && g.promisc.Users(pp) > 0 {
		if err := g.promisc.Release(pp); err != nil {
			// Closing the port below drops the membership anyway.
			g.promisc.Forget(pp)
		}
	}
	var err error
	if po.span {
		err = b.br.RemoveSpan(po.name)
	} else {
		err = b.br.RemovePort(po.name)
	}
	if err != nil {
		g.log.Warn("remove port", "bridge", b.name, "port", po.name, "err", err)
	}
	po.port.Close() // the bridge closed it already; closing twice is allowed
	if po.guard != nil {
		po.guard.Close()
		po.guard = nil
	}
	po.port, po.caps = nil, platform.Caps{}
}

// stop closes the bridge and everything it opened.
func (b *bridgeObj) stop() {
	b.capture.Close()
	for _, po := range b.ports {
		b.detach(po)
	}
	b.stopSTP()
	b.br.Close()
	if b.local != nil {
		b.local.Close()
		b.local, b.localCaps = nil, platform.Caps{}
	}
}

// setPort makes an attached member's stack guard, promiscuity and flags
// those of p; was is what they are now, and what they are put back to
// when a step fails. A trunk has flags only.
func (b *bridgeObj) setPort(po *portObj, p, was *config.Port) error {
	if po.port == nil {
		return nil // absent: attached as configured when it appears
	}
	setFlags := func(p *config.Port) error {
		if err := b.br.SetPortFlags(po.name, portFlags(p)); err != nil {
			return fmt.Errorf("%s: port %s: %w", b.name, po.name, err)
		}
		return b.protect(po.name, p)
	}
	if po.trunk != nil {
		return setFlags(p)
	}
	if err := b.setStack(po, p.Stack); err != nil {
		return err
	}
	if err := b.setPromisc(po, !p.NoPromisc); err != nil {
		_ = b.setStack(po, was.Stack)
		return err
	}
	if err := setFlags(p); err != nil {
		_ = b.setStack(po, was.Stack)
		_ = b.setPromisc(po, !was.NoPromisc)
		return err
	}
	return nil
}

// setPromisc takes or releases the member's promiscuous membership.
func (b *bridgeObj) setPromisc(po *portObj, on bool) error {
	pp := po.caps.Promisc
	if pp == nil {
		return nil
	}
	reg := b.g.promisc
	held := reg.Users(pp) > 0
	switch {
	case on && !held:
		if err := reg.Acquire(pp); err != nil {
			return fmt.Errorf("%s: port %s: promisc on: %w", b.name, po.name, err)
		}
	case !on && held:
		if err := reg.Release(pp); err != nil {
			return fmt.Errorf("%s: port %s: promisc off: %w", b.name, po.name, err)
		}
	}
	return nil
}

// setStack attaches or removes the member's stack guard.
func (b *bridgeObj) setStack(po *portObj, stack bool) error {
	switch {
	case stack && po.guard != nil:
		err := po.guard.Close()
		po.guard = nil
		if err != nil {
			return fmt.Errorf("%s: port %s: stack on: %w", b.name, po.name, err)
		}
	case !stack && po.guard == nil:
		g, err := b.g.sys.GuardStack(po.name)
		if err != nil {
			return fmt.Errorf("%s: port %s: stack off: %w", b.name, po.name, err)
		}
		po.guard = g
	}
	return nil
}

// addStatics puts the static entries on attached members into the
// address table: those on member port, or all when port is "". Entries on
// absent members are added when they appear.
func (b *bridgeObj) addStatics(statics []config.Static, port string) error {
	for _, s := range statics {
		if port != "" && s.Port != port {
			continue
		}
		if po := b.ports[s.Port]; po == nil || po.port == nil {
			continue
		}
		if err := b.br.AddStatic(s.MAC, s.VLAN, s.Port); err != nil {
			return err
		}
	}
	return nil
}

// linkChanged follows a link event for the bridge's port po; c is the
// bridge's configuration.
func (b *bridgeObj) linkChanged(c *config.Bridge, po *portObj, ev linkEvent) {
	g := b.g
	state := ev.state
	switch {
	case po.trunk != nil:
		// A trunk's link follows its ports, not netlink.
	case state == platform.LinkAbsent && po.port != nil:
		g.log.Info("port gone", "bridge", b.name, "port", po.name)
		b.detach(po)
	case state != platform.LinkAbsent && po.port == nil:
		b.attachAppeared(c, po)
	case resized(po.port, ev):
		g.log.Info("port MTU changed: reopening it", "bridge", b.name, "port", po.name, "mtu", ev.mtu, "was", po.port.MTU())
		b.reopen(c, po, po.name)
	case po.port != nil:
		if ls := po.caps.Link; ls != nil {
			old := po.port.Link()
			ls.SetLink(state)
			if old != state {
				g.log.Info("link "+state.String(), "bridge", b.name, "port", po.name)
			}
		}
		if !po.span {
			b.br.LinkChanged(po.name)
			b.linkSTP()
		}
	}
}

// attachAppeared attaches the configured port po whose interface now
// exists, with its static entries; c is the bridge's configuration. A
// failure is logged and leaves it absent.
func (b *bridgeObj) attachAppeared(c *config.Bridge, po *portObj) {
	var pc *config.Port
	if !po.span {
		pc = c.Port(po.name)
	}
	if err := b.attach(po, pc); err != nil {
		b.g.log.Warn("cannot attach port that appeared", "bridge", b.name, "port", po.name, "err", err)
		return
	}
	if !po.span {
		if err := b.addStatics(c.Statics, po.name); err != nil {
			b.g.log.Warn("static entry", "bridge", b.name, "port", po.name, "err", err)
		}
	}
}
