package stp

// The machines that take a BPDU in and decide what a port speaks and
// whether it is an edge port: Port Receive (802.1D-2004 17.23), Port
// Protocol Migration (17.24) and Bridge Detection (17.25).

// stepReceive is the Port Receive machine: a BPDU received while the
// port is enabled becomes a message for the Port Information machine
// (rcvdMsg), and tells the other machines which protocol the neighbour
// speaks and that the port is not an edge port. It reports whether the
// machine changed state.
func stepReceive(t *tree, p *port) bool {
	if (p.rcvdBpdu || p.edgeDelayWhile != MigrateTime) && !p.portEnabled {
		p.enterDiscard()
		return true
	}
	if p.rcvdBpdu && p.portEnabled && (p.prx == rxDiscard || !p.rcvdMsg) {
		// RECEIVE: updtBPDUVersion().
		if p.rx.kind == KindRST {
			p.rcvdRSTP = true
		} else {
			p.rcvdSTP = true
		}
		p.operEdge, p.rcvdBpdu = false, false
		p.rcvdMsg = true
		p.edgeDelayWhile = MigrateTime
		p.prx = rxReceive
		return true
	}
	return false
}

// enterDiscard enters the Port Receive machine's DISCARD state.
func (p *port) enterDiscard() {
	p.rcvdBpdu, p.rcvdRSTP, p.rcvdSTP, p.rcvdMsg = false, false, false, false
	p.edgeDelayWhile = MigrateTime
	p.prx = rxDiscard
}

// stepMigration is the Port Protocol Migration machine: a port starts
// sending RST BPDUs (when the bridge runs RSTP) for MigrateTime, then
// listens; an 802.1D BPDU makes it send 802.1D BPDUs for at least
// MigrateTime, after which an RST BPDU brings it back. mcheck forces it
// back at once. It reports whether the machine changed state.
func stepMigration(t *tree, p *port) bool {
	switch p.ppm {
	case ppmCheckingRSTP:
		if p.mdelayWhile == 0 {
			enterSensing(t, p)
			return true
		}
		if p.mdelayWhile != MigrateTime && !p.portEnabled {
			enterCheckingRSTP(t, p)
			return true
		}
	case ppmSelectingSTP:
		if p.mdelayWhile == 0 || !p.portEnabled || p.mcheck {
			enterSensing(t, p)
			return true
		}
	case ppmSensing:
		if !p.portEnabled || p.mcheck || (t.rstpVersion() && !p.sendRSTP && p.rcvdRSTP) {
			enterCheckingRSTP(t, p)
			return true
		}
		if p.sendRSTP && p.rcvdSTP {
			// SELECTING_STP.
			setSendRSTP(t, p, false)
			p.mdelayWhile = MigrateTime
			p.ppm = ppmSelectingSTP
			return true
		}
	}
	return false
}

// enterCheckingRSTP enters the CHECKING_RSTP state.
func enterCheckingRSTP(t *tree, p *port) {
	p.mcheck = false
	setSendRSTP(t, p, t.rstpVersion())
	p.mdelayWhile = MigrateTime
	p.ppm = ppmCheckingRSTP
}

// enterSensing enters the SENSING state.
func enterSensing(t *tree, p *port) {
	p.rcvdRSTP, p.rcvdSTP = false, false
	p.ppm = ppmSensing
}

// setSendRSTP sets sendRSTP, logging a change of protocol on an enabled
// port.
func setSendRSTP(t *tree, p *port, v bool) {
	if p.sendRSTP != v && p.portEnabled {
		proto := STP
		if v {
			proto = RSTP
		}
		t.log.Info("stp: port protocol", "port", p.name, "protocol", proto.String())
	}
	p.sendRSTP = v
}

// stepDetection is the Bridge Detection machine: a port is an edge port
// from the start if configured so (AdminEdge), stops being one at its
// first BPDU, and becomes one with AutoEdge when it proposed and heard
// nothing for EdgeDelay. It reports whether the machine changed state.
func stepDetection(t *tree, p *port) bool {
	if p.edge {
		if (!p.portEnabled && !p.cfg.AdminEdge) || !p.operEdge {
			setEdge(t, p, false)
			return true
		}
		return false
	}
	if (!p.portEnabled && p.cfg.AdminEdge) ||
		(p.edgeDelayWhile == 0 && p.cfg.AutoEdge && p.sendRSTP && p.proposing) {
		setEdge(t, p, true)
		return true
	}
	return false
}

// setEdge enters the EDGE (true) or NOT_EDGE state.
func setEdge(t *tree, p *port, edge bool) {
	if edge != p.edge && p.portEnabled {
		t.log.Info("stp: port edge", "port", p.name, "edge", edge)
	}
	p.edge, p.operEdge = edge, edge
}
