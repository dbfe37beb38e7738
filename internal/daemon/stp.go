package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/stp"
	"github.com/swctl/swctl/trunk"
)

// stpTickInterval is how often a spanning tree steps its timers and
// looks at its ports' links.
const stpTickInterval = 100 * time.Millisecond

// stpObj runs the spanning tree of one bridge: one stp.Bridge, fed with
// the BPDUs its members receive (their link-local handlers), their link
// changes and a ticker, whose BPDUs go straight out of the member's Port
// and whose port states the bridge reads through each member's gate. The
// bridge's local TAP and its span ports are not in it.
type stpObj struct {
	// tree is the protocol; it has its own lock, and calls send and
	// flush with it held.
	tree *stp.Bridge
	// br is the bridge whose members' learned addresses flush drops.
	br *bridge.Bridge
	// log receives the rare failures of the outputs.
	log *slog.Logger
	// ids maps a member's name to its port id in tree; next is the next
	// id. Guarded by the engine's mutex: only the control path uses them.
	ids  map[string]int
	next int
	// mu guards ports and out. send and flush take it with tree's lock
	// held, so no one holding mu may call into tree.
	mu sync.Mutex
	// ports are tree's ports by id. Guarded by mu.
	ports map[int]*stpPort
	// out is the batch send writes. Guarded by mu.
	out [1][]byte
	// kick asks the ticker to look at every link now (a link event).
	kick chan struct{}
	// stop ends the ticker; done is closed when it has returned.
	stop, done chan struct{}
	// changed is the ticker's scratch: the links it found changed.
	changed []linkChange
}

// stpPort is one member in the spanning tree.
type stpPort struct {
	// name is the member's name; port is its Port, which the bridge owns.
	name string
	port platform.Port
	// speed reads the link's speed in Mb/s and whether it is half
	// duplex.
	speed func() (uint64, bool)
	// link is what tree was last told; added is set once tree has the
	// port. Guarded by stpObj.mu.
	link  stp.Link
	added bool
}

// linkChange is a port whose link tree must be told.
type linkChange struct {
	id   int
	link stp.Link
}

// newSTP returns the spanning tree of bridge br, configured by c, with
// no ports and its ticker not started.
func newSTP(c *config.Bridge, br *bridge.Bridge, g *graph) (*stpObj, error) {
	var mac [6]byte
	if c.Local {
		mac = c.LocalMAC
	}
	s := &stpObj{
		br: br, log: g.log, ids: map[string]int{}, ports: map[int]*stpPort{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	tree, err := stp.New(c.STPSettings().Config(mac), g.clock, stp.Outputs{Send: s.send, Flush: s.flush}, g.log.With("bridge", c.Name))
	if err != nil {
		return nil, fmt.Errorf("%s: stp: %w", c.Name, err)
	}
	s.tree = tree
	return s, nil
}

// send writes a BPDU out of port id; the Port copies it.
func (s *stpObj) send(id int, f []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.ports[id]
	if p == nil {
		return
	}
	s.out[0] = f
	_, err := p.port.WriteBatch(platform.Batch{Frames: s.out[:]})
	s.out[0] = nil
	if err != nil && s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.Debug("stp: BPDU not sent", "port", p.name, "err", err)
	}
}

// flush drops the addresses learned on port id.
func (s *stpObj) flush(id int) {
	s.mu.Lock()
	p := s.ports[id]
	s.mu.Unlock()
	if p != nil {
		// A member not yet (or no longer) in the bridge learned nothing.
		_, _ = s.br.FlushPort(p.name, false)
	}
}

// handler returns the link-local handler of port id: BPDUs go to the
// tree, other reserved groups are dropped.
func (s *stpObj) handler(id int) func([]byte) {
	return func(f []byte) {
		if frame.Ethernet(f).Destination() == frame.MAC(stp.GroupMAC) {
			s.tree.Input(id, f)
		}
	}
}

// join adds member port, with settings cfg, to the tree and returns its
// id. speed reads its link's speed.
func (s *stpObj) join(port platform.Port, cfg config.PortSTP, speed func() (uint64, bool)) (int, error) {
	name := port.Name()
	id := s.next
	s.next++
	p := &stpPort{name: name, port: port, speed: speed}
	p.link = readLink(port, speed)
	s.mu.Lock()
	s.ports[id] = p
	s.mu.Unlock()
	if err := s.tree.AddPort(id, name, frame.MACOf(port.HardwareAddr()), p.link, cfg.Config()); err != nil {
		s.mu.Lock()
		delete(s.ports, id)
		s.mu.Unlock()
		return 0, err
	}
	s.mu.Lock()
	p.added = true
	s.mu.Unlock()
	s.ids[name] = id
	return id, nil
}

// leave takes the member called name out of the tree; its gate discards
// from then on. An unknown name is ignored.
func (s *stpObj) leave(name string) {
	id, ok := s.ids[name]
	if !ok {
		return
	}
	delete(s.ids, name)
	s.tree.RemovePort(id)
	s.mu.Lock()
	delete(s.ports, id)
	s.mu.Unlock()
}

// readLink reads port's link as the tree takes it.
func readLink(port platform.Port, speed func() (uint64, bool)) stp.Link {
	if port.Link() != platform.LinkUp {
		return stp.Link{}
	}
	mbps, half := speed()
	return stp.Link{Up: true, SpeedMbps: mbps, HalfDuplex: half}
}

// start starts the ticker.
func (s *stpObj) start() { supervise.Go("spanning tree", s.run) }

// run steps the tree's timers every stpTickInterval and tells it of link
// changes, until stop is closed.
func (s *stpObj) run() {
	defer close(s.done)
	t := time.NewTicker(stpTickInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
			s.followLinks(true)
		case <-t.C:
			s.followLinks(false)
		}
		s.tree.Tick()
	}
}

