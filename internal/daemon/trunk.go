package daemon

import (
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lacp"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/pump"
	"github.com/swctl/swctl/trunk"
)

// slowProtocolsGroup is 01:80:c2:00:00:02, the destination of LACPDUs and
// markers, which a non-promiscuous member must join on real NICs.
var slowProtocolsGroup = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}

// trunkObj is one running trunk and what the daemon opened for it.
type trunkObj struct {
	// g is the graph the trunk belongs to: its system, log and
	// promiscuity registry.
	g *graph
	// name is the trunk's name, and its TAP's.
	name string
	// tr aggregates the member ports; it owns them.
	tr *trunk.Trunk
	// ports are the configured members by name, attached or absent.
	ports map[string]*trunkPortObj

	// tapMu guards tap, tapCaps and pump, which the trunk's
	// OnActiveChange callback reads from another goroutine.
	tapMu sync.Mutex
	// tap is the trunk's host interface; nil while the trunk is a bridge
	// member.
	tap platform.Port
	// tapCaps is tap's capability set.
	tapCaps platform.Caps
	// pump moves frames between tap and the trunk; nil with tap.
	pump *pump.Pump
	// announced counts the gratuitous ARPs and unsolicited neighbour
	// advertisements sent after failovers (announce). Atomic.
	announced atomic.Uint64
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
	// caps is what the OS adapter said port can do, besides being a Port.
	caps platform.Caps
	// reopenCounts keeps the counters of the sockets reopens closed.
	reopenCounts
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
		// The configuration always holds a priority, and 0 is one.
		SystemPriority: uint16(c.LACPSystemPriority), ExactSystemPriority: true,
		SystemMAC: c.LLAddr, Key: uint16(c.LACPKey),
	}), nil
}

// lbHashFields parses the hash fields of a trunk's configuration.
func lbHashFields(c *config.Trunk) (lb.HashFields, error) {
	fields, err := lb.ParseHashFields(c.Hash)
	if err != nil {
		return 0, fmt.Errorf("%s: hash: %w", c.Name, err)
	}
	return fields, nil
}

// setCarrier makes the trunk's TAP carrier follow the trunk: up while any
// port is active.
func (to *trunkObj) setCarrier(active bool) {
	to.tapMu.Lock()
	defer to.tapMu.Unlock()
	if c := to.tapCaps.Carrier; c != nil {
		_ = c.SetCarrier(active)
	}
}

// createTap makes the TAP that gives the trunk to the host, not yet
// connected to it (giveHost does that), and gives its capability set.
func (to *trunkObj) createTap(mac frame.MAC) (platform.Port, platform.Caps, error) {
	tp, caps, err := to.g.sys.CreateTap(to.name, net.HardwareAddr(mac[:]), to.tr.MTU())
	if err != nil {
		return nil, platform.Caps{}, fmt.Errorf("%s: tap: %w", to.name, err)
	}
	return tp, caps, nil
}

// giveHost connects the trunk to tp, its TAP with capability set caps,
// through a pump.
func (to *trunkObj) giveHost(tp platform.Port, caps platform.Caps) {
	to.tapMu.Lock()
	to.tap, to.tapCaps = tp, caps
	to.pump = pump.New(to.tr.Handle(), tp, [2]string{"trunk", "tap"}, to.g.log.With("trunk", to.name))
	to.tapMu.Unlock()
	to.setCarrier(to.tr.Active())
	to.fitTap()
}

// takeHost removes the trunk's TAP, if it has one (when it joins a bridge,
// or stops).
func (to *trunkObj) takeHost() {
	to.tapMu.Lock()
	p := to.pump
	to.tap, to.tapCaps, to.pump = nil, platform.Caps{}, nil
	to.tapMu.Unlock()
	if p != nil {
		if n := to.g.sys.HostAddrs(to.name); n > 0 {
			to.g.log.Warn("removing the trunk's TAP drops the host addresses on it", "trunk", to.name, "addresses", n)
		}
		p.Stop()
	}
}

// fitTap sets the trunk TAP's MTU to the trunk's.
func (to *trunkObj) fitTap() {
	to.tapMu.Lock()
	tp, caps := to.tap, to.tapCaps
	to.tapMu.Unlock()
	if tp == nil || tp.MTU() == to.tr.MTU() {
		return
	}
	if err := to.g.sys.SetTapMTU(to.name, to.tr.MTU()); err != nil {
		to.g.log.Warn("cannot set the trunk TAP's MTU", "trunk", to.name, "err", err)
		return
	}
	if m := caps.MTU; m != nil {
		m.SetMTU(to.tr.MTU())
	}
}

