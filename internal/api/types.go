package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/stp"
)

// ProtocolVersion is the version of the protocol this package speaks.
// Version 2 added the request's deadline; a daemon still answers version
// 1 clients, which send none, and an older daemon refuses a version 2
// request by its version instead of by an unknown field.
const ProtocolVersion = 2

// The operations, as named in a request's "op".
const (
	OpBridgeCreate  = "bridge.create"
	OpBridgeDestroy = "bridge.destroy"
	OpBridgeAdd     = "bridge.add"
	OpBridgeDel     = "bridge.del"
	OpBridgeShow    = "bridge.show"
	OpBridgeAddr    = "bridge.addr"
	OpBridgeStatic  = "bridge.static"
	OpBridgeDelAddr = "bridge.deladdr"
	OpBridgeFlush   = "bridge.flush"
	OpBridgeEnable  = "bridge.enable"
	OpBridgeSet     = "bridge.set"
	OpBridgePort    = "bridge.port"
	OpBridgeAddSpan = "bridge.addspan"
	OpBridgeDelSpan = "bridge.delspan"
	OpTrunkCreate   = "trunk.create"
	OpTrunkDestroy  = "trunk.destroy"
	OpTrunkAdd      = "trunk.add"
	OpTrunkDel      = "trunk.del"
	OpTrunkSet      = "trunk.set"
	OpTrunkPort     = "trunk.port"
	OpTrunkShow     = "trunk.show"
	OpPortShow      = "port.show"
	OpVersion       = "version"
)

// Port flags as they appear in BridgePortInfo.Flags.
const (
	FlagLearning   = "learning"
	FlagDiscover   = "discover"
	FlagBlockNonIP = "blocknonip"
	FlagStack      = "stack"
	// FlagNoPromisc marks a member held out of promiscuous mode
	// (bridge port --promisc off), which the default, on, is not.
	FlagNoPromisc = "-promisc"
	// FlagStormLimit, followed by the limit in packets per second
	// ("storm-limit=1000"), marks a member with a storm limit.
	FlagStormLimit = "storm-limit="
	// FlagBPDUGuard marks a member whose BPDU guard is on, and
	// FlagBPDUGuardDisabled one that its guard has disabled (instead of
	// FlagBPDUGuard) until bridge port --enable.
	FlagBPDUGuard         = "bpdu-guard"
	FlagBPDUGuardDisabled = "bpdu-guard: disabled"
)

// Link states as they appear in BridgePortInfo.Link, TrunkPortInfo.Link
// and PortInfo.Link.
const (
	LinkUp     = "up"
	LinkDown   = "down"
	LinkAbsent = "absent" // configured, but no such interface right now
)

// Roles as they appear in PortInfo.Role. Clients should show any other
// role as it is: later objects may add roles.
const (
	RoleMember = "member"
	RoleSpan   = "span"
	RoleLocal  = "local" // the bridge's own TAP
	RoleTrunk  = "trunk" // a port of the trunk named in PortInfo.Bridge
)

// BridgeCreateRequest creates a bridge (swctl bridge create).
type BridgeCreateRequest struct {
	// Name is the new bridge's name.
	Name string `json:"name"`
	// Local gives the host a TAP interface named after the bridge.
	Local bool `json:"local,omitempty"`
}

// BridgeDestroyRequest destroys a bridge and releases its members
// (swctl bridge destroy).
type BridgeDestroyRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
}

// BridgeAddRequest adds members to a bridge, all or none (swctl bridge add).
type BridgeAddRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Ifaces are the interfaces to add, at least one, no duplicates.
	Ifaces []string `json:"ifaces"`
	// Force takes an interface that holds the host's default route,
	// which is refused otherwise.
	Force bool `json:"force,omitempty"`
}

// BridgeDelRequest removes members from a bridge, all or none
// (swctl bridge del).
type BridgeDelRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Ifaces are the members to remove, at least one, no duplicates.
	Ifaces []string `json:"ifaces"`
}

