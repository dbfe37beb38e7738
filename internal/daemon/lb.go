package daemon

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/service"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

// The load balancers (swctl lb): each lb is an lb/service.Service on a
// port, an AF_PACKET port on its interface or one end of an in-memory
// cable whose other end is a member of its bridge. The plan starts an lb
// after the bridges (one may sit on a bridge the same plan creates), gives
// a running one its new backends in place (its connection table, MACs and
// health stay), and stops one the configuration drops.

// lbObj is one running lb.
type lbObj struct {
	// name is the lb's name; iface its interface, "" on a bridge.
	name, iface string
	// svc is the running service; nil when the lb could not start
	// (state says why).
	svc *service.Service
	// state is "running" or why the lb is not.
	state string
	// guard keeps the host's stack off frames to the VIPs (iface lbs);
	// nil otherwise.
	guard io.Closer
	// bridge is the bridge an lb on a bridge is a member of, and member
	// its port's name there; nil and "" for an iface lb.
	bridge *bridgeObj
	member string
	// onLink are the prefixes backends must be in; nil when unknown (a
	// bridge lb given only --source).
	onLink []netip.Prefix
	// own are the host's addresses on the lb's interface, which no
	// backend may have.
	own []netip.Addr
}

// ifacePrefixes lists the addresses, with their prefixes, of the
// interface called name; tests replace it.
var ifacePrefixes = func(name string) ([]netip.Prefix, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			ip, ok := netip.AddrFromSlice(n.IP)
			ones, _ := n.Mask.Size()
			if ok {
				out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
			}
		}
	}
	return out, nil
}

// lbMemberMAC is the MAC of an lb on a bridge: locally administered,
// derived from its name, so that it is the same after a restart.
func lbMemberMAC(name string) frame.MAC {
	h := sha256.Sum256([]byte("swctl lb " + name))
	return frame.MAC{0x02, h[0], h[1], h[2], h[3], h[4]}
}

// lbMemberName is the bridge port name of an lb on a bridge.
func lbMemberName(name string) string {
	n := "lb." + name
	if len(n) > 15 {
		n = n[:15]
	}
	return n
}

// planLBs plans the lbs from prev to next.
func (p *plan) planLBs(prev, next *config.Config) {
	g := p.g
	for i := range next.LBs {
		c := &next.LBs[i]
		was := prev.LB(c.Name)
		switch {
		case was == nil:
			p.add(func() (func(), error) {
				lo, err := g.startLB(c, next)
				if err != nil {
					return nil, err
				}
				return func() { g.stopLB(lo) }, nil
			})
		case !sameLBService(was, c):
			p.refuse(fmt.Errorf("%s: only its backends change while it runs (destroy and create it again)", c.Name))
		case !slices.Equal(was.Backends, c.Backends):
			lo := g.lbs[c.Name]
			p.add(func() (func(), error) {
				if err := lo.setBackends(c); err != nil {
					return nil, err
				}
				return func() { p.logUndo(lo.setBackends(was)) }, nil
			})
		}
	}
	for _, c := range prev.LBs {
		if next.LB(c.Name) == nil {
			lo := g.lbs[c.Name]
			// Before the bridges: an lb leaves its bridge while it runs.
			p.leave = append([]func(){func() { g.stopLB(lo) }}, p.leave...)
		}
	}
}

// sameLBService reports whether a and b differ in their backends only.
func sameLBService(a, b *config.LB) bool {
	x, y := *a, *b
	x.Backends, y.Backends = nil, nil
	return x.Iface == y.Iface && x.Bridge == y.Bridge && slices.Equal(x.VIPs, y.VIPs) && slices.Equal(x.Sources, y.Sources) &&
		x.Method == y.Method && x.Health == y.Health && x.Interval == y.Interval && x.Timeout == y.Timeout &&
		x.Rise == y.Rise && x.Fall == y.Fall
}

