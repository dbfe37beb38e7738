package config

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
)

// The edits below are the state operations of swctl: each changes a
// Config (the daemon's copy of the file) or says why not, and nothing else.
// They are the one place that knows what may be a member of what: an
// interface belongs to at most one bridge or trunk, a bridge's local TAP
// belongs to no one, a trunk joins a bridge as a member but is never a
// span port. The daemon then validates the whole result, writes it, and
// makes the running bridges and trunks match it.

// Host is what an edit needs to know about the machine it runs on.
type Host interface {
	// Exists reports whether an interface called name exists.
	Exists(name string) bool
	// HardwareAddr returns the MAC of the interface called name.
	HardwareAddr(name string) (net.HardwareAddr, error)
	// DefaultRouteIfaces names the interfaces the host's default routes
	// leave by.
	DefaultRouteIfaces() ([]string, error)
}

// CheckNotManagement refuses to take any of ifaces into bridge or trunk
// name (for op, "add") when it holds the host's default route: a member's
// own stack no longer sees its frames, so taking the interface the host
// is reached by cuts the host off, and whoever ran the command with it.
// Callers skip it when the user forces the change.
func CheckNotManagement(name, op string, ifaces []string, h Host) error {
	if len(ifaces) == 0 {
		return nil
	}
	held, err := h.DefaultRouteIfaces()
	if err != nil {
		return fmt.Errorf("%s: %s: cannot tell which interface holds the default route: %w (give --force to %s anyway)", name, op, err, op)
	}
	for _, iface := range ifaces {
		if slices.Contains(held, iface) {
			return fmt.Errorf("%s: %s %s: holds the host's default route, so taking it would cut the host off that network (give --force to %s it anyway)", name, op, iface, op)
		}
	}
	return nil
}

// errNothing says that a change request named nothing to change.
var errNothing = errors.New("nothing to change")

// errNoBridge names a bridge that does not exist.
func errNoBridge(name string) error { return fmt.Errorf("%s: no such bridge", name) }

// errNoTrunk names a trunk that does not exist.
func errNoTrunk(name string) error { return fmt.Errorf("%s: no such trunk", name) }

