package daemon

import (
	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/platform"
)

// How the daemon follows what the kernel does to its members' interfaces,
// as the kernel bridge does:
//
//  1. A rename keeps the member: the kernel bridge holds its ports by
//     ifindex, and so does swctl. Ports are known by name inside bridges
//     and trunks, so the member's socket is reopened under the new name
//     (its stack guard stays in place throughout; a trunk port keeps the
//     trunk's MAC), and the
//     configuration file is rewritten to the new name: it names
//     interfaces as they are called, so that the next start finds the
//     member where the running daemon has it.
//  2. An MTU change reopens the member's socket: its ring slots are sized
//     for the MTU when it opens. Only the frames in flight on that port
//     are lost, and counted (reopenCounts).
//  3. A local TAP, and a trunk's TAP, take the smallest MTU of their
//     members (bridgeObj.fitLocal, trunkObj.fitTap), as the kernel
//     bridge's own MTU does by default.
//  4. A member deleted and recreated is attached again (linkChanged),
//     for bridges and trunks alike.

// followRename follows a configured interface renamed from old to new
// (step 1 above). It reports false, leaving the event to linkChanged (old
// is then simply gone), when old is not configured or new cannot take its
// place (config.RenameIface). Call with e.mu held.
func (e *engine) followRename(old, new string) bool {
	next := e.cfg.Clone()
	if !next.RenameIface(old, new) {
		return false
	}
	if err := next.Validate(); err != nil {
		e.log.Warn("renamed interface not followed", "iface", old, "now", new, "err", err)
		return false
	}
	e.log.Info("interface renamed: following it", "iface", old, "now", new)
	e.graph.rename(next, old, new)
	e.cfg = next
	pend, err := e.file.write(next)
	if err == nil {
		err = pend.Commit()
	}
	if err != nil {
		e.log.Error("renamed interface followed, but the configuration file still names the old one", "iface", old, "now", new, "err", err)
	}
	return true
}

// rename moves every port called old to the name new in the running
// graph, with next, the configuration that names it new: an attached one
// is reopened under its new name, an absent one attached if new exists.
func (g *graph) rename(next *config.Config, old, new string) {
	for _, to := range g.trunks {
		tpo := to.ports[old]
		if tpo == nil {
			continue
		}
		to.reopen(next.Trunk(to.name), tpo, new)
	}
	for _, b := range g.bridges {
		if po := b.ports[old]; po != nil {
			b.reopen(next.Bridge(b.name), po, new)
		}
	}
}

// resized reports whether ev gives the attached port p another MTU than
// the one it was opened with.
func resized(p platform.Port, ev linkEvent) bool {
	return p != nil && ev.mtu > 0 && ev.mtu != p.MTU()
}

// reopen closes member po's port and, under the name name (its own, or
// the one it was renamed to), opens it again if the interface exists; c
// is the bridge's configuration. The old stack guard stays until the new
// one is in place, so the member's own stack never sees a bridged frame
// meanwhile.
func (b *bridgeObj) reopen(c *config.Bridge, po *portObj, name string) {
	guard := po.guard
	po.guard = nil
	po.closing(po.port, func() { b.detach(po) })
	if name != po.name {
		delete(b.ports, po.name)
		po.name = name
		b.ports[name] = po
	}
	b.linkChanged(c, po, linkEvent{name: name, state: b.g.sys.LinkState(name)})
	if guard != nil {
		guard.Close()
	}
	b.fitLocal()
}

// reopen closes trunk port tpo's socket and, under the name name (its
// own, or the one it was renamed to), opens it again; its MAC and stack
// guard stay. If it cannot, the port is detached (its MAC given back)
// and stays absent. c is the trunk's configuration.
func (to *trunkObj) reopen(c *config.Trunk, tpo *trunkPortObj, name string) {
	attached := tpo.port != nil
	tpo.closing(tpo.port, func() { to.closePort(tpo) })
	if name != tpo.name {
		delete(to.ports, tpo.name)
		tpo.name = name
		to.ports[name] = tpo
	}
	if !attached {
		to.linkChanged(c, tpo, linkEvent{name: name, state: to.g.sys.LinkState(name)})
		return
	}
	if err := to.openPort(c, tpo, c.Port(name)); err != nil {
		to.g.log.Warn("cannot reopen trunk port: detached", "trunk", to.name, "port", name, "err", err)
		to.detachPort(tpo)
		return
	}
	to.fitTap()
}

// reopenCounts are the counters of the ports a member's reopens closed
// (a rename, an MTU change): its counters in show and the metrics go on
// from them instead of starting over, and the frames a close discarded
// unread in its rings, the ones in flight, are in their RingDropped
// (afpacket counts them when it closes).
type reopenCounts struct {
	// carried is the sum of the closed ports' last counters.
	carried platform.Counters
}

// closing runs close, which closes p (nil for none) to reopen it, and
// keeps p's last counters, read after the close.
func (r *reopenCounts) closing(p platform.Port, close func()) {
	close()
	if p != nil {
		r.carried = addCounters(r.carried, p.Counters())
	}
}

// total returns cn, an open port's counters, with the carried ones; r
// may be nil (a TAP is never reopened).
func (r *reopenCounts) total(cn platform.Counters) platform.Counters {
	if r == nil {
		return cn
	}
	return addCounters(cn, r.carried)
}

func addCounters(a, b platform.Counters) platform.Counters {
	return platform.Counters{
		RxPackets: a.RxPackets + b.RxPackets, RxBytes: a.RxBytes + b.RxBytes,
		TxPackets: a.TxPackets + b.TxPackets, TxBytes: a.TxBytes + b.TxBytes,
		RxDropped: a.RxDropped + b.RxDropped, RxBadOffload: a.RxBadOffload + b.RxBadOffload,
		TxDropped: a.TxDropped + b.TxDropped, RingDropped: a.RingDropped + b.RingDropped,
		Errors: a.Errors + b.Errors,
	}
}
