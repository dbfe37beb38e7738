package daemon

import (
	"fmt"
	"slices"
	"time"

	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/platform"
)

// A plan moves the running graph from one configuration (prev, which the
// graph matches) to another (next): it is the daemon's one reconciler,
// and every state operation, the daemon's start and a rollback go through
// it. Its steps come in two phases.
//
// The acquire phase opens and creates what next adds (bridges, trunks,
// members, span ports, TAPs, static entries) and changes settings and
// flags in place. Any of these steps may fail; each that succeeds leaves
// its undo, and rollback runs them backwards, so that a failure leaves the
// graph as prev has it. Nothing in this phase closes anything prev has: a
// rollback never recreates a TAP, so no TAP loses its host addresses.
//
// The release phase then hands trunks over between TAPs and bridges and
// closes what next no longer has. It runs once the new configuration file
// is in place, and has nothing to undo: what it cannot do (a trunk that
// cannot join its bridge, say) it logs and leaves absent, as link events
// do.
type plan struct {
	// g is the graph the plan changes.
	g *graph
	// steps is the acquire phase, in order.
	steps []step
	// undo are the undos of the acquire steps done so far, in order.
	undo []func()
	// leave, handover and drop are the release phase, run in this order:
	// bridges and their ports, spans and static entries that next drops
	// leave; trunks get the TAP made for them, or give theirs up and join
	// a bridge; trunks and trunk ports that next drops close.
	leave, handover, drop []func()
}

// step is one step of the acquire phase: it returns how to undo it.
type step func() (undo func(), err error)

// plan returns the plan that moves the graph from prev, which it matches,
// to next.
func (g *graph) plan(prev, next *config.Config) *plan {
	p := &plan{g: g}
	// Trunks first: a new bridge may have a new trunk as a member.
	for i := range next.Trunks {
		t := &next.Trunks[i]
		host := next.BridgeOf(t.Name) == ""
		if was := prev.Trunk(t.Name); was == nil {
			p.add(func() (func(), error) {
				to, err := g.startTrunk(t, host)
				if err != nil {
					return nil, err
				}
				return func() { g.stopTrunk(to) }, nil
			})
		} else {
			p.changeTrunk(g.trunks[t.Name], was, t, prev.BridgeOf(t.Name) == "", host)
		}
	}
	for _, t := range prev.Trunks {
		if next.Trunk(t.Name) == nil {
			to := g.trunks[t.Name]
			p.drop = append(p.drop, func() { g.stopTrunk(to) })
		}
	}
	for i := range next.Bridges {
		c := &next.Bridges[i]
		if was := prev.Bridge(c.Name); was == nil {
			p.add(func() (func(), error) {
				b, err := g.startBridge(c, next)
				if err != nil {
					return nil, err
				}
				return func() { g.stopBridge(b) }, nil
			})
			p.joins(c, nil, next)
		} else {
			p.changeBridge(g.bridges[c.Name], was, c, next)
		}
	}
	for _, c := range prev.Bridges {
		if next.Bridge(c.Name) == nil {
			b := g.bridges[c.Name]
			p.leave = append(p.leave, func() { g.stopBridge(b) })
		}
	}
	// Load balancers last: one may sit on a bridge made above (lb.go).
	p.planLBs(prev, next)
	return p
}

// add appends an acquire step.
func (p *plan) add(s step) { p.steps = append(p.steps, s) }

// refuse appends an acquire step that fails with err: a difference the
// running objects cannot take in place.
func (p *plan) refuse(err error) { p.add(func() (func(), error) { return nil, err }) }

