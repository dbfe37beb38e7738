package daemon

import (
	"context"
	"fmt"
	"slices"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/trunk"
)

// The trunk side of the control protocol, one method per CLI command.

// checkTrunkPort says why iface cannot become a port of trunk name.
func (e *engine) checkTrunkPort(c *config.Config, name, iface string) error {
	if err := config.CheckName("interface", iface); err != nil {
		return fmt.Errorf("%s: add %s: %w", name, iface, err)
	}
	switch {
	case c.Trunk(iface) != nil:
		return fmt.Errorf("%s: add %s: is a swctl trunk; a trunk's ports are interfaces", name, iface)
	case c.Bridge(iface) != nil:
		return fmt.Errorf("%s: add %s: is a swctl bridge", name, iface)
	}
	if owner, tap := e.owner(c, iface); owner != "" {
		switch {
		case tap:
			return fmt.Errorf("%s: add %s: is the TAP of swctl bridge %s", name, iface, owner)
		case owner == "trunk "+name:
			return fmt.Errorf("%s: add %s: already a port", name, iface)
		case len(owner) > 6 && owner[:6] == "trunk ":
			return fmt.Errorf("%s: add %s: already a port of %s", name, iface, owner)
		default:
			return fmt.Errorf("%s: add %s: already a port of bridge %s", name, iface, owner)
		}
	}
	if e.sys.LinkState(iface) == platform.LinkAbsent {
		return fmt.Errorf("%s: add %s: no such interface", name, iface)
	}
	return nil
}

// TrunkCreate makes a trunk with its ports and gives it to the host as a
// TAP named after it.
func (e *engine) TrunkCreate(_ context.Context, r api.TrunkCreateRequest) error {
	var nt config.Trunk
	return e.change(func(c *config.Config) error {
		if err := config.CheckName("trunk", r.Name); err != nil {
			return err
		}
		switch {
		case c.Trunk(r.Name) != nil:
			return fmt.Errorf("%s: trunk exists", r.Name)
		case c.Bridge(r.Name) != nil:
			return fmt.Errorf("%s: a bridge has that name", r.Name)
		case e.sys.LinkState(r.Name) != platform.LinkAbsent:
			return fmt.Errorf("%s: create: an interface named %s exists", r.Name, r.Name)
		}
		if owner, _ := e.owner(c, r.Name); owner != "" {
			return fmt.Errorf("%s: is a port of %s", r.Name, owner)
		}
		nt = config.NewTrunk(r.Name)
		if r.Proto != "" {
			nt.Proto = r.Proto
		}
		if r.LACPMode != "" {
			nt.LACPMode = r.LACPMode
		}
		if r.LACPTimeout != "" {
			nt.LACPTimeout = r.LACPTimeout
		}
		if r.Hash != "" {
			h, err := config.CanonicalHash(r.Hash)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			nt.Hash = h
		}
		nt.Promisc = r.Promisc
		for i, iface := range r.Ports {
			if slices.Contains(r.Ports[:i], iface) {
				return fmt.Errorf("%s: add %s: given twice", r.Name, iface)
			}
			if err := e.checkTrunkPort(c, r.Name, iface); err != nil {
				return err
			}
			nt.Ports = append(nt.Ports, config.NewTrunkPort(iface))
		}
		nt.LLAddr = e.firstPortMAC(&nt)
		c.Trunks = append(c.Trunks, nt)
		return nil
	}, func(c *config.Config) (func(), error) {
		if err := e.startTrunk(c.Trunk(r.Name), c); err != nil {
			return nil, err
		}
		return func() { e.stopTrunk(e.trunks[r.Name]); delete(e.trunks, r.Name) }, nil
	})
}

// TrunkDestroy stops a trunk and gives its ports back as they were.
func (e *engine) TrunkDestroy(_ context.Context, r api.TrunkDestroyRequest) error {
	var old config.Trunk
	return e.change(func(c *config.Config) error {
		i := slices.IndexFunc(c.Trunks, func(t config.Trunk) bool { return t.Name == r.Name })
		if i < 0 {
			return fmt.Errorf("%s: no such trunk", r.Name)
		}
		if b := trunkInBridge(c, r.Name); b != "" {
			return fmt.Errorf("%s: destroy: a member of bridge %s (swctl bridge del %s %s first)", r.Name, b, b, r.Name)
		}
		old = c.Trunks[i]
		c.Trunks = slices.Delete(c.Trunks, i, i+1)
		return nil
	}, func(c *config.Config) (func(), error) {
		e.stopTrunk(e.trunks[r.Name])
		delete(e.trunks, r.Name)
		e.log.Info("trunk destroyed", "trunk", r.Name)
		return func() {
			if err := e.startTrunk(&old, e.cfg); err != nil {
				e.log.Error("cannot restart trunk after a failed destroy", "trunk", r.Name, "err", err)
			}
		}, nil
	})
}

