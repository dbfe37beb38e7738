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
	return e.change(func(c *config.Config) error {
		return c.CreateBridge(r.Name, r.Local, e.host())
	}, func(c *config.Config) (func(), error) {
		if err := e.startBridge(c.Bridge(r.Name)); err != nil {
			return nil, err
		}
		return func() { e.stopBridge(e.bridges[r.Name]); delete(e.bridges, r.Name) }, nil
	})
}

// BridgeDestroy stops a bridge and gives its members back.
func (e *engine) BridgeDestroy(_ context.Context, r api.BridgeDestroyRequest) error {
	var old *config.Bridge
	return e.change(func(c *config.Config) error {
		old = e.cfg.Bridge(r.Name)
		return c.DestroyBridge(r.Name)
	}, func(c *config.Config) (func(), error) {
		b := e.bridges[r.Name]
		e.stopBridge(b)
		delete(e.bridges, r.Name)
		e.log.Info("bridge destroyed", "bridge", r.Name)
		return func() {
			if err := e.startBridge(old); err != nil {
				e.log.Error("cannot restart bridge after a failed destroy", "bridge", r.Name, "err", err)
			}
		}, nil
	})
}

// BridgeAdd adds members, all or none.
func (e *engine) BridgeAdd(_ context.Context, r api.BridgeAddRequest) error {
	return e.change(func(c *config.Config) error {
		return c.AddPorts(r.Name, r.Ifaces, e.host())
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
	var olds []config.Port
	return e.change(func(c *config.Config) error {
		if err := c.DelPorts(r.Name, r.Ifaces); err != nil {
			return err
		}
		for _, iface := range r.Ifaces {
			olds = append(olds, *e.cfg.Bridge(r.Name).Port(iface))
		}
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
		return c.AddStatic(r.Name, s)
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
		return c.DelStatics(r.Name, mac, r.VLAN)
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
		return c.Flush(r.Name, r.All)
	}, func(c *config.Config) (func(), error) {
		e.bridges[r.Name].br.Flush(r.All)
		return nil, nil
	})
}

// BridgeSet changes the ageing time or the table size.
func (e *engine) BridgeSet(_ context.Context, r api.BridgeSetRequest) error {
	return e.change(func(c *config.Config) error {
		return c.SetBridge(r.Name, r.Timeout, r.MaxAddr)
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
	var old config.Port
	return e.change(func(c *config.Config) error {
		if err := c.SetPort(r.Name, r.Iface, config.PortChange{Learning: r.Learning, Discover: r.Discover, BlockNonIP: r.BlockNonIP, Stack: r.Stack, Promisc: r.Promisc}); err != nil {
			return err
		}
		old = *e.cfg.Bridge(r.Name).Port(r.Iface)
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
		return c.AddSpan(r.Name, r.Iface, e.host())
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
		return c.DelSpan(r.Name, r.Iface)
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