// attachPort opens a configured port whose interface exists and gives it
// to the trunk, applying the trunk's lladdr or promisc policy (c); one
// that does not exist stays absent. On error nothing is left changed.
func (to *trunkObj) attachPort(c *config.Trunk, tpo *trunkPortObj, pc *config.TrunkPort) (err error) {
	g := to.g
	if g.sys.LinkState(tpo.name) == platform.LinkAbsent {
		g.log.Info("port absent", "trunk", to.name, "port", tpo.name)
		return nil
	}
	defer func() {
		if err != nil {
			to.detachPort(tpo)
		}
	}()
	if !c.Promisc {
		// The lladdr policy, as trunk(4): every member carries the
		// trunk's MAC. The change outlives a crash, so it is journalled
		// before it is made.
		if err := g.sys.SetLLAddr(tpo.name, net.HardwareAddr(c.LLAddr[:]), "trunk "+to.name); err != nil {
			return fmt.Errorf("%s: add %s: set lladdr: %w", to.name, tpo.name, err)
		}
		tpo.lladdr = true
	}
	if tpo.guard, err = g.sys.GuardStack(tpo.name); err != nil {
		return fmt.Errorf("%s: add %s: %w", to.name, tpo.name, err)
	}
	if err := to.openPort(c, tpo, pc); err != nil {
		return err
	}
	to.fitTap()
	return nil
}

// openPort opens the socket of tpo, whose MAC and stack guard are in
// place, and adds it to the trunk: with the promisc policy (c) it takes a
// promiscuous membership, otherwise the multicast ones it needs. On error
// nothing it opened is left open.
func (to *trunkObj) openPort(c *config.Trunk, tpo *trunkPortObj, pc *config.TrunkPort) (err error) {
	g := to.g
	// Members carry offloads (virtio_net_hdr), as bridge members do:
	// the trunk passes them on to a bridge, or the pump's egress
	// finishes them in software for its TAP.
	port, caps, err := g.sys.OpenPort(tpo.name, true, c.Queue.SendBuffer)
	if err != nil {
		return fmt.Errorf("%s: add %s: %w", to.name, tpo.name, err)
	}
	held := false
	defer func() {
		if err != nil {
			if held {
				g.promisc.Release(caps.Promisc)
			}
			port.Close()
		}
	}()
	if c.Promisc {
		if pp := caps.Promisc; pp != nil {
			if err := g.promisc.Acquire(pp); err != nil {
				return fmt.Errorf("%s: add %s: %w", to.name, tpo.name, err)
			}
			held = true
		}
	} else {
		// Real NICs filter by MAC: LACP's group and IPv6 neighbour
		// discovery need these memberships (socket-owned, crash-safe).
		if mc := caps.Multicast; mc != nil {
			if err := mc.JoinMulticast(slowProtocolsGroup); err != nil {
				return fmt.Errorf("%s: add %s: %w", to.name, tpo.name, err)
			}
			if err := mc.SetAllMulti(true); err != nil {
				return fmt.Errorf("%s: add %s: %w", to.name, tpo.name, err)
			}
		}
	}
	if err := to.tr.AddPort(port, trunk.PortConfig{Priority: pc.Priority, LACPPortPriority: uint16(pc.LACPPortPriority), ExactLACPPortPriority: true}); err != nil {
		return fmt.Errorf("%s: %w", to.name, err)
	}
	tpo.port, tpo.caps, tpo.promisc = port, caps, held
	return nil
}

// closePort takes tpo's socket out of the trunk and closes it, with its
// promiscuous membership; the MAC and the stack guard stay.
func (to *trunkObj) closePort(tpo *trunkPortObj) {
	if tpo.port == nil {
		return
	}
	g := to.g
	if tpo.promisc {
		if err := g.promisc.Release(tpo.caps.Promisc); err != nil {
			g.promisc.Forget(tpo.caps.Promisc)
		}
	}
	if err := to.tr.RemovePort(tpo.name); err != nil {
		g.log.Warn("remove trunk port", "trunk", to.name, "port", tpo.name, "err", err)
	}
	tpo.port.Close()
	tpo.port, tpo.caps, tpo.promisc = nil, platform.Caps{}, false
}