// changeTrunk plans the changes of a running trunk from was to c. host
// says whether the trunk is given to the host (not a bridge member) before
// and after.
func (p *plan) changeTrunk(to *trunkObj, was, c *config.Trunk, hostBefore, hostAfter bool) {
	if c.LLAddr != was.LLAddr {
		p.refuse(fmt.Errorf("%s: its MAC cannot change while it runs", c.Name))
		return
	}
	if kw := c.Queue.Differs(was.Queue); kw != "" {
		p.refuse(fmt.Errorf("%s: %s cannot change while it runs (destroy and create it)", c.Name, kw))
		return
	}
	if c.Promisc != was.Promisc {
		p.add(func() (func(), error) {
			if err := to.rejoin(c, was); err != nil {
				return nil, err
			}
			return func() { p.logUndo(to.rejoin(was, c)) }, nil
		})
	}
	if c.Proto != was.Proto || c.Hash != was.Hash || c.LACPMode != was.LACPMode || c.LACPTimeout != was.LACPTimeout ||
		c.LACPSystemPriority != was.LACPSystemPriority || c.LACPKey != was.LACPKey {
		p.add(func() (func(), error) {
			if err := to.setSettings(c, was); err != nil {
				return nil, err
			}
			return func() { p.logUndo(to.setSettings(was, c)) }, nil
		})
	}
	if trunkPolicy(c) != trunkPolicy(was) {
		p.add(func() (func(), error) {
			if err := to.setPolicy(c); err != nil {
				return nil, err
			}
			return func() { p.logUndo(to.setPolicy(was)) }, nil
		})
	}
	for i := range c.Ports {
		pc := &c.Ports[i]
		switch old := was.Port(pc.Name); {
		case old == nil:
			p.add(func() (func(), error) {
				tpo := &trunkPortObj{name: pc.Name}
				if err := to.attachPort(c, tpo, pc); err != nil {
					return nil, err
				}
				to.ports[tpo.name] = tpo
				return func() { to.detachPort(tpo); delete(to.ports, tpo.name) }, nil
			})
		default:
			// The port's settings that change in place.
			for _, s := range []struct {
				set        func(*trunkPortObj, int) error
				from, want int
			}{{to.setPriority, old.Priority, pc.Priority}, {to.setLACPPortPriority, old.LACPPortPriority, pc.LACPPortPriority}} {
				if s.from == s.want {
					continue
				}
				p.add(func() (func(), error) {
					tpo := to.ports[pc.Name]
					if err := s.set(tpo, s.want); err != nil {
						return nil, err
					}
					return func() { p.logUndo(s.set(tpo, s.from)) }, nil
				})
			}
		}
	}
	for _, pc := range was.Ports {
		if c.Port(pc.Name) == nil {
			tpo := to.ports[pc.Name]
			p.drop = append(p.drop, func() { to.detachPort(tpo); delete(to.ports, tpo.name) })
		}
	}
	if !hostBefore && hostAfter {
		// Leaving its bridge: the TAP is made now, so that failing to
		// make it changes nothing, and given once the bridge let go.
		var (
			tap  platform.Port
			caps platform.Caps
		)
		p.add(func() (func(), error) {
			t, tc, err := to.createTap(c.LLAddr)
			if err != nil {
				return nil, err
			}
			tap, caps = t, tc
			return func() { t.Close() }, nil
		})
		p.handover = append(p.handover, func() { to.giveHost(tap, caps) })
	}
}

// joins plans the trunks that c, a bridge's configuration, has as
// members and was (nil for a new bridge) has not: each joins in the
// release phase, which takes its TAP.
func (p *plan) joins(c, was *config.Bridge, next *config.Config) {
	for _, pc := range c.Ports {
		if next.Trunk(pc.Name) == nil || (was != nil && was.Port(pc.Name) != nil) {
			continue
		}
		name := pc.Name
		p.handover = append(p.handover, func() { p.g.join(p.g.bridges[c.Name], p.g.trunks[name], c) })
	}
}

// changeBridge plans the changes of a running bridge from was to c.
func (p *plan) changeBridge(b *bridgeObj, was, c *config.Bridge, next *config.Config) {
	if c.Local != was.Local || c.LocalMAC != was.LocalMAC {
		p.refuse(fmt.Errorf("%s: its local TAP cannot change while it runs", c.Name))
		return
	}
	p.changeSTP(b, was, c)
	if c.Timeout != was.Timeout || c.MaxAddr != was.MaxAddr {
		set := func(c *config.Bridge) error {
			if err := b.br.SetMaxAddr(c.MaxAddr); err != nil {
				return fmt.Errorf("%s: set maxaddr: %w", c.Name, err)
			}
			b.br.SetTimeout(time.Duration(c.Timeout) * time.Second)
			return nil
		}
		p.add(func() (func(), error) {
			if err := set(c); err != nil {
				return nil, err
			}
			return func() { p.logUndo(set(was)) }, nil
		})
	}
	for i := range c.Ports {
		pc := &c.Ports[i]
		old := was.Port(pc.Name)
		switch {
		case old == nil && next.Trunk(pc.Name) == nil:
			p.attach(b, &portObj{name: pc.Name}, pc)
		case old != nil && *old != *pc:
			p.add(func() (func(), error) {
				po := b.ports[pc.Name]
				if err := b.setPort(po, pc, old); err != nil {
					return nil, err
				}
				return func() { p.logUndo(b.setPort(po, old, pc)) }, nil
			})
		}
	}
	p.joins(c, was, next)
	for _, s := range c.Spans {
		if !slices.Contains(was.Spans, s) {
			p.attach(b, &portObj{name: s, span: true}, nil)
		}
	}
	for _, pc := range was.Ports {
		if c.Port(pc.Name) == nil {
			p.leave = append(p.leave, p.detach(b, pc.Name))
		}
	}
	for _, s := range was.Spans {
		if !slices.Contains(c.Spans, s) {
			p.leave = append(p.leave, p.detach(b, s))
		}
	}
	p.statics(b, was, c)
}

