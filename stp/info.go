package stp

// rcvdInfo is what a received message says compared with what the port
// holds (802.1D-2004 17.21.8).
type rcvdInfo uint8

const (
	superiorDesignatedInfo rcvdInfo = iota
	repeatedDesignatedInfo
	inferiorDesignatedInfo
	inferiorRootAlternateInfo
	otherInfo
)

// messageOf returns the message a valid BPDU of kind with fields in
// carries (in is zero for a TCN BPDU). An RST BPDU with the unknown role
// is read as a Configuration BPDU, a designated port's (802.1D-2004 9.2.9).
func messageOf(kind Kind, in *Fields) message {
	role := RoleBits(in.Flags&flagRoleMask) >> flagRoleShift
	return message{
		kind:       kind,
		flags:      in.Flags,
		designated: kind == KindConfig || role == RoleBitsDesignated || role == RoleBitsUnknown,
		prio:       vector{root: in.Root, cost: in.RootPathCost, bridge: in.Bridge, port: in.Port},
		times:      timesOf(in),
	}
}

// stepInfo is the Port Information machine (17.27): it records the best
// information received on the port, ages it out when its sender falls
// silent, and replaces it with ours when role selection makes the port
// designated. It reports whether the machine changed state.
func stepInfo(t *tree, p *port) bool {
	if !p.portEnabled && p.infoIs != infoDisabled {
		p.enterInfoDisabled()
		return true
	}
	switch p.pim {
	case pimDisabled:
		if p.portEnabled {
			p.enterAged()
			return true
		}
		if p.rcvdMsg {
			p.enterInfoDisabled()
			return true
		}
	case pimAged:
		if p.selected && p.updtInfo {
			p.update()
			return true
		}
	case pimCurrent:
		switch {
		case p.selected && p.updtInfo:
			p.update()
		case p.infoIs == infoReceived && p.rcvdInfoWhile == 0 && !p.updtInfo && !p.rcvdMsg:
			p.enterAged()
		case p.rcvdMsg && !p.updtInfo:
			receive(t, p)
		default:
			return false
		}
		return true
	}
	return false
}

// enterInfoDisabled enters the DISABLED state.
func (p *port) enterInfoDisabled() {
	p.rcvdMsg = false
	p.proposing, p.proposed, p.agree, p.agreed = false, false, false, false
	p.rcvdInfoWhile = 0
	p.infoIs = infoDisabled
	p.reselect, p.selected = true, false
	p.pim = pimDisabled
}

// enterAged enters the AGED state.
func (p *port) enterAged() {
	p.infoIs = infoAged
	p.reselect, p.selected = true, false
	p.pim = pimAged
}

// update is the UPDATE state, then CURRENT: the port takes our
// designated information. An agreement holds only if our information did
// not get worse (betterorsameInfo, as IEEE 802.1Q-2011 13.26.1 has it).
func (p *port) update() {
	p.proposing, p.proposed = false, false
	p.agreed = p.agreed && p.infoIs == infoMine && p.designatedPriority.compare(p.portPriority) <= 0
	p.synced = p.synced && p.agreed
	p.portPriority, p.portTimes = p.designatedPriority, p.designatedTimes
	p.updtInfo = false
	p.infoIs = infoMine
	p.newInfo = true
	p.pim = pimCurrent
}

// receive is the RECEIVE state and the one it leads to, then CURRENT.
func receive(t *tree, p *port) {
	switch rcvInfo(p) {
	case superiorDesignatedInfo:
		p.agreed, p.proposing = false, false
		p.recordProposal()
		p.setTcFlags()
		// An agreement we gave holds only if the information did not get
		// worse (betterorsameInfo).
		p.agree = p.agree && p.infoIs == infoReceived && p.msgPriority.compare(p.portPriority) <= 0
		p.portPriority, p.portTimes = p.msgPriority, p.msgTimes
		p.updtRcvdInfoWhile()
		p.infoIs = infoReceived
		p.reselect, p.selected = true, false
	case repeatedDesignatedInfo:
		p.recordProposal()
		p.setTcFlags()
		p.updtRcvdInfoWhile()
	case inferiorDesignatedInfo:
		// recordDispute, as IEEE 802.1Q-2011 13.26.8 corrects it: a
		// designated port that hears a worse designated port which is
		// learning does not hear us; it must stop forwarding.
		if p.rx.kind == KindRST && p.rx.flags&FlagLearning != 0 {
			p.disputed, p.agreed = true, false
		}
	case inferiorRootAlternateInfo:
		// recordAgreement: agreements count only on point-to-point links.
		if t.rstpVersion() && p.operP2P && p.rx.kind == KindRST && p.rx.flags&FlagAgreement != 0 {
			p.agreed, p.proposing = true, false
		} else {
			p.agreed = false
		}
		p.setTcFlags()
	}
	p.rcvdMsg = false
	p.pim = pimCurrent
}

// rcvInfo classifies the received message (17.21.8). A message from the
// port's designated port replaces the port's information even when worse;
// one that repeats it is repeated only if the information was received
// (our own BPDU looped back to the port that sent it is inferior, as IEEE
// 802.1Q-2011 13.26.6 words it). A TCN BPDU carries no priority vector:
// it only sets rcvdTcn (which 802.1D-2004 omits).
func rcvInfo(p *port) rcvdInfo {
	if p.rx.kind == KindTCN {
		p.rcvdTcn = true
		return otherInfo
	}
	p.msgPriority, p.msgTimes = p.rx.prio, p.rx.times
	// A hello time of 0 would age the information out at once.
	p.msgTimes.helloTime = max(p.msgTimes.helloTime, 1)
	c := p.msgPriority.compare(p.portPriority)
	if !p.rx.designated {
		if c >= 0 {
			return inferiorRootAlternateInfo
		}
		return otherInfo
	}
	switch {
	case c < 0, c > 0 && p.msgPriority.sameSender(p.portPriority):
		return superiorDesignatedInfo
	case c == 0 && p.msgTimes != p.portTimes:
		return superiorDesignatedInfo
	case c == 0 && p.infoIs == infoReceived:
		return repeatedDesignatedInfo
	}
	return inferiorDesignatedInfo
}

// recordProposal records a proposal from a designated port (17.21.11).
func (p *port) recordProposal() {
	if p.rx.kind == KindRST && p.rx.flags&FlagProposal != 0 {
		p.proposed = true
	}
}

// setTcFlags records the topology change flags of the message (17.21.17).
func (p *port) setTcFlags() {
	if p.rx.flags&FlagTC != 0 {
		p.rcvdTc = true
	}
	if p.rx.flags&FlagTCAck != 0 {
		p.rcvdTcAck = true
	}
}

// updtRcvdInfoWhile restarts the age of the port's received information:
// three hello times, or nothing when its message age has reached its max
// age, so that information that travelled too far is dropped (17.21.23).
func (p *port) updtRcvdInfoWhile() {
	if p.portTimes.messageAge+1 <= p.portTimes.maxAge {
		p.rcvdInfoWhile = 3 * p.portTimes.helloTime
	} else {
		p.rcvdInfoWhile = 0
	}
}
