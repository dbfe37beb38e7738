package trunk

import (
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
)

// The trunk's protocol: installing one, the hash it distributes by, its
// timer, and the Control through which it acts on the trunk.

// SetProtocol replaces the trunk's protocol by p: the old one is
// detached, every member is reset to neither collecting nor distributing
// and added to p in order, and the data path switches to p's states in
// one step. p must be fresh (never attached before).
func (tr *Trunk) SetProtocol(p Protocol) error {
	if p == nil {
		return fmt.Errorf("%s: set proto: no protocol", tr.name)
	}
	tr.mu.Lock()
	if tr.isClosed {
		tr.mu.Unlock()
		return fmt.Errorf("%s: set proto %s: trunk closed", tr.name, p.Name())
	}
	old := tr.proto.Name()
	tr.proto.Detach()
	tr.ctl.detached = true
	for _, m := range tr.members {
		m.collecting.Store(false)
		m.distributing.Store(false)
	}
	tr.attachLocked(p)
	for _, m := range tr.members {
		p.PortAdded(m)
	}
	tr.publishLocked()
	tr.mu.Unlock()
	tr.log.Info("proto changed", "from", old, "to", p.Name())
	tr.notify()
	return nil
}

// attachLocked makes p the protocol. Call with mu held.
func (tr *Trunk) attachLocked(p Protocol) {
	tr.proto = p
	tr.ctl = &control{tr: tr}
	p.Attach(tr.ctl)
}

// SetHash changes the headers the flow hash reads; 0 means lb.AllFields.
// Flows may move to other members.
func (tr *Trunk) SetHash(fields lb.HashFields) {
	if fields == 0 {
		fields = lb.AllFields
	}
	tr.mu.Lock()
	old := tr.hash
	tr.hash = fields
	tr.publishLocked()
	tr.mu.Unlock()
	if old != fields {
		tr.log.Info("hash changed", "hash", fields.String())
	}
}

// Tick runs the protocol's timers now, with the trunk clock's time. The
// trunk's own ticker calls it every Options.TickInterval; tests on a fake
// clock call it after Advance.
func (tr *Trunk) Tick() {
	tr.mu.Lock()
	if tr.isClosed {
		tr.mu.Unlock()
		return
	}
	now := tr.clock.Now()
	tr.applyDueLinksLocked(now)
	tr.proto.Tick(now)
	tr.publishChangesLocked()
	tr.mu.Unlock()
	tr.notify()
}

// ticker calls Tick every d until the trunk closes.
func (tr *Trunk) ticker(d time.Duration) {
	defer close(tr.tickDone)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			tr.Tick()
		case <-tr.closing:
			return
		}
	}
}

// control is the Control of one attachment of a protocol.
type control struct {
	// tr is the trunk; immutable.
	tr *Trunk
	// detached is set when the protocol is detached. Guarded by tr.mu.
	detached bool
}

func (c *control) TrunkName() string              { return c.tr.name }
func (c *control) HardwareAddr() net.HardwareAddr { return c.tr.HardwareAddr() }
func (c *control) Now() time.Time                 { return c.tr.clock.Now() }
func (c *control) Logger() *slog.Logger           { return c.tr.log }
func (c *control) Preempt() bool                  { return !c.tr.policy.NoPreempt }

func (c *control) Members() []*Member {
	if c.detached {
		return nil
	}
	return slices.Clone(c.tr.members)
}

func (c *control) SetState(m *Member, collecting, distributing bool) {
	if c.detached || m.gone.Load() {
		return
	}
	oldC := m.collecting.Swap(collecting)
	oldD := m.distributing.Swap(distributing)
	if oldC != collecting || oldD != distributing {
		c.tr.dirty = true
	}
}

func (c *control) Send(m *Member, f []byte) error {
	tr := c.tr
	if m == nil {
		return fmt.Errorf("%s: send: no port", tr.name)
	}
	if c.detached || m.gone.Load() {
		return fmt.Errorf("%s: send on %s: not a port", tr.name, m.name)
	}
	tr.sendBuf[0] = f
	n, err := m.port.WriteBatch(platform.Batch{Frames: tr.sendBuf[:]})
	tr.sendBuf[0] = nil
	switch {
	case err != nil:
		return fmt.Errorf("%s: send on %s: %w", tr.name, m.name, err)
	case n != 1:
		return fmt.Errorf("%s: send on %s: frame dropped by the port", tr.name, m.name)
	}
	return nil
}