// BridgeShowRequest asks for the settings and members of one bridge or all
// (swctl bridge show).
type BridgeShowRequest struct {
	// Name is the bridge, or "" for every bridge.
	Name string `json:"name,omitempty"`
}

// BridgeAddrRequest asks for a page of a bridge's address table (swctl
// bridge addr): entries in VLAN, then MAC order.
type BridgeAddrRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Limit is the most entries in the reply, 1 to MaxAddrPage; 0 means
	// MaxAddrPage. A reply of Limit entries may have more after it.
	Limit int `json:"limit,omitempty"`
	// After starts the page after this entry (the last one of the
	// previous page); nil starts at the first.
	After *AddrKey `json:"after,omitempty"`
}

// MaxAddrPage is the most address-table entries in one bridge.addr reply:
// the daemon's memory for a listing is bounded by a page, whatever the
// size of the table.
const MaxAddrPage = 4096

// AddrKey names an address-table entry: its place in the table's order.
type AddrKey struct {
	// MAC is the station's address, as frame.ParseMAC accepts it.
	MAC string `json:"mac"`
	// VLAN is the VLAN ID, 0 for untagged.
	VLAN uint16 `json:"vlan"`
}

// ParseAddrKey reads an entry's place as swctl bridge addr --after takes
// it: MAC (in VLAN 0) or VLAN/MAC.
func ParseAddrKey(s string) (AddrKey, error) {
	k := AddrKey{MAC: s}
	if v, m, ok := strings.Cut(s, "/"); ok {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil || n > 4095 {
			return AddrKey{}, fmt.Errorf("address table position %q: VLAN ID %q not a number from 0 to 4095", s, v)
		}
		k = AddrKey{MAC: m, VLAN: uint16(n)}
	}
	if _, err := k.Parse(); err != nil {
		return AddrKey{}, err
	}
	return k, nil
}

// Parse returns the key's MAC, checked with its VLAN ID.
func (k AddrKey) Parse() (frame.MAC, error) {
	m, err := frame.ParseMAC(k.MAC)
	if err != nil {
		return frame.MAC{}, fmt.Errorf("address table position %s: %w", k.MAC, err)
	}
	if k.VLAN > 4095 {
		return frame.MAC{}, fmt.Errorf("address table position %s vlan %d: VLAN ID out of range 0-4095", k.MAC, k.VLAN)
	}
	return m, nil
}

// StaticRequest adds a static address-table entry (swctl bridge static).
type StaticRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// MAC is the station's unicast address, as frame.ParseMAC accepts it.
	MAC string `json:"mac"`
	// Iface is the member the station is reached through.
	Iface string `json:"iface"`
	// VLAN is the VLAN ID, 0 for untagged.
	VLAN uint16 `json:"vlan"`
	// Replace moves a static entry for MAC and VLAN on another member to
	// Iface; without it such an entry is refused.
	Replace bool `json:"replace,omitempty"`
}

// DelAddrRequest removes an address-table entry, learned or static
// (swctl bridge deladdr).
type DelAddrRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// MAC is the station's address, as frame.ParseMAC accepts it.
	MAC string `json:"mac"`
	// VLAN restricts the removal to one VLAN ID (0 = untagged); nil removes
	// the address in every VLAN.
	VLAN *uint16 `json:"vlan,omitempty"`
}

// FlushRequest removes the learned entries of a bridge's address table,
// and with All the static ones too (swctl bridge flush).
type FlushRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// All removes static entries as well.
	All bool `json:"all,omitempty"`
	// Port limits the flush to the entries on this member; "" flushes
	// every member's.
	Port string `json:"port,omitempty"`
}

// EnableRequest enables a member its BPDU guard disabled (swctl bridge
// port --enable): an action, not a state change.
type EnableRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Iface is the member.
	Iface string `json:"iface"`
}