// TrunkAdd adds ports, all or none.
func (e *engine) TrunkAdd(_ context.Context, r api.TrunkAddRequest) error {
	if len(r.Ifaces) == 0 {
		return fmt.Errorf("%s: add: no interface given", r.Name)
	}
	return e.change(func(c *config.Config) error {
		t := c.Trunk(r.Name)
		if t == nil {
			return fmt.Errorf("%s: no such trunk", r.Name)
		}
		for i, iface := range r.Ifaces {
			if slices.Contains(r.Ifaces[:i], iface) {
				return fmt.Errorf("%s: add %s: given twice", r.Name, iface)
			}
			if err := e.checkTrunkPort(c, r.Name, iface); err != nil {
				return err
			}
			p := config.NewTrunkPort(iface)
			if r.Priority != nil {
				p.Priority = *r.Priority
			}
			if r.LACPPortPriority != nil {
				p.LACPPortPriority = *r.LACPPortPriority
			}
			t.Ports = append(t.Ports, p)
		}
		return nil
	}, func(c *config.Config) (func(), error) {
		to := e.trunks[r.Name]
		t := c.Trunk(r.Name)
		var added []*trunkPortObj
		undo := func() {
			for _, tpo := range added {
				e.detachTrunkPort(to, tpo)
				delete(to.ports, tpo.name)
			}
		}
		for _, iface := range r.Ifaces {
			tpo := &trunkPortObj{name: iface}
			if err := e.attachTrunkPort(to, t, tpo, t.Port(iface)); err != nil {
				undo()
				return nil, fmt.Errorf("%s: %w", r.Name, err)
			}
			to.ports[iface] = tpo
			added = append(added, tpo)
		}
		return undo, nil
	})
}

// TrunkDel removes ports, all or none; each gets its own MAC back.
func (e *engine) TrunkDel(_ context.Context, r api.TrunkDelRequest) error {
	if len(r.Ifaces) == 0 {
		return fmt.Errorf("%s: del: no interface given", r.Name)
	}
	var olds []config.TrunkPort
	return e.change(func(c *config.Config) error {
		t := c.Trunk(r.Name)
		if t == nil {
			return fmt.Errorf("%s: no such trunk", r.Name)
		}
		for i, iface := range r.Ifaces {
			if slices.Contains(r.Ifaces[:i], iface) {
				return fmt.Errorf("%s: del %s: given twice", r.Name, iface)
			}
			p := t.Port(iface)
			if p == nil {
				return fmt.Errorf("%s: del %s: not a port", r.Name, iface)
			}
			olds = append(olds, *p)
		}
		t.Ports = slices.DeleteFunc(t.Ports, func(p config.TrunkPort) bool { return slices.Contains(r.Ifaces, p.Name) })
		return nil
	}, func(c *config.Config) (func(), error) {
		to := e.trunks[r.Name]
		for _, iface := range r.Ifaces {
			e.detachTrunkPort(to, to.ports[iface])
			delete(to.ports, iface)
		}
		t := e.cfg.Trunk(r.Name)
		return func() {
			for i := range olds {
				tpo := &trunkPortObj{name: olds[i].Name}
				if e.attachTrunkPort(to, t, tpo, &olds[i]) == nil {
					to.ports[tpo.name] = tpo
				}
			}
		}, nil
	})
}