// startLB starts lb c of configuration cfg. An lb whose interface is
// absent is left stopped, saying so; anything else that fails is an
// error and leaves nothing running.
func (g *graph) startLB(c *config.LB, cfg *config.Config) (_ *lbObj, err error) {
	if g.lbs == nil {
		g.lbs = make(map[string]*lbObj)
	}
	lo := &lbObj{name: c.Name, iface: c.Iface}
	defer func() {
		if err != nil {
			lo.stop()
		}
	}()
	var port platform.Port
	addrIface := c.Iface
	if c.Bridge != "" {
		b := g.bridges[c.Bridge]
		if b == nil {
			return nil, fmt.Errorf("%s: bridge %s: no such bridge", c.Name, c.Bridge)
		}
		addrIface = ""
		if b.local != nil {
			addrIface = b.local.Name()
		}
		mac := lbMemberMAC(c.Name)
		member := lbMemberName(c.Name)
		ours, theirs := memport.Pair(member, net.HardwareAddr(mac[:]), member, net.HardwareAddr(mac[:]))
		if err := b.br.AddPort(theirs, bridge.DefaultPortFlags()); err != nil {
			ours.Close()
			theirs.Close()
			return nil, fmt.Errorf("%s: bridge %s: %w", c.Name, c.Bridge, err)
		}
		lo.bridge, lo.member, port = b, member, ours
	} else {
		if g.sys.LinkState(c.Iface) == platform.LinkAbsent {
			lo.state = "absent: no interface " + c.Iface
			g.log.Info("lb absent", "lb", c.Name, "iface", c.Iface)
			g.lbs[c.Name] = lo
			return lo, nil
		}
	}
	scfg, err := lo.serviceConfig(c, addrIface)
	// On a bridge the sources are the host's (its TAP's), at another MAC:
	// asking from them would move them to the lb's MAC in the backends'
	// caches, and the host's own traffic to the backends (the health
	// checks) with them.
	scfg.AskAnonymously = c.Bridge != ""
	if err != nil {
		if port != nil {
			port.Close()
		}
		return nil, err
	}
	if port == nil {
		var caps platform.Caps
		if port, caps, err = g.sys.OpenPort(c.Iface, true, 0); err != nil {
			return nil, fmt.Errorf("%s: iface %s: %w", c.Name, c.Iface, err)
		}
		if lo.guard, err = guardVIPs(c.Iface, c.VIPs); err != nil {
			port.Close()
			return nil, fmt.Errorf("%s: iface %s: %w", c.Name, c.Iface, err)
		}
		joinSolicitedNodes(port.Name(), caps.Multicast, c.VIPs, g.log)
	}
	if lo.svc, err = service.New(scfg, port, g.clock, g.log); err != nil {
		port.Close()
		return nil, err
	}
	if err := lo.setBackends(c); err != nil {
		return nil, err
	}
	lo.svc.Start()
	lo.state = "running"
	g.lbs[c.Name] = lo
	g.log.Info("lb up", "lb", c.Name, "port", port.Name(), "mac", net.HardwareAddr(port.HardwareAddr()).String(),
		"vips", len(c.VIPs), "backends", len(c.Backends), "method", c.Method, "health", c.Health)
	return lo, nil
}