// detachPort takes a port out of the trunk and gives the interface back
// as it was (its own MAC, no promiscuity, its stack); it stays configured
// (absent) unless the caller forgets it.
func (to *trunkObj) detachPort(tpo *trunkPortObj) {
	if tpo.port == nil && tpo.guard == nil && !tpo.lladdr {
		return
	}
	g := to.g
	to.closePort(tpo)
	if tpo.guard != nil {
		tpo.guard.Close()
	}
	if tpo.lladdr {
		if err := g.sys.RestoreLLAddr(tpo.name); err != nil {
			g.log.Error("cannot restore the MAC of a port leaving its trunk", "trunk", to.name, "port", tpo.name, "err", err)
		}
	}
	tpo.guard, tpo.lladdr = nil, false
	to.fitTap()
}

// rejoin takes the attached ports that c and was share out of the trunk
// and puts them back under c's lladdr or promisc policy. If one cannot
// rejoin, those already moved go back under was's, and the error is
// returned.
func (to *trunkObj) rejoin(c, was *config.Trunk) error {
	var done []*trunkPortObj
	for i := range c.Ports {
		pc := &c.Ports[i]
		tpo := to.ports[pc.Name]
		if was.Port(pc.Name) == nil || tpo == nil || tpo.port == nil {
			continue
		}
		to.detachPort(tpo)
		if err := to.attachPort(c, tpo, pc); err != nil {
			// tpo is detached; it and the ones done go back as they were.
			for _, d := range append(done, tpo) {
				to.detachPort(d)
				if rerr := to.attachPort(was, d, was.Port(d.name)); rerr != nil {
					to.g.log.Error("cannot put a port back after a failed policy change", "trunk", to.name, "port", d.name, "err", rerr)
				}
			}
			return err
		}
		done = append(done, tpo)
	}
	return nil
}

// setSettings makes the trunk's hash and protocol those of c; was is what
// they are now, put back when a step fails. The protocol is replaced
// (and LACP starts over) only when it or its LACP settings change.
func (to *trunkObj) setSettings(c, was *config.Trunk) error {
	fields, err := lbHashFields(c)
	if err != nil {
		return err
	}
	oldFields := to.tr.HashFields()
	to.tr.SetHash(fields)
	protoChanged := c.Proto != was.Proto
	lacpChanged := c.Proto == string(trunk.ProtoLACP) && (c.LACPMode != was.LACPMode ||
		c.LACPTimeout != was.LACPTimeout || c.LACPSystemPriority != was.LACPSystemPriority || c.LACPKey != was.LACPKey)
	if !protoChanged && !lacpChanged {
		return nil
	}
	p, err := trunkProtocol(c)
	if err == nil {
		err = to.tr.SetProtocol(p)
	}
	if err != nil {
		to.tr.SetHash(oldFields)
		return fmt.Errorf("%s: set: %w", to.name, err)
	}
	to.g.log.Info("trunk protocol set", "trunk", to.name, "proto", c.Proto)
	return nil
}

// stop removes the trunk's TAP, gives every port back and closes it.
func (to *trunkObj) stop() {
	to.takeHost()
	for _, tpo := range to.ports {
		to.detachPort(tpo)
	}
	to.tr.Close()
}

// linkChanged follows a link event for the trunk's port tpo; c is the
// trunk's configuration.
func (to *trunkObj) linkChanged(c *config.Trunk, tpo *trunkPortObj, ev linkEvent) {
	g := to.g
	state := ev.state
	switch {
	case state == platform.LinkAbsent && tpo.port != nil:
		g.log.Info("port gone", "trunk", to.name, "port", tpo.name)
		to.detachPort(tpo)
	case state != platform.LinkAbsent && tpo.port == nil:
		if err := to.attachPort(c, tpo, c.Port(tpo.name)); err != nil {
			g.log.Warn("cannot attach port that appeared", "trunk", to.name, "port", tpo.name, "err", err)
		}
	case resized(tpo.port, ev):
		g.log.Info("port MTU changed: reopening it", "trunk", to.name, "port", tpo.name, "mtu", ev.mtu, "was", tpo.port.MTU())
		to.reopen(c, tpo, tpo.name)
	case tpo.port != nil:
		if ls := tpo.caps.Link; ls != nil {
			if tpo.port.Link() != state {
				g.log.Info("link "+state.String(), "trunk", to.name, "port", tpo.name)
			}
			ls.SetLink(state)
		}
		to.tr.LinkChanged(tpo.name)
	}
}
