package daemon

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/promisc"
	"github.com/swctl/swctl/trunk"
)

// slowProtocolsGroup is 01:80:c2:00:00:02, the destination of LACPDUs and
// markers, which a non-promiscuous member must join on real NICs.
var slowProtocolsGroup = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}

// trunkObj is one running trunk and what the daemon opened for it.
type trunkObj struct {
	// name is the trunk's name, and its TAP's.
	name string
	// tr aggregates the member ports; it owns them.
	tr *trunk.Trunk
	// ports are the configured members by name, attached or absent.
	ports map[string]*trunkPortObj
	// bridge is the bridge the trunk is a member of, "" when it is given
	// to the host as its own TAP.
	bridge string

	// tapMu guards tap and pump, which the trunk's OnActiveChange
	// callback reads from another goroutine.
	tapMu sync.Mutex
	// tap is the trunk's host interface; nil while the trunk is a bridge
	// member.
	tap platform.Port
	// pump moves frames between tap and the trunk; nil with tap.
	pump *pump
}

// trunkPortObj is one member of a trunk.
type trunkPortObj struct {
	// name is the interface name.
	name string
	// port is the open port, nil while absent; the trunk owns it.
	port platform.Port
	// guard keeps the member's own stack off the frames it receives.
	guard io.Closer
	// lladdr is set when swctl changed the member's MAC (journalled).
	lladdr bool
	// promisc is set when swctl holds a promiscuous membership on it.
	promisc bool
}

// carrier is what a TAP can do besides being a Port: follow the trunk.
type carrier interface {
	SetCarrier(up bool) error
}

// pump moves frames between a trunk and its TAP, one goroutine each way.
// The TAP has no IFF_VNET_HDR: the pump reads the trunk with plain
// ReadBatch, which finishes the offloads of frames the members received
// (partial checksums, super-frames) in software (trunk.Trunk.ReadBatch,
// platform.SoftwareFinisher) before they are written to the TAP; what the
// TAP gives is plain already.
type pump struct {
	// h is the pump's consumer view of the trunk (a trunk.Handle).
	h platform.Port
	// tap is the host side.
	tap platform.Port
	// log receives a line when reads start failing and when they recover.
	log *slog.Logger
	// done is closed by stop; it ends a wait between failed reads.
	done chan struct{}
	// wg counts the two goroutines.
	wg sync.WaitGroup
}

// Bounds of the wait between two reads that failed with an error other
// than ErrClosed.
const (
	retryMin = time.Millisecond
	retryMax = time.Second
)

// backoff is a bounded exponential delay: retryMin, doubling with each
// call up to retryMax. The zero value starts at retryMin.
type backoff struct {
	// d is the delay next returns; 0 means retryMin.
	d time.Duration
}

// next returns the delay to wait now and doubles the following one.
func (b *backoff) next() time.Duration {
	d := max(b.d, retryMin)
	b.d = min(2*d, retryMax)
	return d
}

// reset makes the next delay retryMin again.
func (b *backoff) reset() { b.d = 0 }

func startPump(h, tap platform.Port, log *slog.Logger) *pump {
	p := &pump{h: h, tap: tap, log: log, done: make(chan struct{})}
	p.wg.Add(2)
	go p.copy(h, tap, "trunk")
	go p.copy(tap, h, "tap")
	return p
}

// copy reads batches from src (from names it in the log) and writes them
// to dst until either closes or the pump stops. A read that fails
// otherwise is retried after a backoff, reset by the next good read: a
// TAP whose host side hung up fails every read at once, and retrying at
// once would spin on a core. The first failure of a run is logged, not
// every retry.
func (p *pump) copy(src, dst platform.Port, from string) {
	defer p.wg.Done()
	buf := make([][]byte, max(src.BatchSize(), 1))
	var wait backoff
	failed := 0 // reads failed in a row
	for {
		n, err := src.ReadBatch(platform.Batch{Frames: buf})
		if n > 0 {
			if _, werr := dst.WriteBatch(platform.Batch{Frames: buf[:n]}); errors.Is(werr, platform.ErrClosed) {
				return
			}
		}
		switch {
		case err == nil:
			if failed > 0 {
				p.log.Info("pump: reads work again", "from", from, "failed", failed)
				failed = 0
				wait.reset()
			}
		case errors.Is(err, platform.ErrClosed):
			return
		default:
			if failed == 0 {
				p.log.Warn("pump: read failed, retrying with backoff", "from", from, "err", err)
			}
			failed++
			if !p.sleep(wait.next()) {
				return
			}
		}
	}
}

// sleep waits d, or less if the pump stops; it reports whether the pump
// still runs. The wait is on a real timer: clock.Clock only tells the
// time.
func (p *pump) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.done:
		return false
	}
}

// stop ends both goroutines and closes the TAP (which then disappears).
func (p *pump) stop() {
	close(p.done)
	p.h.Close()
	p.tap.Close()
	p.wg.Wait()
}

// trunkSeed is the trunk's hash seed: stable across restarts, so flows
// keep their ports, and different between trunks.
func trunkSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("swctl trunk " + name))
	return h.Sum64()
}