// Clone returns a deep copy of c, for an edit to change.
func (c *Config) Clone() *Config {
	n := &Config{Bridges: make([]Bridge, len(c.Bridges)), Trunks: make([]Trunk, len(c.Trunks))}
	for i, b := range c.Bridges {
		b.Ports = slices.Clone(b.Ports)
		b.Spans = slices.Clone(b.Spans)
		b.Statics = slices.Clone(b.Statics)
		b.STP = clonePtr(b.STP)
		for j := range b.Ports {
			b.Ports[j].STP = clonePtr(b.Ports[j].STP)
		}
		n.Bridges[i] = b
	}
	for i, t := range c.Trunks {
		t.Ports = slices.Clone(t.Ports)
		n.Trunks[i] = t
	}
	for _, l := range c.LBs {
		n.LBs = append(n.LBs, cloneLB(l))
	}
	return n
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// BridgeOf returns the bridge that has member as a member port, or "". A
// trunk is a bridge member this way.
func (c *Config) BridgeOf(member string) string {
	for _, b := range c.Bridges {
		if b.Port(member) != nil {
			return b.Name
		}
	}
	return ""
}

// owner returns who uses iface: "trunk NAME" for a trunk's port, the
// bridge's name for a bridge's member or span port; tap is set when iface
// is a bridge's local TAP.
func (c *Config) owner(iface string) (owner string, tap bool) {
	for _, t := range c.Trunks {
		if t.Port(iface) != nil {
			return "trunk " + t.Name, false
		}
	}
	for _, b := range c.Bridges {
		if b.Local && b.Name == iface {
			return b.Name, true
		}
		if b.Port(iface) != nil || slices.Contains(b.Spans, iface) {
			return b.Name, false
		}
	}
	return "", false
}

// errNoInterface says that iface, to be added to object by op, does not
// exist; a comma in its name is most likely a list the user meant as
// separate members, which the message then suggests.
func errNoInterface(object, op, iface string) error {
	if strings.Contains(iface, ",") {
		return fmt.Errorf("%s: %s %s: no such interface (members are separate arguments: %s)",
			object, op, iface, strings.Join(strings.FieldsFunc(iface, func(r rune) bool { return r == ',' }), " "))
	}
	return fmt.Errorf("%s: %s %s: no such interface", object, op, iface)
}

// checkNewPort says why iface cannot become a member (op "add") or a span
// port (op "addspan") of bridge, or returns nil.
func (c *Config) checkNewPort(bridge, op, iface string, h Host) error {
	if err := CheckName("interface", iface); err != nil {
		return fmt.Errorf("%s: %s %s: %w", bridge, op, iface, err)
	}
	if owner, tap := c.owner(iface); owner != "" {
		switch {
		case tap:
			return fmt.Errorf("%s: %s %s: is the TAP of swctl bridge %s and cannot be a member", bridge, op, iface, owner)
		case owner == bridge:
			return fmt.Errorf("%s: %s %s: already a port of this bridge", bridge, op, iface)
		case strings.HasPrefix(owner, "trunk "):
			return fmt.Errorf("%s: %s %s: already a port of %s", bridge, op, iface, owner)
		default:
			return fmt.Errorf("%s: %s %s: already a port of bridge %s", bridge, op, iface, owner)
		}
	}
	if c.Trunk(iface) != nil {
		// A swctl trunk name is resolved before any kernel interface.
		if op == "addspan" {
			return fmt.Errorf("%s: addspan %s: a trunk cannot be a span port", bridge, iface)
		}
		if b := c.BridgeOf(iface); b != "" {
			return fmt.Errorf("%s: %s %s: trunk already a member of bridge %s", bridge, op, iface, b)
		}
		return nil
	}
	if !h.Exists(iface) {
		return errNoInterface(bridge, op, iface)
	}
	return nil
}

// checkNewTrunkPort says why iface cannot become a port of trunk, or
// returns nil.
func (c *Config) checkNewTrunkPort(trunk, iface string, h Host) error {
	if err := CheckName("interface", iface); err != nil {
		return fmt.Errorf("%s: add %s: %w", trunk, iface, err)
	}
	switch {
	case c.Trunk(iface) != nil:
		return fmt.Errorf("%s: add %s: is a swctl trunk; a trunk's ports are interfaces", trunk, iface)
	case c.Bridge(iface) != nil:
		return fmt.Errorf("%s: add %s: is a swctl bridge", trunk, iface)
	}
	if owner, tap := c.owner(iface); owner != "" {
		switch {
		case tap:
			return fmt.Errorf("%s: add %s: is the TAP of swctl bridge %s", trunk, iface, owner)
		case owner == "trunk "+trunk:
			return fmt.Errorf("%s: add %s: already a port", trunk, iface)
		case strings.HasPrefix(owner, "trunk "):
			return fmt.Errorf("%s: add %s: already a port of %s", trunk, iface, owner)
		default:
			return fmt.Errorf("%s: add %s: already a port of bridge %s", trunk, iface, owner)
		}
	}
	if !h.Exists(iface) {
		return errNoInterface(trunk, "add", iface)
	}
	return nil
}

// checkEach refuses an interface given twice in ifaces, and returns the
// first error check gives for one; verb ("add", "del") names the
// operation on object.
func checkEach(object, verb string, ifaces []string, check func(iface string) error) error {
	for i, iface := range ifaces {
		if slices.Contains(ifaces[:i], iface) {
			return fmt.Errorf("%s: %s %s: given twice", object, verb, iface)
		}
		if err := check(iface); err != nil {
			return err
		}
	}
	return nil
}

// CreateBridge adds a bridge with the default settings, and with local a
// TAP for the host, named after the bridge, with a new random MAC.
func (c *Config) CreateBridge(name string, local bool, h Host) error {
	if err := CheckName("bridge", name); err != nil {
		return err
	}
	switch {
	case c.Bridge(name) != nil:
		return fmt.Errorf("%s: bridge exists", name)
	case c.Trunk(name) != nil:
		// Said here: Validate would name the objects the other way round.
		return fmt.Errorf("%s: a trunk has that name", name)
	}
	if owner, _ := c.owner(name); owner != "" {
		if !strings.HasPrefix(owner, "trunk ") {
			owner = "bridge " + owner
		}
		return fmt.Errorf("%s: is a port of %s", name, owner)
	}
	if local && h.Exists(name) {
		return fmt.Errorf("%s: create --local: an interface named %s exists", name, name)
	}
	b := NewBridge(name)
	if local {
		b.Local, b.LocalMAC = true, NewLocalMAC()
	}
	c.Bridges = append(c.Bridges, b)
	return nil
}

// DestroyBridge removes a bridge, its members and its static entries.
func (c *Config) DestroyBridge(name string) error {
	i := slices.IndexFunc(c.Bridges, func(b Bridge) bool { return b.Name == name })
	if i < 0 {
		return errNoBridge(name)
	}
	c.Bridges = slices.Delete(c.Bridges, i, i+1)
	return nil
}

// AddPorts makes interfaces (or swctl trunks) members of a bridge with the
// default flags, all or none. Like every edit, it changes nothing when it
// refuses.
func (c *Config) AddPorts(bridge string, ifaces []string, h Host) error {
	if len(ifaces) == 0 {
		return fmt.Errorf("%s: add: no interface given", bridge)
	}
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	if err := checkEach(bridge, "add", ifaces, func(iface string) error { return c.checkNewPort(bridge, "add", iface, h) }); err != nil {
		return err
	}
	for _, iface := range ifaces {
		b.Ports = append(b.Ports, NewPort(iface))
	}
	return nil
}

// DelPorts removes members of a bridge, all or none, with their static
// entries.
func (c *Config) DelPorts(bridge string, ifaces []string) error {
	if len(ifaces) == 0 {
		return fmt.Errorf("%s: del: no interface given", bridge)
	}
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	if err := checkEach(bridge, "del", ifaces, func(iface string) error {
		if b.Port(iface) == nil {
			return fmt.Errorf("%s: del %s: %s", bridge, iface, b.notMember(iface))
		}
		return nil
	}); err != nil {
		return err
	}
	b.Ports = slices.DeleteFunc(b.Ports, func(p Port) bool { return slices.Contains(ifaces, p.Name) })
	b.Statics = slices.DeleteFunc(b.Statics, func(s Static) bool { return slices.Contains(ifaces, s.Port) })
	return nil
}

// notMember says why iface, named as a member of b, is not one: "not a
// member", or that it is a span port, which it is easy to take for one.
func (b *Bridge) notMember(iface string) string {
	if slices.Contains(b.Spans, iface) {
		return "a span port, not a member"
	}
	return "not a member"
}

// AddStatic adds a static entry on a member of bridge. One for the same
// address and VLAN on another member is refused, so that a typo does not
// quietly move a station: MoveStatic moves it.
func (c *Config) AddStatic(bridge string, s Static) error { return c.addStatic(bridge, s, false) }

// MoveStatic adds a static entry as AddStatic does, replacing one for the
// same address and VLAN on another member.
func (c *Config) MoveStatic(bridge string, s Static) error { return c.addStatic(bridge, s, true) }

func (c *Config) addStatic(bridge string, s Static, move bool) error {
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	if b.Port(s.Port) == nil {
		return fmt.Errorf("%s: static %s: %s is %s", bridge, s.MAC, s.Port, b.notMember(s.Port))
	}
	i := slices.IndexFunc(b.Statics, func(o Static) bool { return o.MAC == s.MAC && o.VLAN == s.VLAN })
	if i >= 0 && b.Statics[i].Port != s.Port && !move {
		vlan := ""
		if s.VLAN != 0 {
			vlan = fmt.Sprintf(" vlan %d", s.VLAN)
		}
		return fmt.Errorf("%s: static %s%s: already static on %s (give --replace to move it to %s)", bridge, s.MAC, vlan, b.Statics[i].Port, s.Port)
	}
	b.Statics = slices.DeleteFunc(b.Statics, func(o Static) bool { return o.MAC == s.MAC && o.VLAN == s.VLAN })
	b.Statics = append(b.Statics, s)
	return nil
}

// DelStatics removes the static entries of mac from bridge: in VLAN *vlan,
// or in every VLAN when vlan is nil. No entry to remove is not an error:
// the address may be a learned one, which is not configuration.
func (c *Config) DelStatics(bridge string, mac frame.MAC, vlan *uint16) error {
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	b.Statics = slices.DeleteFunc(b.Statics, func(o Static) bool {
		return o.MAC == mac && (vlan == nil || o.VLAN == *vlan)
	})
	return nil
}

// Flush is the configuration's part of flushing a bridge's address table
// (of every member, or of member port only when port is not ""): with
// all, the static entries go. Learned addresses are not configuration.
func (c *Config) Flush(bridge, port string, all bool) error {
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	if port != "" && b.Port(port) == nil {
		return fmt.Errorf("%s: flush --port %s: %s", bridge, port, b.notMember(port))
	}
	if all {
		b.Statics = slices.DeleteFunc(b.Statics, func(s Static) bool { return port == "" || s.Port == port })
	}
	return nil
}

// SetBridge changes a bridge's ageing time, address-table size and
// forward mask; nil leaves one as it is, and at least one must be given.
func (c *Config) SetBridge(name string, timeout, maxAddr *int, fwdMask *uint16) error {
	if timeout == nil && maxAddr == nil && fwdMask == nil {
		return fmt.Errorf("%s: set: %w (give --timeout, --maxaddr or --fwd-mask)", name, errNothing)
	}
	b := c.Bridge(name)
	if b == nil {
		return errNoBridge(name)
	}
	if fwdMask != nil {
		if err := bridge.CheckForwardMask(*fwdMask); err != nil {
			return fmt.Errorf("%s: set: %w", name, err)
		}
	}
	if timeout != nil {
		if err := CheckTimeout(*timeout); err != nil {
			return fmt.Errorf("%s: set: %w", name, err)
		}
		b.Timeout = *timeout
	}
	if maxAddr != nil {
		if err := CheckMaxAddr(*maxAddr); err != nil {
			return fmt.Errorf("%s: set: %w", name, err)
		}
		b.MaxAddr = *maxAddr
	}
	if fwdMask != nil {
		b.FwdMask = *fwdMask
	}
	return nil
}

// PortChange is a change of a bridge member's flags; nil leaves a flag as
// it is.
type PortChange struct {
	// Learning, Discover, BlockNonIP and Stack set the Port flags of the
	// same names.
	Learning, Discover, BlockNonIP, Stack *bool
	// Promisc sets Port.NoPromisc to its negation.
	Promisc *bool
	// STP changes the member's spanning tree settings.
	STP PortSTPChange
	// StormLimit and BPDUGuard set the Port settings of the same names.
	StormLimit *int
	BPDUGuard  *bool
}

// SetPort changes a member's flags and spanning tree settings; at least
// one must be given.
func (c *Config) SetPort(bridge, iface string, ch PortChange) error {
	if ch == (PortChange{}) {
		return fmt.Errorf("%s: port %s: %w", bridge, iface, errNothing)
	}
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	p := b.Port(iface)
	if p == nil {
		return fmt.Errorf("%s: port %s: %s", bridge, iface, b.notMember(iface))
	}
	if ch.StormLimit != nil {
		if err := checkStormLimit(*ch.StormLimit); err != nil {
			return fmt.Errorf("%s: port %s: %w", bridge, iface, err)
		}
	}
	if err := ch.STP.apply(p); err != nil {
		return fmt.Errorf("%s: port %s: %w", bridge, iface, err)
	}
	for _, f := range []struct {
		dst *bool
		v   *bool
	}{{&p.Learning, ch.Learning}, {&p.Discover, ch.Discover}, {&p.BlockNonIP, ch.BlockNonIP}, {&p.Stack, ch.Stack}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if ch.Promisc != nil {
		p.NoPromisc = !*ch.Promisc
	}
	if ch.StormLimit != nil {
		p.StormLimit = *ch.StormLimit
	}
	if ch.BPDUGuard != nil {
		p.BPDUGuard = *ch.BPDUGuard
	}
	return nil
}

// AddSpan makes iface a span port of bridge.
func (c *Config) AddSpan(bridge, iface string, h Host) error {
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	if err := c.checkNewPort(bridge, "addspan", iface, h); err != nil {
		return err
	}
	b.Spans = append(b.Spans, iface)
	return nil
}

// DelSpan removes a span port of bridge.
func (c *Config) DelSpan(bridge, iface string) error {
	b := c.Bridge(bridge)
	if b == nil {
		return errNoBridge(bridge)
	}
	if !slices.Contains(b.Spans, iface) {
		return fmt.Errorf("%s: delspan %s: not a span port", bridge, iface)
	}
	b.Spans = slices.DeleteFunc(b.Spans, func(s string) bool { return s == iface })
	return nil
}

// TrunkSettings are the settings of a trunk other than its ports and its
// policy; nil leaves one as it is (at its default, for a new trunk).
type TrunkSettings struct {
	// Proto, LACPMode, LACPTimeout and Hash set the Trunk fields of the
	// same names; Hash in any order (CanonicalHash).
	Proto, LACPMode, LACPTimeout, Hash *string
	// LACPSystemPriority and LACPKey set the Trunk fields of the same
	// names.
	LACPSystemPriority, LACPKey *int
	// UpDelay, DownDelay (milliseconds) and MinLinks set the Trunk fields
	// of the same names.
	UpDelay, DownDelay, MinLinks *int
	// Preempt sets Trunk.NoPreempt to its negation.
	Preempt *bool
	// Promisc sets Trunk.Promisc: the promisc policy, or the lladdr one.
	Promisc *bool
}

// apply sets t's settings from s, all or none; verb prefixes an error
// ("set: ").
func (s TrunkSettings) apply(to *Trunk, verb string) error {
	n := *to
	if err := s.applyTo(&n, verb); err != nil {
		return err
	}
	*to = n
	return nil
}

// applyTo sets t's settings from s, stopping at the first bad one.
func (s TrunkSettings) applyTo(t *Trunk, verb string) error {
	for _, f := range []struct {
		dst *string
		v   *string
	}{{&t.Proto, s.Proto}, {&t.LACPMode, s.LACPMode}, {&t.LACPTimeout, s.LACPTimeout}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if s.Hash != nil {
		h, err := CanonicalHash(*s.Hash)
		if err != nil {
			return fmt.Errorf("%s: %s%w", t.Name, verb, err)
		}
		t.Hash = h
	}
	if s.LACPSystemPriority != nil {
		t.LACPSystemPriority = *s.LACPSystemPriority
	}
	if s.LACPKey != nil {
		t.LACPKey = *s.LACPKey
	}
	for _, f := range []struct {
		what  string
		dst   *int
		v     *int
		check func(int) error
	}{
		{"updelay", &t.UpDelay, s.UpDelay, func(n int) error { return CheckDelay("updelay", n) }},
		{"downdelay", &t.DownDelay, s.DownDelay, func(n int) error { return CheckDelay("downdelay", n) }},
		{"min-links", &t.MinLinks, s.MinLinks, CheckMinLinks},
	} {
		if f.v == nil {
			continue
		}
		if err := f.check(*f.v); err != nil {
			return fmt.Errorf("%s: %s%w", t.Name, verb, err)
		}
		*f.dst = *f.v
	}
	if s.Preempt != nil {
		t.NoPreempt = !*s.Preempt
	}
	if s.Promisc != nil {
		t.Promisc = *s.Promisc
	}
	return nil
}

// TrunkCreation is what a new trunk has besides its settings.
type TrunkCreation struct {
	// Promisc selects the promisc policy.
	Promisc bool
	// LLAddr is the trunk's MAC; zero for its first port's, or a random
	// one without ports, as trunk(4)'s.
	LLAddr frame.MAC
	// Ports are its ports, in order, all or none.
	Ports []string
	// Priority and LACPPortPriority are the ports' failover and LACP
	// port priorities; nil for the defaults.
	Priority, LACPPortPriority *int
	// Queue is how it queues what its members send; the zero TrunkQueue
	// takes the defaults.
	Queue TrunkQueue
}

// CreateTrunk adds a trunk with settings s (defaults where nil) and what
// n gives.
func (c *Config) CreateTrunk(name string, s TrunkSettings, n TrunkCreation, h Host) error {
	if err := CheckName("trunk", name); err != nil {
		return err
	}
	switch {
	case c.Trunk(name) != nil:
		return fmt.Errorf("%s: trunk exists", name)
	case c.Bridge(name) != nil:
		return fmt.Errorf("%s: a bridge has that name", name)
	case h.Exists(name):
		return fmt.Errorf("%s: create: an interface named %s exists", name, name)
	}
	if owner, _ := c.owner(name); owner != "" {
		return fmt.Errorf("%s: is a port of %s", name, owner)
	}
	t := NewTrunk(name)
	if err := s.apply(&t, ""); err != nil {
		return err
	}
	t.Promisc = n.Promisc
	if err := n.Queue.Check(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	t.Queue = n.Queue
	if err := checkEach(name, "add", n.Ports, func(iface string) error { return c.checkNewTrunkPort(name, iface, h) }); err != nil {
		return err
	}
	t.Ports = newTrunkPorts(n.Ports, n.Priority, n.LACPPortPriority)
	t.LLAddr = n.LLAddr
	if t.LLAddr.IsZero() {
		t.LLAddr = firstPortMAC(&t, h)
	}
	c.Trunks = append(c.Trunks, t)
	return nil
}

// newTrunkPorts returns ports for ifaces with the given priorities
// (defaults where nil).
func newTrunkPorts(ifaces []string, priority, lacpPortPriority *int) []TrunkPort {
	var out []TrunkPort
	for _, iface := range ifaces {
		p := NewTrunkPort(iface)
		if priority != nil {
			p.Priority = *priority
		}
		if lacpPortPriority != nil {
			p.LACPPortPriority = *lacpPortPriority
		}
		out = append(out, p)
	}
	return out
}

// DestroyTrunk removes a trunk that no bridge has as a member.
func (c *Config) DestroyTrunk(name string) error {
	i := slices.IndexFunc(c.Trunks, func(t Trunk) bool { return t.Name == name })
	if i < 0 {
		return errNoTrunk(name)
	}
	if b := c.BridgeOf(name); b != "" {
		return fmt.Errorf("%s: destroy: a member of bridge %s (swctl bridge del %s %s first)", name, b, b, name)
	}
	c.Trunks = slices.Delete(c.Trunks, i, i+1)
	return nil
}

// AddTrunkPorts adds ports to a trunk, all or none, with the given
// priorities (defaults where nil).
func (c *Config) AddTrunkPorts(trunk string, ifaces []string, priority, lacpPortPriority *int, h Host) error {
	if len(ifaces) == 0 {
		return fmt.Errorf("%s: add: no interface given", trunk)
	}
	t := c.Trunk(trunk)
	if t == nil {
		return errNoTrunk(trunk)
	}
	if err := checkEach(trunk, "add", ifaces, func(iface string) error { return c.checkNewTrunkPort(trunk, iface, h) }); err != nil {
		return err
	}
	t.Ports = append(t.Ports, newTrunkPorts(ifaces, priority, lacpPortPriority)...)
	return nil
}

// DelTrunkPorts removes ports from a trunk, all or none.
func (c *Config) DelTrunkPorts(trunk string, ifaces []string) error {
	if len(ifaces) == 0 {
		return fmt.Errorf("%s: del: no interface given", trunk)
	}
	t := c.Trunk(trunk)
	if t == nil {
		return errNoTrunk(trunk)
	}
	if err := checkEach(trunk, "del", ifaces, func(iface string) error {
		if t.Port(iface) == nil {
			return fmt.Errorf("%s: del %s: not a port", trunk, iface)
		}
		return nil
	}); err != nil {
		return err
	}
	t.Ports = slices.DeleteFunc(t.Ports, func(p TrunkPort) bool { return slices.Contains(ifaces, p.Name) })
	return nil
}

// SetTrunk changes a trunk's settings; at least one must be given.
func (c *Config) SetTrunk(name string, s TrunkSettings) error {
	if s == (TrunkSettings{}) {
		return fmt.Errorf("%s: set: %w", name, errNothing)
	}
	t := c.Trunk(name)
	if t == nil {
		return errNoTrunk(name)
	}
	return s.apply(t, "set: ")
}

// SetTrunkPort changes a trunk port's failover and LACP port priorities
// in place; nil leaves one as it is, and something must be given.
func (c *Config) SetTrunkPort(trunk, iface string, priority, lacpPortPriority *int) error {
	if priority == nil && lacpPortPriority == nil {
		return fmt.Errorf("%s: port %s: %w (give --priority or --lacp-port-priority)", trunk, iface, errNothing)
	}
	t := c.Trunk(trunk)
	if t == nil {
		return errNoTrunk(trunk)
	}
	p := t.Port(iface)
	if p == nil {
		return fmt.Errorf("%s: port %s: not a port", trunk, iface)
	}
	set := *p
	for _, f := range []struct {
		name     string
		from, to *int
	}{{"priority", priority, &set.Priority}, {"lacp-port-priority", lacpPortPriority, &set.LACPPortPriority}} {
		if f.from == nil {
			continue
		}
		if err := CheckPriority(f.name, *f.from); err != nil {
			return fmt.Errorf("%s: port %s: %w", trunk, iface, err)
		}
		*f.to = *f.from
	}
	*p = set
	return nil
}

// ChooseAddrs gives a MAC to every trunk and local TAP that has none yet
// (a file written by hand may leave them out), as CreateTrunk and
// CreateBridge do, and reports whether it chose any.
func (c *Config) ChooseAddrs(h Host) bool {
	chose := false
	for i := range c.Trunks {
		if t := &c.Trunks[i]; t.LLAddr.IsZero() {
			t.LLAddr, chose = firstPortMAC(t, h), true
		}
	}
	for i := range c.Bridges {
		if b := &c.Bridges[i]; b.Local && b.LocalMAC.IsZero() {
			b.LocalMAC, chose = NewLocalMAC(), true
		}
	}
	return chose
}

// firstPortMAC is the MAC a new trunk takes, as trunk(4)'s: its first
// port's that has one, or a random one.
func firstPortMAC(t *Trunk, h Host) frame.MAC {
	for _, p := range t.Ports {
		if hw, err := h.HardwareAddr(p.Name); err == nil && len(hw) == 6 {
			return frame.MACOf(hw)
		}
	}
	return NewLocalMAC()
}

// NewLocalMAC returns a random locally administered unicast MAC.
func NewLocalMAC() frame.MAC {
	var m frame.MAC
	_, _ = rand.Read(m[:])
	m[0] = (m[0] &^ 0x01) | 0x02
	return m
}

// RenameIface follows an interface the kernel renamed from old to new:
// every place the configuration names it (a bridge's member, span port or
// static entry, a trunk's port) names it new instead, so the next start
// finds it where the running daemon, which follows ifindexes, keeps it.
// Settings are kept. It reports whether old was named anywhere, and
// changes nothing, reporting false, when new is already in use (a member,
// span or trunk port, a trunk, a bridge or its local TAP): the rename
// cannot be followed then, and old is simply gone.
func (c *Config) RenameIface(old, new string) bool {
	if old == new || c.Trunk(old) != nil || c.Trunk(new) != nil || c.Bridge(new) != nil {
		return false
	}
	if owner, _ := c.owner(old); owner == "" {
		return false
	}
	if owner, _ := c.owner(new); owner != "" {
		return false
	}
	for i := range c.Bridges {
		b := &c.Bridges[i]
		if p := b.Port(old); p != nil {
			p.Name = new
		}
		if j := slices.Index(b.Spans, old); j >= 0 {
			b.Spans[j] = new
		}
		for j := range b.Statics {
			if b.Statics[j].Port == old {
				b.Statics[j].Port = new
			}
		}
	}
	for i := range c.Trunks {
		if p := c.Trunks[i].Port(old); p != nil {
			p.Name = new
		}
	}
	return true
}
