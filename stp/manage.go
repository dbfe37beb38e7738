package stp

import (
	"fmt"
	"slices"
)

// SetConfig replaces the configuration, or returns the error of
// cfg.Validate and changes nothing. An all-zero MAC keeps the current
// one. A new priority, MAC or times make role selection run again; a new
// protocol restarts every port's machines (802.1D-2004 17.13).
func (b *Bridge) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cfg.MAC == [6]byte{} {
		cfg.MAC = b.t.cfg.MAC
	}
	old := b.t.cfg
	if old == cfg {
		return nil
	}
	b.t.cfg = cfg
	b.t.log.Info("stp: configuration changed", "protocol", cfg.Protocol.String(), "priority", cfg.Priority,
		"hellotime", cfg.HelloTime, "maxage", cfg.MaxAge, "fwddelay", cfg.ForwardDelay, "holdcnt", cfg.HoldCount)
	b.t.setID()
	if old.Protocol != cfg.Protocol {
		b.t.beginAll()
	} else if old.Priority != cfg.Priority || old.MAC != cfg.MAC || old.HelloTime != cfg.HelloTime ||
		old.MaxAge != cfg.MaxAge || old.ForwardDelay != cfg.ForwardDelay {
		b.t.reselectAll()
	}
	if old.HoldCount != cfg.HoldCount {
		for _, p := range b.t.ports {
			p.txCount = 0
		}
	}
	b.t.run()
	return nil
}

// Config returns the configuration in force.
func (b *Bridge) Config() Config {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.t.cfg
}

// SetPortConfig replaces port id's configuration, or returns an error
// (an unknown port, or that of cfg.Validate) and changes nothing. A new
// priority or path cost makes role selection run again; AdminEdge makes
// the port an edge port, or a normal one, at once.
func (b *Bridge) SetPortConfig(id int, cfg PortConfig) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.find(id)
	if p == nil {
		return fmt.Errorf("stp: set port id %d: not a port", id)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("stp: set port %s: %w", p.name, err)
	}
	old := p.cfg
	p.cfg = cfg
	if cfg.Priority != old.Priority {
		p.portID = NewPortID(cfg.Priority, p.number)
		b.t.reselectAll()
	}
	if p.applyLink() {
		p.reselect, p.selected = true, false
	}
	if cfg.AdminEdge != old.AdminEdge {
		setEdge(&b.t, p, cfg.AdminEdge)
	}
	if cfg.Enabled != old.Enabled {
		p.publish()
	}
	b.t.run()
	return nil
}

// MCheck makes port id send RST BPDUs again, if the bridge runs RSTP, and
// listen for what its neighbours speak (mcheck, 802.1D-2004 17.19.13): for
// when an 802.1D neighbour was replaced by an RSTP one that does not send
// first. An unknown port is ignored.
func (b *Bridge) MCheck(id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.find(id); p != nil && b.t.rstpVersion() {
		p.mcheck = true
		b.t.run()
	}
}

// Status returns a snapshot of the bridge.
func (b *Bridge) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Status{
		BridgeID:        b.t.id,
		Protocol:        b.t.cfg.Protocol,
		Root:            b.t.rootPriority.root,
		IsRoot:          b.t.rootPort == nil,
		RootPathCost:    b.t.rootPriority.cost,
		HelloTime:       b.t.cfg.HelloTime,
		MaxAge:          int(b.t.rootTimes.maxAge),
		ForwardDelay:    int(b.t.rootTimes.forwardDelay),
		TopologyChanges: b.t.tcCount,
	}
	now := b.t.clk.Now()
	s.TopologyChange = now.Before(b.t.tcUntil) || slices.ContainsFunc(b.t.ports, func(p *port) bool { return p.tcWhile != 0 })
	if b.t.rootPort != nil {
		s.RootPort, s.RootPortName = b.t.rootPort.id, b.t.rootPort.name
	}
	if !b.t.tcLast.IsZero() {
		s.LastTopologyChange = b.t.tcLast
		s.SinceTopologyChange = now.Sub(b.t.tcLast)
	}
	return s
}

// Ports returns a snapshot of every port, sorted by ID.
func (b *Bridge) Ports() []PortStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]PortStatus, 0, len(b.t.ports))
	for _, p := range b.t.ports {
		proto := STP
		if p.sendRSTP {
			proto = RSTP
		}
		out = append(out, PortStatus{
			ID:               p.id,
			Name:             p.name,
			PortID:           p.portID,
			Enabled:          p.cfg.Enabled,
			LinkUp:           p.link.Up,
			Role:             p.role,
			State:            p.gate.State(),
			Edge:             p.operEdge,
			PointToPoint:     p.operP2P,
			PathCost:         p.pathCost,
			Protocol:         proto,
			DesignatedRoot:   p.portPriority.root,
			DesignatedCost:   p.portPriority.cost,
			DesignatedBridge: p.portPriority.bridge,
			DesignatedPort:   p.portPriority.port,
			TopologyChange:   p.tcWhile != 0,
			Counters:         p.counters,
		})
	}
	return out
}
