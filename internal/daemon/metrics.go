package daemon

import (
	"context"
	"log/slog"
	"runtime"
	"slices"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/metrics"
	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/service"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/stp"
)

// The engine's counters for the metrics endpoint (`swctl daemon
// --metrics`) and `swctl stats`: one snapshot of the graph per scrape,
// taken under the engine's mutex. The forwarding path never takes that
// mutex, and every counter read here is an atomic, so a scrape costs
// forwarding nothing.

// collector returns a metrics collector over the engine's snapshots.
func (e *engine) collector() *metrics.Collector {
	v := e.version
	if v.Go == "" {
		v.Go = runtime.Version()
	}
	return metrics.New(e.snapshot, metrics.Build{Version: v.Version, Revision: v.Revision, Go: v.Go}, e.started)
}

// serveMetrics opens the metrics endpoint at addr and serves it until
// ctx is done or stop is called; stop returns once it has stopped.
func (e *engine) serveMetrics(ctx context.Context, addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := metrics.Listen(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	supervise.Go("metrics endpoint", func() {
		defer close(done)
		if err := metrics.Serve(ctx, ln, e.collector()); err != nil {
			log.Error("metrics endpoint failed", "err", err)
		}
	})
	log.Info("metrics endpoint listening", "addr", ln.Addr().String())
	return func() { cancel(); <-done }, nil
}

// Stats implements api.Handler: every sample a scrape would give.
func (e *engine) Stats(context.Context) ([]api.Sample, error) {
	samples, err := metrics.Samples(e.collector())
	if err != nil {
		return nil, err
	}
	out := make([]api.Sample, len(samples))
	for i, s := range samples {
		out[i] = api.Sample{Name: s.Name, Labels: s.Labels, Value: s.Value}
	}
	return out, nil
}

// snapshot reads the counters of every bridge, trunk, lb and port, in the
// order of the configuration. A configured port that is absent is shown
// down, with zero counters.
func (e *engine) snapshot() metrics.Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s metrics.Snapshot
	addPort := func(owner, role, name string, p platform.Port, rc *reopenCounts) {
		mp := metrics.Port{Name: name, Owner: owner, Role: role}
		if p != nil {
			mp.Up = p.Link() == platform.LinkUp
			mp.Counters = rc.total(p.Counters())
		}
		s.Ports = append(s.Ports, mp)
	}
	for _, c := range e.cfg.Bridges {
		b := e.graph.bridges[c.Name]
		if b == nil {
			continue
		}
		if b.local != nil {
			addPort(c.Name, api.RoleLocal, b.local.Name(), b.local, nil)
		}
		for _, p := range c.Ports {
			po := b.ports[p.Name]
			addPort(c.Name, api.RoleMember, p.Name, po.open(), po.counts())
		}
		for _, sp := range c.Spans {
			po := b.ports[sp]
			addPort(c.Name, api.RoleSpan, sp, po.open(), po.counts())
		}
		mb := metrics.Bridge{Name: c.Name, Addresses: b.br.AddrCount(), Stats: b.br.Stats()}
		if b.capture != nil {
			cs := b.capture.Stats()
			mb.Capture = metrics.Capture{Sessions: cs.Sessions, Queued: cs.Queued, Dropped: cs.Dropped, Cut: cs.Cut}
		}
		if b.stp != nil {
			mb.STP = stpSnapshot(b.stp.tree)
		}
		s.Bridges = append(s.Bridges, mb)
	}
	for _, c := range e.cfg.Trunks {
		to := e.graph.trunks[c.Name]
		if to == nil {
			continue
		}
		to.tapMu.Lock()
		if to.tap != nil {
			addPort(c.Name, api.RoleLocal, to.tap.Name(), to.tap, nil)
		}
		to.tapMu.Unlock()
		for _, p := range c.Ports {
			var port platform.Port
			var rc *reopenCounts
			if tpo := to.ports[p.Name]; tpo != nil {
				port, rc = tpo.port, &tpo.reopenCounts
			}
			addPort(c.Name, api.RoleTrunk, p.Name, port, rc)
		}
		mt := metrics.Trunk{Name: c.Name, Proto: c.Proto, Active: to.tr.Active(), Stats: to.tr.Stats()}
		for _, p := range to.tr.Ports() {
			m := metrics.TrunkMember{
				Name:         p.Name,
				Collecting:   slices.Contains(p.Flags, api.TrunkFlagCollecting),
				Distributing: slices.Contains(p.Flags, api.TrunkFlagDistributing),
			}
			if ls, ok := p.Detail.(lacp.PortState); ok {
				m.LACP, m.Selected = true, ls.Selected
			}
			mt.Members = append(mt.Members, m)
		}
		s.Trunks = append(s.Trunks, mt)
	}
	for _, c := range e.cfg.LBs {
		ml := metrics.LB{Name: c.Name}
		if lo := e.graph.lbs[c.Name]; lo != nil && lo.svc != nil {
			ml.Running, ml.Status = true, lo.svc.Status()
		} else {
			// Stopped: the configured backends, down, of unknown health
			// ("none" without a check, so that no health is shown).
			health := "unknown"
			if c.Health == "none" {
				health = c.Health
			}
			for _, b := range c.Backends {
				ml.Status.Backends = append(ml.Status.Backends, service.BackendStatus{Addr: b.Addr, Weight: b.Weight, State: lb.Down, Health: health})
			}
		}
		s.LBs = append(s.LBs, ml)
	}
	return s
}

// open returns the port's open Port, nil while absent.
func (po *portObj) open() platform.Port {
	if po == nil || po.port == nil {
		return nil
	}
	return po.port
}

// counts returns the port's carried counters, nil for a nil port.
func (po *portObj) counts() *reopenCounts {
	if po == nil {
		return nil
	}
	return &po.reopenCounts
}

// stpSnapshot reads a spanning tree's status for the metrics.
func stpSnapshot(tree *stp.Bridge) *metrics.STP {
	st := tree.Status()
	out := &metrics.STP{IsRoot: st.IsRoot, RootPathCost: st.RootPathCost, TopologyChanges: st.TopologyChanges}
	for _, p := range tree.Ports() {
		out.Ports = append(out.Ports, metrics.STPPort{Name: p.Name, Role: p.Role.String(), State: p.State.String(),
			BPDUsIn: p.Counters.Rx(), BPDUsOut: p.Counters.Tx()})
	}
	return out
}
