package daemon

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/promisc"
)

// The methods below are the daemon's side of the control protocol, one per
// CLI command. Each checks the whole request before it changes anything.

// BridgeCreate makes a bridge, with a host TAP when asked.
func (e *engine) BridgeCreate(_ context.Context, r api.BridgeCreateRequest) error {
	var nb config.Bridge
	return e.change(func(c *config.Config) error {
		if err := config.CheckName("bridge", r.Name); err != nil {
			return err
		}
		if c.Bridge(r.Name) != nil {
			return fmt.Errorf("%s: bridge exists", r.Name)
		}
		if owner, _ := e.owner(c, r.Name); owner != "" {
			return fmt.Errorf("%s: is a port of bridge %s", r.Name, owner)
		}
		if r.Local && e.sys.LinkState(r.Name) != platform.LinkAbsent {
			return fmt.Errorf("%s: create --local: an interface named %s exists", r.Name, r.Name)
		}
		nb = config.NewBridge(r.Name)
		if r.Local {
			nb.Local, nb.LocalMAC = true, randomMAC()
		}
		c.Bridges = append(c.Bridges, nb)
		return nil
	}, func(c *config.Config) (func(), error) {
		if err := e.startBridge(&nb); err != nil {
			return nil, err
		}
		return func() { e.stopBridge(e.bridges[r.Name]); delete(e.bridges, r.Name) }, nil
	})
}

// BridgeDestroy stops a bridge and gives its members back.
func (e *engine) BridgeDestroy(_ context.Context, r api.BridgeDestroyRequest) error {
	var old config.Bridge
	return e.change(func(c *config.Config) error {
		i := slices.IndexFunc(c.Bridges, func(b config.Bridge) bool { return b.Name == r.Name })
		if i < 0 {
			return errNoBridge(r.Name)
		}
		old = c.Bridges[i]
		c.Bridges = slices.Delete(c.Bridges, i, i+1)
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		e.stopBridge(b)
		delete(e.bridges, r.Name)
		e.log.Info("bridge destroyed", "bridge", r.Name)
		return func() {
			if err := e.startBridge(&old); err != nil {
				e.log.Error("cannot restart bridge after a failed destroy", "bridge", r.Name, "err", err)
			}
		}, nil
	})
}

// BridgeAdd adds members, all or none.
func (e *engine) BridgeAdd(_ context.Context, r api.BridgeAddRequest) error {
	if len(r.Ifaces) == 0 {
		return fmt.Errorf("%s: add: no interface given", r.Name)
	}
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		for i, iface := range r.Ifaces {
			if slices.Contains(r.Ifaces[:i], iface) {
				return fmt.Errorf("%s: add %s: given twice", r.Name, iface)
			}
			if err := e.checkNewPort(c, r.Name, "add", iface); err != nil {
				return err
			}
			b.Ports = append(b.Ports, config.NewPort(iface))
		}
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		var added []*portObj
		undo := func() {
			for _, po := range added {
				e.detach(b, po)
				delete(b.ports, po.name)
			}
			e.fitLocal(b)
		}
		cb := c.Bridge(r.Name)
		for _, iface := range r.Ifaces {
			po := &portObj{name: iface}
			if err := e.attach(b, po, cb.Port(iface)); err != nil {
				undo()
				return nil, fmt.Errorf("%s: %w", r.Name, err)
			}
			b.ports[iface] = po
			added = append(added, po)
		}
		e.fitLocal(b)
		return undo, nil
	})
}

// BridgeDel removes members, all or none.
func (e *engine) BridgeDel(_ context.Context, r api.BridgeDelRequest) error {
	if len(r.Ifaces) == 0 {
		return fmt.Errorf("%s: del: no interface given", r.Name)
	}
	var olds []config.Port
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		for i, iface := range r.Ifaces {
			if slices.Contains(r.Ifaces[:i], iface) {
				return fmt.Errorf("%s: del %s: given twice", r.Name, iface)
			}
			p := b.Port(iface)
			if p == nil {
				return fmt.Errorf("%s: del %s: not a member", r.Name, iface)
			}
			olds = append(olds, *p)
		}
		b.Ports = slices.DeleteFunc(b.Ports, func(p config.Port) bool { return slices.Contains(r.Ifaces, p.Name) })
		b.Statics = slices.DeleteFunc(b.Statics, func(s config.Static) bool { return slices.Contains(r.Ifaces, s.Port) })
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		for _, iface := range r.Ifaces {
			e.detach(b, b.ports[iface])
			delete(b.ports, iface)
		}
		e.fitLocal(b)
		return func() {
			for i := range olds {
				po := &portObj{name: olds[i].Name}
				if err := e.attach(b, po, &olds[i]); err == nil {
					b.ports[po.name] = po
				}
			}
		}, nil
	})
}