// trunkProtocol builds the protocol a trunk's configuration asks for.
func trunkProtocol(c *config.Trunk) (trunk.Protocol, error) {
	if c.Proto != string(trunk.ProtoLACP) {
		return trunk.NewProtocol(trunk.Proto(c.Proto))
	}
	mode, err := lacp.ParseMode(c.LACPMode)
	if err != nil {
		return nil, err
	}
	timeout, err := lacp.ParseTimeout(c.LACPTimeout)
	if err != nil {
		return nil, err
	}
	return trunk.NewLACP(lacp.Config{
		Mode: mode, Timeout: timeout,
		SystemPriority: uint16(c.LACPSystemPriority), SystemMAC: c.LLAddr, Key: uint16(c.LACPKey),
	}), nil
}

// startTrunk creates a running trunk from its configuration; cfg is the
// whole configuration it belongs to (to know whether a bridge has it).
func (e *engine) startTrunk(c *config.Trunk, cfg *config.Config) (err error) {
	proto, err := trunkProtocol(c)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	fields, err := lb.ParseHashFields(c.Hash)
	if err != nil {
		return fmt.Errorf("%s: hash: %w", c.Name, err)
	}
	to := &trunkObj{name: c.Name, ports: make(map[string]*trunkPortObj)}
	tr, err := trunk.New(c.Name, trunk.Options{
		Protocol: proto, Hash: fields, Seed: trunkSeed(c.Name),
		MAC: net.HardwareAddr(c.LLAddr[:]), Clock: e.clock, Logger: e.log.With("trunk", c.Name),
		OnActiveChange: to.setCarrier,
	})
	if err != nil {
		return err
	}
	to.tr = tr
	defer func() {
		if err != nil {
			e.stopTrunk(to)
		}
	}()
	for i := range c.Ports {
		tpo := &trunkPortObj{name: c.Ports[i].Name}
		to.ports[tpo.name] = tpo
		if err := e.attachTrunkPort(to, c, tpo, &c.Ports[i]); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	if b := cfg.BridgeOf(c.Name); b != "" {
		to.bridge = b // the bridge takes a Handle when it starts
	} else if err := e.startTrunkTap(to, c.LLAddr); err != nil {
		return err
	}
	e.trunks[c.Name] = to
	e.log.Info("trunk up", "trunk", c.Name, "proto", c.Proto, "ports", len(c.Ports), "lladdr", c.LLAddr.String(), "promisc", c.Promisc)
	return nil
}

// setCarrier makes the trunk's TAP carrier follow the trunk: up while any
// port is active.
func (to *trunkObj) setCarrier(active bool) {
	to.tapMu.Lock()
	defer to.tapMu.Unlock()
	if c, ok := to.tap.(carrier); ok {
		_ = c.SetCarrier(active)
	}
}

// startTrunkTap gives the trunk to the host as a TAP named after it.
func (e *engine) startTrunkTap(to *trunkObj, mac frame.MAC) error {
	mtu := to.tr.MTU()
	tp, err := e.sys.CreateTap(to.name, net.HardwareAddr(mac[:]), mtu)
	if err != nil {
		return fmt.Errorf("%s: tap: %w", to.name, err)
	}
	to.tapMu.Lock()
	to.tap = tp
	to.pump = startPump(to.tr.Handle(), tp, e.log.With("trunk", to.name))
	to.tapMu.Unlock()
	to.setCarrier(to.tr.Active())
	return nil
}

// stopTrunkTap removes the trunk's TAP (when it joins a bridge, or stops).
func (e *engine) stopTrunkTap(to *trunkObj) {
	to.tapMu.Lock()
	p := to.pump
	to.tap, to.pump = nil, nil
	to.tapMu.Unlock()
	if p != nil {
		if n := e.sys.HostAddrs(to.name); n > 0 {
			e.log.Warn("removing the trunk's TAP drops the host addresses on it", "trunk", to.name, "addresses", n)
		}
		p.stop()
	}
}

// fitTrunkTap sets the trunk TAP's MTU to the trunk's.
func (e *engine) fitTrunkTap(to *trunkObj) {
	to.tapMu.Lock()
	tp := to.tap
	to.tapMu.Unlock()
	if tp == nil || tp.MTU() == to.tr.MTU() {
		return
	}
	if err := e.sys.SetTapMTU(to.name, to.tr.MTU()); err != nil {
		e.log.Warn("cannot set the trunk TAP's MTU", "trunk", to.name, "err", err)
		return
	}
	if s, ok := tp.(interface{ SetMTU(int) }); ok {
		s.SetMTU(to.tr.MTU())
	}
}

// attachTrunkPort opens a configured member whose interface exists and
// gives it to the trunk, applying the trunk's lladdr or promisc policy;
// one that does not exist stays absent. On error nothing is left changed.
func (e *engine) attachTrunkPort(to *trunkObj, c *config.Trunk, tpo *trunkPortObj, pc *config.TrunkPort) (err error) {
	if e.sys.LinkState(tpo.name) == platform.LinkAbsent {
		e.log.Info("port absent", "trunk", to.name, "port", tpo.name)
		return nil
	}
	var (
		port  platform.Port
		guard io.Closer
		held  bool
		set   bool
	)
	defer func() {
		if err == nil {
			return
		}
		if held {
			e.promisc.Release(port.(promisc.Port))
		}
		if port != nil {
			port.Close()
		}
		if guard != nil {
			guard.Close()
		}
		if set {
			if rerr := e.sys.RestoreLLAddr(tpo.name); rerr != nil {
				e.log.Error("cannot restore the MAC of a port that failed to join", "trunk", to.name, "port", tpo.name, "err", rerr)
			}
		}
	}()
	if !c.Promisc {
		// The lladdr policy, as trunk(4): every member carries the
		// trunk's MAC. The change outlives a crash, so it is journalled
		// before it is made.
		if err := e.sys.SetLLAddr(tpo.name, net.HardwareAddr(c.LLAddr[:]), "trunk "+to.name); err != nil {
			return fmt.Errorf("add %s: set lladdr: %w", tpo.name, err)
		}
		set = true
	}
	// Members carry offloads (virtio_net_hdr), as bridge members do:
	// the trunk passes them on to a bridge, or finishes them in
	// software for its TAP (see pump).
	if port, err = e.sys.OpenPort(tpo.name, true); err != nil {
		return fmt.Errorf("add %s: %w", tpo.name, err)
	}
	if c.Promisc {
		if pp, ok := port.(promisc.Port); ok {
			if err := e.promisc.Acquire(pp); err != nil {
				return fmt.Errorf("add %s: %w", tpo.name, err)
			}
			held = true
		}
	} else {
		// Real NICs filter by MAC: LACP's group and IPv6 neighbour
		// discovery need these memberships (socket-owned, crash-safe).
		if g, ok := port.(interface {
			JoinMulticast(net.HardwareAddr) error
			SetAllMulti(bool) error
		}); ok {
			if err := g.JoinMulticast(slowProtocolsGroup); err != nil {
				return fmt.Errorf("add %s: %w", tpo.name, err)
			}
			if err := g.SetAllMulti(true); err != nil {
				return fmt.Errorf("add %s: %w", tpo.name, err)
			}
		}
	}
	if guard, err = e.sys.GuardStack(tpo.name); err != nil {
		return fmt.Errorf("add %s: %w", tpo.name, err)
	}
	if err := to.tr.AddPort(port, trunk.PortConfig{Priority: pc.Priority, LACPPortPriority: uint16(pc.LACPPortPriority)}); err != nil {
		return err
	}
	tpo.port, tpo.guard, tpo.lladdr, tpo.promisc = port, guard, set, held
	e.fitTrunkTap(to)
	return nil
}

// detachTrunkPort takes a member out of its trunk and gives the
// interface back as it was (its own MAC, no promiscuity).
func (e *engine) detachTrunkPort(to *trunkObj, tpo *trunkPortObj) {
	if tpo.port == nil {
		return
	}
	if tpo.promisc {
		if err := e.promisc.Release(tpo.port.(promisc.Port)); err != nil {
			e.promisc.Forget(tpo.port.(promisc.Port))
		}
	}
	if err := to.tr.RemovePort(tpo.name); err != nil {
		e.log.Warn("remove trunk port", "trunk", to.name, "port", tpo.name, "err", err)
	}
	tpo.port.Close()
	if tpo.guard != nil {
		tpo.guard.Close()
	}
	if tpo.lladdr {
		if err := e.sys.RestoreLLAddr(tpo.name); err != nil {
			e.log.Error("cannot restore the MAC of a port leaving its trunk", "trunk", to.name, "port", tpo.name, "err", err)
		}
	}
	tpo.port, tpo.guard, tpo.lladdr, tpo.promisc = nil, nil, false, false
	e.fitTrunkTap(to)
}

// stopTrunk closes a running trunk and gives every member back.
func (e *engine) stopTrunk(to *trunkObj) {
	e.stopTrunkTap(to)
	for _, tpo := range to.ports {
		e.detachTrunkPort(to, tpo)
	}
	to.tr.Close()
}

// trunkLinkChanged handles a link event for a trunk member; it reports
// whether name is one.
func (e *engine) trunkLinkChanged(name string, state platform.LinkState) bool {
	found := false
	for _, to := range e.trunks {
		tpo := to.ports[name]
		if tpo == nil {
			continue
		}
		found = true
		c := e.cfg.Trunk(to.name)
		switch {
		case state == platform.LinkAbsent && tpo.port != nil:
			e.log.Info("port gone", "trunk", to.name, "port", name)
			e.detachTrunkPort(to, tpo)
		case state != platform.LinkAbsent && tpo.port == nil:
			if err := e.attachTrunkPort(to, c, tpo, c.Port(name)); err != nil {
				e.log.Warn("cannot attach port that appeared", "trunk", to.name, "port", name, "err", err)
			}
		case tpo.port != nil:
			if ls, ok := tpo.port.(platform.LinkSetter); ok {
				if tpo.port.Link() != state {
					e.log.Info("link "+state.String(), "trunk", to.name, "port", name)
				}
				ls.SetLink(state)
			}
			to.tr.LinkChanged(name)
		}
	}
	return found
}
