package api

import (
	"fmt"

	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/stp"
)

// OpBridgeSTP is the operation of BridgeSTPRequest.
const OpBridgeSTP = "bridge.stp"

// BridgeSTPRequest turns a bridge's spanning tree on or off and changes
// its settings (swctl bridge stp). Nil fields are left as they are; at
// least one must be set. The times' relations are checked against the
// bridge's other settings by the daemon.
type BridgeSTPRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// On runs the spanning tree (true) or stops it (false).
	On *bool `json:"on,omitempty"`
	// Proto is "rstp" or "stp".
	Proto *string `json:"proto,omitempty"`
	// Priority is the bridge priority, 0-61440 in steps of 4096.
	Priority *int `json:"priority,omitempty"`
	// HelloTime, FwdDelay and MaxAge are the protocol's times in
	// seconds.
	HelloTime *int `json:"hellotime,omitempty"`
	FwdDelay  *int `json:"fwddelay,omitempty"`
	MaxAge    *int `json:"maxage,omitempty"`
	// HoldCount is the most BPDUs a port sends a second, 1-10.
	HoldCount *int `json:"holdcnt,omitempty"`
}

// Op names the operation.
func (BridgeSTPRequest) Op() string { return OpBridgeSTP }

// Validate checks the request's fields.
func (r BridgeSTPRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	if r == (BridgeSTPRequest{Name: r.Name}) {
		return fmt.Errorf("%s: stp: nothing to change (give on, off, or a setting such as --priority)", r.Name)
	}
	if r.Proto != nil {
		if _, err := stp.ParseProtocol(*r.Proto); err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	return nil
}

// Edit makes the change with config.SetSTP.
func (r BridgeSTPRequest) Edit(c *config.Config, _ config.Host) error {
	return c.SetSTP(r.Name, config.STPChange{
		On: r.On, Proto: r.Proto, Priority: r.Priority, HelloTime: r.HelloTime,
		FwdDelay: r.FwdDelay, MaxAge: r.MaxAge, HoldCount: r.HoldCount,
	})
}

// STPInfo is a bridge's spanning tree in BridgeInfo: its settings, and
// what it found.
type STPInfo struct {
	// Proto, Priority, HelloTime, FwdDelay, MaxAge and HoldCount are the
	// settings.
	Proto     string `json:"proto"`
	Priority  int    `json:"priority"`
	HelloTime int    `json:"hellotime"`
	FwdDelay  int    `json:"fwddelay"`
	MaxAge    int    `json:"maxage"`
	HoldCount int    `json:"holdcnt"`
	// BridgeID is this bridge's identifier, as the Linux bridge writes
	// one: "8000.025e00123456" (priority in hex, a dot, the MAC).
	BridgeID string `json:"bridge_id"`
	// Root is the designated root's identifier; IsRoot says it is this
	// bridge.
	Root   string `json:"root"`
	IsRoot bool   `json:"is_root"`
	// RootPathCost is this bridge's cost to the root.
	RootPathCost uint32 `json:"root_path_cost"`
	// RootPort is the member that leads to the root, "" at the root.
	RootPort string `json:"root_port"`
	// RootMaxAge and RootFwdDelay are the times in use, the root's.
	RootMaxAge   int `json:"root_maxage"`
	RootFwdDelay int `json:"root_fwddelay"`
	// TopologyChanges counts the topology changes seen; TopologyChange
	// says one is being signalled now.
	TopologyChanges uint64 `json:"topology_changes"`
	TopologyChange  bool   `json:"topology_change"`
	// SinceTopologyChange is the number of seconds since the last
	// topology change; nil (JSON null) if there was none.
	SinceTopologyChange *int64 `json:"since_topology_change"`
}

// PortSTPInfo is a member's spanning tree in BridgePortInfo: its
// settings, and its role and state.
type PortSTPInfo struct {
	// Enabled, AdminEdge, AutoEdge, PTP ("auto", "on" or "off"),
	// Priority and Cost (0: from the link speed) are the settings.
	Enabled   bool   `json:"enabled"`
	AdminEdge bool   `json:"admin_edge"`
	AutoEdge  bool   `json:"auto_edge"`
	PTP       string `json:"ptp"`
	Priority  int    `json:"priority"`
	Cost      int    `json:"cost"`
	// PortID is the port identifier ("8001"); "" while the member is
	// absent.
	PortID string `json:"port_id"`
	// Role is "root", "designated", "alternate", "backup" or "disabled";
	// State is "discarding", "learning" or "forwarding".
	Role  string `json:"role"`
	State string `json:"state"`
	// Edge and PointToPoint are what the port is now.
	Edge         bool `json:"edge"`
	PointToPoint bool `json:"point_to_point"`
	// PathCost is the path cost in use.
	PathCost uint32 `json:"path_cost"`
	// Protocol is what the port speaks now: "rstp", or "stp" with an
	// 802.1D neighbour.
	Protocol string `json:"protocol"`
	// DesignatedRoot, DesignatedBridge, DesignatedPort and
	// DesignatedCost are the best information on the port's segment.
	DesignatedRoot   string `json:"designated_root"`
	DesignatedBridge string `json:"designated_bridge"`
	DesignatedPort   string `json:"designated_port"`
	DesignatedCost   uint32 `json:"designated_cost"`
	// BPDUsIn and BPDUsOut count the valid BPDUs received and sent;
	// BPDUsBad the frames dropped as no valid BPDU.
	BPDUsIn  uint64 `json:"bpdus_in"`
	BPDUsOut uint64 `json:"bpdus_out"`
	BPDUsBad uint64 `json:"bpdus_bad"`
}