// BridgeSetRequest changes a bridge's settings (swctl bridge set). Nil
// fields are left as they are; at least one must be set.
type BridgeSetRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Timeout is the new ageing time in seconds, 0 = never.
	Timeout *int `json:"timeout,omitempty"`
	// MaxAddr is the new address-table capacity.
	MaxAddr *int `json:"maxaddr,omitempty"`
	// FwdMask is the new forward mask: bit n forwards frames to
	// 01:80:c2:00:00:0n like other multicast; bits 0-2 are refused.
	FwdMask *uint16 `json:"fwd_mask,omitempty"`
}

// BridgePortRequest changes a member's flags (swctl bridge port). Nil
// fields are left as they are; at least one must be set.
type BridgePortRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Iface is the member.
	Iface string `json:"iface"`
	// Learning turns source-address learning on or off.
	Learning *bool `json:"learning,omitempty"`
	// Discover turns flooding of unknown unicast to this port on or off.
	Discover *bool `json:"discover,omitempty"`
	// BlockNonIP turns dropping of non-IP frames on or off.
	BlockNonIP *bool `json:"blocknonip,omitempty"`
	// Stack turns delivery to the host's own stack on the member on or off.
	Stack *bool `json:"stack,omitempty"`
	// Promisc turns the member's promiscuous membership on (the default)
	// or off (for measurements on links that deliver every frame).
	Promisc *bool `json:"promisc,omitempty"`
	// STP, Edge and AutoEdge turn the member's part in the spanning tree,
	// its being an edge port from the start, and automatic edge
	// detection on or off.
	STP      *bool `json:"stp,omitempty"`
	Edge     *bool `json:"edge,omitempty"`
	AutoEdge *bool `json:"autoedge,omitempty"`
	// PTP is "auto", "on" or "off": whether the link is point-to-point.
	PTP *string `json:"ptp,omitempty"`
	// StormLimit is the most frames per second received on the member
	// that the bridge floods (broadcast, multicast, unknown unicast); 0
	// is no limit.
	StormLimit *int `json:"storm_limit,omitempty"`
	// BPDUGuard turns the member's BPDU guard on or off.
	BPDUGuard *bool `json:"bpdu_guard,omitempty"`
	// IfPriority is the spanning-tree port priority, 0-240 in steps of
	// 16; IfCost its path cost, 0 for the cost of the link speed.
	IfPriority *int `json:"ifpriority,omitempty"`
	IfCost     *int `json:"ifcost,omitempty"`
}

// AddSpanRequest adds a span port (swctl bridge addspan).
type AddSpanRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Iface is the span interface.
	Iface string `json:"iface"`
}

// DelSpanRequest removes a span port (swctl bridge delspan).
type DelSpanRequest struct {
	// Name is the bridge.
	Name string `json:"name"`
	// Iface is the span interface.
	Iface string `json:"iface"`
}

// PortShowRequest asks for the state and counters of one port or all
// (swctl port show).
type PortShowRequest struct {
	// Name is the interface, or "" for every port of every bridge and
	// trunk.
	Name string `json:"name,omitempty"`
}

// VersionRequest asks for the daemon's version; it has no arguments.
type VersionRequest struct{}

// BridgeInfo is one bridge as shown by swctl bridge show.
type BridgeInfo struct {
	// Name is the bridge's name.
	Name string `json:"name"`
	// Timeout is the ageing time in seconds, 0 = never.
	Timeout int `json:"timeout"`
	// MaxAddr is the address-table capacity.
	MaxAddr int `json:"maxaddr"`
	// Local is the name of the bridge's local TAP, "" without one.
	Local string `json:"local"`
	// LocalMAC is the local TAP's hardware address, "" without one.
	LocalMAC string `json:"local_mac,omitempty"`
	// Ports are the members in the order they were added (the local TAP
	// is not listed here).
	Ports []BridgePortInfo `json:"ports"`
	// Spans are the span interfaces in the order they were added.
	Spans []string `json:"spans"`
	// Addresses is the number of entries in the address table.
	Addresses int `json:"addresses"`
	// Exceeded counts addresses not learned because the table was full.
	Exceeded uint64 `json:"exceeded"`
	// Forwarded counts frames sent to exactly one known port.
	Forwarded uint64 `json:"forwarded"`
	// Flooded counts frames sent to every other port (broadcast,
	// multicast, unknown unicast).
	Flooded uint64 `json:"flooded"`
	// Dropped counts frames the bridge dropped (runts, too long for the
	// egress MTU, bad source address, link-local groups, blocknonip,
	// destination on the ingress port, ports the spanning tree blocks).
	Dropped uint64 `json:"dropped"`
	// FwdMask is the forward mask (see BridgeSetRequest); omitted when 0.
	FwdMask uint16 `json:"fwd_mask,omitempty"`
	// STP is the spanning tree; nil (omitted) while it does not run.
	STP *STPInfo `json:"stp,omitempty"`
}

