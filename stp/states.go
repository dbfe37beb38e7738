package stp

// stepState is the Port State Transition machine (802.1D-2004 17.30): the
// port state follows learn and forward, and the data path follows the
// port state through the Gate. It reports whether the machine changed
// state.
func stepState(t *tree, p *port) bool {
	switch {
	case p.state == Discarding && p.learn:
		setState(t, p, Learning)
	case p.state == Learning && !p.learn, p.state == Forwarding && !p.forward:
		setState(t, p, Discarding)
	case p.state == Learning && p.forward:
		setState(t, p, Forwarding)
	default:
		return false
	}
	return true
}

// setState sets the port state, publishes it to the data path and logs
// the change.
func setState(t *tree, p *port, s State) {
	if p.state != s {
		t.log.Info("stp: port state", "port", p.name, "state", s.String())
	}
	p.state = s
	p.publish()
}

// stepTC is the Topology Change machine (17.31). A root or designated
// port that starts forwarding, and is not an edge port, is a topology
// change: it signals it (tcWhile: TC flags in RST BPDUs, TCN BPDUs to an
// 802.1D root) and every other such port flushes what it learned and
// signals it too. A change heard on a port is propagated the same way;
// a TCN BPDU is acknowledged. A port that stops learning flushes. It
// reports whether the machine changed state.
func stepTC(t *tree, p *port) bool {
	rootOrDesignated := p.role == RoleRoot || p.role == RoleDesignated
	rcvd := p.rcvdTc || p.rcvdTcn || p.rcvdTcAck || p.tcProp
	switch p.tcm {
	case tcInactive:
		if p.learn && !p.fdbFlush {
			p.enterTCLearning()
			return true
		}
	case tcLearning:
		switch {
		case !rootOrDesignated && !(p.learn || p.learning()) && !rcvd:
			enterTCInactive(t, p)
		case rcvd:
			p.enterTCLearning()
		case rootOrDesignated && p.forward && !p.operEdge: // DETECTED
			t.topologyChange(p)
			newTcWhile(t, p)
			t.setTcPropTree(p)
			p.newInfo = true
			p.tcm = tcActive
		default:
			return false
		}
		return true
	case tcActive:
		switch {
		case !rootOrDesignated || p.operEdge:
			p.enterTCLearning()
		case p.rcvdTcn: // NOTIFIED_TCN, then NOTIFIED_TC
			newTcWhile(t, p)
			notifiedTC(t, p)
		case p.rcvdTc: // NOTIFIED_TC
			notifiedTC(t, p)
		case p.tcProp && !p.operEdge: // PROPAGATING
			newTcWhile(t, p)
			t.flush(p)
			p.tcProp = false
		case p.rcvdTcAck: // ACKNOWLEDGED
			p.tcWhile = 0
			p.rcvdTcAck = false
		default:
			return false
		}
		return true
	}
	return false
}

// enterTCInactive enters INACTIVE: the port's learned addresses go.
func enterTCInactive(t *tree, p *port) {
	t.flush(p)
	p.tcWhile = 0
	p.tcAck = false
	p.tcm = tcInactive
}

// enterTCLearning enters LEARNING: changes heard before the port forwards
// are forgotten.
func (p *port) enterTCLearning() {
	p.rcvdTc, p.rcvdTcn, p.rcvdTcAck, p.tcProp = false, false, false, false
	p.tcm = tcLearning
}

// notifiedTC is NOTIFIED_TC: a designated port acknowledges (in its next
// Configuration BPDU), and the change goes to every other port.
func notifiedTC(t *tree, p *port) {
	t.topologyChange(p)
	p.rcvdTcn, p.rcvdTc = false, false
	if p.role == RoleDesignated {
		p.tcAck = true
	}
	t.setTcPropTree(p)
}

// newTcWhile starts the port's topology change signal if it is not
// running: for HelloTime + 1 on RSTP (sending at once), for the root's
// MaxAge + FwdDelay towards an 802.1D bridge (17.21.7).
func newTcWhile(t *tree, p *port) {
	if p.tcWhile != 0 {
		return
	}
	if p.sendRSTP {
		p.tcWhile = p.helloTime() + 1
		p.newInfo = true
		return
	}
	p.tcWhile = t.rootTimes.maxAge + t.rootTimes.forwardDelay
}

// flush has the forwarding database drop what the port learned (fdbFlush,
// 17.19.7). The flush is done when Outputs.Flush returns. 802.1D-2004
// ages the entries out in FwdDelay instead on a bridge forced to STP; we
// always flush at once.
func (t *tree) flush(p *port) {
	p.fdbFlush = true
	t.out.Flush(p.id)
	p.fdbFlush = false
}
