// Package config reads and writes swctl's configuration file (by default
// /etc/swctl/swctl.conf; the format is described in docs/CONFIG.md).
//
// The file is a list of blocks, one per object, in the style of ifconfig
// and pf.conf:
//
//	bridge bridge0 {
//	    local 02:5e:00:12:34:56
//	    timeout 240
//	    maxaddr 8192
//	    stp on priority 4096
//	    fwd-mask 0x4000
//	    port eth1
//	    port eth2 -learning blocknonip stack
//	    port trunk0 ifcost 2000 -autoedge
//	    span eth3
//	    static 02:00:00:00:00:01 eth1 vlan 10
//	}
//
//	trunk trunk0 {
//	    proto lacp
//	    lladdr 02:5e:00:12:34:57
//	    hash l2,l3,l4
//	    lacp-mode active
//	    lacp-timeout fast
//	    lacp-system-priority 32768
//	    lacp-key 0
//	    updelay 200
//	    downdelay 0
//	    min-links 1
//	    preempt off
//	    tx-queue-bytes 524288
//	    tx-queue-target off
//	    port eth3 priority 10 lacp-port-priority 100
//	    port eth4
//	}
//
// Parse checks everything a daemon would otherwise discover half-way
// through applying the file, and names the file, line and cause of the
// first error. Format writes a Config back in a canonical form, so that
// Parse(Format(c)) gives c again; WriteFile replaces the file atomically.
package config

import (
	"fmt"

	"github.com/swctl/swctl/frame"
)

// DefaultPath is where the daemon looks for its configuration.
const DefaultPath = "/etc/swctl/swctl.conf"

// Config is the whole configuration of one daemon.
type Config struct {
	// Bridges are the configured bridges, in file order.
	Bridges []Bridge
	// Trunks are the configured trunks (link aggregates), in file order.
	Trunks []Trunk
	// LBs are the configured load balancers, in file order (lb.go).
	LBs []LB
}

// Bridge is one learning bridge.
type Bridge struct {
	// Name is the bridge's name, and the name of its TAP when Local is set.
	Name string
	// Local gives the host a TAP interface, named after the bridge, that is
	// a member of the bridge.
	Local bool
	// LocalMAC is the hardware address of the local TAP, kept so that it is
	// the same after a restart. The zero MAC means none has been chosen yet
	// (the daemon picks one and saves it). Only meaningful with Local.
	LocalMAC frame.MAC
	// Timeout is the address ageing time in seconds; 0 means never.
	Timeout int
	// MaxAddr is the capacity of the address table.
	MaxAddr int
	// Ports are the member interfaces, in file order.
	Ports []Port
	// Spans are the span interfaces, which get a copy of every frame the
	// bridge forwards, in file order.
	Spans []string
	// Statics are the static address-table entries, in file order.
	Statics []Static
	// STP is the spanning tree; nil means the defaults (off). Use
	// STPSettings to read it.
	STP *STP
	// FwdMask has bit n set to forward frames to 01:80:c2:00:00:0n like
	// other multicast (LLDP 0x4000, 802.1X 0x0008), as Linux's
	// group_fwd_mask; bits 0-2 are refused (bridge.CheckForwardMask).
	FwdMask uint16
}

// Port is one member of a bridge and its flags.
type Port struct {
	// Name is the member interface's name.
	Name string
	// Learning makes the bridge learn source addresses on this port
	// (default on).
	Learning bool
	// Discover makes the bridge flood unknown unicast to this port
	// (default on).
	Discover bool
	// BlockNonIP drops frames whose outer ethertype is not IPv4, IPv6, ARP
	// or RARP, in both directions (default off).
	BlockNonIP bool
	// Stack lets frames received on this port also reach the host's own IP
	// stack on this interface (default off: the daemon hides them).
	Stack bool
	// NoPromisc keeps the member out of promiscuous mode ("-promisc";
	// default: promiscuous while a member). Only for measurements on
	// links that deliver every frame anyway (veth): a member on a real
	// NIC then sees only frames for its own MAC.
	NoPromisc bool
	// STP is the member's spanning tree settings; nil means the defaults.
	// Use STPSettings to read it.
	STP *PortSTP
	// StormLimit is the most broadcast, multicast and unknown-unicast
	// frames per second received on the port that the bridge floods
	// ("storm-limit N"; 0, the default, is no limit).
	StormLimit int
	// BPDUGuard disables the port when it receives a BPDU ("bpdu-guard
	// on"): with the spanning tree on, only when the port is an edge
	// port ("edge"); with it off, always.
	BPDUGuard bool
}

