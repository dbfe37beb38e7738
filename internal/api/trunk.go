package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
)

// Trunk port flags as they appear in TrunkPortInfo.Flags: trunk(4)'s words.
const (
	// TrunkFlagMaster marks the primary port of a failover trunk.
	TrunkFlagMaster = "master"
	// TrunkFlagActive marks a port the protocol uses (it may send or
	// receive for the trunk).
	TrunkFlagActive = "active"
	// TrunkFlagCollecting marks a port whose received frames the trunk
	// accepts.
	TrunkFlagCollecting = "collecting"
	// TrunkFlagDistributing marks a port the trunk sends frames by.
	TrunkFlagDistributing = "distributing"
)

// TrunkQueueInfo is how a trunk queues what its members send, as it
// runs (defaults filled in).
type TrunkQueueInfo struct {
	// TxQueueBytes bounds each member's transmit backlog; 0 when the
	// members have none.
	TxQueueBytes int `json:"tx_queue_bytes"`
	// TxQueueDelayMS is how long a frame may wait in a backlog, in ms.
	TxQueueDelayMS int `json:"tx_queue_delay_ms"`
	// TxQueueTargetUS is CoDel's target sojourn time in µs; 0 when CoDel
	// is off.
	TxQueueTargetUS int `json:"tx_queue_target_us"`
	// SuperFrames is whether backlogs hold super-frames the send buffer
	// has no room for.
	SuperFrames bool `json:"tx_queue_super_frames"`
	// SendBuffer is the members' socket send buffer in bytes; 0 for the
	// kernel's default.
	SendBuffer int `json:"send_buffer"`
}

// TrunkCreateRequest creates a trunk (swctl trunk create). Empty strings
// take the defaults of config.NewTrunk.
type TrunkCreateRequest struct {
	// Name is the new trunk's name, and the name of its TAP.
	Name string `json:"name"`
	// Proto is the protocol, one of config.Protos; "" for failover.
	Proto string `json:"proto,omitempty"`
	// Ports are the member interfaces, in order (may be empty; no
	// duplicates). All or none are added.
	Ports []string `json:"ports,omitempty"`
	// Promisc selects the promisc policy (members keep their MACs and
	// are made promiscuous) instead of the lladdr policy.
	Promisc bool `json:"promisc,omitempty"`
	// LACPMode is "active" or "passive"; "" for active.
	LACPMode string `json:"lacp_mode,omitempty"`
	// LACPTimeout is "slow" or "fast"; "" for slow.
	LACPTimeout string `json:"lacp_timeout,omitempty"`
	// Hash is the hash fields, as config.CanonicalHash takes them (any
	// order); "" for l2,l3,l4.
	Hash string `json:"hash,omitempty"`
	// UpDelay, DownDelay and MinLinks are the link policy: the delays in
	// milliseconds, 0 to config.MaxDelay, and the ports the trunk needs
	// to be up, 0 to config.MaxMinLinks; nil for 0.
	UpDelay   *int `json:"updelay,omitempty"`
	DownDelay *int `json:"downdelay,omitempty"`
	MinLinks  *int `json:"min_links,omitempty"`
	// Preempt is whether failover returns to the port of highest
	// priority when it comes back; nil for true.
	Preempt *bool `json:"preempt,omitempty"`
	// LACPSystemPriority (lower wins) and LACPKey (0 = derive) are the
	// LACP settings that trunk set also changes; nil for 32768 and 0.
	LACPSystemPriority *int `json:"lacp_system_priority,omitempty"`
	LACPKey            *int `json:"lacp_key,omitempty"`
	// Priority and LACPPortPriority are the ports' failover and LACP
	// port priorities, as trunk add takes them; nil for the defaults.
	Priority         *int `json:"priority,omitempty"`
	LACPPortPriority *int `json:"lacp_port_priority,omitempty"`
	// LLAddr is the trunk's MAC, aa:bb:cc:dd:ee:ff; "" for its first
	// port's, or a random one without ports.
	LLAddr string `json:"lladdr,omitempty"`
	// Queue is how the trunk queues what its members send; nil for the
	// defaults.
	Queue *config.TrunkQueue `json:"queue,omitempty"`
	// Force takes a port that holds the host's default route, which is
	// refused otherwise.
	Force bool `json:"force,omitempty"`
}

// TrunkDestroyRequest destroys a trunk and releases its ports
// (swctl trunk destroy).
type TrunkDestroyRequest struct {
	// Name is the trunk.
	Name string `json:"name"`
}