// followLinks tells the tree of every port whose carrier changed, and
// with speeds set, of every speed or duplex change too (reading them
// costs a system call or two per port).
func (s *stpObj) followLinks(speeds bool) {
	s.changed = s.changed[:0]
	s.mu.Lock()
	for id, p := range s.ports {
		up := p.port.Link() == platform.LinkUp
		if p.added && (up != p.link.Up || speeds && up) {
			s.changed = append(s.changed, linkChange{id: id})
		}
	}
	s.mu.Unlock()
	for i := range s.changed {
		c := &s.changed[i]
		s.mu.Lock()
		p := s.ports[c.id]
		s.mu.Unlock()
		if p == nil {
			continue
		}
		c.link = readLink(p.port, p.speed)
		s.mu.Lock()
		p.link = c.link
		s.mu.Unlock()
		s.tree.LinkChanged(c.id, c.link)
	}
}

// linkEvent asks the ticker to look at the links now.
func (s *stpObj) linkEvent() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// close stops the ticker.
func (s *stpObj) close() {
	close(s.stop)
	<-s.done
}

// speedOf returns how to read, through sys, the speed of member po's
// link: the interface's, or a trunk's (tr), the sum of its up ports'.
func speedOf(sys system, po *portObj, tr *trunk.Trunk) func() (uint64, bool) {
	if tr == nil {
		return func() (uint64, bool) { return sys.LinkSpeed(po.name) }
	}
	return func() (uint64, bool) {
		var sum uint64
		for _, p := range tr.Ports() {
			if p.Link == platform.LinkUp {
				mbps, _ := sys.LinkSpeed(p.Name)
				sum += mbps
			}
		}
		return sum, false
	}
}

// addMember gives port, member po configured as p, to the bridge: while
// the spanning tree runs, with the member's gate and BPDU handler in
// place before its first frame is read. tr is set when po is a trunk.
func (b *bridgeObj) addMember(po *portObj, port platform.Port, p *config.Port, tr *trunk.Trunk) error {
	s := b.stp
	if s == nil {
		if err := b.br.AddPort(port, portFlags(p)); err != nil {
			return err
		}
		b.protectNew(po.name, p)
		return nil
	}
	id, err := s.join(port, p.STPSettings(), speedOf(b.g.sys, po, tr))
	if err != nil {
		return err
	}
	if err := b.br.AddGatedPort(port, portFlags(p), s.tree.Gate(id), s.handler(id)); err != nil {
		s.leave(po.name)
		return err
	}
	b.protectNew(po.name, p)
	return nil
}

// leaveSTP takes member po out of the spanning tree, if it runs, before
// it leaves the bridge.
func (b *bridgeObj) leaveSTP(po *portObj) {
	if b.stp != nil {
		b.stp.leave(po.name)
	}
}

