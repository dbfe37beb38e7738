package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/stp"
)

// STP is a bridge's spanning tree: whether it runs, and its settings,
// which are kept while it is off. The file's "stp" statement, and
// `swctl bridge stp`.
type STP struct {
	// On runs the spanning tree (default off).
	On bool
	// Proto is stp.RSTP (default) or stp.STP.
	Proto stp.Protocol
	// Priority is the bridge priority, 0-61440 in steps of 4096 (default
	// 32768); lower wins the root election.
	Priority int
	// HelloTime, FwdDelay and MaxAge are the protocol's times in seconds
	// (defaults 2, 15, 20), within the ranges and relation of
	// 802.1D-2004 17.14 (stp.Config.Validate).
	HelloTime, FwdDelay, MaxAge int
	// HoldCount is the most BPDUs a port sends a second (default 6).
	HoldCount int
}

// DefaultSTP returns the settings of a new bridge: off, RSTP, and the
// defaults of 802.1D-2004 table 17-1.
func DefaultSTP() STP {
	d := stp.DefaultConfig()
	return STP{
		Proto: d.Protocol, Priority: int(d.Priority), HelloTime: d.HelloTime,
		FwdDelay: d.ForwardDelay, MaxAge: d.MaxAge, HoldCount: d.HoldCount,
	}
}

// Check reports the first setting out of its range, or a relation between
// the times that 802.1D-2004 forbids, naming the setting as the command
// line does.
func (s STP) Check() error {
	if s.Priority < 0 || s.Priority > 61440 || s.Priority%4096 != 0 {
		return fmt.Errorf("stp: priority %d: want 0-61440 in steps of 4096", s.Priority)
	}
	return s.Config([6]byte{}).Validate()
}

// Config returns the stp package's configuration with mac as the bridge
// address (all zeros: the first port's). s must have passed Check.
func (s STP) Config(mac [6]byte) stp.Config {
	return stp.Config{
		Priority: uint16(s.Priority), HelloTime: s.HelloTime, MaxAge: s.MaxAge,
		ForwardDelay: s.FwdDelay, HoldCount: s.HoldCount, Protocol: s.Proto, MAC: mac,
	}
}

// STPSettings returns the bridge's spanning tree settings: its STP, or
// the defaults when it has none.
func (b *Bridge) STPSettings() STP {
	if b.STP == nil {
		return DefaultSTP()
	}
	return *b.STP
}

// setSTP stores s as the bridge's settings: nil when they are the
// defaults, so that a configuration has one form.
func (b *Bridge) setSTP(s STP) {
	if s == DefaultSTP() {
		b.STP = nil
		return
	}
	b.STP = &s
}

// PortSTP is a member's spanning tree settings, in force while its bridge
// runs a spanning tree: the port's "stp", "edge", "autoedge", "ptp",
// "ifpriority" and "ifcost" words, and `swctl bridge port`.
type PortSTP struct {
	// Enabled makes the member a spanning-tree port (default on). One
	// that is not sends no BPDUs, drops those it receives, and forwards
	// whatever loops it makes.
	Enabled bool
	// Edge makes the member an edge port from the start (default off).
	Edge bool
	// AutoEdge makes a designated port that hears no BPDU an edge port
	// (default on).
	AutoEdge bool
	// PTP is the point-to-point setting: stp.PTPAuto (default, from the
	// duplex), stp.PTPOn or stp.PTPOff.
	PTP stp.PointToPoint
	// Priority is the port priority, 0-240 in steps of 16 (default 128).
	Priority int
	// Cost is the port path cost, 1-200000000; 0 (the default) takes it
	// from the link speed.
	Cost int
}

// DefaultPortSTP returns the settings of a new member.
func DefaultPortSTP() PortSTP {
	d := stp.DefaultPortConfig()
	return PortSTP{Enabled: d.Enabled, AutoEdge: d.AutoEdge, PTP: d.PointToPoint, Priority: int(d.Priority)}
}

// Check reports a setting out of its range, naming it as the command line
// does.
func (s PortSTP) Check() error {
	if s.Priority < 0 || s.Priority > 240 || s.Priority%16 != 0 {
		return fmt.Errorf("ifpriority %d: want 0-240 in steps of 16", s.Priority)
	}
	if s.Cost < 0 || s.Cost > stp.MaxPathCost {
		return fmt.Errorf("ifcost %d: want 1-%d, or 0 for the cost of the link speed", s.Cost, stp.MaxPathCost)
	}
	if s.PTP > stp.PTPOff {
		return fmt.Errorf("ptp %d: want auto, on or off", s.PTP)
	}
	return nil
}

// Config returns the stp package's port configuration. s must have
// passed Check.
func (s PortSTP) Config() stp.PortConfig {
	return stp.PortConfig{
		Enabled: s.Enabled, AdminEdge: s.Edge, AutoEdge: s.AutoEdge, PointToPoint: s.PTP,
		Priority: uint8(s.Priority), PathCost: uint32(s.Cost),
	}
}