// TrunkAddRequest adds ports to a trunk, all or none (swctl trunk add).
type TrunkAddRequest struct {
	// Name is the trunk.
	Name string `json:"name"`
	// Ifaces are the interfaces to add, at least one, no duplicates.
	Ifaces []string `json:"ifaces"`
	// Priority is the new ports' failover priority (higher preferred);
	// nil for the default, 0.
	Priority *int `json:"priority,omitempty"`
	// LACPPortPriority is the new ports' LACP port priority (lower wins);
	// nil for the default, 32768.
	LACPPortPriority *int `json:"lacp_port_priority,omitempty"`
	// Force takes an interface that holds the host's default route,
	// which is refused otherwise.
	Force bool `json:"force,omitempty"`
}

// TrunkDelRequest removes ports from a trunk, all or none
// (swctl trunk del).
type TrunkDelRequest struct {
	// Name is the trunk.
	Name string `json:"name"`
	// Ifaces are the ports to remove, at least one, no duplicates.
	Ifaces []string `json:"ifaces"`
}

// TrunkSetRequest changes a trunk's settings (swctl trunk set). Nil fields
// are left as they are; at least one must be set.
type TrunkSetRequest struct {
	// Name is the trunk.
	Name string `json:"name"`
	// Proto is the new protocol, one of config.Protos.
	Proto *string `json:"proto,omitempty"`
	// LACPMode is the new LACP mode, "active" or "passive".
	LACPMode *string `json:"lacp_mode,omitempty"`
	// LACPTimeout is the new LACP timeout, "slow" or "fast".
	LACPTimeout *string `json:"lacp_timeout,omitempty"`
	// Hash is the new hash fields, as config.CanonicalHash takes them.
	Hash *string `json:"hash,omitempty"`
	// LACPSystemPriority is the new LACP system priority, 0 to 65535.
	LACPSystemPriority *int `json:"lacp_system_priority,omitempty"`
	// LACPKey is the new LACP key, 0 to 65535 (0 = derive).
	LACPKey *int `json:"lacp_key,omitempty"`
	// UpDelay and DownDelay are the new link delays in milliseconds, 0
	// to config.MaxDelay.
	UpDelay   *int `json:"updelay,omitempty"`
	DownDelay *int `json:"downdelay,omitempty"`
	// MinLinks is the new number of ports the trunk needs to be up, 0 to
	// config.MaxMinLinks.
	MinLinks *int `json:"min_links,omitempty"`
	// Preempt is whether failover returns to the port of highest
	// priority when it comes back.
	Preempt *bool `json:"preempt,omitempty"`
	// Promisc switches between the promisc policy (true) and the lladdr
	// policy; the ports rejoin under the new one. nil leaves it.
	Promisc *bool `json:"promisc,omitempty"`
}

// TrunkPortRequest changes a port's settings in place (swctl trunk
// port): its failover and LACP port priorities. Nil fields are left as they are; at least
// one must be set.
type TrunkPortRequest struct {
	// Name is the trunk.
	Name string `json:"name"`
	// Iface is the port.
	Iface string `json:"iface"`
	// Priority is the new failover priority, 0 to 65535, higher
	// preferred.
	Priority *int `json:"priority,omitempty"`
	// LACPPortPriority is the new LACP port priority, 0 to 65535, lower
	// wins.
	LACPPortPriority *int `json:"lacp_port_priority,omitempty"`
}

// TrunkShowRequest asks for the settings and ports of one trunk or all
// (swctl trunk show).
type TrunkShowRequest struct {
	// Name is the trunk, or "" for every trunk.
	Name string `json:"name,omitempty"`
}

