package stp

import (
	"slices"
	"time"
)

// maxSteps bounds the rounds of one run; the machines settle in a few
// dozen, so reaching it means a bug, which is logged.
const maxSteps = 1000

// run runs the machines until none changes state: role selection, then
// each port's receive, migration, bridge detection, information, role
// transitions, state transitions and topology change machines, round
// after round; then each port's transmit machine, so that one BPDU
// carries the settled state rather than one per step.
func (t *tree) run() {
	settled := false
	for range maxSteps {
		changed := t.selectRoles()
		for _, p := range t.ports {
			changed = stepReceive(t, p) || changed
			changed = stepMigration(t, p) || changed
			changed = stepDetection(t, p) || changed
			changed = stepInfo(t, p) || changed
			changed = stepRoles(t, p) || changed
			changed = stepState(t, p) || changed
			changed = stepTC(t, p) || changed
		}
		if !changed {
			settled = true
			break
		}
	}
	if !settled {
		t.log.Error("stp: state machines did not settle", "rounds", maxSteps)
	}
	for _, p := range t.ports {
		for stepTransmit(t, p) {
		}
	}
}

// advance steps the timers once for every whole second from nextSecond to
// now, running the machines after each step (the Port Timers machine,
// 17.22). After a gap of a minute or more, or when the clock went back,
// the timers restart from now.
func (t *tree) advance(now time.Time) {
	if t.nextSecond.IsZero() || t.nextSecond.Sub(now) > time.Second {
		t.nextSecond = now.Add(time.Second)
	}
	for n := 0; !now.Before(t.nextSecond); n++ {
		if n == 60 {
			t.nextSecond = now.Add(time.Second)
			return
		}
		for _, p := range t.ports {
			p.tick()
		}
		t.run()
		t.nextSecond = t.nextSecond.Add(time.Second)
	}
}

// begin initializes port p's machines, as BEGIN does (802.1D-2004 17.16):
// every machine in its initial state, the port disabled and discarding.
func (t *tree) begin(p *port) {
	p.designatedTimes = t.rootTimes
	p.designatedTimes.helloTime = uint16(t.cfg.HelloTime)
	p.designatedPriority = vector{root: t.rootPriority.root, cost: t.rootPriority.cost, bridge: t.id, port: p.portID}
	p.portPriority, p.portTimes = p.designatedPriority, p.designatedTimes
	p.selectedRole = RoleDisabled
	// Port Receive: DISCARD.
	p.enterDiscard()
	// Port Protocol Migration: CHECKING_RSTP.
	enterCheckingRSTP(t, p)
	// Bridge Detection: EDGE or NOT_EDGE.
	p.edge, p.operEdge = p.cfg.AdminEdge, p.cfg.AdminEdge
	// Port Transmit: TRANSMIT_INIT, then IDLE.
	p.newInfo, p.txCount, p.helloWhen = true, 0, p.helloTime()
	// Port Information: DISABLED.
	p.enterInfoDisabled()
	// Port Role Transitions: INIT_PORT, then DISABLE_PORT.
	p.role = RoleDisabled
	p.learn, p.forward, p.synced = false, false, false
	p.sync, p.reRoot = true, true
	p.rrWhile, p.fdWhile, p.rbWhile = p.fwdDelay(), p.maxAge(), 0
	p.prt = prtDisablePort
	// Port State Transition: DISCARDING.
	setState(t, p, Discarding)
	// Topology Change: INACTIVE.
	enterTCInactive(t, p)
}

// beginAll initializes the whole bridge, as BEGIN does.
func (t *tree) beginAll() {
	t.rootPriority, t.rootTimes, t.rootPort = t.bridgeVector(), t.bridgeTimes(), nil
	for _, p := range t.ports {
		t.begin(p)
	}
}

// setID recomputes the bridge identifier from the configuration.
func (t *tree) setID() { t.id = NewBridgeID(t.cfg.Priority, t.cfg.MAC) }

// bridgeVector is the bridge priority vector (17.18.3): us as the root.
func (t *tree) bridgeVector() vector { return vector{root: t.id, bridge: t.id} }

// bridgeTimes are the bridge times (17.18.4): our configured times.
func (t *tree) bridgeTimes() times {
	return times{
		maxAge:       uint16(t.cfg.MaxAge),
		helloTime:    uint16(t.cfg.HelloTime),
		forwardDelay: uint16(t.cfg.ForwardDelay),
	}
}

// rstpVersion reports whether the bridge runs RSTP (17.20.11).
func (t *tree) rstpVersion() bool { return t.cfg.Protocol == RSTP }

// reselectAll makes role selection run again, after a change that
// affects every port (bridge identifier, times, a port leaving).
func (t *tree) reselectAll() {
	for _, p := range t.ports {
		p.reselect, p.selected = true, false
	}
}

