package config

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/health"
	"github.com/swctl/swctl/lb/service"
)

// LB is one layer-2 load balancer (swctl lb): VIPs on an interface or a
// bridge's segment, forwarded to backends by MAC rewriting.
//
//	lb web {
//	    iface eth1
//	    vip 192.0.2.100
//	    vip 2001:db8::100
//	    method maglev
//	    health http:80/ interval 2s timeout 1s rise 2 fall 3
//	    source 192.0.2.1
//	    backend 192.0.2.11 weight 2
//	    backend 192.0.2.12 drain
//	}
type LB struct {
	// Name is the lb's name.
	Name string
	// Iface is the interface it runs on; "" when it sits on Bridge.
	Iface string
	// Bridge is the swctl bridge it sits on; "" when it runs on Iface.
	Bridge string
	// VIPs are its virtual addresses, at least one, unique.
	VIPs []netip.Addr
	// Method is the selection method, as lb.ParseMethod reads it
	// (DefaultLBMethod by default).
	Method string
	// Health is the health check as service.ParseCheck reads it, in its
	// canonical form ("none" by default).
	Health string
	// Interval and Timeout are the health check's period and bound; 0
	// means service.DefaultInterval and service.DefaultTimeout.
	Interval, Timeout time.Duration
	// Rise and Fall are the health thresholds; 0 means the defaults.
	Rise, Fall int
	// Sources are the addresses the lb asks backends' MACs from (and
	// checks their health from), at most one per family; none means the
	// interface's (or the bridge's local TAP's) addresses.
	Sources []netip.Addr
	// Backends are the real servers, in the order they were added.
	Backends []LBBackend
}

// LBBackend is one backend of an lb.
type LBBackend struct {
	// Addr is its real address, on the lb's segment.
	Addr netip.Addr
	// Weight is its share of new flows, 1 to lb.MaxWeight.
	Weight int
	// Drain gives it no new flows; its established ones stay.
	Drain bool
}

// DefaultLBMethod is an lb's selection method unless set.
const DefaultLBMethod = "maglev"

// LB returns the lb called name, or nil.
func (c *Config) LB(name string) *LB {
	for i := range c.LBs {
		if c.LBs[i].Name == name {
			return &c.LBs[i]
		}
	}
	return nil
}

// Backend returns the backend at addr, or nil.
func (l *LB) Backend(addr netip.Addr) *LBBackend {
	for i := range l.Backends {
		if l.Backends[i].Addr == addr {
			return &l.Backends[i]
		}
	}
	return nil
}

// HealthCheck returns the lb's health check with its timing and
// thresholds, for lb/service.
func (l *LB) HealthCheck() (service.Check, error) {
	c, err := service.ParseCheck(l.Health)
	if err != nil {
		return c, err
	}
	c.Interval, c.Timeout = l.Interval, l.Timeout
	c.Thresholds = health.Config{Rise: l.Rise, Fall: l.Fall}
	return c, nil
}

// Source returns the lb's configured source address of family 4 or 6, or
// the zero Addr.
func (l *LB) Source(family int) netip.Addr {
	for _, a := range l.Sources {
		if (family == 4) == a.Is4() {
			return a
		}
	}
	return netip.Addr{}
}