// TrunkInfo is one trunk as shown by swctl trunk show.
type TrunkInfo struct {
	// Name is the trunk's name.
	Name string `json:"name"`
	// Proto is the protocol, one of config.Protos.
	Proto string `json:"proto"`
	// LLAddr is the trunk's hardware address, aa:bb:cc:dd:ee:ff; "" while
	// none is chosen.
	LLAddr string `json:"lladdr"`
	// Promisc is true under the promisc policy, false under the lladdr
	// policy.
	Promisc bool `json:"promisc"`
	// Hash is the hash fields in canonical form ("l2,l3,l4").
	Hash string `json:"hash"`
	// LACPMode is "active" or "passive".
	LACPMode string `json:"lacp_mode"`
	// LACPTimeout is "slow" or "fast".
	LACPTimeout string `json:"lacp_timeout"`
	// LACPSystemPriority is the LACP system priority.
	LACPSystemPriority int `json:"lacp_system_priority"`
	// LACPKey is the configured LACP key, 0 when derived (the key in use
	// is each port's actor key).
	LACPKey int `json:"lacp_key"`
	// UpDelay and DownDelay are the link delays in milliseconds, 0 for
	// at once.
	UpDelay   int `json:"updelay"`
	DownDelay int `json:"downdelay"`
	// MinLinks is how many ports must collect and distribute for the
	// trunk to be active, as configured (0 and 1 mean one).
	MinLinks int `json:"min_links"`
	// Preempt is whether failover returns to the port of highest
	// priority when it comes back.
	Preempt bool `json:"preempt"`
	// Queue is how the trunk queues what its members send, defaults
	// filled in.
	Queue TrunkQueueInfo `json:"queue"`
	// Active is true while enough ports are distributing (one, or
	// MinLinks): the trunk's carrier is up.
	Active bool `json:"active"`
	// Tap is the interface that gives the trunk to the host: the trunk's
	// name where the OS lets swctl name it, the kernel's tapN where not
	// (OpenBSD; FreeBSD when the rename is refused); "" while the trunk is
	// a bridge member.
	Tap string `json:"tap,omitempty"`
	// Ports are the members in the order they were added.
	Ports []TrunkPortInfo `json:"ports"`
	// RxPackets counts frames the trunk accepted from its ports.
	RxPackets uint64 `json:"rx_packets"`
	// RxBytes counts the bytes of those frames.
	RxBytes uint64 `json:"rx_bytes"`
	// TxPackets counts frames the trunk sent by its ports.
	TxPackets uint64 `json:"tx_packets"`
	// TxBytes counts the bytes of those frames.
	TxBytes uint64 `json:"tx_bytes"`
	// RxDropped counts received frames the trunk dropped (on a port that
	// is not collecting, for example).
	RxDropped uint64 `json:"rx_dropped"`
	// TxDropped counts frames the trunk could not send (no port
	// distributing, for example).
	TxDropped uint64 `json:"tx_dropped"`
	// Announced counts the gratuitous ARPs and unsolicited neighbour
	// advertisements a failover trunk sent for the host's addresses on
	// its TAP after the port it sends by changed.
	Announced uint64 `json:"announced"`
}

// MarshalJSON writes an empty port list as [] rather than null.
func (t TrunkInfo) MarshalJSON() ([]byte, error) {
	type plain TrunkInfo
	if t.Ports == nil {
		t.Ports = []TrunkPortInfo{}
	}
	return json.Marshal(plain(t))
}