// MarshalJSON writes empty lists as [] rather than null.
func (b BridgeInfo) MarshalJSON() ([]byte, error) {
	type plain BridgeInfo
	if b.Ports == nil {
		b.Ports = []BridgePortInfo{}
	}
	if b.Spans == nil {
		b.Spans = []string{}
	}
	return json.Marshal(plain(b))
}

// BridgePortInfo is one member in BridgeInfo.
type BridgePortInfo struct {
	// Name is the member interface.
	Name string `json:"name"`
	// Flags are the flags that are on, from FlagLearning, FlagDiscover,
	// FlagBlockNonIP and FlagStack, in that order, then FlagNoPromisc when
	// the member is not promiscuous, then its storm limit
	// (FlagStormLimit) and FlagBPDUGuard or FlagBPDUGuardDisabled.
	Flags []string `json:"flags"`
	// Link is LinkUp, LinkDown or LinkAbsent.
	Link string `json:"link"`
	// STP is the member's spanning tree port; nil (omitted) while the
	// bridge runs none.
	STP *PortSTPInfo `json:"stp,omitempty"`
}

// MarshalJSON writes an empty flag list as [] rather than null.
func (p BridgePortInfo) MarshalJSON() ([]byte, error) {
	type plain BridgePortInfo
	if p.Flags == nil {
		p.Flags = []string{}
	}
	return json.Marshal(plain(p))
}

// AddrInfo is one address-table entry as shown by swctl bridge addr.
type AddrInfo struct {
	// MAC is the station's address, aa:bb:cc:dd:ee:ff.
	MAC string `json:"mac"`
	// VLAN is the VLAN ID, 0 for untagged.
	VLAN uint16 `json:"vlan"`
	// Port is the member the station was learned on or configured to.
	Port string `json:"port"`
	// Age is the number of seconds since the station was last seen; nil
	// (JSON null) for a static entry.
	Age *int64 `json:"age"`
	// Static tells a configured entry from a learned one.
	Static bool `json:"static"`
}

// PortInfo is one port as shown by swctl port show.
type PortInfo struct {
	// Name is the interface.
	Name string `json:"name"`
	// Bridge is the bridge the port belongs to, or for RoleTrunk the
	// trunk.
	Bridge string `json:"bridge"`
	// Role is RoleMember, RoleSpan, RoleLocal or RoleTrunk.
	Role string `json:"role"`
	// Link is LinkUp, LinkDown or LinkAbsent.
	Link string `json:"link"`
	// Promisc reports whether swctl holds a promiscuous membership on it.
	Promisc bool `json:"promisc"`
	// RxPackets counts frames the engine read from the port.
	RxPackets uint64 `json:"rx_packets"`
	// RxBytes counts the bytes of those frames.
	RxBytes uint64 `json:"rx_bytes"`
	// TxPackets counts frames the engine wrote to the port.
	TxPackets uint64 `json:"tx_packets"`
	// TxBytes counts the bytes of those frames.
	TxBytes uint64 `json:"tx_bytes"`
	// RxDropped counts received frames the engine dropped.
	RxDropped uint64 `json:"rx_dropped"`
	// RxBadOffload counts the frames of RxDropped whose offload header
	// (virtio_net_hdr) did not describe them.
	RxBadOffload uint64 `json:"rx_bad_offload"`
	// TxDropped counts frames the engine could not write.
	TxDropped uint64 `json:"tx_dropped"`
	// RingDropped counts frames the kernel dropped because the receive
	// ring was full (PACKET_STATISTICS), apart from the engine's drops.
	RingDropped uint64 `json:"ring_dropped"`
	// Errors counts I/O errors on the port.
	Errors uint64 `json:"errors"`
}

