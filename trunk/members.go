package trunk

import (
	"fmt"
	"slices"

	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// The trunk's members: adding and removing them, following their links,
// and describing them.

// AddPort makes p a member with configuration cfg. On success the trunk
// owns p: it reads p on a goroutine of its own and closes p when p is
// removed or the trunk closes. On error the caller keeps p.
func (tr *Trunk) AddPort(p platform.Port, cfg PortConfig) error {
	if p == nil {
		return fmt.Errorf("%s: add: no port", tr.name)
	}
	name := p.Name()
	tr.mu.Lock()
	switch {
	case tr.isClosed:
		tr.mu.Unlock()
		return fmt.Errorf("%s: add %s: trunk closed", tr.name, name)
	case tr.findLocked(name) != nil:
		tr.mu.Unlock()
		return fmt.Errorf("%s: add %s: already a port", tr.name, name)
	case tr.ids == ^lb.Set(0):
		tr.mu.Unlock()
		return fmt.Errorf("%s: add %s: trunk full (%d ports)", tr.name, name, lb.MaxPorts)
	}
	id := (^tr.ids).First()
	tr.ids = tr.ids.With(id)
	m := newMember(p, id, cfg)
	m.tx = newMemberTx(p, tr.tx.qBytes, tr.tx.qDelay, tr.tx.qTarget, tr.tx.qSuper)
	tr.members = append(slices.Clip(tr.members), m)
	if tr.mac.Load() == nil {
		if hw := p.HardwareAddr(); len(hw) == 6 {
			mac := slices.Clone(hw)
			tr.mac.Store(&mac)
		}
	}
	tr.proto.PortAdded(m)
	tr.publishLocked()
	tr.readers.Add(1)
	supervise.Go(tr.name+" reader "+name, func() { tr.read(m) })
	tr.mu.Unlock()
	tr.log.Info("port added", "port", name, "priority", m.cfg.Priority, "link", m.Link().String())
	tr.notify()
	return nil
}

// RemovePort removes the member called name: frames stop leaving by it
// and its received frames stop being passed up when RemovePort returns.
// Its port is closed then too, unless the consumer still holds frames
// from it (returned by the last ReadBatch): then it is closed at the
// consumer's next ReadBatch, or when the trunk closes.
func (tr *Trunk) RemovePort(name string) error {
	tr.mu.Lock()
	m := tr.findLocked(name)
	if m == nil {
		tr.mu.Unlock()
		return fmt.Errorf("%s: delete %s: not a port", tr.name, name)
	}
	m.gone.Store(true)
	tr.proto.PortRemoved(m)
	m.collecting.Store(false)
	m.distributing.Store(false)
	tr.members = slices.DeleteFunc(slices.Clone(tr.members), func(x *Member) bool { return x == m })
	tr.ids = tr.ids.Without(m.id)
	tr.publishLocked()
	tr.mu.Unlock()
	tr.notify()

	var err error
	if m.release() != stateLent {
		<-m.done
		if m.closeErr != nil {
			err = fmt.Errorf("%s: delete %s: close: %w", tr.name, name, m.closeErr)
		}
	}
	tr.log.Info("port removed", "port", name)
	return err
}

// findLocked returns the member called name, or nil. Call with mu held.
func (tr *Trunk) findLocked(name string) *Member {
	for _, m := range tr.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// LinkChanged tells the trunk that the link state of the member called
// name may have changed: it reads the member port's Link and tells the
// protocol, which (failover) moves traffic before LinkChanged returns.
// An unknown name is ignored.
func (tr *Trunk) LinkChanged(name string) {
	tr.mu.Lock()
	m := tr.findLocked(name)
	if m == nil || tr.isClosed {
		tr.mu.Unlock()
		return
	}
	st := m.port.Link()
	changed := tr.followLinkLocked(m, st, tr.clock.Now())
	tr.publishChangesLocked()
	tr.mu.Unlock()
	if changed {
		tr.log.Info("link changed", "port", name, "link", st.String())
	}
	tr.notify()
}

// Ports describes the members, in the order they were added.
func (tr *Trunk) Ports() []PortInfo {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := tr.table.Load()
	detailer, _ := tr.proto.(PortDetailer)
	out := make([]PortInfo, 0, len(tr.members))
	for _, m := range tr.members {
		pi := PortInfo{
			Name: m.name, Link: m.Link(), Priority: m.cfg.Priority, LACPPortPriority: m.cfg.LACPPortPriority,
			Counters: m.port.Counters(), RxRefused: m.rxRefused.Load(), RxControl: m.rxControl.Load(),
			Flags: []string{}, TxQueue: m.tx.info(),
		}
		if m == t.primary {
			pi.Flags = append(pi.Flags, "master")
		}
		if m.Distributing() {
			pi.Flags = append(pi.Flags, "active")
		}
		if m.Collecting() {
			pi.Flags = append(pi.Flags, "collecting")
		}
		if m.Distributing() {
			pi.Flags = append(pi.Flags, "distributing")
		}
		if detailer != nil {
			pi.Detail = detailer.PortDetail(m)
		}
		out = append(out, pi)
	}
	return out
}