// selectRoles is the Port Role Selection machine (17.28): when a port
// asks (reselect), roles are computed again for every port. It reports
// whether it ran.
func (t *tree) selectRoles() bool {
	if !slices.ContainsFunc(t.ports, func(p *port) bool { return p.reselect }) {
		return false
	}
	for _, p := range t.ports {
		p.reselect = false
	}
	t.updtRolesTree()
	for _, p := range t.ports {
		p.selected = true
	}
	return true
}

// updtRolesTree computes the root priority vector, the root port, the
// root times, each port's designated priority vector and times, and each
// port's selected role (17.21.25).
func (t *tree) updtRolesTree() {
	best, bestPort, root := t.bridgeVector(), PortID(0), (*port)(nil)
	for _, p := range t.ports {
		// Information from ourselves (through a loop) never makes a root
		// port.
		if p.infoIs != infoReceived || p.portPriority.bridge.address() == t.id.address() {
			continue
		}
		cand := p.portPriority
		cand.cost = addCost(cand.cost, p.pathCost)
		if c := cand.compare(best); c < 0 || (c == 0 && root != nil && p.portID < bestPort) {
			best, bestPort, root = cand, p.portID, p
		}
	}
	t.rootTimes = t.bridgeTimes()
	if root != nil {
		t.rootTimes = root.portTimes
		t.rootTimes.messageAge++
	}
	if best.root != t.rootPriority.root || root != t.rootPort {
		t.logRoot(best, root)
	}
	t.rootPriority, t.rootPort = best, root
	for _, p := range t.ports {
		p.designatedPriority = vector{root: best.root, cost: best.cost, bridge: t.id, port: p.portID}
		p.designatedTimes = t.rootTimes
		p.designatedTimes.helloTime = uint16(t.cfg.HelloTime)
		switch p.infoIs {
		case infoDisabled:
			p.selectedRole = RoleDisabled
		case infoAged:
			p.selectedRole, p.updtInfo = RoleDesignated, true
		case infoMine:
			p.selectedRole = RoleDesignated
			if p.portPriority != p.designatedPriority || p.portTimes != p.designatedTimes {
				p.updtInfo = true
			}
		case infoReceived:
			switch {
			case p == root:
				p.selectedRole, p.updtInfo = RoleRoot, false
			case p.designatedPriority.compare(p.portPriority) < 0:
				p.selectedRole, p.updtInfo = RoleDesignated, true
			case p.portPriority.bridge.address() == t.id.address():
				p.selectedRole, p.updtInfo = RoleBackup, false
			default:
				p.selectedRole, p.updtInfo = RoleAlternate, false
			}
		}
	}
}

// logRoot logs a new root bridge or root port.
func (t *tree) logRoot(best vector, root *port) {
	name := ""
	if root != nil {
		name = root.name
	}
	t.log.Info("stp: root", "root", best.root.String(), "cost", best.cost, "root_port", name,
		"we_are_root", root == nil)
}

// setSyncTree sets sync on every port (17.21.14).
func (t *tree) setSyncTree() {
	for _, p := range t.ports {
		p.sync = true
	}
}

// setReRootTree sets reRoot on every port (17.21.15).
func (t *tree) setReRootTree() {
	for _, p := range t.ports {
		p.reRoot = true
	}
}

// setTcPropTree sets tcProp on every port but p (17.21.18).
func (t *tree) setTcPropTree(p *port) {
	for _, q := range t.ports {
		if q != p {
			q.tcProp = true
		}
	}
}

// allSynced reports whether every port has taken its selected role with
// its information updated, and every port but the root port is synced
// (17.20.3, as IEEE 802.1Q-2011 13.25.1 words it).
func (t *tree) allSynced() bool {
	for _, q := range t.ports {
		if !q.selected || q.role != q.selectedRole || q.updtInfo || (q.role != RoleRoot && !q.synced) {
			return false
		}
	}
	return true
}

// reRooted reports whether every port but p has rrWhile at 0 (17.20.10):
// no port that was recently the root port may still forward.
func (t *tree) reRooted(p *port) bool {
	for _, q := range t.ports {
		if q != p && q.rrWhile != 0 {
			return false
		}
	}
	return true
}

// topologyChange counts a topology change detected or heard on port p,
// unless it comes while the last one is still being signalled: within
// HelloTime + 1, or MaxAge + FwdDelay if p speaks STP (what newTcWhile
// gives a port), of the last change seen.
func (t *tree) topologyChange(p *port) {
	now := t.clk.Now()
	if !now.Before(t.tcUntil) {
		t.tcCount++
		t.tcLast = now
		t.log.Info("stp: topology change", "port", p.name, "count", t.tcCount)
	}
	d := durationOf(p.helloTime() + 1)
	if !p.sendRSTP {
		d = durationOf(t.rootTimes.maxAge + t.rootTimes.forwardDelay)
	}
	if until := now.Add(d); until.After(t.tcUntil) {
		t.tcUntil = until
	}
}