// VersionInfo identifies a build of swctl.
type VersionInfo struct {
	// Version is the release, set at link time, "dev" otherwise.
	Version string `json:"version"`
	// Revision is the VCS revision the binary was built from, with
	// "-dirty" when the tree was modified; "" when unknown.
	Revision string `json:"revision,omitempty"`
	// Go is the Go release that built the binary.
	Go string `json:"go"`
	// Protocol is the control-protocol version (ProtocolVersion).
	Protocol int `json:"protocol"`
}

// Validation. Each request type checks what can be checked without the
// daemon's state; Serve rejects a request that fails it, and the CLI calls
// the same methods to catch usage errors before dialling.

func checkBridge(name string) error { return config.CheckName("bridge", name) }

func checkIfaces(bridge, verb string, ifaces []string) error {
	if len(ifaces) == 0 {
		return fmt.Errorf("%s: %s: no interfaces given", bridge, verb)
	}
	seen := make(map[string]bool, len(ifaces))
	for _, i := range ifaces {
		if err := config.CheckName("interface", i); err != nil {
			return fmt.Errorf("%s: %s: %w", bridge, verb, err)
		}
		if seen[i] {
			return fmt.Errorf("%s: %s %s: given twice", bridge, verb, i)
		}
		seen[i] = true
	}
	return nil
}

func checkIface(bridge, verb, iface string) error {
	if err := config.CheckName("interface", iface); err != nil {
		return fmt.Errorf("%s: %s: %w", bridge, verb, err)
	}
	return nil
}

// Validate checks the request's fields.
func (r BridgeCreateRequest) Validate() error { return checkBridge(r.Name) }

// Validate checks the request's fields.
func (r BridgeDestroyRequest) Validate() error { return checkBridge(r.Name) }

// Validate checks the request's fields.
func (r BridgeAddRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	return checkIfaces(r.Name, "add", r.Ifaces)
}

// Validate checks the request's fields.
func (r BridgeDelRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	return checkIfaces(r.Name, "del", r.Ifaces)
}

// Validate checks the request's fields.
func (r BridgeShowRequest) Validate() error {
	if r.Name == "" {
		return nil
	}
	return checkBridge(r.Name)
}

// Validate checks the request's fields.
func (r BridgeAddrRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	if r.Limit < 0 || r.Limit > MaxAddrPage {
		return fmt.Errorf("%s: addr: limit %d out of range 1-%d", r.Name, r.Limit, MaxAddrPage)
	}
	if r.After != nil {
		if _, err := r.After.Parse(); err != nil {
			return fmt.Errorf("%s: addr: %w", r.Name, err)
		}
	}
	return nil
}

// PageSize is the number of entries the request asks for: Limit, or
// MaxAddrPage when it is 0.
func (r BridgeAddrRequest) PageSize() int {
	if r.Limit == 0 {
		return MaxAddrPage
	}
	return r.Limit
}

// Validate checks the request's fields.
func (r StaticRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	m, err := frame.ParseMAC(r.MAC)
	if err != nil {
		return fmt.Errorf("%s: static: %v", r.Name, err)
	}
	switch {
	case m.IsZero():
		return fmt.Errorf("%s: static %s: the all-zero MAC is not a station address", r.Name, m)
	case m.IsMulticast():
		return fmt.Errorf("%s: static %s: a multicast or broadcast MAC is not a station address", r.Name, m)
	}
	if err := checkIface(r.Name, "static "+m.String(), r.Iface); err != nil {
		return err
	}
	if err := config.CheckVLAN(int(r.VLAN)); err != nil {
		return fmt.Errorf("%s: static %s: %w", r.Name, m, err)
	}
	return nil
}

