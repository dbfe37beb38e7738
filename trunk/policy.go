package trunk

import (
	"fmt"
	"time"

	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// maxLinkDelay bounds Policy's delays: a longer one is a typo.
const maxLinkDelay = time.Hour

// Policy is how a trunk treats its members' links, with the knobs of
// Linux bonding (updelay, downdelay, min_links) and of failover
// preemption.
type Policy struct {
	// UpDelay is how long a member's link must stay up before the trunk
	// uses it, and DownDelay how long it must stay down before the trunk
	// stops using it: a link that flaps faster never flaps the trunk. 0
	// means at once. A member added to the trunk is taken as its link is.
	UpDelay, DownDelay time.Duration
	// MinLinks is how many members must collect and distribute for the
	// trunk to be active (its TAP's carrier up, Link up); 0 and 1 mean
	// one.
	MinLinks int
	// NoPreempt keeps failover on the member it uses while that one's
	// link is up, when a member of higher priority comes back; by default
	// failover returns to the highest priority at once.
	NoPreempt bool
}

// validate reports what is wrong with p, naming the setting.
func (p Policy) validate() error {
	switch {
	case p.UpDelay < 0 || p.UpDelay > maxLinkDelay:
		return fmt.Errorf("updelay %v: want 0 to %v", p.UpDelay, maxLinkDelay)
	case p.DownDelay < 0 || p.DownDelay > maxLinkDelay:
		return fmt.Errorf("downdelay %v: want 0 to %v", p.DownDelay, maxLinkDelay)
	case p.MinLinks < 0 || p.MinLinks > lb.MaxPorts:
		return fmt.Errorf("min-links %d: want 0 to %d", p.MinLinks, lb.MaxPorts)
	}
	return nil
}

// minActive is how many distributing members make the trunk active.
func (p Policy) minActive() int { return max(p.MinLinks, 1) }

// Policy returns the trunk's link policy.
func (tr *Trunk) Policy() Policy {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.policy
}

// SetPolicy changes the trunk's link policy. Pending link changes keep
// the deadline they were given; the protocol sees every member again, so
// that a failover allowed to preempt again returns to its primary at once.
func (tr *Trunk) SetPolicy(p Policy) error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("%s: %w", tr.name, err)
	}
	tr.mu.Lock()
	if tr.isClosed {
		tr.mu.Unlock()
		return fmt.Errorf("%s: set policy: trunk closed", tr.name)
	}
	tr.policy = p
	tr.minActive.Store(int32(p.minActive()))
	for _, m := range tr.members {
		tr.proto.LinkChanged(m)
	}
	tr.publishLocked()
	tr.mu.Unlock()
	tr.log.Info("policy changed", "updelay", p.UpDelay, "downdelay", p.DownDelay, "min_links", p.MinLinks, "preempt", !p.NoPreempt)
	tr.notify()
	return nil
}

// lockMember locks mu and returns member name; if there is none (or the
// trunk is closed) it leaves mu unlocked and says so, naming what.
func (tr *Trunk) lockMember(name, what string) (*Member, error) {
	tr.mu.Lock()
	m := tr.findLocked(name)
	if m == nil || tr.isClosed {
		tr.mu.Unlock()
		return nil, fmt.Errorf("%s: %s of %s: not a port", tr.name, what, name)
	}
	return m, nil
}

// SetPortPriority changes member name's failover priority in place: the
// protocol sees it at once (failover may move to it, or away from it).
func (tr *Trunk) SetPortPriority(name string, priority int) error {
	m, err := tr.lockMember(name, "set priority")
	if err != nil {
		return err
	}
	old := m.cfg.Priority
	m.cfg.Priority = priority
	tr.proto.LinkChanged(m)
	tr.publishLocked()
	tr.mu.Unlock()
	if old != priority {
		tr.log.Info("port priority changed", "port", name, "priority", priority)
	}
	tr.notify()
	return nil
}

// lacpPortPrioritySetter is a protocol that uses the members' LACP port
// priority: it is told when one changes, and may refuse.
type lacpPortPrioritySetter interface {
	setLACPPortPriority(m *Member) error
}

// SetLACPPortPriority changes member name's LACP port priority in place,
// 0 (the highest) included: an LACP trunk advertises it at once; another
// protocol keeps it for when LACP runs. If the protocol refuses it, the
// member keeps the one it had.
func (tr *Trunk) SetLACPPortPriority(name string, priority uint16) error {
	m, err := tr.lockMember(name, "set LACP port priority")
	if err != nil {
		return err
	}
	old := m.cfg
	m.cfg.LACPPortPriority, m.cfg.ExactLACPPortPriority = priority, true
	if s, ok := tr.proto.(lacpPortPrioritySetter); ok {
		if err := s.setLACPPortPriority(m); err != nil {
			m.cfg = old
			tr.mu.Unlock()
			return fmt.Errorf("%s: set LACP port priority of %s: %w", tr.name, name, err)
		}
	}
	tr.publishLocked()
	tr.mu.Unlock()
	if old.LACPPortPriority != priority {
		tr.log.Info("LACP port priority changed", "port", name, "lacp_port_priority", priority)
	}
	tr.notify()
	return nil
}

// followLinkLocked takes st, m's port's link state now, into the trunk's
// view of m: at once when no delay applies, else after UpDelay or
// DownDelay if it still holds then (applyDueLinksLocked). It reports
// whether the view changed now. mu is held.
func (tr *Trunk) followLinkLocked(m *Member, st platform.LinkState, now time.Time) bool {
	cur := m.Link()
	if st == cur {
		if m.pending {
			m.pending = false
			tr.log.Info("link change cancelled: back before its delay", "port", m.name, "link", st.String())
		}
		return false
	}
	delay := tr.policy.DownDelay
	if st == platform.LinkUp {
		delay = tr.policy.UpDelay
	}
	if delay <= 0 {
		m.pending = false
		m.link.Store(uint32(st))
		tr.proto.LinkChanged(m)
		return true
	}
	if !m.pending || m.pendingLink != st {
		m.pending, m.pendingLink, m.pendingAt = true, st, now.Add(delay)
		tr.log.Info("link change delayed", "port", m.name, "link", st.String(), "delay", delay)
	}
	return false
}

// applyDueLinksLocked takes into the trunk's view the delayed link
// changes whose time has come. mu is held.
func (tr *Trunk) applyDueLinksLocked(now time.Time) {
	for _, m := range tr.members {
		if !m.pending || now.Before(m.pendingAt) {
			continue
		}
		m.pending = false
		m.link.Store(uint32(m.pendingLink))
		tr.proto.LinkChanged(m)
		tr.log.Info("link changed", "port", m.name, "link", m.pendingLink.String(), "after", "delay")
	}
}