// Static is a static address-table entry: it never ages, never moves and
// survives a flush that is not --all.
type Static struct {
	// MAC is the station's address; always unicast and not zero.
	MAC frame.MAC
	// VLAN is the VLAN ID, 0 for untagged frames.
	VLAN uint16
	// Port is the member the address is reached through.
	Port string
}

// Trunk is one link aggregate: a Port made of member ports, and an
// interface (a TAP named after it) unless it is a bridge member.
type Trunk struct {
	// Name is the trunk's name, and the name of its TAP.
	Name string
	// Proto is the protocol, one of Protos (ProtoFailover by default).
	Proto string
	// LLAddr is the trunk's hardware address, kept so that it is the same
	// after a restart. The zero MAC means none has been chosen yet (the
	// daemon takes the first port's MAC, or a random one, and saves it).
	LLAddr frame.MAC
	// Promisc selects the promisc policy: member MACs are left alone and
	// members are made promiscuous. Off (the default) is the lladdr
	// policy: every member gets LLAddr, and its own MAC back when it
	// leaves.
	Promisc bool
	// Hash is the header fields the loadbalance and lacp protocols hash,
	// in canonical form (CanonicalHash): "l2,l3,l4" by default.
	Hash string
	// LACPMode is LACPActive (default) or LACPPassive.
	LACPMode string
	// LACPTimeout is LACPSlow (default) or LACPFast: the timeout we
	// advertise and apply.
	LACPTimeout string
	// LACPSystemPriority is the LACP system priority, 0 to 65535, lower
	// wins (default 32768).
	LACPSystemPriority int
	// LACPKey is the LACP operational key, 0 to 65535; 0 (the default)
	// lets the daemon derive it.
	LACPKey int
	// UpDelay and DownDelay are, in milliseconds (0 to MaxDelay), how
	// long a port's link must stay up before the trunk uses it, and down
	// before the trunk stops using it, so that a flapping link does not
	// flap the trunk; 0 (the default) means at once.
	UpDelay, DownDelay int
	// MinLinks is how many ports must collect and distribute for the
	// trunk to be up (its TAP's carrier); 0 (the default) and 1 mean one.
	MinLinks int
	// NoPreempt keeps a failover trunk on the port it uses while that
	// port's link is up, when a port of higher priority comes back
	// ("preempt off"); by default it returns to the highest priority.
	NoPreempt bool
	// Queue is how the trunk queues what its members send (backlog,
	// CoDel, send buffer); set at creation, fixed while it runs.
	Queue TrunkQueue
	// Ports are the member interfaces, in file order (the order they were
	// added, which breaks failover priority ties).
	Ports []TrunkPort
}

// TrunkPort is one member of a trunk.
type TrunkPort struct {
	// Name is the member interface's name.
	Name string
	// Priority is the failover priority, 0 to 65535, higher preferred as
	// the primary (default 0).
	Priority int
	// LACPPortPriority is the LACP port priority, 0 to 65535, lower wins
	// (default 32768).
	LACPPortPriority int
}

// NewBridge returns a bridge with the default settings and no members.
func NewBridge(name string) Bridge {
	return Bridge{Name: name, Timeout: DefaultTimeout, MaxAddr: DefaultMaxAddr}
}