// Validate checks the request's fields.
func (r DelAddrRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	if _, err := frame.ParseMAC(r.MAC); err != nil {
		return fmt.Errorf("%s: deladdr: %v", r.Name, err)
	}
	if r.VLAN != nil {
		if err := config.CheckVLAN(int(*r.VLAN)); err != nil {
			return fmt.Errorf("%s: deladdr %s: %w", r.Name, r.MAC, err)
		}
	}
	return nil
}

// Validate checks the request's fields.
func (r EnableRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	return checkIface(r.Name, "port", r.Iface)
}

// Validate checks the request's fields.
func (r FlushRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	if r.Port == "" {
		return nil
	}
	return checkIface(r.Name, "flush --port", r.Port)
}

// Validate checks the request's fields.
func (r BridgeSetRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	if r.Timeout == nil && r.MaxAddr == nil && r.FwdMask == nil {
		return fmt.Errorf("%s: set: nothing to set (give --timeout, --maxaddr or --fwd-mask)", r.Name)
	}
	if r.FwdMask != nil {
		if err := bridge.CheckForwardMask(*r.FwdMask); err != nil {
			return fmt.Errorf("%s: set: %w", r.Name, err)
		}
	}
	if r.Timeout != nil {
		if err := config.CheckTimeout(*r.Timeout); err != nil {
			return fmt.Errorf("%s: set: %w", r.Name, err)
		}
	}
	if r.MaxAddr != nil {
		if err := config.CheckMaxAddr(*r.MaxAddr); err != nil {
			return fmt.Errorf("%s: set: %w", r.Name, err)
		}
	}
	return nil
}

// Validate checks the request's fields.
func (r BridgePortRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	if err := checkIface(r.Name, "port", r.Iface); err != nil {
		return err
	}
	if r == (BridgePortRequest{Name: r.Name, Iface: r.Iface}) {
		return fmt.Errorf("%s: port %s: no flag to change (give --learning, --discover, --blocknonip, --stack, --promisc, --stp, --edge, --autoedge, --ptp, --ifpriority, --ifcost, --storm-limit or --bpdu-guard)", r.Name, r.Iface)
	}
	if r.PTP != nil {
		if _, err := stp.ParsePointToPoint(*r.PTP); err != nil {
			return fmt.Errorf("%s: port %s: %w", r.Name, r.Iface, err)
		}
	}
	return nil
}

// Validate checks the request's fields.
func (r AddSpanRequest) Validate() error {
	if err := checkBridge(r.Name); err != nil {
		return err
	}
	return checkIface(r.Name, "span", r.Iface)
}

// Validate checks the request's fields.
func (r DelSpanRequest) Validate() error { return AddSpanRequest(r).Validate() }

// Validate checks the request's fields.
func (r PortShowRequest) Validate() error {
	if r.Name == "" {
		return nil
	}
	return config.CheckName("interface", r.Name)
}

// Validate checks the request's fields; there are none.
func (VersionRequest) Validate() error { return nil }

// The operations of the bridge requests, and of port show and version. A
// state operation's request is also its edit of the configuration (Edit),
// made by internal/config; the daemon runs every Edit the same way.

// bridgeOps are the rows of these operations in the operation table.
var bridgeOps = []opSpec{
	state[BridgeCreateRequest](),
	state[BridgeDestroyRequest](),
	state[BridgeAddRequest](),
	state[BridgeDelRequest](),
	state[StaticRequest](),
	state[BridgeSetRequest](),
	state[BridgePortRequest](),
	state[BridgeSTPRequest](),
	state[AddSpanRequest](),
	state[DelSpanRequest](),
	action(Handler.BridgeDelAddr),
	action(Handler.BridgeFlush),
	action(Handler.BridgeEnable),
	list(func(ctx context.Context, h Handler, r BridgeShowRequest) ([]BridgeInfo, error) {
		return h.BridgeShow(ctx, r.Name)
	}),
	list(func(ctx context.Context, h Handler, r BridgeAddrRequest) ([]AddrInfo, error) {
		return h.BridgeAddr(ctx, r)
	}),
	list(func(ctx context.Context, h Handler, r PortShowRequest) ([]PortInfo, error) {
		return h.PortShow(ctx, r.Name)
	}),
	op(func(ctx context.Context, h Handler, _ VersionRequest) (any, error) { return h.Version(ctx) }),
}