// check checks an lb whole: what Parse checks statement by statement and
// what needs the whole block. Errors name the lb and the object.
func (l *LB) check() error {
	wrap := func(err error) error { return fmt.Errorf("lb %s: %w", l.Name, err) }
	if err := CheckName("lb", l.Name); err != nil {
		return err
	}
	switch {
	case (l.Iface == "") == (l.Bridge == ""):
		return wrap(fmt.Errorf("want exactly one of iface and bridge"))
	case l.Iface != "":
		if err := CheckName("interface", l.Iface); err != nil {
			return wrap(err)
		}
	default:
		if err := CheckName("bridge", l.Bridge); err != nil {
			return wrap(err)
		}
	}
	if len(l.VIPs) == 0 {
		return wrap(fmt.Errorf("no vip"))
	}
	if len(l.VIPs) > service.MaxVIPs {
		return wrap(fmt.Errorf("%d VIPs: want at most %d", len(l.VIPs), service.MaxVIPs))
	}
	for i, v := range l.VIPs {
		if err := service.CheckAddr("vip", v); err != nil {
			return wrap(err)
		}
		if slices.Contains(l.VIPs[:i], v) {
			return wrap(fmt.Errorf("vip %s: given twice", v))
		}
	}
	if _, err := lb.ParseMethod(l.Method); err != nil {
		return wrap(err)
	}
	hc, err := l.HealthCheck()
	if err != nil {
		return wrap(err)
	}
	if hc.String() != l.Health {
		return wrap(fmt.Errorf("health %q: not in canonical form (want %q)", l.Health, hc.String()))
	}
	if err := service.CheckTiming(hc); err != nil {
		return wrap(err)
	}
	if len(l.Sources) > 2 {
		return wrap(fmt.Errorf("%d sources: want at most one IPv4 and one IPv6 address", len(l.Sources)))
	}
	for i, s := range l.Sources {
		if err := service.CheckAddr("source", s); err != nil {
			return wrap(err)
		}
		if i == 1 && s.Is4() == l.Sources[0].Is4() {
			return wrap(fmt.Errorf("source %s: a second address of the same family as %s", s, l.Sources[0]))
		}
		if slices.Contains(l.VIPs, s) {
			return wrap(fmt.Errorf("source %s: is a vip of this lb", s))
		}
	}
	if len(l.Backends) > lb.MaxBackends {
		return wrap(fmt.Errorf("%d backends: want at most %d", len(l.Backends), lb.MaxBackends))
	}
	for i, b := range l.Backends {
		if err := l.checkBackend(b, l.Backends[:i]); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// checkBackend checks one backend against the lb and the backends before
// it.
func (l *LB) checkBackend(b LBBackend, before []LBBackend) error {
	if err := service.CheckAddr("backend", b.Addr); err != nil {
		return err
	}
	switch {
	case b.Weight < 1 || b.Weight > lb.MaxWeight:
		return fmt.Errorf("backend %s: weight %d: want 1 to %d", b.Addr, b.Weight, lb.MaxWeight)
	case slices.Contains(l.VIPs, b.Addr):
		return fmt.Errorf("backend %s: is a vip of this lb", b.Addr)
	case slices.Contains(l.Sources, b.Addr):
		return fmt.Errorf("backend %s: is the lb's own (source) address", b.Addr)
	case slices.ContainsFunc(before, func(o LBBackend) bool { return o.Addr == b.Addr }):
		return fmt.Errorf("backend %s: listed twice", b.Addr)
	}
	return nil
}

// ParseLBAddr parses an lb's VIP, source or backend address; what names
// it in the error.
func ParseLBAddr(what, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, fmt.Errorf("%s %q: not an IPv4 or IPv6 address", what, s)
	}
	return a, service.CheckAddr(what, a)
}

// checkLBs checks every lb and what lbs share with the rest: names are
// unique among lbs, an lb's interface is no bridge's or trunk's and no
// other lb's, and its bridge exists.
func (c *Config) checkLBs() error {
	names := map[string]bool{}
	ifaces := map[string]string{}
	for i := range c.LBs {
		l := &c.LBs[i]
		if err := l.check(); err != nil {
			return err
		}
		if names[l.Name] {
			return fmt.Errorf("lb %s: declared twice", l.Name)
		}
		names[l.Name] = true
		if l.Bridge != "" {
			if c.Bridge(l.Bridge) == nil {
				return fmt.Errorf("lb %s: bridge %s: no such bridge", l.Name, l.Bridge)
			}
			continue
		}
		if other, ok := ifaces[l.Iface]; ok {
			return fmt.Errorf("lb %s: iface %s: already the interface of lb %s", l.Name, l.Iface, other)
		}
		ifaces[l.Iface] = l.Name
		if owner, _ := c.owner(l.Iface); owner != "" {
			return fmt.Errorf("lb %s: iface %s: is a port of %s, whose frames swctl forwards already", l.Name, l.Iface, owner)
		}
		if c.Bridge(l.Iface) != nil || c.Trunk(l.Iface) != nil {
			return fmt.Errorf("lb %s: iface %s: is a swctl bridge or trunk (give --bridge for a bridge)", l.Name, l.Iface)
		}
	}
	return nil
}

// lbSettings are the keywords of an lb block, in the order errors list
// them.
const lbSettings = "iface, bridge, vip, method, health, source or backend"

// buildLB interprets an lb block.
func buildLB(s stmt) (LB, error) {
	if len(s.words) != 2 || !s.hasBlock {
		return LB{}, errAt(s.line, "want \"lb NAME {\", got %q", strings.Join(s.words, " "))
	}
	l := LB{Name: s.words[1], Method: DefaultLBMethod, Health: "none"}
	if err := CheckName("lb", l.Name); err != nil {
		return LB{}, wrapAt(s.line, err)
	}
	once := onceChecker()
	for _, st := range s.block {
		if st.hasBlock {
			return LB{}, errAt(st.line, "%s: unexpected block inside lb %s", st.words[0], l.Name)
		}
		args := st.words[1:]
		one := func() (string, error) {
			if len(args) != 1 {
				return "", errAt(st.line, "want \"%s VALUE\", got %q", st.words[0], strings.Join(st.words, " "))
			}
			return args[0], nil
		}
		var err error
		switch kw := st.words[0]; kw {
		case "iface", "bridge", "method":
			if err := once(st); err != nil {
				return LB{}, err
			}
			v, err := one()
			if err != nil {
				return LB{}, err
			}
			switch kw {
			case "iface":
				l.Iface, err = v, CheckName("interface", v)
			case "bridge":
				l.Bridge, err = v, CheckName("bridge", v)
			default:
				_, err = lb.ParseMethod(v)
				l.Method = v
			}
		case "vip", "source":
			v, err2 := one()
			if err2 != nil {
				return LB{}, err2
			}
			a, err2 := ParseLBAddr(kw, v)
			err = err2
			if kw == "vip" {
				l.VIPs = append(l.VIPs, a)
			} else {
				l.Sources = append(l.Sources, a)
			}
		case "health":
			if err := once(st); err != nil {
				return LB{}, err
			}
			err = l.parseHealth(args)
		case "backend":
			var b LBBackend
			b, err = parseLBBackend(args)
			l.Backends = append(l.Backends, b)
		default:
			return LB{}, errAt(st.line, "unknown setting %q in lb %s (want %s)", kw, l.Name, lbSettings)
		}
		if err != nil {
			return LB{}, wrapAt(st.line, err)
		}
	}
	if err := l.check(); err != nil {
		return LB{}, wrapAt(s.line, err)
	}
	return l, nil
}

// parseHealth reads "health CHECK [interval D] [timeout D] [rise N]
// [fall N]".
func (l *LB) parseHealth(args []string) error {
	if len(args) == 0 || len(args)%2 != 1 {
		return fmt.Errorf("want \"health CHECK [interval DURATION] [timeout DURATION] [rise N] [fall N]\"")
	}
	c, err := service.ParseCheck(args[0])
	if err != nil {
		return err
	}
	l.Health = c.String()
	for i := 1; i < len(args); i += 2 {
		k, v := args[i], args[i+1]
		switch k {
		case "interval", "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("health %s %q: want a duration such as 2s or 500ms", k, v)
			}
			if k == "interval" {
				l.Interval = d
			} else {
				l.Timeout = d
			}
		case "rise", "fall":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > health.MaxThreshold {
				return fmt.Errorf("health %s %q: want 1 to %d", k, v, health.MaxThreshold)
			}
			if k == "rise" {
				l.Rise = n
			} else {
				l.Fall = n
			}
		default:
			return fmt.Errorf("health: unknown setting %q (want interval, timeout, rise or fall)", k)
		}
	}
	return nil
}