// TrunkPortInfo is one member in TrunkInfo.
type TrunkPortInfo struct {
	// Name is the member interface.
	Name string `json:"name"`
	// Link is LinkUp, LinkDown or LinkAbsent.
	Link string `json:"link"`
	// Priority is the failover priority (higher preferred).
	Priority int `json:"priority"`
	// Flags are the trunk flags that are on, from TrunkFlagMaster,
	// TrunkFlagActive, TrunkFlagCollecting and TrunkFlagDistributing, in
	// that order.
	Flags []string `json:"flags"`
	// LACP is the port's LACP state; nil (omitted) unless the protocol
	// is lacp.
	LACP *LACPInfo `json:"lacp,omitempty"`
	// RxPackets and RxBytes count the frames read from the port, those
	// the trunk refused or handed to its protocol included; TxPackets and
	// TxBytes the frames written to it. All the counters are 0 while the
	// port is absent.
	RxPackets uint64 `json:"rx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
	// RxRefused counts data frames the trunk dropped because the port was
	// not collecting (a failover standby).
	RxRefused uint64 `json:"rx_refused"`
	// RxControl counts slow-protocol frames (LACPDUs, markers) handed to
	// the trunk's protocol.
	RxControl uint64 `json:"rx_control"`
	// RxDropped counts received frames the port dropped, RxBadOffload
	// the part of them whose offload header did not describe them.
	RxDropped    uint64 `json:"rx_dropped"`
	RxBadOffload uint64 `json:"rx_bad_offload"`
	// TxDropped counts frames the port could not send (full ring, link
	// down).
	TxDropped uint64 `json:"tx_dropped"`
	// RingDropped counts frames the kernel dropped because the port's
	// receive ring was full.
	RingDropped uint64 `json:"ring_dropped"`
	// Errors counts I/O errors on the port.
	Errors uint64 `json:"errors"`
	// TxQueueLimit is the byte limit of the port's transmit backlog,
	// where frames its TX ring has no room for wait (0: it has none);
	// TxQueueBytes is what the backlog holds now. TxQueueOverflow counts
	// frames dropped because the backlog held its limit, TxQueueStale
	// frames dropped because they waited longer than its delay limit.
	TxQueueLimit    int    `json:"tx_queue_limit"`
	TxQueueBytes    uint64 `json:"tx_queue_bytes"`
	TxQueueOverflow uint64 `json:"tx_queue_overflow"`
	TxQueueStale    uint64 `json:"tx_queue_stale"`
}

// MarshalJSON writes an empty flag list as [] rather than null.
func (p TrunkPortInfo) MarshalJSON() ([]byte, error) {
	type plain TrunkPortInfo
	if p.Flags == nil {
		p.Flags = []string{}
	}
	return json.Marshal(plain(p))
}

// LACPInfo is the LACP state of one trunk port.
type LACPInfo struct {
	// Actor is what this port says about itself.
	Actor LACPPeerInfo `json:"actor"`
	// Partner is what the port last heard from its partner (the defaults,
	// with an empty system, when it has heard nothing).
	Partner LACPPeerInfo `json:"partner"`
	// Selected is true when the port is selected into the trunk's
	// aggregator.
	Selected bool `json:"selected"`
	// Reason says why the port is not selected; "" when it is.
	Reason string `json:"reason"`
	// RxLACPDUs counts the LACPDUs received on the port.
	RxLACPDUs uint64 `json:"rx_lacpdus"`
	// TxLACPDUs counts the LACPDUs sent by the port.
	TxLACPDUs uint64 `json:"tx_lacpdus"`
	// RxBad counts slow-protocol frames received on the port and ignored
	// (truncated, version 0, bad TLVs, ...).
	RxBad uint64 `json:"rx_bad"`
}

// LACPPeerInfo is one end of a LACP link: the actor or the partner.
type LACPPeerInfo struct {
	// System is the system identifier, "PRIORITY,MAC" (for example
	// "32768,02:5e:00:12:34:57"); "" when unknown.
	System string `json:"system"`
	// Key is the operational key.
	Key int `json:"key"`
	// Port is the port number.
	Port int `json:"port"`
	// State is the state bits that are set, as IEEE 802.1AX names them:
	// "activity", "timeout", "aggregation", "synchronization",
	// "collecting", "distributing", "defaulted", "expired".
	State []string `json:"state"`
}

// MarshalJSON writes an empty state as [] rather than null.
func (p LACPPeerInfo) MarshalJSON() ([]byte, error) {
	type plain LACPPeerInfo
	if p.State == nil {
		p.State = []string{}
	}
	return json.Marshal(plain(p))
}

// Validation of the trunk requests, with the same checks as the
// configuration file (config.CheckProto, CheckHash and the others).

func checkTrunk(name string) error { return config.CheckName("trunk", name) }

// checkTrunkIfaces checks the interfaces of trunk add and del: checkIfaces,
// and none is the trunk itself.
func checkTrunkIfaces(trunk, verb string, ifaces []string) error {
	if err := checkIfaces(trunk, verb, ifaces); err != nil {
		return err
	}
	for _, i := range ifaces {
		if i == trunk {
			return fmt.Errorf("%s: %s %s: is the trunk itself", trunk, verb, i)
		}
	}
	return nil
}

// checkTrunkSettings checks the optional string settings of create and set
// (nil: not given).
func checkTrunkSettings(trunk, verb string, proto, mode, timeout, hash *string) error {
	for _, c := range []struct {
		v     *string
		check func(string) error
	}{
		{proto, config.CheckProto},
		{mode, config.CheckLACPMode},
		{timeout, config.CheckLACPTimeout},
		{hash, config.CheckHash},
	} {
		if c.v == nil {
			continue
		}
		if err := c.check(*c.v); err != nil {
			return fmt.Errorf("%s: %s: %w", trunk, verb, err)
		}
	}
	return nil
}

// checkPriority checks an optional 16-bit setting (nil: not given).
func checkPriority(trunk, verb, what string, n *int) error {
	if n == nil {
		return nil
	}
	if err := config.CheckPriority(what, *n); err != nil {
		return fmt.Errorf("%s: %s: %w", trunk, verb, err)
	}
	return nil
}

// checkPolicy checks the optional link policy settings of create and set
// (nil: not given).
func checkPolicy(trunk, verb string, upDelay, downDelay, minLinks *int) error {
	for _, c := range []struct {
		v     *int
		check func(int) error
	}{
		{upDelay, func(n int) error { return config.CheckDelay("updelay", n) }},
		{downDelay, func(n int) error { return config.CheckDelay("downdelay", n) }},
		{minLinks, config.CheckMinLinks},
	} {
		if c.v == nil {
			continue
		}
		if err := c.check(*c.v); err != nil {
			return fmt.Errorf("%s: %s: %w", trunk, verb, err)
		}
	}
	return nil
}

// given returns &s, or nil when s is "" (the default).
func given(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Validate checks the request's fields.
func (r TrunkCreateRequest) Validate() error {
	if err := checkTrunk(r.Name); err != nil {
		return err
	}
	if err := checkTrunkSettings(r.Name, "create", given(r.Proto), given(r.LACPMode), given(r.LACPTimeout), given(r.Hash)); err != nil {
		return err
	}
	if err := checkPolicy(r.Name, "create", r.UpDelay, r.DownDelay, r.MinLinks); err != nil {
		return err
	}
	for _, p := range []struct {
		what string
		n    *int
	}{{"lacp-system-priority", r.LACPSystemPriority}, {"lacp-key", r.LACPKey}, {"priority", r.Priority}, {"lacp-port-priority", r.LACPPortPriority}} {
		if err := checkPriority(r.Name, "create", p.what, p.n); err != nil {
			return err
		}
	}
	if _, err := r.lladdr(); err != nil {
		return err
	}
	if r.Queue != nil {
		if err := r.Queue.Check(); err != nil {
			return fmt.Errorf("%s: create: %w", r.Name, err)
		}
	}
	if len(r.Ports) == 0 {
		return nil
	}
	return checkTrunkIfaces(r.Name, "port", r.Ports)
}

// lladdr parses and checks LLAddr; zero when not given.
func (r TrunkCreateRequest) lladdr() (frame.MAC, error) {
	if r.LLAddr == "" {
		return frame.MAC{}, nil
	}
	m, err := frame.ParseMAC(r.LLAddr)
	if err == nil {
		err = config.CheckUnicast("lladdr", m)
	}
	if err != nil {
		return frame.MAC{}, fmt.Errorf("%s: create: %w", r.Name, err)
	}
	return m, nil
}

// Validate checks the request's fields.
func (r TrunkDestroyRequest) Validate() error { return checkTrunk(r.Name) }

// Validate checks the request's fields.
func (r TrunkAddRequest) Validate() error {
	if err := checkTrunk(r.Name); err != nil {
		return err
	}
	if err := checkTrunkIfaces(r.Name, "add", r.Ifaces); err != nil {
		return err
	}
	if err := checkPriority(r.Name, "add", "priority", r.Priority); err != nil {
		return err
	}
	return checkPriority(r.Name, "add", "lacp-port-priority", r.LACPPortPriority)
}

// Validate checks the request's fields.
func (r TrunkDelRequest) Validate() error {
	if err := checkTrunk(r.Name); err != nil {
		return err
	}
	return checkIfaces(r.Name, "del", r.Ifaces)
}

// Validate checks the request's fields.
func (r TrunkSetRequest) Validate() error {
	if err := checkTrunk(r.Name); err != nil {
		return err
	}
	if r.Proto == nil && r.LACPMode == nil && r.LACPTimeout == nil && r.Hash == nil && r.LACPSystemPriority == nil && r.LACPKey == nil &&
		r.UpDelay == nil && r.DownDelay == nil && r.MinLinks == nil && r.Preempt == nil && r.Promisc == nil {
		return fmt.Errorf("%s: set: nothing to set (give --proto, --lacp-mode, --lacp-timeout, --lacp-system-priority, --lacp-key, --hash, --updelay, --downdelay, --min-links, --preempt or --promisc)", r.Name)
	}
	if err := checkTrunkSettings(r.Name, "set", r.Proto, r.LACPMode, r.LACPTimeout, r.Hash); err != nil {
		return err
	}
	if err := checkPriority(r.Name, "set", "lacp-system-priority", r.LACPSystemPriority); err != nil {
		return err
	}
	if err := checkPriority(r.Name, "set", "lacp-key", r.LACPKey); err != nil {
		return err
	}
	return checkPolicy(r.Name, "set", r.UpDelay, r.DownDelay, r.MinLinks)
}

// Validate checks the request's fields.
func (r TrunkPortRequest) Validate() error {
	if err := checkTrunk(r.Name); err != nil {
		return err
	}
	if err := checkIface(r.Name, "port", r.Iface); err != nil {
		return err
	}
	if r.Priority == nil && r.LACPPortPriority == nil {
		return fmt.Errorf("%s: port %s: nothing to set (give --priority or --lacp-port-priority)", r.Name, r.Iface)
	}
	if err := checkPriority(r.Name, "port "+r.Iface, "priority", r.Priority); err != nil {
		return err
	}
	return checkPriority(r.Name, "port "+r.Iface, "lacp-port-priority", r.LACPPortPriority)
}

// Validate checks the request's fields.
func (r TrunkShowRequest) Validate() error {
	if r.Name == "" {
		return nil
	}
	return checkTrunk(r.Name)
}

// The operations of the trunk requests, as for the bridge requests.

// trunkOps are the rows of these operations in the operation table.
var trunkOps = []opSpec{
	state[TrunkCreateRequest](),
	state[TrunkDestroyRequest](),
	state[TrunkAddRequest](),
	state[TrunkDelRequest](),
	state[TrunkSetRequest](),
	state[TrunkPortRequest](),
	list(func(ctx context.Context, h Handler, r TrunkShowRequest) ([]TrunkInfo, error) {
		return h.TrunkShow(ctx, r.Name)
	}),
}

func (TrunkCreateRequest) Op() string  { return OpTrunkCreate }
func (TrunkDestroyRequest) Op() string { return OpTrunkDestroy }
func (TrunkAddRequest) Op() string     { return OpTrunkAdd }
func (TrunkDelRequest) Op() string     { return OpTrunkDel }
func (TrunkSetRequest) Op() string     { return OpTrunkSet }
func (TrunkPortRequest) Op() string    { return OpTrunkPort }
func (TrunkShowRequest) Op() string    { return OpTrunkShow }

func (r TrunkCreateRequest) Edit(c *config.Config, h config.Host) error {
	s := config.TrunkSettings{
		Proto: given(r.Proto), LACPMode: given(r.LACPMode), LACPTimeout: given(r.LACPTimeout), Hash: given(r.Hash),
		LACPSystemPriority: r.LACPSystemPriority, LACPKey: r.LACPKey,
		UpDelay: r.UpDelay, DownDelay: r.DownDelay, MinLinks: r.MinLinks, Preempt: r.Preempt,
	}
	mac, err := r.lladdr()
	if err != nil {
		return err
	}
	n := config.TrunkCreation{
		Promisc: r.Promisc, LLAddr: mac, Ports: r.Ports, Priority: r.Priority, LACPPortPriority: r.LACPPortPriority,
	}
	if r.Queue != nil {
		n.Queue = *r.Queue
	}
	if err := c.CreateTrunk(r.Name, s, n, h); err != nil || r.Force {
		return err
	}
	return config.CheckNotManagement(r.Name, "add", r.Ports, h)
}

func (r TrunkDestroyRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DestroyTrunk(r.Name)
}

func (r TrunkAddRequest) Edit(c *config.Config, h config.Host) error {
	if err := c.AddTrunkPorts(r.Name, r.Ifaces, r.Priority, r.LACPPortPriority, h); err != nil || r.Force {
		return err
	}
	return config.CheckNotManagement(r.Name, "add", r.Ifaces, h)
}

func (r TrunkDelRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DelTrunkPorts(r.Name, r.Ifaces)
}

func (r TrunkSetRequest) Edit(c *config.Config, _ config.Host) error {
	return c.SetTrunk(r.Name, config.TrunkSettings{
		Proto: r.Proto, LACPMode: r.LACPMode, LACPTimeout: r.LACPTimeout, Hash: r.Hash,
		LACPSystemPriority: r.LACPSystemPriority, LACPKey: r.LACPKey,
		UpDelay: r.UpDelay, DownDelay: r.DownDelay, MinLinks: r.MinLinks, Preempt: r.Preempt, Promisc: r.Promisc,
	})
}

func (r TrunkPortRequest) Edit(c *config.Config, _ config.Host) error {
	return c.SetTrunkPort(r.Name, r.Iface, r.Priority, r.LACPPortPriority)
}
