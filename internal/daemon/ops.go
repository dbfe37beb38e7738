package daemon

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/trunk"
)

// The daemon's side of the control protocol: Change for the state
// operations, and the actions and queries, which serve the running graph
// directly.

// Change runs a state operation: req's edit of the configuration.
func (e *engine) Change(ctx context.Context, req api.Edit) error {
	return e.change(ctx, func(c *config.Config) error { return req.Edit(c, e.host) })
}

// BridgeDelAddr removes an address: its static entries from the
// configuration (a state change), then what the table still has of it,
// learned, from the running bridge (an action).
func (e *engine) BridgeDelAddr(ctx context.Context, r api.DelAddrRequest) error {
	mac, err := frame.ParseMAC(r.MAC)
	if err != nil {
		return fmt.Errorf("%s: deladdr: %w", r.Name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	before := e.cfg
	if err := e.changeLocked(ctx, func(c *config.Config) error { return r.Edit(c, e.host) }); err != nil {
		return err
	}
	wasStatic := e.cfg != before
	br := e.graph.bridges[r.Name].br
	if r.VLAN != nil {
		err = br.DeleteEntry(mac, *r.VLAN)
	} else {
		_, err = br.DeleteAddr(mac)
	}
	if err != nil && !wasStatic {
		return err // it names the bridge, the address and the cause
	}
	return nil
}

// BridgeFlush forgets learned addresses, an action; with All the static
// entries go from the configuration first, a state change.
func (e *engine) BridgeFlush(ctx context.Context, r api.FlushRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.changeLocked(ctx, func(c *config.Config) error { return r.Edit(c, e.host) }); err != nil {
		return err
	}
	b := e.graph.bridges[r.Name]
	switch {
	case r.Port == "":
		b.br.Flush(false)
	case b.ports[r.Port].link() != platform.LinkAbsent: // an absent member learned nothing
		if _, err := b.br.FlushPort(r.Port, false); err != nil {
			return err
		}
	}
	return nil
}

// BridgeEnable enables a member its BPDU guard disabled, an action: the
// configuration does not change.
func (e *engine) BridgeEnable(_ context.Context, r api.EnableRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.cfg.Bridge(r.Name)
	if c == nil {
		return fmt.Errorf("%s: no such bridge", r.Name)
	}
	if c.Port(r.Iface) == nil {
		return fmt.Errorf("%s: enable %s: not a member", r.Name, r.Iface)
	}
	b := e.graph.bridges[r.Name]
	if b.ports[r.Iface].link() == platform.LinkAbsent {
		return nil // an absent member is enabled when it appears
	}
	return b.br.EnablePort(r.Iface)
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
		b := e.graph.bridges[c.Name]
		st := b.br.Stats()
		info := api.BridgeInfo{
			Name: c.Name, Timeout: c.Timeout, MaxAddr: c.MaxAddr,
			Spans:     slices.Clone(c.Spans),
			Addresses: b.br.AddrCount(),
			Exceeded:  st.Exceeded, Forwarded: st.Forwarded, Flooded: st.Flooded,
			Dropped: st.DroppedRunt + st.DroppedLinkLocal + st.DroppedBadSource + st.DroppedBlockNonIP +
				st.DroppedSamePort + st.DroppedBlockNonIPOut + st.DroppedOversize + st.DroppedLinkDown + st.DroppedOffload +
				st.DroppedDiscarding + st.DroppedDiscardingOut + st.DroppedStorm,
			FwdMask: c.FwdMask,
		}
		var stpPorts map[string]*api.PortSTPInfo
		info.STP, stpPorts = b.stpShow(&c)
		if c.Local {
			info.Local, info.LocalMAC = c.Name, c.LocalMAC.String()
			if b.local != nil {
				// The TAP's own name: the OS may not have let swctl
				// give it the bridge's (OpenBSD).
				info.Local = b.local.Name()
			}
		}
		disabled := map[string]bool{}
		for _, pi := range b.br.Ports() {
			disabled[pi.Name] = pi.Disabled
		}
		for _, p := range c.Ports {
			info.Ports = append(info.Ports, api.BridgePortInfo{
				Name: p.Name, Flags: flagWords(p, disabled[p.Name]), Link: b.ports[p.Name].link().String(), STP: stpPorts[p.Name],
			})
		}
		out = append(out, info)
	}
	return out, nil
}

// flagWords are the flags bridge show gives member p; disabled is set
// when its BPDU guard has disabled it.
func flagWords(p config.Port, disabled bool) []string {
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
	if p.NoPromisc {
		f = append(f, api.FlagNoPromisc)
	}
	if p.StormLimit != 0 {
		f = append(f, api.FlagStormLimit+strconv.Itoa(p.StormLimit))
	}
	switch {
	case disabled:
		f = append(f, api.FlagBPDUGuardDisabled)
	case p.BPDUGuard:
		f = append(f, api.FlagBPDUGuard)
	}
	return f
}

// BridgeAddr lists a page of a bridge's address table: the work and the
// memory follow the page, not the table.
func (e *engine) BridgeAddr(_ context.Context, r api.BridgeAddrRequest) ([]api.AddrInfo, error) {
	var after *bridge.Addr
	if r.After != nil {
		m, err := r.After.Parse()
		if err != nil {
			return nil, fmt.Errorf("%s: addr: %w", r.Name, err)
		}
		after = &bridge.Addr{MAC: m, VLAN: r.After.VLAN}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.graph.bridges[r.Name]
	if b == nil {
		return nil, errNoBridge(r.Name)
	}
	page := b.br.AddrPage(after, r.PageSize())
	out := make([]api.AddrInfo, 0, len(page))
	for _, a := range page {
		ai := api.AddrInfo{MAC: a.MAC.String(), VLAN: a.VLAN, Port: a.Port, Static: a.Static}
		if !a.Static {
			age := int64(a.Age / time.Second)
			ai.Age = &age
		}
		out = append(out, ai)
	}
	return out, nil
}

// PortShow lists ports with their link, promiscuity and counters.
func (e *engine) PortShow(_ context.Context, name string) ([]api.PortInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []api.PortInfo{}
	add := func(bridgeName, role, iface string, p platform.Port, rc *reopenCounts) {
		if name != "" && name != iface {
			return
		}
		pi := api.PortInfo{Name: iface, Bridge: bridgeName, Role: role, Link: platform.LinkAbsent.String()}
		if p != nil {
			cn := rc.total(p.Counters())
			pi.Link = p.Link().String()
			pi.Promisc = e.graph.promisc.Held(iface)
			pi.RxPackets, pi.RxBytes, pi.TxPackets, pi.TxBytes = cn.RxPackets, cn.RxBytes, cn.TxPackets, cn.TxBytes
			pi.RxDropped, pi.TxDropped, pi.RingDropped, pi.Errors = cn.RxDropped, cn.TxDropped, cn.RingDropped, cn.Errors
			pi.RxBadOffload = cn.RxBadOffload
		}
		out = append(out, pi)
	}
	for _, c := range e.cfg.Bridges {
		b := e.graph.bridges[c.Name]
		if b.local != nil {
			add(c.Name, api.RoleLocal, b.local.Name(), b.local, nil)
		}
		for _, p := range c.Ports {
			po := b.ports[p.Name]
			add(c.Name, api.RoleMember, p.Name, po.port, &po.reopenCounts)
		}
		for _, s := range c.Spans {
			po := b.ports[s]
			add(c.Name, api.RoleSpan, s, po.port, &po.reopenCounts)
		}
	}
	for _, c := range e.cfg.Trunks {
		to := e.graph.trunks[c.Name]
		for _, p := range c.Ports {
			tpo := to.ports[p.Name]
			add(c.Name, api.RoleTrunk, p.Name, tpo.port, &tpo.reopenCounts)
		}
	}
	if name != "" && len(out) == 0 {
		return nil, fmt.Errorf("%s: not a port of any bridge or trunk", name)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bridge < out[j].Bridge })
	return out, nil
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
		to := e.graph.trunks[c.Name]
		st := to.tr.Stats()
		info := api.TrunkInfo{
			Name: c.Name, Proto: c.Proto, Promisc: c.Promisc, Hash: c.Hash,
			LACPMode: c.LACPMode, LACPTimeout: c.LACPTimeout, LACPSystemPriority: c.LACPSystemPriority,
			LACPKey: c.LACPKey, Active: to.tr.Active(),
			RxPackets: st.RxPackets, RxBytes: st.RxBytes, TxPackets: st.TxPackets, TxBytes: st.TxBytes,
			RxDropped: st.RxRefused, TxDropped: to.tr.Counters().TxDropped,
		}
		if !c.LLAddr.IsZero() {
			info.LLAddr = c.LLAddr.String()
		}
		showPolicy(&info, &c, to)
		showQueue(&info, &c)
		to.tapMu.Lock()
		if to.tap != nil {
			info.Tap = to.tap.Name()
		}
		to.tapMu.Unlock()
		running := map[string]trunk.PortInfo{}
		for _, p := range to.tr.Ports() {
			running[p.Name] = p
		}
		for _, p := range c.Ports {
			pi := api.TrunkPortInfo{Name: p.Name, Link: platform.LinkAbsent.String(), Priority: p.Priority}
			if rp, ok := running[p.Name]; ok {
				pi.Link = rp.Link.String()
				pi.Flags = rp.Flags
				rp.Counters = to.ports[p.Name].total(rp.Counters)
				showPortCounters(&pi, rp)
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