// parseLBBackend reads "backend ADDR [weight N] [drain]".
func parseLBBackend(args []string) (LBBackend, error) {
	if len(args) == 0 {
		return LBBackend{}, fmt.Errorf("want \"backend ADDR [weight N] [drain]\"")
	}
	a, err := ParseLBAddr("backend", args[0])
	if err != nil {
		return LBBackend{}, err
	}
	b := LBBackend{Addr: a, Weight: 1}
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "drain":
			b.Drain = true
		case args[i] == "weight" && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 1 || n > lb.MaxWeight {
				return LBBackend{}, fmt.Errorf("backend %s: weight %q: want 1 to %d", a, args[i+1], lb.MaxWeight)
			}
			b.Weight = n
			i++
		default:
			return LBBackend{}, fmt.Errorf("backend %s: unknown setting %q (want weight N or drain)", a, args[i])
		}
	}
	return b, nil
}

// formatLB writes one lb block.
func formatLB(b *bytes.Buffer, l *LB) {
	b.WriteString("\nlb " + l.Name + " {\n")
	if l.Iface != "" {
		b.WriteString("    iface " + l.Iface + "\n")
	} else {
		b.WriteString("    bridge " + l.Bridge + "\n")
	}
	for _, v := range l.VIPs {
		b.WriteString("    vip " + v.String() + "\n")
	}
	b.WriteString("    method " + l.Method + "\n")
	b.WriteString("    health " + l.Health)
	if l.Interval != 0 {
		b.WriteString(" interval " + l.Interval.String())
	}
	if l.Timeout != 0 {
		b.WriteString(" timeout " + l.Timeout.String())
	}
	if l.Rise != 0 {
		b.WriteString(" rise " + strconv.Itoa(l.Rise))
	}
	if l.Fall != 0 {
		b.WriteString(" fall " + strconv.Itoa(l.Fall))
	}
	b.WriteString("\n")
	for _, s := range l.Sources {
		b.WriteString("    source " + s.String() + "\n")
	}
	for _, be := range l.Backends {
		b.WriteString("    backend " + be.Addr.String())
		if be.Weight != 1 {
			b.WriteString(" weight " + strconv.Itoa(be.Weight))
		}
		if be.Drain {
			b.WriteString(" drain")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
}

// cloneLB returns a deep copy of l.
func cloneLB(l LB) LB {
	l.VIPs = slices.Clone(l.VIPs)
	l.Sources = slices.Clone(l.Sources)
	l.Backends = slices.Clone(l.Backends)
	return l
}

// The lb edits (swctl lb).

// errNoLB names an lb that does not exist.
func errNoLB(name string) error { return fmt.Errorf("%s: no such lb", name) }

// CreateLB adds l, with no backends unless it has some; its interface
// must exist (h), its bridge be configured.
func (c *Config) CreateLB(l LB, h Host) error {
	if c.LB(l.Name) != nil {
		return fmt.Errorf("%s: lb exists", l.Name)
	}
	if l.Method == "" {
		l.Method = DefaultLBMethod
	}
	if l.Health == "" {
		l.Health = "none"
	}
	if l.Iface != "" && !h.Exists(l.Iface) {
		return fmt.Errorf("%s: create --iface %s: no such interface", l.Name, l.Iface)
	}
	if l.Bridge != "" && c.Bridge(l.Bridge) == nil {
		return fmt.Errorf("%s: create --bridge %s: no such bridge", l.Name, l.Bridge)
	}
	if err := l.check(); err != nil {
		return err
	}
	c.LBs = append(c.LBs, cloneLB(l))
	return nil
}

// DestroyLB removes an lb.
func (c *Config) DestroyLB(name string) error {
	i := slices.IndexFunc(c.LBs, func(l LB) bool { return l.Name == name })
	if i < 0 {
		return errNoLB(name)
	}
	c.LBs = slices.Delete(c.LBs, i, i+1)
	return nil
}

// AddLBBackend adds a backend to lb name, serving, with weight (0 means
// 1); a backend already there gets the weight and stops draining.
func (c *Config) AddLBBackend(name string, addr netip.Addr, weight int) error {
	l := c.LB(name)
	if l == nil {
		return errNoLB(name)
	}
	weight = max(weight, 1)
	if b := l.Backend(addr); b != nil {
		if b.Weight == weight && !b.Drain {
			return fmt.Errorf("%s: backend add %s: already a backend with weight %d", name, addr, weight)
		}
		b.Weight, b.Drain = weight, false
		return nil
	}
	b := LBBackend{Addr: addr, Weight: weight}
	if err := l.checkBackend(b, l.Backends); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l.Backends = append(l.Backends, b)
	return nil
}

// DelLBBackend removes a backend of lb name.
func (c *Config) DelLBBackend(name string, addr netip.Addr) error {
	l := c.LB(name)
	if l == nil {
		return errNoLB(name)
	}
	i := slices.IndexFunc(l.Backends, func(b LBBackend) bool { return b.Addr == addr })
	if i < 0 {
		return fmt.Errorf("%s: backend del %s: not a backend", name, addr)
	}
	l.Backends = slices.Delete(l.Backends, i, i+1)
	return nil
}

// DrainLBBackend marks a backend of lb name draining.
func (c *Config) DrainLBBackend(name string, addr netip.Addr) error {
	l := c.LB(name)
	if l == nil {
		return errNoLB(name)
	}
	b := l.Backend(addr)
	if b == nil {
		return fmt.Errorf("%s: backend drain %s: not a backend", name, addr)
	}
	b.Drain = true
	return nil
}