// BridgeShow describes one bridge, or all.
func (e *engine) BridgeShow(_ context.Context, name string) ([]api.BridgeInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if name != "" && e.cfg.Bridge(name) == nil {
		return nil, errNoBridge(name)
	}
	var out []api.BridgeInfo
	for _, c := range e.cfg.Bridges {
		if name != "" && c.Name != name {
			continue
		}
		b := e.bridges[c.Name]
		st := b.br.Stats()
		info := api.BridgeInfo{
			Name: c.Name, Timeout: c.Timeout, MaxAddr: c.MaxAddr,
			Spans:     slices.Clone(c.Spans),
			Addresses: len(b.br.Addrs()),
			Exceeded:  st.Exceeded, Forwarded: st.Forwarded, Flooded: st.Flooded,
			Dropped: st.DroppedRunt + st.DroppedLinkLocal + st.DroppedBadSource + st.DroppedBlockNonIP +
				st.DroppedSamePort + st.DroppedBlockNonIPOut + st.DroppedOversize + st.DroppedLinkDown + st.DroppedOffload,
		}
		if c.Local {
			info.Local, info.LocalMAC = c.Name, c.LocalMAC.String()
		}
		for _, p := range c.Ports {
			info.Ports = append(info.Ports, api.BridgePortInfo{
				Name: p.Name, Flags: flagWords(p), Link: e.linkOf(b.ports[p.Name]).String(),
			})
		}
		out = append(out, info)
	}
	return out, nil
}

func flagWords(p config.Port) []string {
	var f []string
	if p.Learning {
		f = append(f, api.FlagLearning)
	}
	if p.Discover {
		f = append(f, api.FlagDiscover)
	}
	if p.BlockNonIP {
		f = append(f, api.FlagBlockNonIP)
	}
	if p.Stack {
		f = append(f, api.FlagStack)
	}
	return f
}

func (e *engine) linkOf(po *portObj) platform.LinkState {
	if po == nil || po.port == nil {
		return platform.LinkAbsent
	}
	return po.port.Link()
}

// BridgeAddr lists a bridge's address table.
func (e *engine) BridgeAddr(_ context.Context, name string) ([]api.AddrInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.bridges[name]
	if b == nil {
		return nil, errNoBridge(name)
	}
	out := []api.AddrInfo{}
	for _, a := range b.br.Addrs() {
		ai := api.AddrInfo{MAC: a.MAC.String(), VLAN: a.VLAN, Port: a.Port, Static: a.Static}
		if !a.Static {
			age := int64(a.Age / time.Second)
			ai.Age = &age
		}
		out = append(out, ai)
	}
	return out, nil
}

// BridgeStatic adds a static entry.
func (e *engine) BridgeStatic(_ context.Context, r api.StaticRequest) error {
	mac, err := frame.ParseMAC(r.MAC)
	if err != nil {
		return fmt.Errorf("%s: static: %w", r.Name, err)
	}
	s := config.Static{MAC: mac, VLAN: r.VLAN, Port: r.Iface}
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		if b.Port(r.Iface) == nil {
			return fmt.Errorf("%s: static %s: %s is not a member", r.Name, r.MAC, r.Iface)
		}
		b.Statics = slices.DeleteFunc(b.Statics, func(o config.Static) bool { return o.MAC == mac && o.VLAN == r.VLAN })
		b.Statics = append(b.Statics, s)
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		if po := b.ports[r.Iface]; po == nil || po.port == nil {
			return nil, nil // applied when the member appears
		}
		if err := b.br.AddStatic(mac, r.VLAN, r.Iface); err != nil {
			return nil, fmt.Errorf("%s: static %s: %w", r.Name, r.MAC, err)
		}
		return func() { b.br.DeleteAddr(mac) }, nil
	})
}