// serviceConfig returns the service's configuration, its sources taken
// from c or else from iface's addresses (iface "" for none), and records
// what backends are checked against.
func (lo *lbObj) serviceConfig(c *config.LB, iface string) (service.Config, error) {
	method, err := lb.ParseMethod(c.Method)
	if err != nil {
		return service.Config{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	check, err := c.HealthCheck()
	if err != nil {
		return service.Config{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	scfg := service.Config{Name: c.Name, VIPs: c.VIPs, Source: c.Source(4), Source6: c.Source(6),
		Balancer: lb.BalancerConfig{Method: method}, Check: check}
	if iface == "" {
		return scfg, nil
	}
	prefixes, err := ifacePrefixes(iface)
	if err != nil {
		return service.Config{}, fmt.Errorf("%s: addresses of %s: %w", c.Name, iface, err)
	}
	for _, pf := range prefixes {
		a := pf.Addr()
		if slices.Contains(c.VIPs, a) {
			continue // a VIP the host holds too is no source
		}
		lo.own = append(lo.own, a)
		lo.onLink = append(lo.onLink, pf.Masked())
		switch {
		case a.Is4() && !scfg.Source.IsValid():
			scfg.Source = a
		case a.Is6() && (!scfg.Source6.IsValid() || (scfg.Source6.IsLinkLocalUnicast() && !a.IsLinkLocalUnicast())):
			scfg.Source6 = a
		}
	}
	return scfg, nil
}

// setBackends gives the running service c's backends, after checking
// that each is on-link and not the host's own address.
func (lo *lbObj) setBackends(c *config.LB) error {
	if lo.svc == nil {
		return nil // not running: started with them when it can
	}
	bs := make([]service.Backend, 0, len(c.Backends))
	for _, b := range c.Backends {
		if slices.Contains(lo.own, b.Addr) {
			return fmt.Errorf("%s: backend %s: is the lb's own address on %s", c.Name, b.Addr, lo.svc.Status().Port)
		}
		if lo.onLink != nil && !slices.ContainsFunc(lo.onLink, func(p netip.Prefix) bool { return !p.Addr().IsLinkLocalUnicast() && p.Contains(b.Addr) }) {
			return fmt.Errorf("%s: backend %s: not on-link (the lb's networks are %s)", c.Name, b.Addr, prefixList(lo.onLink))
		}
		bs = append(bs, service.Backend{Addr: b.Addr, Weight: b.Weight, Drain: b.Drain})
	}
	return lo.svc.SetBackends(bs)
}

// prefixList writes prefixes for an error.
func prefixList(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// joinSolicitedNodes makes port (through j, its multicast control)
// receive the solicited-node groups of the IPv6 VIPs, where neighbour
// solicitations for them are sent, on interfaces that filter multicast.
func joinSolicitedNodes(port string, j platform.Multicast, vips []netip.Addr, log interface {
	Warn(string, ...any)
}) {
	if j == nil {
		return
	}
	for _, v := range vips {
		if !v.Is6() {
			continue
		}
		t := v.As16()
		if err := j.JoinMulticast(net.HardwareAddr{0x33, 0x33, 0xff, t[13], t[14], t[15]}); err != nil {
			log.Warn("lb: cannot join the solicited-node group of a VIP", "port", port, "vip", v.String(), "err", err)
		}
	}
}

// stopLB stops a running lb.
func (g *graph) stopLB(lo *lbObj) {
	lo.stop()
	delete(g.lbs, lo.name)
	g.log.Info("lb down", "lb", lo.name)
}

// stop closes what the lb opened.
func (lo *lbObj) stop() {
	if lo.bridge != nil {
		// The bridge closes its end; the service closes its own.
		_ = lo.bridge.br.RemovePort(lo.member)
		lo.bridge = nil
	}
	if lo.svc != nil {
		lo.svc.Close()
		lo.svc = nil
	}
	if lo.guard != nil {
		lo.guard.Close()
		lo.guard = nil
	}
}

// lbIfaces are the interfaces of the iface lbs, for resync.
func (g *graph) lbIfaces() []string {
	var out []string
	for _, lo := range g.lbs {
		if lo.iface != "" {
			out = append(out, lo.iface)
		}
	}
	return out
}

// stopLBs stops every lb (closeAll).
func (g *graph) stopLBs() {
	for _, lo := range g.lbs {
		g.stopLB(lo)
	}
}

// LBShow describes one lb, or all.
func (e *engine) LBShow(_ context.Context, name string) ([]api.LBInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if name != "" && e.cfg.LB(name) == nil {
		return nil, fmt.Errorf("%s: no such lb", name)
	}
	out := []api.LBInfo{}
	for _, c := range e.cfg.LBs {
		if name != "" && c.Name != name {
			continue
		}
		info := api.LBInfo{Name: c.Name, Iface: c.Iface, Bridge: c.Bridge, Method: c.Method, Health: c.Health, State: "stopped"}
		for _, v := range c.VIPs {
			info.VIPs = append(info.VIPs, v.String())
		}
		for _, s := range c.Sources {
			info.Sources = append(info.Sources, s.String())
		}
		lo := e.graph.lbs[c.Name]
		if lo == nil || lo.svc == nil {
			if lo != nil {
				info.State = lo.state
			}
			for _, b := range c.Backends {
				info.Backends = append(info.Backends, api.LBBackendInfo{Addr: b.Addr.String(), Weight: b.Weight, State: lb.Down.String(), Health: "unknown"})
			}
			out = append(out, info)
			continue
		}
		st := lo.svc.Status()
		info.State, info.MAC, info.Iface = lo.state, st.MAC, st.Port
		info.Serving, info.AllDown = st.Serving, len(st.Backends) > 0 && st.Serving == 0 && !anyDraining(st.Backends)
		info.Flows, info.Frames, info.Bytes = st.Flows, st.Frames, st.Bytes
		info.DroppedNoBackend, info.DroppedUnresolved = st.NoBackend, st.Unresolved
		info.MalformedARP, info.MalformedND, info.MalformedIP = st.BadARP, st.BadND, st.BadIP
		for _, b := range st.Backends {
			info.Backends = append(info.Backends, api.LBBackendInfo{Addr: b.Addr.String(), MAC: b.MAC, Weight: b.Weight,
				State: b.State.String(), Health: b.Health, HealthSince: b.HealthSince, LastError: b.LastError,
				Frames: b.Frames, Bytes: b.Bytes})
		}
		out = append(out, info)
	}
	return out, nil
}

// anyDraining reports whether a backend of bs still takes its
// established flows.
func anyDraining(bs []service.BackendStatus) bool {
	return slices.ContainsFunc(bs, func(b service.BackendStatus) bool { return b.State == lb.Draining })
}

// lbLinkChanged follows a link event for the interface of an iface lb:
// one that appears starts the lb, one that goes stops it (lb show says
// so), and a carrier change reaches the running port.
func (g *graph) lbLinkChanged(cfg *config.Config, name string, state platform.LinkState) {
	for _, c := range cfg.LBs {
		lo := g.lbs[c.Name]
		if c.Iface != name || lo == nil {
			continue
		}
		switch {
		case state == platform.LinkAbsent && lo.svc != nil:
			g.log.Info("lb absent", "lb", c.Name, "iface", name)
			lo.stop()
			lo.state = "absent: no interface " + name
		case state != platform.LinkAbsent && lo.svc == nil:
			delete(g.lbs, c.Name)
			if _, err := g.startLB(&c, cfg); err != nil {
				g.log.Warn("cannot start lb whose interface appeared", "lb", c.Name, "iface", name, "err", err)
				g.lbs[c.Name] = &lbObj{name: c.Name, iface: c.Iface, state: "stopped: " + err.Error()}
			}
		case lo.svc != nil:
			lo.svc.SetLink(state)
		}
	}
}