// NewPort returns a member with the default flags (learning, discover).
func NewPort(name string) Port {
	return Port{Name: name, Learning: true, Discover: true}
}

// NewTrunk returns a trunk with the default settings and no ports.
func NewTrunk(name string) Trunk {
	return Trunk{
		Name: name, Proto: DefaultProto, Hash: DefaultHash,
		LACPMode: DefaultLACPMode, LACPTimeout: DefaultLACPTimeout,
		LACPSystemPriority: DefaultLACPSystemPriority,
	}
}

// NewTrunkPort returns a trunk member with the default priorities.
func NewTrunkPort(name string) TrunkPort {
	return TrunkPort{Name: name, LACPPortPriority: DefaultLACPPortPriority}
}

// Trunk returns the trunk called name, or nil.
func (c *Config) Trunk(name string) *Trunk {
	for i := range c.Trunks {
		if c.Trunks[i].Name == name {
			return &c.Trunks[i]
		}
	}
	return nil
}

// Port returns the member called name, or nil.
func (t *Trunk) Port(name string) *TrunkPort {
	for i := range t.Ports {
		if t.Ports[i].Name == name {
			return &t.Ports[i]
		}
	}
	return nil
}

// Bridge returns the bridge called name, or nil.
func (c *Config) Bridge(name string) *Bridge {
	for i := range c.Bridges {
		if c.Bridges[i].Name == name {
			return &c.Bridges[i]
		}
	}
	return nil
}

// Port returns the member called name, or nil.
func (b *Bridge) Port(name string) *Port {
	for i := range b.Ports {
		if b.Ports[i].Name == name {
			return &b.Ports[i]
		}
	}
	return nil
}

// Validate checks a Config built in memory against the rules Parse applies
// to a file. The error names the bridge or trunk and the cause.
func (c *Config) Validate() error {
	k := newChecker()
	for i := range c.Bridges {
		b := &c.Bridges[i]
		wrap := func(err error) error { return fmt.Errorf("bridge %s: %w", b.Name, err) }
		if err := k.object("bridge", b.Name, 0); err != nil {
			return err
		}
		if !b.Local && !b.LocalMAC.IsZero() {
			return wrap(fmt.Errorf("local MAC %s set without local", b.LocalMAC))
		}
		if b.Local && !b.LocalMAC.IsZero() {
			if err := CheckUnicast("local", b.LocalMAC); err != nil {
				return wrap(err)
			}
		}
		if err := CheckTimeout(b.Timeout); err != nil {
			return wrap(err)
		}
		if err := CheckMaxAddr(b.MaxAddr); err != nil {
			return wrap(err)
		}
		if err := b.checkSTP(); err != nil {
			return wrap(err)
		}
		for _, p := range b.Ports {
			if err := k.member(b.Name, "port", p.Name, 0); err != nil {
				return wrap(err)
			}
		}
		for _, s := range b.Spans {
			if err := k.member(b.Name, "span", s, 0); err != nil {
				return wrap(err)
			}
		}
		for _, s := range b.Statics {
			if err := k.static(b, s, 0); err != nil {
				return wrap(err)
			}
		}
		if _, err := k.endBridge(b); err != nil {
			return wrap(err)
		}
	}
	for i := range c.Trunks {
		t := &c.Trunks[i]
		wrap := func(err error) error { return fmt.Errorf("trunk %s: %w", t.Name, err) }
		if err := k.object("trunk", t.Name, 0); err != nil {
			return err
		}
		if err := t.checkSettings(); err != nil {
			return wrap(err)
		}
		for _, p := range t.Ports {
			if err := checkTrunkPort(p); err != nil {
				return wrap(err)
			}
			if err := k.trunkPort(t.Name, p.Name, 0); err != nil {
				return wrap(err)
			}
		}
	}
	if _, err := k.end(c); err != nil {
		return err
	}
	return c.checkLBs()
}