// attach plans a new member or span port po of b (p is nil for a span).
func (p *plan) attach(b *bridgeObj, po *portObj, pc *config.Port) {
	p.add(func() (func(), error) {
		if err := b.attach(po, pc); err != nil {
			return nil, err
		}
		b.ports[po.name] = po
		return func() { b.detach(po); delete(b.ports, po.name) }, nil
	})
}

// detach returns the release step that takes b's port name out.
func (p *plan) detach(b *bridgeObj, name string) func() {
	po := b.ports[name]
	return func() { b.detach(po); delete(b.ports, name) }
}

// statics plans the static entries of bridge b from was to c: new and
// moved ones are added (on attached members; others are added when they
// appear), dropped ones removed.
func (p *plan) statics(b *bridgeObj, was, c *config.Bridge) {
	find := func(ss []config.Static, s config.Static) (config.Static, bool) {
		i := slices.IndexFunc(ss, func(o config.Static) bool { return o.MAC == s.MAC && o.VLAN == s.VLAN })
		if i < 0 {
			return config.Static{}, false
		}
		return ss[i], true
	}
	for _, s := range c.Statics {
		old, had := find(was.Statics, s)
		if had && old.Port == s.Port {
			continue
		}
		p.add(func() (func(), error) {
			if po := b.ports[s.Port]; po == nil || po.port == nil {
				return nil, nil
			}
			if err := b.br.AddStatic(s.MAC, s.VLAN, s.Port); err != nil {
				return nil, err
			}
			return func() {
				// The entry it replaced, or none.
				_ = b.br.DeleteEntry(s.MAC, s.VLAN)
				if had {
					p.logUndo(b.addStatics([]config.Static{old}, ""))
				}
			}, nil
		})
	}
	for _, s := range was.Statics {
		if _, keep := find(c.Statics, s); !keep {
			// Not in the table when its member is absent (or gone with
			// the member): nothing to remove then.
			p.leave = append(p.leave, func() { _ = b.br.DeleteEntry(s.MAC, s.VLAN) })
		}
	}
}

// apply runs the acquire phase. fault, when not nil, is called before
// each step and after the last; an error from it fails the phase there
// (tests use it to fail at every step). On error the caller rolls back.
func (p *plan) apply(fault func() error) error {
	for _, s := range p.steps {
		if fault != nil {
			if err := fault(); err != nil {
				return err
			}
		}
		undo, err := s()
		if err != nil {
			return err
		}
		if undo != nil {
			p.undo = append(p.undo, undo)
		}
	}
	if fault != nil {
		return fault()
	}
	return nil
}

// rollback undoes the acquire steps done, last first.
func (p *plan) rollback() {
	for i := len(p.undo) - 1; i >= 0; i-- {
		p.undo[i]()
	}
	p.undo = nil
	p.fitLocals()
}

// release runs the release phase.
func (p *plan) release() {
	for _, stage := range [][]func(){p.leave, p.handover, p.drop} {
		for _, f := range stage {
			f()
		}
	}
	p.fitLocals()
}

// fitLocals sets every local TAP's MTU to its bridge's members'.
func (p *plan) fitLocals() {
	for _, b := range p.g.bridges {
		b.fitLocal()
	}
}

// logUndo logs an undo step that failed: the running state then differs
// from the configuration in what it names.
func (p *plan) logUndo(err error) {
	if err != nil {
		p.g.log.Error("rollback incomplete", "err", err)
	}
}