// TrunkSet changes the protocol, the hash or the LACP settings.
func (e *engine) TrunkSet(_ context.Context, r api.TrunkSetRequest) error {
	if r.Proto == nil && r.LACPMode == nil && r.LACPTimeout == nil && r.Hash == nil && r.LACPSystemPriority == nil && r.LACPKey == nil {
		return fmt.Errorf("%s: set: %w", r.Name, errNothing)
	}
	var before config.Trunk
	return e.change(func(c *config.Config) error {
		t := c.Trunk(r.Name)
		if t == nil {
			return fmt.Errorf("%s: no such trunk", r.Name)
		}
		before = *t
		if r.Proto != nil {
			t.Proto = *r.Proto
		}
		if r.LACPMode != nil {
			t.LACPMode = *r.LACPMode
		}
		if r.LACPTimeout != nil {
			t.LACPTimeout = *r.LACPTimeout
		}
		if r.Hash != nil {
			h, err := config.CanonicalHash(*r.Hash)
			if err != nil {
				return fmt.Errorf("%s: set: %w", r.Name, err)
			}
			t.Hash = h
		}
		if r.LACPSystemPriority != nil {
			t.LACPSystemPriority = *r.LACPSystemPriority
		}
		if r.LACPKey != nil {
			t.LACPKey = *r.LACPKey
		}
		return nil
	}, func(c *config.Config) (func(), error) {
		to := e.trunks[r.Name]
		t := c.Trunk(r.Name)
		apply := func(t *config.Trunk, old *config.Trunk) error {
			fields, err := lb.ParseHashFields(t.Hash)
			if err != nil {
				return err
			}
			to.tr.SetHash(fields)
			protoChanged := t.Proto != old.Proto
			lacpChanged := t.Proto == string(trunk.ProtoLACP) && (t.LACPMode != old.LACPMode ||
				t.LACPTimeout != old.LACPTimeout || t.LACPSystemPriority != old.LACPSystemPriority || t.LACPKey != old.LACPKey)
			if protoChanged || lacpChanged {
				p, err := trunkProtocol(t)
				if err != nil {
					return err
				}
				if err := to.tr.SetProtocol(p); err != nil {
					return err
				}
				e.log.Info("trunk protocol set", "trunk", r.Name, "proto", t.Proto)
			}
			return nil
		}
		if err := apply(t, &before); err != nil {
			return nil, fmt.Errorf("%s: set: %w", r.Name, err)
		}
		return func() { _ = apply(&before, t) }, nil
	})
}

// TrunkShow describes one trunk, or all.
func (e *engine) TrunkShow(_ context.Context, name string) ([]api.TrunkInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if name != "" && e.cfg.Trunk(name) == nil {
		return nil, fmt.Errorf("%s: no such trunk", name)
	}
	out := []api.TrunkInfo{}
	for _, c := range e.cfg.Trunks {
		if name != "" && c.Name != name {
			continue
		}
		to := e.trunks[c.Name]
		st := to.tr.Stats()
		info := api.TrunkInfo{
			Name: c.Name, Proto: c.Proto, Promisc: c.Promisc, Hash: c.Hash,
			LACPMode: c.LACPMode, LACPTimeout: c.LACPTimeout, LACPSystemPriority: c.LACPSystemPriority,
			LACPKey: c.LACPKey, Active: to.tr.Active(),
			RxPackets: st.RxPackets, RxBytes: st.RxBytes, TxPackets: st.TxPackets, TxBytes: st.TxBytes,
			RxDropped: st.RxRefused, TxDropped: st.TxNoPort + st.TxInvalid + st.TxMemberDropped,
		}
		if !c.LLAddr.IsZero() {
			info.LLAddr = c.LLAddr.String()
		}
		running := map[string]trunk.PortInfo{}
		for _, p := range to.tr.Ports() {
			running[p.Name] = p
		}
		for _, p := range c.Ports {
			pi := api.TrunkPortInfo{Name: p.Name, Link: platform.LinkAbsent.String(), Priority: p.Priority}
			if rp, ok := running[p.Name]; ok {
				pi.Link = rp.Link.String()
				pi.Flags = rp.Flags
				if ls, ok := rp.Detail.(lacp.PortState); ok {
					pi.LACP = lacpInfo(ls)
				}
			}
			info.Ports = append(info.Ports, pi)
		}
		out = append(out, info)
	}
	return out, nil
}

func lacpInfo(s lacp.PortState) *api.LACPInfo {
	peer := func(p lacp.PortInfo) api.LACPPeerInfo {
		sys := ""
		if p.System != ([6]byte{}) {
			sys = fmt.Sprintf("%d,%s", p.SystemPriority, frame.MAC(p.System))
		}
		return api.LACPPeerInfo{System: sys, Key: int(p.Key), Port: int(p.Port), State: p.State.Words()}
	}
	b := s.Counters.Bad
	return &api.LACPInfo{
		Actor: peer(s.Actor), Partner: peer(s.Partner), Selected: s.Selected, Reason: s.Reason,
		RxLACPDUs: s.Counters.RxLACPDU, TxLACPDUs: s.Counters.TxLACPDU,
		RxBad: b.NotSlow + b.Subtype + b.Truncated + b.Version + b.TLVType + b.TLVLength + b.PortDown,
	}
}