// checkSettings checks a trunk's settings other than its ports, as Parse
// does one statement at a time.
func (t *Trunk) checkSettings() error {
	if err := CheckProto(t.Proto); err != nil {
		return err
	}
	if !t.LLAddr.IsZero() {
		if err := CheckUnicast("lladdr", t.LLAddr); err != nil {
			return err
		}
	}
	canon, err := CanonicalHash(t.Hash)
	if err != nil {
		return err
	}
	if canon != t.Hash {
		return fmt.Errorf("hash %q: not in canonical form (want %q)", t.Hash, canon)
	}
	if err := CheckLACPMode(t.LACPMode); err != nil {
		return err
	}
	if err := CheckLACPTimeout(t.LACPTimeout); err != nil {
		return err
	}
	if err := CheckPriority("lacp-system-priority", t.LACPSystemPriority); err != nil {
		return err
	}
	if err := CheckPriority("lacp-key", t.LACPKey); err != nil {
		return err
	}
	if err := CheckDelay("updelay", t.UpDelay); err != nil {
		return err
	}
	if err := CheckDelay("downdelay", t.DownDelay); err != nil {
		return err
	}
	if err := t.Queue.Check(); err != nil {
		return err
	}
	return CheckMinLinks(t.MinLinks)
}

// checkTrunkPort checks a trunk member's name and priorities.
func checkTrunkPort(p TrunkPort) error {
	if err := CheckName("interface", p.Name); err != nil {
		return fmt.Errorf("port: %w", err)
	}
	if err := CheckPriority("priority", p.Priority); err != nil {
		return fmt.Errorf("port %s: %w", p.Name, err)
	}
	if err := CheckPriority("lacp-port-priority", p.LACPPortPriority); err != nil {
		return fmt.Errorf("port %s: %w", p.Name, err)
	}
	return nil
}

// objectDecl records where a bridge or trunk is declared.
type objectDecl struct {
	// kind is "bridge" or "trunk".
	kind string
	// line is where it was declared, 0 when not from a file.
	line int
}

// ifaceUse records where an interface is used.
type ifaceUse struct {
	// kind is the kind of object the interface belongs to: "bridge" or
	// "trunk".
	kind string
	// owner is the bridge or trunk the interface belongs to.
	owner string
	// role is "port" or "span".
	role string
	// line is where it was declared, 0 when not from a file.
	line int
}

// staticKey identifies a static entry within a bridge.
type staticKey struct {
	// mac is the station's address.
	mac frame.MAC
	// vlan is its VLAN ID.
	vlan uint16
}

// checker applies the rules that span statements: uniqueness of bridge and
// trunk names and of interfaces, statics on members. Parse and Validate
// share it.
type checker struct {
	// objects maps a bridge or trunk name to its declaration: the two
	// share one namespace, since both become interfaces.
	objects map[string]objectDecl
	// ifaces maps an interface name to where it is used.
	ifaces map[string]ifaceUse
	// statics maps the current bridge's static entries to their lines.
	statics map[staticKey]int
	// staticLines are the lines of the current bridge's statics, in order.
	staticLines []int
}

func newChecker() *checker {
	return &checker{objects: map[string]objectDecl{}, ifaces: map[string]ifaceUse{}}
}

// at describes a line for "first declared at" messages.
func at(line int) string {
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", line)
}

// object records the declaration of a bridge or trunk (kind) called name.
func (k *checker) object(kind, name string, line int) error {
	if err := CheckName(kind, name); err != nil {
		return err
	}
	if first, ok := k.objects[name]; ok {
		if first.kind == kind {
			return fmt.Errorf("%s %s: declared twice%s", kind, name, at(first.line))
		}
		return fmt.Errorf("%s %s: name already used by %s %s%s", kind, name, first.kind, name, at(first.line))
	}
	k.objects[name] = objectDecl{kind: kind, line: line}
	k.statics = map[staticKey]int{}
	k.staticLines = nil
	return nil
}

