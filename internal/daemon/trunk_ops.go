package daemon

import (
	"context"
	"fmt"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/trunk"
)

// The trunk side of the control protocol, one method per CLI command.

// TrunkCreate makes a trunk with its ports and gives it to the host as a
// TAP named after it.
func (e *engine) TrunkCreate(_ context.Context, r api.TrunkCreateRequest) error {
	given := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return e.change(func(c *config.Config) error {
		s := config.TrunkSettings{Proto: given(r.Proto), LACPMode: given(r.LACPMode), LACPTimeout: given(r.LACPTimeout), Hash: given(r.Hash)}
		return c.CreateTrunk(r.Name, s, r.Promisc, r.Ports, e.host())
	}, func(c *config.Config) (func(), error) {
		if err := e.startTrunk(c.Trunk(r.Name), c); err != nil {
			return nil, err
		}
		return func() { e.stopTrunk(e.trunks[r.Name]); delete(e.trunks, r.Name) }, nil
	})
}

// TrunkDestroy stops a trunk and gives its ports back as they were.
func (e *engine) TrunkDestroy(_ context.Context, r api.TrunkDestroyRequest) error {
	var old *config.Trunk
	return e.change(func(c *config.Config) error {
		old = e.cfg.Trunk(r.Name)
		return c.DestroyTrunk(r.Name)
	}, func(c *config.Config) (func(), error) {
		e.stopTrunk(e.trunks[r.Name])
		delete(e.trunks, r.Name)
		e.log.Info("trunk destroyed", "trunk", r.Name)
		return func() {
			if err := e.startTrunk(old, e.cfg); err != nil {
				e.log.Error("cannot restart trunk after a failed destroy", "trunk", r.Name, "err", err)
			}
		}, nil
	})
}

// TrunkAdd adds ports, all or none.
func (e *engine) TrunkAdd(_ context.Context, r api.TrunkAddRequest) error {
	return e.change(func(c *config.Config) error {
		return c.AddTrunkPorts(r.Name, r.Ifaces, r.Priority, r.LACPPortPriority, e.host())
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
	var olds []config.TrunkPort
	return e.change(func(c *config.Config) error {
		if err := c.DelTrunkPorts(r.Name, r.Ifaces); err != nil {
			return err
		}
		for _, iface := range r.Ifaces {
			olds = append(olds, *e.cfg.Trunk(r.Name).Port(iface))
		}
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
	var before config.Trunk
	return e.change(func(c *config.Config) error {
		s := config.TrunkSettings{Proto: r.Proto, LACPMode: r.LACPMode, LACPTimeout: r.LACPTimeout, Hash: r.Hash, LACPSystemPriority: r.LACPSystemPriority, LACPKey: r.LACPKey}
		if err := c.SetTrunk(r.Name, s); err != nil {
			return err
		}
		before = *e.cfg.Trunk(r.Name)
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
