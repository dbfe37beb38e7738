package daemon

import (
	"time"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/stp"
)

// stpShow is what `bridge show` says of a bridge's spanning tree: nil
// while it does not run.
func (b *bridgeObj) stpShow(c *config.Bridge) (*api.STPInfo, map[string]*api.PortSTPInfo) {
	if b.stp == nil {
		return nil, nil
	}
	set := c.STPSettings()
	st := b.stp.tree.Status()
	info := &api.STPInfo{
		Proto: set.Proto.String(), Priority: set.Priority, HelloTime: set.HelloTime, FwdDelay: set.FwdDelay,
		MaxAge: set.MaxAge, HoldCount: set.HoldCount,
		BridgeID: st.BridgeID.String(), Root: st.Root.String(), IsRoot: st.IsRoot, RootPathCost: st.RootPathCost,
		RootPort: st.RootPortName, RootMaxAge: st.MaxAge, RootFwdDelay: st.ForwardDelay,
		TopologyChanges: st.TopologyChanges, TopologyChange: st.TopologyChange,
	}
	if !st.LastTopologyChange.IsZero() {
		s := int64(st.SinceTopologyChange / time.Second)
		info.SinceTopologyChange = &s
	}
	ports := map[string]*api.PortSTPInfo{}
	for _, pc := range c.Ports {
		ports[pc.Name] = portSTPSettings(pc.STPSettings())
	}
	for _, ps := range b.stp.tree.Ports() {
		p := ports[ps.Name]
		if p == nil {
			continue
		}
		p.PortID, p.Role, p.State = ps.PortID.String(), ps.Role.String(), ps.State.String()
		p.Edge, p.PointToPoint, p.PathCost, p.Protocol = ps.Edge, ps.PointToPoint, ps.PathCost, ps.Protocol.String()
		p.DesignatedRoot, p.DesignatedBridge = ps.DesignatedRoot.String(), ps.DesignatedBridge.String()
		p.DesignatedPort, p.DesignatedCost = ps.DesignatedPort.String(), ps.DesignatedCost
		p.BPDUsIn, p.BPDUsOut, p.BPDUsBad = ps.Counters.Rx(), ps.Counters.Tx(), ps.Counters.Bad.Total()
	}
	return info, ports
}

// portSTPSettings is a member's spanning tree as shown before its port
// is known: its settings, disabled and discarding (an absent member).
func portSTPSettings(s config.PortSTP) *api.PortSTPInfo {
	return &api.PortSTPInfo{
		Enabled: s.Enabled, AdminEdge: s.Edge, AutoEdge: s.AutoEdge, PTP: s.PTP.String(), Priority: s.Priority, Cost: s.Cost,
		Role: stp.RoleDisabled.String(), State: stp.Discarding.String(),
	}
}