// member records iface as a port or span of bridge.
func (k *checker) member(bridge, role, iface string, line int) error {
	if err := CheckName("interface", iface); err != nil {
		return fmt.Errorf("%s: %w", role, err)
	}
	return k.use("bridge", bridge, role, iface, line)
}

// trunkPort records iface as a port of trunk; its name is checked.
func (k *checker) trunkPort(trunk, iface string, line int) error {
	return k.use("trunk", trunk, "port", iface, line)
}

// use records iface as a port or span (role) of a bridge or trunk (kind),
// refusing an interface already used anywhere.
func (k *checker) use(kind, owner, role, iface string, line int) error {
	if u, ok := k.ifaces[iface]; ok {
		same := u.kind == kind && u.owner == owner
		switch {
		case same && u.role == role:
			return fmt.Errorf("%s %s: listed twice%s", role, iface, at(u.line))
		case same:
			return fmt.Errorf("%s %s: already a %s of this %s%s", role, iface, u.role, kind, at(u.line))
		default:
			return fmt.Errorf("%s %s: already a %s of %s %s%s", role, iface, u.role, u.kind, u.owner, at(u.line))
		}
	}
	k.ifaces[iface] = ifaceUse{kind: kind, owner: owner, role: role, line: line}
	return nil
}

func (k *checker) static(b *Bridge, s Static, line int) error {
	if err := CheckUnicast("static "+s.MAC.String(), s.MAC); err != nil {
		return err
	}
	if err := CheckVLAN(int(s.VLAN)); err != nil {
		return fmt.Errorf("static %s: %w", s.MAC, err)
	}
	if err := CheckName("interface", s.Port); err != nil {
		return fmt.Errorf("static %s: %w", s.MAC, err)
	}
	key := staticKey{s.MAC, s.VLAN}
	if first, ok := k.statics[key]; ok {
		return fmt.Errorf("static %s vlan %d: listed twice%s", s.MAC, s.VLAN, at(first))
	}
	k.statics[key] = line
	k.staticLines = append(k.staticLines, line)
	return nil
}

// endBridge checks what needs the whole bridge: every static is on a
// member. It returns the line of the offending statement.
func (k *checker) endBridge(b *Bridge) (int, error) {
	for i, s := range b.Statics {
		if b.Port(s.Port) == nil {
			line := 0
			if i < len(k.staticLines) {
				line = k.staticLines[i]
			}
			return line, fmt.Errorf("static %s: %s is not a port of this bridge", s.MAC, s.Port)
		}
	}
	return 0, nil
}

// end checks what needs the whole file: no bridge or trunk has a bridge's
// local TAP as a member, and no trunk has a bridge or a trunk as a port (a
// bridge may have a trunk as a member: that is how a trunk joins it). It
// returns the line of the offending statement.
func (k *checker) end(c *Config) (int, error) {
	for _, b := range c.Bridges {
		if !b.Local {
			continue
		}
		if u, ok := k.ifaces[b.Name]; ok {
			return u.line, fmt.Errorf("%s %s: %s %s: is the local TAP of bridge %s, swctl's own interface", u.kind, u.owner, u.role, b.Name, b.Name)
		}
	}
	for _, t := range c.Trunks {
		for _, p := range t.Ports {
			if d, ok := k.objects[p.Name]; ok {
				u := k.ifaces[p.Name]
				return u.line, fmt.Errorf("trunk %s: port %s: is %s %s, not an interface a trunk can aggregate", t.Name, p.Name, d.kind, p.Name)
			}
		}
	}
	return 0, nil
}

// CheckUnicast refuses a MAC that cannot be a station's: all zeros, or
// multicast; what names the setting.
func CheckUnicast(what string, m frame.MAC) error {
	switch {
	case m.IsZero():
		return fmt.Errorf("%s: the all-zero MAC is not a station address", what)
	case m.IsMulticast():
		return fmt.Errorf("%s: %s is a multicast or broadcast MAC, not a station address", what, m)
	}
	return nil
}