// STPSettings returns the member's spanning tree settings: its STP, or
// the defaults when it has none.
func (p *Port) STPSettings() PortSTP {
	if p.STP == nil {
		return DefaultPortSTP()
	}
	return *p.STP
}

// setSTP stores s as the member's settings: nil when they are the
// defaults.
func (p *Port) setSTP(s PortSTP) {
	if s == DefaultPortSTP() {
		p.STP = nil
		return
	}
	p.STP = &s
}

// checkSTP checks a bridge's spanning tree, forward mask and its members'
// spanning tree settings, as Parse does one statement at a time.
func (b *Bridge) checkSTP() error {
	if err := b.STPSettings().Check(); err != nil {
		return err
	}
	if err := bridge.CheckForwardMask(b.FwdMask); err != nil {
		return err
	}
	for i := range b.Ports {
		if err := b.Ports[i].STPSettings().Check(); err != nil {
			return fmt.Errorf("port %s: %w", b.Ports[i].Name, err)
		}
	}
	return nil
}

// stpOptions are the options of the "stp" statement and of `swctl bridge
// stp`, in the order errors and Format list them.
const stpOptions = "proto, priority, hellotime, fwddelay, maxage or holdcnt"

// parseSTP parses the words after "stp": "on" or "off", then options
// "NAME VALUE" (see stpOptions), each at most once.
func parseSTP(args []string) (STP, error) {
	s := DefaultSTP()
	if len(args) == 0 {
		return STP{}, errors.New("want \"stp on|off [OPTION VALUE]...\"")
	}
	switch args[0] {
	case "on":
		s.On = true
	case "off":
	default:
		return STP{}, fmt.Errorf("stp: %q: want on or off", args[0])
	}
	given := map[string]bool{}
	for rest := args[1:]; len(rest) > 0; rest = rest[2:] {
		opt := rest[0]
		var field *int
		switch opt {
		case "proto":
		case "priority":
			field = &s.Priority
		case "hellotime":
			field = &s.HelloTime
		case "fwddelay":
			field = &s.FwdDelay
		case "maxage":
			field = &s.MaxAge
		case "holdcnt":
			field = &s.HoldCount
		default:
			return STP{}, fmt.Errorf("stp: unknown option %q (want %s)", opt, stpOptions)
		}
		if len(rest) < 2 {
			return STP{}, fmt.Errorf("stp: %s: missing value", opt)
		}
		if given[opt] {
			return STP{}, fmt.Errorf("stp: %s given twice", opt)
		}
		given[opt] = true
		if field == nil {
			p, err := stp.ParseProtocol(rest[1])
			if err != nil {
				return STP{}, err
			}
			s.Proto = p
			continue
		}
		n, err := strconv.Atoi(rest[1])
		if err != nil {
			return STP{}, fmt.Errorf("stp: %s: %q is not a number", opt, rest[1])
		}
		*field = n
	}
	return s, s.Check()
}

// formatSTP returns the "stp" statement of s: on or off, then the options
// that differ from the defaults.
func formatSTP(s STP) string {
	var b strings.Builder
	b.WriteString("stp off")
	if s.On {
		b.Reset()
		b.WriteString("stp on")
	}
	d := DefaultSTP()
	if s.Proto != d.Proto {
		b.WriteString(" proto " + s.Proto.String())
	}
	for _, o := range []struct {
		name   string
		v, def int
	}{
		{"priority", s.Priority, d.Priority}, {"hellotime", s.HelloTime, d.HelloTime},
		{"fwddelay", s.FwdDelay, d.FwdDelay}, {"maxage", s.MaxAge, d.MaxAge}, {"holdcnt", s.HoldCount, d.HoldCount},
	} {
		if o.v != o.def {
			b.WriteString(" " + o.name + " " + strconv.Itoa(o.v))
		}
	}
	return b.String()
}

// ParseFwdMask parses a forward mask, hexadecimal with 0x or decimal, and
// checks it as the bridge does.
func ParseFwdMask(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 0, 16)
	if err != nil {
		return 0, fmt.Errorf("fwd-mask %q: want a 16-bit mask, such as 0x4000 (LLDP) or 0x0008 (802.1X)", s)
	}
	return uint16(n), bridge.CheckForwardMask(uint16(n))
}

// formatFwdMask writes a forward mask as ParseFwdMask reads it.
func formatFwdMask(m uint16) string { return fmt.Sprintf("0x%04x", m) }

// portSTPWords are the spanning tree words of a port statement: flags
// that "-" turns off, and options with a value.
var portSTPWords = []string{"stp", "edge", "autoedge", "ptp VALUE", "ifpriority N", "ifcost N"}

