package trunk

import (
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/platform"
)

// lacpProto runs IEEE 802.1AX LACP (package lacp) as a trunk Protocol: the
// actor decides which members collect and distribute; frames are spread
// over the distributing members by the lb hash.
type lacpProto struct {
	// cfg is the LACP configuration the actor is made with.
	cfg lacp.Config
	// ctl is the trunk, set by Attach; valid only during Protocol calls.
	ctl Control
	// actor is the LACP state machine, made by Attach.
	actor *lacp.Actor
}

// NewLACP returns the LACP protocol with cfg. A zero SystemMAC takes the
// trunk's MAC when the protocol is attached.
func NewLACP(cfg lacp.Config) Protocol { return &lacpProto{cfg: cfg} }

// ctlClock reads the trunk's clock through Control; the actor reads it
// only from within Protocol calls, where Control is valid.
type ctlClock struct{ p *lacpProto }

func (c ctlClock) Now() time.Time { return c.p.ctl.Now() }

func (p *lacpProto) Name() Proto                { return ProtoLACP }
func (p *lacpProto) Distribution() Distribution { return DistributeHash }

func (p *lacpProto) Attach(c Control) {
	p.ctl = c
	cfg := p.cfg
	if cfg.SystemMAC == ([6]byte{}) {
		cfg.SystemMAC = frame.MACOf(c.HardwareAddr())
	}
	p.actor = lacp.New(cfg, ctlClock{p}, p.send, c.Logger().With("proto", "lacp"))
}

func (p *lacpProto) Detach() {}

// send writes a frame the actor made out of member id.
func (p *lacpProto) send(id int, f []byte) {
	for _, m := range p.ctl.Members() {
		if m.ID() == id {
			_ = p.ctl.Send(m, f) // a refused LACPDU is like a lost one
			return
		}
	}
}

// sync copies the actor's collecting/distributing decisions to the trunk.
func (p *lacpProto) sync() {
	for _, m := range p.ctl.Members() {
		p.ctl.SetState(m, p.actor.Collecting(m.ID()), p.actor.Distributing(m.ID()))
	}
}

func (p *lacpProto) PortAdded(m *Member) {
	if err := p.actor.AddPort(m.ID(), m.Name(), frame.MACOf(m.HardwareAddr()), m.LACPPortPriority(), m.Link() == platform.LinkUp); err != nil {
		p.ctl.Logger().Warn("lacp: add port", "port", m.Name(), "err", err)
	}
	p.sync()
}

func (p *lacpProto) PortRemoved(m *Member) {
	p.actor.RemovePort(m.ID())
	p.sync()
}

func (p *lacpProto) LinkChanged(m *Member) {
	p.actor.LinkChanged(m.ID(), m.Link() == platform.LinkUp)
	p.sync()
}

func (p *lacpProto) Tick(time.Time) {
	p.actor.Tick()
	p.sync()
}

func (p *lacpProto) Input(m *Member, f []byte) {
	p.actor.Receive(m.ID(), f)
	p.sync()
}

// setLACPPortPriority implements lacpPortPrioritySetter: the actor
// advertises m's new priority at once.
func (p *lacpProto) setLACPPortPriority(m *Member) error {
	if err := p.actor.SetPortPriority(m.ID(), m.LACPPortPriority()); err != nil {
		return err
	}
	p.sync()
	return nil
}

// PortDetail implements PortDetailer: the member's actor and partner.
func (p *lacpProto) PortDetail(m *Member) any {
	for _, s := range p.actor.Ports() {
		if s.ID == m.ID() {
			return s
		}
	}
	return nil
}

// Actor returns the LACP actor, for configuration changes (nil before
// Attach).
func (p *lacpProto) Actor() *lacp.Actor { return p.actor }