// BridgeDelAddr removes an address, static or learned.
func (e *engine) BridgeDelAddr(_ context.Context, r api.DelAddrRequest) error {
	mac, err := frame.ParseMAC(r.MAC)
	if err != nil {
		return fmt.Errorf("%s: deladdr: %w", r.Name, err)
	}
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		b.Statics = slices.DeleteFunc(b.Statics, func(o config.Static) bool {
			return o.MAC == mac && (r.VLAN == nil || o.VLAN == *r.VLAN)
		})
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		wasStatic := len(c.Bridge(r.Name).Statics) != len(e.cfg.Bridge(r.Name).Statics)
		n, err := b.br.DeleteAddr(mac)
		if n == 0 && !wasStatic {
			if err == nil {
				err = fmt.Errorf("not in the address table")
			}
			return nil, fmt.Errorf("%s: deladdr %s: %w", r.Name, r.MAC, err)
		}
		return nil, nil
	})
}

// BridgeFlush forgets learned addresses, and with All static ones too.
func (e *engine) BridgeFlush(_ context.Context, r api.FlushRequest) error {
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		if r.All {
			b.Statics = nil
		}
		return nil
	}, func(c *config.Config) (func(), error) {
		e.bridges[r.Name].br.Flush(r.All)
		return nil, nil
	})
}

// BridgeSet changes the ageing time or the table size.
func (e *engine) BridgeSet(_ context.Context, r api.BridgeSetRequest) error {
	if r.Timeout == nil && r.MaxAddr == nil {
		return fmt.Errorf("%s: set: %w (give --timeout or --maxaddr)", r.Name, errNothing)
	}
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		if r.Timeout != nil {
			if err := config.CheckTimeout(*r.Timeout); err != nil {
				return fmt.Errorf("%s: set: %w", r.Name, err)
			}
			b.Timeout = *r.Timeout
		}
		if r.MaxAddr != nil {
			if err := config.CheckMaxAddr(*r.MaxAddr); err != nil {
				return fmt.Errorf("%s: set: %w", r.Name, err)
			}
			b.MaxAddr = *r.MaxAddr
		}
		return nil
	}, func(c *config.Config) (func(), error) {
		br := e.bridges[r.Name].br
		oldT, oldM := br.Timeout(), br.MaxAddr()
		nb := c.Bridge(r.Name)
		if err := br.SetMaxAddr(nb.MaxAddr); err != nil {
			return nil, fmt.Errorf("%s: set maxaddr: %w", r.Name, err)
		}
		br.SetTimeout(time.Duration(nb.Timeout) * time.Second)
		return func() { br.SetTimeout(oldT); _ = br.SetMaxAddr(oldM) }, nil
	})
}

// BridgePort changes a member's flags.
func (e *engine) BridgePort(_ context.Context, r api.BridgePortRequest) error {
	if r.Learning == nil && r.Discover == nil && r.BlockNonIP == nil && r.Stack == nil && r.Promisc == nil {
		return fmt.Errorf("%s: port %s: %w", r.Name, r.Iface, errNothing)
	}
	var old config.Port
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		p := b.Port(r.Iface)
		if p == nil {
			return fmt.Errorf("%s: port %s: not a member", r.Name, r.Iface)
		}
		old = *p
		set := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		set(&p.Learning, r.Learning)
		set(&p.Discover, r.Discover)
		set(&p.BlockNonIP, r.BlockNonIP)
		set(&p.Stack, r.Stack)
		if r.Promisc != nil {
			p.NoPromisc = !*r.Promisc
		}
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		po := b.ports[r.Iface]
		np := c.Bridge(r.Name).Port(r.Iface)
		if po.port == nil {
			return nil, nil // absent: applied when it appears
		}
		if po.trunk != nil {
			// A trunk has no stack guard or promiscuity of its own.
			if err := b.br.SetPortFlags(r.Iface, portFlags(np)); err != nil {
				return nil, fmt.Errorf("%s: port %s: %w", r.Name, r.Iface, err)
			}
			return func() { _ = b.br.SetPortFlags(r.Iface, portFlags(&old)) }, nil
		}
		if err := e.setStack(b, po, np.Stack); err != nil {
			return nil, err
		}
		if err := e.setPromisc(b, po, !np.NoPromisc); err != nil {
			_ = e.setStack(b, po, old.Stack)
			return nil, err
		}
		if err := b.br.SetPortFlags(r.Iface, portFlags(np)); err != nil {
			_ = e.setStack(b, po, old.Stack)
			_ = e.setPromisc(b, po, !old.NoPromisc)
			return nil, fmt.Errorf("%s: port %s: %w", r.Name, r.Iface, err)
		}
		return func() {
			_ = e.setStack(b, po, old.Stack)
			_ = e.setPromisc(b, po, !old.NoPromisc)
			_ = b.br.SetPortFlags(r.Iface, portFlags(&old))
		}, nil
	})
}