func (BridgeCreateRequest) Op() string  { return OpBridgeCreate }
func (BridgeDestroyRequest) Op() string { return OpBridgeDestroy }
func (BridgeAddRequest) Op() string     { return OpBridgeAdd }
func (BridgeDelRequest) Op() string     { return OpBridgeDel }
func (BridgeShowRequest) Op() string    { return OpBridgeShow }
func (BridgeAddrRequest) Op() string    { return OpBridgeAddr }
func (StaticRequest) Op() string        { return OpBridgeStatic }
func (DelAddrRequest) Op() string       { return OpBridgeDelAddr }
func (FlushRequest) Op() string         { return OpBridgeFlush }
func (EnableRequest) Op() string        { return OpBridgeEnable }
func (BridgeSetRequest) Op() string     { return OpBridgeSet }
func (BridgePortRequest) Op() string    { return OpBridgePort }
func (AddSpanRequest) Op() string       { return OpBridgeAddSpan }
func (DelSpanRequest) Op() string       { return OpBridgeDelSpan }
func (PortShowRequest) Op() string      { return OpPortShow }
func (VersionRequest) Op() string       { return OpVersion }

func (r BridgeCreateRequest) Edit(c *config.Config, h config.Host) error {
	return c.CreateBridge(r.Name, r.Local, h)
}

func (r BridgeDestroyRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DestroyBridge(r.Name)
}

func (r BridgeAddRequest) Edit(c *config.Config, h config.Host) error {
	if err := c.AddPorts(r.Name, r.Ifaces, h); err != nil || r.Force {
		return err
	}
	return config.CheckNotManagement(r.Name, "add", r.Ifaces, h)
}

func (r BridgeDelRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DelPorts(r.Name, r.Ifaces)
}

func (r StaticRequest) Edit(c *config.Config, _ config.Host) error {
	mac, err := frame.ParseMAC(r.MAC)
	if err != nil {
		return fmt.Errorf("%s: static: %w", r.Name, err)
	}
	s := config.Static{MAC: mac, VLAN: r.VLAN, Port: r.Iface}
	if r.Replace {
		return c.MoveStatic(r.Name, s)
	}
	return c.AddStatic(r.Name, s)
}

// Edit is the state part of deladdr: the address's static entries.
func (r DelAddrRequest) Edit(c *config.Config, _ config.Host) error {
	mac, err := frame.ParseMAC(r.MAC)
	if err != nil {
		return fmt.Errorf("%s: deladdr: %w", r.Name, err)
	}
	return c.DelStatics(r.Name, mac, r.VLAN)
}

// Edit is the state part of flush: with All, the static entries.
func (r FlushRequest) Edit(c *config.Config, _ config.Host) error {
	return c.Flush(r.Name, r.Port, r.All)
}

func (r BridgeSetRequest) Edit(c *config.Config, _ config.Host) error {
	return c.SetBridge(r.Name, r.Timeout, r.MaxAddr, r.FwdMask)
}

func (r BridgePortRequest) Edit(c *config.Config, _ config.Host) error {
	return c.SetPort(r.Name, r.Iface, config.PortChange{
		Learning: r.Learning, Discover: r.Discover, BlockNonIP: r.BlockNonIP, Stack: r.Stack, Promisc: r.Promisc,
		StormLimit: r.StormLimit, BPDUGuard: r.BPDUGuard,
		STP: config.PortSTPChange{STP: r.STP, Edge: r.Edge, AutoEdge: r.AutoEdge, PTP: r.PTP, IfPriority: r.IfPriority, IfCost: r.IfCost},
	})
}

func (r AddSpanRequest) Edit(c *config.Config, h config.Host) error {
	return c.AddSpan(r.Name, r.Iface, h)
}

func (r DelSpanRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DelSpan(r.Name, r.Iface)
}
