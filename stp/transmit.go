package stp

// stepTransmit is the Port Transmit machine (802.1D-2004 17.26): a
// designated port sends every HelloTime, and any port sends when it has
// new information (newInfo), up to HoldCount BPDUs a second (txCount).
// A port speaking RSTP sends RST BPDUs in every role; one speaking STP
// sends Configuration BPDUs as designated port and TCN BPDUs as root
// port. Nothing is sent before role selection is done with the port, nor
// out of a disabled port. It reports whether the machine changed state
// (sent a BPDU or decided to).
func stepTransmit(t *tree, p *port) bool {
	if !p.selected || p.updtInfo || !p.portEnabled || p.role == RoleDisabled {
		return false
	}
	ready := p.newInfo && p.txCount < uint16(t.cfg.HoldCount)
	switch {
	case p.helloWhen == 0: // TRANSMIT_PERIODIC
		p.newInfo = p.newInfo || p.role == RoleDesignated || (p.role == RoleRoot && p.tcWhile != 0)
	case ready && p.sendRSTP: // TRANSMIT_RSTP
		p.newInfo = false
		txRSTP(t, p)
		p.txCount++
		p.tcAck = false
	case ready && p.role == RoleRoot && p.tcWhile != 0: // TRANSMIT_TCN
		// Only while a change is signalled: the newInfo of an agreement
		// would otherwise go out as a TCN, a topology change to 802.1D.
		p.newInfo = false
		txTCN(t, p)
		p.txCount++
	case ready && p.role == RoleDesignated: // TRANSMIT_CONFIG
		p.newInfo = false
		txConfig(t, p)
		p.txCount++
		p.tcAck = false
	default:
		return false
	}
	// IDLE.
	p.helloWhen = p.helloTime()
	return true
}

// fields returns the fields of the BPDU p sends: its designated priority
// vector and times (17.21.19, 17.21.20).
func (p *port) fields(flags uint8) Fields {
	t := p.designatedTimes
	return Fields{
		Flags:        flags,
		Root:         p.designatedPriority.root,
		RootPathCost: p.designatedPriority.cost,
		Bridge:       p.designatedPriority.bridge,
		Port:         p.designatedPriority.port,
		MessageAge:   durationOf(t.messageAge),
		MaxAge:       durationOf(t.maxAge),
		HelloTime:    durationOf(t.helloTime),
		ForwardDelay: durationOf(t.forwardDelay),
	}
}

// txRSTP sends an RST BPDU: role, proposal, agreement, learning,
// forwarding and topology change flags (17.21.20).
func txRSTP(t *tree, p *port) {
	var flags uint8
	switch p.role {
	case RoleRoot:
		flags = uint8(RoleBitsRoot) << flagRoleShift
	case RoleDesignated:
		flags = uint8(RoleBitsDesignated) << flagRoleShift
	default:
		flags = uint8(RoleBitsAlternateBackup) << flagRoleShift
	}
	for _, f := range [...]struct {
		set  bool
		flag uint8
	}{
		{p.agree, FlagAgreement}, {p.proposing, FlagProposal}, {p.tcWhile != 0, FlagTC},
		{p.learning(), FlagLearning}, {p.forwarding(), FlagForwarding},
	} {
		if f.set {
			flags |= f.flag
		}
	}
	fields := p.fields(flags)
	t.out.Send(p.id, t.buf[:EncodeRST(t.buf[:], p.mac, &fields)])
	p.counters.TxRST++
}

// txConfig sends a Configuration BPDU, with the topology change and
// acknowledgement flags (17.21.19).
func txConfig(t *tree, p *port) {
	var flags uint8
	if p.tcWhile != 0 {
		flags |= FlagTC
	}
	if p.tcAck {
		flags |= FlagTCAck
	}
	fields := p.fields(flags)
	t.out.Send(p.id, t.buf[:EncodeConfig(t.buf[:], p.mac, &fields)])
	p.counters.TxConfig++
}

// txTCN sends a TCN BPDU (17.21.21).
func txTCN(t *tree, p *port) {
	t.out.Send(p.id, t.buf[:EncodeTCN(t.buf[:], p.mac)])
	p.counters.TxTCN++
}
