package stp

// stepRoles is the Port Role Transitions machine (802.1D-2004 17.29): it
// moves a port into the role role selection gave it, and decides when the
// port may learn and forward: at once for an edge port, on an agreement
// (proposal/agreement on point-to-point links), or when fdWhile runs out.
// Every transition waits for role selection to be done with the port
// (selected, !updtInfo). It reports whether the machine changed state.
func stepRoles(t *tree, p *port) bool {
	if !p.selected || p.updtInfo {
		return false
	}
	if p.role != p.selectedRole {
		switch p.selectedRole {
		case RoleDisabled:
			enterStopping(t, p, prtDisablePort)
		case RoleRoot:
			enterRootPort(t, p)
		case RoleDesignated:
			enterDesignatedPort(t, p)
		default:
			enterStopping(t, p, prtBlockPort)
		}
		return true
	}
	switch p.prt {
	case prtDisablePort:
		if !p.learning() && !p.forwarding() {
			p.enterStopped(prtDisabledPort, p.maxAge())
			return true
		}
	case prtDisabledPort:
		if p.fdWhile != p.maxAge() || p.sync || p.reRoot || !p.synced {
			p.enterStopped(prtDisabledPort, p.maxAge())
			return true
		}
	case prtRootPort:
		return stepRootPort(t, p)
	case prtDesignatedPort:
		return stepDesignatedPort(t, p)
	case prtAlternatePort:
		return stepAlternatePort(t, p)
	case prtBlockPort:
		if !p.learning() && !p.forwarding() {
			p.enterStopped(prtAlternatePort, p.forwardDelay())
			return true
		}
	}
	return false
}

// enterStopping enters DISABLE_PORT or BLOCK_PORT (s), which have the
// same actions: take the selected role, stop learning and forwarding.
func enterStopping(t *tree, p *port, s prtState) {
	setRole(t, p, p.selectedRole)
	p.learn, p.forward = false, false
	p.prt = s
}

// enterStopped enters DISABLED_PORT or ALTERNATE_PORT (s), whose actions
// differ only in the value of fdWhile: a port that neither learns nor
// forwards is synced, and no longer a recent root port.
func (p *port) enterStopped(s prtState, fdWhile uint16) {
	p.fdWhile = fdWhile
	p.synced = true
	p.rrWhile = 0
	p.sync, p.reRoot = false, false
	p.prt = s
}

// enterRootPort enters ROOT_PORT.
func enterRootPort(t *tree, p *port) {
	setRole(t, p, RoleRoot)
	p.rrWhile = p.fwdDelay()
	p.prt = prtRootPort
}

// stepRootPort takes the transitions out of ROOT_PORT, each of which
// leads back to it. A root port answers a proposal by syncing every port
// (making each designated port discard or agree), then agrees; it
// forwards at once on RSTP once no port that was recently the root port
// can forward (reRooted), or after fdWhile otherwise.
func stepRootPort(t *tree, p *port) bool {
	rooted := p.fdWhile == 0 || (t.reRooted(p) && p.rbWhile == 0 && t.rstpVersion())
	switch {
	case p.proposed && !p.agree: // ROOT_PROPOSED
		t.setSyncTree()
		p.proposed = false
	case (t.allSynced() && !p.agree) || (p.proposed && p.agree): // ROOT_AGREED
		p.proposed, p.sync = false, false
		p.agree, p.newInfo = true, true
	case !p.forward && !p.reRoot: // REROOT
		t.setReRootTree()
	case p.rrWhile != p.fwdDelay():
	case p.reRoot && p.forward: // REROOTED
		p.reRoot = false
	case rooted && !p.learn: // ROOT_LEARN
		p.fdWhile = p.forwardDelay()
		p.learn = true
	case rooted && p.learn && !p.forward: // ROOT_FORWARD
		p.fdWhile = 0
		p.forward = true
	default:
		return false
	}
	enterRootPort(t, p)
	return true
}

// enterDesignatedPort enters DESIGNATED_PORT.
func enterDesignatedPort(t *tree, p *port) {
	setRole(t, p, RoleDesignated)
	p.prt = prtDesignatedPort
}

// stepDesignatedPort takes the transitions out of DESIGNATED_PORT, each
// of which leads back to it. A designated port that is not forwarding
// proposes; it learns and forwards once agreed, at once if an edge port,
// or as fdWhile runs out; it discards when asked to sync and not synced,
// while a recent root port may still forward, or when disputed.
func stepDesignatedPort(t *tree, p *port) bool {
	mayForward := (p.fdWhile == 0 || p.agreed || p.operEdge) && (p.rrWhile == 0 || !p.reRoot) && !p.sync
	switch {
	case ((p.sync && !p.synced) || (p.reRoot && p.rrWhile != 0) || p.disputed) &&
		!p.operEdge && (p.learn || p.forward): // DESIGNATED_DISCARD
		p.learn, p.forward, p.disputed = false, false, false
		p.fdWhile = p.forwardDelay()
	case !p.forward && !p.agreed && !p.proposing && !p.operEdge: // DESIGNATED_PROPOSE
		p.proposing = true
		p.edgeDelayWhile = p.edgeDelay()
		p.newInfo = true
	case (!p.learning() && !p.forwarding() && !p.synced) || (p.agreed && !p.synced) ||
		(p.operEdge && !p.synced) || (p.sync && p.synced): // DESIGNATED_SYNCED
		p.rrWhile = 0
		p.synced = true
		p.sync = false
	case p.rrWhile == 0 && p.reRoot: // DESIGNATED_RETIRED
		p.reRoot = false
	case mayForward && !p.learn: // DESIGNATED_LEARN
		p.learn = true
		p.fdWhile = p.forwardDelay()
	case mayForward && p.learn && !p.forward: // DESIGNATED_FORWARD
		p.forward = true
		p.fdWhile = 0
		p.agreed = p.sendRSTP
	default:
		return false
	}
	enterDesignatedPort(t, p)
	return true
}

// stepAlternatePort takes the transitions out of ALTERNATE_PORT, each of
// which leads back to it. An alternate or backup port discards, so it
// agrees to a proposal once the bridge is in sync; a backup port holds
// rbWhile so that the root port waits before forwarding.
func stepAlternatePort(t *tree, p *port) bool {
	switch {
	case p.proposed && !p.agree: // ALTERNATE_PROPOSED
		t.setSyncTree()
		p.proposed = false
	case (t.allSynced() && !p.agree) || (p.proposed && p.agree): // ALTERNATE_AGREED
		p.proposed = false
		p.agree, p.newInfo = true, true
	case p.rbWhile != 2*p.helloTime() && p.role == RoleBackup: // BACKUP_PORT
		p.rbWhile = 2 * p.helloTime()
	case p.fdWhile != p.forwardDelay() || p.sync || p.reRoot || !p.synced:
	default:
		return false
	}
	p.enterStopped(prtAlternatePort, p.forwardDelay())
	return true
}

// setRole sets the port's role, logging a change.
func setRole(t *tree, p *port, r Role) {
	if p.role != r {
		t.log.Info("stp: port role", "port", p.name, "role", r.String())
	}
	p.role = r
}