// linkSTP tells the spanning tree, if it runs, that a member's link
// changed.
func (b *bridgeObj) linkSTP() {
	if b.stp != nil {
		b.stp.linkEvent()
	}
}

// startSTP runs the spanning tree of c, the bridge's configuration, if it
// is on, over the members attached now; members attached later join it
// through addMember. The forward mask is set too.
func (b *bridgeObj) startSTP(c *config.Bridge) error {
	if err := b.br.SetForwardMask(c.FwdMask); err != nil {
		return err
	}
	if !c.STPSettings().On {
		return nil
	}
	s, err := newSTP(c, b.br, b.g)
	if err != nil {
		return err
	}
	b.br.SetSpanningTree(true)
	for _, pc := range c.Ports {
		po := b.ports[pc.Name]
		if po == nil || po.port == nil {
			continue
		}
		var tr *trunk.Trunk
		if po.trunk != nil {
			tr = po.trunk.tr
		}
		id, err := s.join(po.port, pc.STPSettings(), speedOf(b.g.sys, po, tr))
		if err != nil {
			b.g.log.Error("member cannot join the spanning tree: it forwards as without one", "bridge", b.name, "port", po.name, "err", err)
			continue
		}
		_ = b.br.SetPortGate(po.name, s.tree.Gate(id))
		_ = b.br.SetLinkLocalHandler(po.name, s.handler(id))
	}
	b.stp = s
	s.start()
	return nil
}

// stopSTP stops the spanning tree, if it runs: every member forwards
// again, and BPDUs are forwarded like other multicast.
func (b *bridgeObj) stopSTP() {
	s := b.stp
	if s == nil {
		return
	}
	b.stp = nil
	s.close()
	for name := range s.ids {
		_ = b.br.SetLinkLocalHandler(name, nil)
		_ = b.br.SetPortGate(name, nil)
	}
	b.br.SetSpanningTree(false)
}

// setSTP makes the running bridge's spanning tree and forward mask those
// of c, and arms the members' BPDU guards accordingly; was is what they
// are now.
func (b *bridgeObj) setSTP(c, was *config.Bridge) error {
	err := b.setTree(c, was)
	b.protectAll(c)
	return err
}

// setTree makes the running bridge's spanning tree and forward mask those
// of c; was is what they are now.
func (b *bridgeObj) setTree(c, was *config.Bridge) error {
	if err := b.br.SetForwardMask(c.FwdMask); err != nil {
		return err
	}
	on, wasOn := c.STPSettings().On, was.STPSettings().On
	switch {
	case on && !wasOn:
		return b.startSTP(c)
	case !on && wasOn:
		b.stopSTP()
		return nil
	case !on:
		return nil
	}
	var mac [6]byte
	if c.Local {
		mac = c.LocalMAC
	}
	if err := b.stp.tree.SetConfig(c.STPSettings().Config(mac)); err != nil {
		return fmt.Errorf("%s: stp: %w", c.Name, err)
	}
	for _, pc := range c.Ports {
		old := was.Port(pc.Name)
		id, in := b.stp.ids[pc.Name]
		if !in || old == nil || old.STPSettings() == pc.STPSettings() {
			continue
		}
		if err := b.stp.tree.SetPortConfig(id, pc.STPSettings().Config()); err != nil {
			return fmt.Errorf("%s: port %s: %w", c.Name, pc.Name, err)
		}
	}
	return nil
}

// changeSTP plans the change of a running bridge's spanning tree and
// forward mask from was to c. It comes before the bridge's new members
// are attached, so that they join the spanning tree c runs.
func (p *plan) changeSTP(b *bridgeObj, was, c *config.Bridge) {
	changed := c.FwdMask != was.FwdMask || c.STPSettings() != was.STPSettings()
	for i := range c.Ports {
		if old := was.Port(c.Ports[i].Name); old != nil && old.STPSettings() != c.Ports[i].STPSettings() {
			changed = true
		}
	}
	if !changed {
		return
	}
	p.add(func() (func(), error) {
		if err := b.setSTP(c, was); err != nil {
			return nil, err
		}
		return func() { p.logUndo(b.setSTP(was, c)) }, nil
	})
}