// setPromisc takes or releases the member's promiscuous membership.
func (e *engine) setPromisc(b *bridgeObj, po *portObj, on bool) error {
	pp, ok := po.port.(promisc.Port)
	if !ok {
		return nil
	}
	held := e.promisc.Users(pp) > 0
	switch {
	case on && !held:
		if err := e.promisc.Acquire(pp); err != nil {
			return fmt.Errorf("%s: port %s: promisc on: %w", b.name, po.name, err)
		}
	case !on && held:
		if err := e.promisc.Release(pp); err != nil {
			return fmt.Errorf("%s: port %s: promisc off: %w", b.name, po.name, err)
		}
	}
	return nil
}

// setStack attaches or removes the member's stack guard.
func (e *engine) setStack(b *bridgeObj, po *portObj, stack bool) error {
	switch {
	case stack && po.guard != nil:
		err := po.guard.Close()
		po.guard = nil
		if err != nil {
			return fmt.Errorf("%s: port %s: stack on: %w", b.name, po.name, err)
		}
	case !stack && po.guard == nil:
		g, err := e.sys.GuardStack(po.name)
		if err != nil {
			return fmt.Errorf("%s: port %s: stack off: %w", b.name, po.name, err)
		}
		po.guard = g
	}
	return nil
}

// BridgeAddSpan adds a span port.
func (e *engine) BridgeAddSpan(_ context.Context, r api.SpanRequest) error {
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		if err := e.checkNewPort(c, r.Name, "addspan", r.Iface); err != nil {
			return err
		}
		b.Spans = append(b.Spans, r.Iface)
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		po := &portObj{name: r.Iface, span: true}
		if err := e.attach(b, po, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		b.ports[r.Iface] = po
		return func() { e.detach(b, po); delete(b.ports, r.Iface) }, nil
	})
}

// BridgeDelSpan removes a span port.
func (e *engine) BridgeDelSpan(_ context.Context, r api.SpanRequest) error {
	return e.change(func(c *config.Config) error {
		b := c.Bridge(r.Name)
		if b == nil {
			return errNoBridge(r.Name)
		}
		if !slices.Contains(b.Spans, r.Iface) {
			return fmt.Errorf("%s: delspan %s: not a span port", r.Name, r.Iface)
		}
		b.Spans = slices.DeleteFunc(b.Spans, func(s string) bool { return s == r.Iface })
		return nil
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		e.detach(b, b.ports[r.Iface])
		delete(b.ports, r.Iface)
		return func() {
			po := &portObj{name: r.Iface, span: true}
			if e.attach(b, po, nil) == nil {
				b.ports[r.Iface] = po
			}
		}, nil
	})
}

// PortShow lists ports with their link, promiscuity and counters.
func (e *engine) PortShow(_ context.Context, name string) ([]api.PortInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []api.PortInfo{}
	add := func(bridgeName, role, iface string, p platform.Port) {
		if name != "" && name != iface {
			return
		}
		pi := api.PortInfo{Name: iface, Bridge: bridgeName, Role: role, Link: platform.LinkAbsent.String()}
		if p != nil {
			cn := p.Counters()
			pi.Link = p.Link().String()
			pi.Promisc = e.promisc.Held(iface)
			pi.RxPackets, pi.RxBytes, pi.TxPackets, pi.TxBytes = cn.RxPackets, cn.RxBytes, cn.TxPackets, cn.TxBytes
			pi.RxDropped, pi.TxDropped, pi.RingDropped, pi.Errors = cn.RxDropped, cn.TxDropped, cn.RingDropped, cn.Errors
			pi.RxBadOffload = cn.RxBadOffload
		}
		out = append(out, pi)
	}
	for _, c := range e.cfg.Bridges {
		b := e.bridges[c.Name]
		if b.local != nil {
			add(c.Name, api.RoleLocal, c.Name, b.local)
		}
		for _, p := range c.Ports {
			add(c.Name, api.RoleMember, p.Name, b.ports[p.Name].port)
		}
		for _, s := range c.Spans {
			add(c.Name, api.RoleSpan, s, b.ports[s].port)
		}
	}
	for _, c := range e.cfg.Trunks {
		to := e.trunks[c.Name]
		for _, p := range c.Ports {
			add(c.Name, api.RoleTrunk, p.Name, to.ports[p.Name].port)
		}
	}
	if name != "" && len(out) == 0 {
		return nil, fmt.Errorf("%s: not a port of any bridge or trunk", name)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bridge < out[j].Bridge })
	return out, nil
}