// parsePortSTP reads the spanning tree word at args[0] of port p's
// statement into s, with its value when it takes one, and returns how
// many words it used, or 0 when args[0] is not one of them.
func parsePortSTP(p string, args []string, s *PortSTP) (int, error) {
	name, on := strings.CutPrefix(args[0], "-")
	on = !on
	switch name {
	case "stp":
		s.Enabled = on
		return 1, nil
	case "edge":
		s.Edge = on
		return 1, nil
	case "autoedge":
		s.AutoEdge = on
		return 1, nil
	case "ptp", "ifpriority", "ifcost":
	default:
		return 0, nil
	}
	if !on {
		return 0, fmt.Errorf("port %s: %s takes a value, not \"-\"", p, name)
	}
	if len(args) < 2 {
		return 0, fmt.Errorf("port %s: %s: missing value", p, name)
	}
	if name == "ptp" {
		v, err := stp.ParsePointToPoint(args[1])
		if err != nil {
			return 0, fmt.Errorf("port %s: %w", p, err)
		}
		s.PTP = v
		return 2, nil
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return 0, fmt.Errorf("port %s: %s: %q is not a number", p, name, args[1])
	}
	if name == "ifpriority" {
		s.Priority = n
	} else {
		s.Cost = n
	}
	return 2, nil
}

// formatPortSTP returns the spanning tree words of a port statement, with
// a leading space: those that differ from the defaults.
func formatPortSTP(s PortSTP) string {
	d := DefaultPortSTP()
	var b strings.Builder
	if !s.Enabled {
		b.WriteString(" -stp")
	}
	if s.Edge {
		b.WriteString(" edge")
	}
	if !s.AutoEdge {
		b.WriteString(" -autoedge")
	}
	if s.PTP != d.PTP {
		b.WriteString(" ptp " + s.PTP.String())
	}
	if s.Priority != d.Priority {
		b.WriteString(" ifpriority " + strconv.Itoa(s.Priority))
	}
	if s.Cost != d.Cost {
		b.WriteString(" ifcost " + strconv.Itoa(s.Cost))
	}
	return b.String()
}

// STPChange is a change of a bridge's spanning tree; nil leaves a
// setting as it is.
type STPChange struct {
	// On turns the spanning tree on or off.
	On *bool
	// Proto is "rstp" or "stp".
	Proto *string
	// Priority, HelloTime, FwdDelay, MaxAge and HoldCount set the STP
	// fields of the same names.
	Priority, HelloTime, FwdDelay, MaxAge, HoldCount *int
}

// SetSTP changes a bridge's spanning tree; at least one setting must be
// given, and the result must keep the times' relations.
func (c *Config) SetSTP(name string, ch STPChange) error {
	if ch == (STPChange{}) {
		return fmt.Errorf("%s: stp: %w (give on, off or an option)", name, errNothing)
	}
	b := c.Bridge(name)
	if b == nil {
		return errNoBridge(name)
	}
	s := b.STPSettings()
	if ch.On != nil {
		s.On = *ch.On
	}
	if ch.Proto != nil {
		p, err := stp.ParseProtocol(*ch.Proto)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.Proto = p
	}
	for _, f := range []struct {
		dst *int
		v   *int
	}{{&s.Priority, ch.Priority}, {&s.HelloTime, ch.HelloTime}, {&s.FwdDelay, ch.FwdDelay}, {&s.MaxAge, ch.MaxAge}, {&s.HoldCount, ch.HoldCount}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if err := s.Check(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b.setSTP(s)
	return nil
}

// PortSTPChange is a change of a member's spanning tree settings; nil
// leaves a setting as it is.
type PortSTPChange struct {
	// STP, Edge and AutoEdge set PortSTP's Enabled, Edge and AutoEdge.
	STP, Edge, AutoEdge *bool
	// PTP is "auto", "on" or "off".
	PTP *string
	// IfPriority and IfCost set PortSTP's Priority and Cost.
	IfPriority, IfCost *int
}

// apply makes the change to p's settings, or says why not.
func (ch PortSTPChange) apply(p *Port) error {
	if ch == (PortSTPChange{}) {
		return nil
	}
	s := p.STPSettings()
	for _, f := range []struct {
		dst *bool
		v   *bool
	}{{&s.Enabled, ch.STP}, {&s.Edge, ch.Edge}, {&s.AutoEdge, ch.AutoEdge}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if ch.PTP != nil {
		v, err := stp.ParsePointToPoint(*ch.PTP)
		if err != nil {
			return err
		}
		s.PTP = v
	}
	if ch.IfPriority != nil {
		s.Priority = *ch.IfPriority
	}
	if ch.IfCost != nil {
		s.Cost = *ch.IfCost
	}
	if err := s.Check(); err != nil {
		return err
	}
	p.setSTP(s)
	return nil
}
