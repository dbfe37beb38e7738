package lacp

import (
	"bytes"
	"time"
)

// Reasons a port is not selected, as Ports shows them.
const (
	reasonLinkDown    = "link down"
	reasonWaiting     = "no LACPDU received yet"
	reasonExpired     = "partner expired: no LACPDU within the timeout"
	reasonDefaulted   = "no partner: defaulted after the timeout"
	reasonIndividual  = "partner port is individual (not aggregatable)"
	reasonOtherSystem = "partner differs from the aggregator's"
)

// The state bits that the partner must reflect about us, or it needs a
// LACPDU from us (802.1AX 6.4.9, update_NTT).
const reflected = StateActivity | StateTimeout | StateAggregation | StateSynchronization

// actorInfo returns what we advertise for p (Actor_Oper).
func (a *Actor) actorInfo(p *port) PortInfo {
	in := PortInfo{
		SystemPriority: a.cfg.SystemPriority,
		System:         a.cfg.SystemMAC,
		Key:            a.cfg.Key,
		PortPriority:   p.priority,
		Port:           p.number,
		State:          StateAggregation,
	}
	if a.cfg.Mode == Active {
		in.State |= StateActivity
	}
	if a.cfg.Timeout == Fast || p.rx == RxExpired {
		in.State |= StateTimeout
	}
	if p.mux >= MuxAttached {
		in.State |= StateSynchronization
	}
	if p.mux >= MuxCollecting {
		in.State |= StateCollecting
	}
	if p.mux == MuxDistributing {
		in.State |= StateDistributing
	}
	switch p.rx {
	case RxDefaulted:
		in.State |= StateDefaulted
	case RxExpired:
		in.State |= StateExpired
	}
	return in
}

// ourTimeout is how long a recorded partner stays current.
func (a *Actor) ourTimeout() time.Duration {
	if a.cfg.Timeout == Fast {
		return ShortTimeoutTime
	}
	return LongTimeoutTime
}

// defaultPartner is the partner a DEFAULTED port records
// (Partner_Admin_*): nobody, with LACP_Timeout Short when our own timeout
// is fast. That keeps the periodic machine at the fast rate while we wait,
// so that a partner that starts late (or restarts) hears us within a
// second, not after the slow 30 s period.
func (a *Actor) defaultPartner() PortInfo {
	if a.cfg.Timeout == Fast {
		return PortInfo{State: StateTimeout}
	}
	return PortInfo{}
}

// setRx moves p's receive machine to s, logging the change and its cause.
func (a *Actor) setRx(p *port, s RxState, cause string) {
	if p.rx == s {
		return
	}
	a.log.Info("lacp: receive machine", "port", p.name, "from", p.rx.String(), "to", s.String(), "cause", cause)
	p.rx = s
}

// linkUp brings p's link up: the receive machine goes EXPIRED (802.1AX
// PORT_DISABLED → EXPIRED), asking for fast LACPDUs.
func (a *Actor) linkUp(p *port, now time.Time) {
	p.linkUp = true
	a.expire(p, now, "link up")
}

// expire enters EXPIRED at time at: the partner is no longer in sync, we
// send fast and ask for fast, and go DEFAULTED after ShortTimeoutTime.
func (a *Actor) expire(p *port, at time.Time, cause string) {
	a.setRx(p, RxExpired, cause)
	p.partner.State &^= StateSynchronization
	p.partner.State |= StateTimeout
	p.currentWhile = at.Add(ShortTimeoutTime)
}

// record records a LACPDU received on p (802.1AX recordPDU, update_NTT).
func (a *Actor) record(p *port, pdu LACPDU, now time.Time) {
	partner, view := pdu.Actor(), pdu.Partner()
	me := a.actorInfo(p)
	// The partner is in sync only if it says so about the right port:
	// what it believes of us must be who we are.
	matched := view.sameIdentity(me) && view.State&StateAggregation == me.State&StateAggregation
	if !matched {
		partner.State &^= StateSynchronization
	}
	if partner.State&StateTimeout != 0 && p.partner.State&StateTimeout == 0 {
		p.periodicAt = now // the partner now asks for fast: send at once
	}
	p.partner, p.viewOfUs = partner, view
	a.setRx(p, RxCurrent, "LACPDU received")
	p.currentWhile = now.Add(a.ourTimeout())
	if !view.sameIdentity(me) || (view.State^me.State)&reflected != 0 {
		p.ntt = true
	}
}

// update runs every machine of every port at time now, then sends what
// needs sending. Called with mu held after every event.
func (a *Actor) update(now time.Time) {
	for _, p := range a.ports {
		a.runRxTimers(p, now)
	}
	a.selectAggregator()
	for _, p := range a.ports {
		a.runMux(p, now)
		a.runPeriodic(p, now)
		a.transmit(p, now)
	}
}

// runRxTimers expires current_while: CURRENT → EXPIRED → DEFAULTED. Each
// transition is timed from the deadline, not from now.
func (a *Actor) runRxTimers(p *port, now time.Time) {
	for !p.currentWhile.IsZero() && !now.Before(p.currentWhile) {
		at := p.currentWhile
		switch p.rx {
		case RxCurrent:
			a.expire(p, at, "no LACPDU within the timeout")
		case RxExpired:
			a.setRx(p, RxDefaulted, "no LACPDU while expired")
			p.partner = a.defaultPartner()
			p.viewOfUs = PortInfo{}
			p.currentWhile = time.Time{}
		default:
			p.currentWhile = time.Time{}
		}
	}
}

// eligibility says whether p may aggregate and, if not, why.
func (a *Actor) eligibility(p *port) (bool, string) {
	switch {
	case !p.linkUp:
		return false, reasonLinkDown
	case p.rx == RxExpired && p.partner.System == [6]byte{} && p.partner.Port == 0:
		return false, reasonWaiting
	case p.rx == RxExpired:
		return false, reasonExpired
	case p.rx == RxDefaulted:
		return false, reasonDefaulted
	case p.rx != RxCurrent:
		return false, reasonLinkDown
	case p.partner.State&StateAggregation == 0:
		return false, reasonIndividual
	}
	return true, ""
}

// count returns how many candidate ports face aggregator g.
func (a *Actor) count(g group) int {
	n := 0
	for _, p := range a.ports {
		if p.candidate && p.group == g {
			n++
		}
	}
	return n
}

// attached reports whether a port is attached to aggregator g (mux
// ATTACHED or beyond): from then on g is kept while it has ports.
func (a *Actor) attached(g group) bool {
	for _, p := range a.ports {
		if p.candidate && p.group == g && p.mux >= MuxAttached && p.muxGroup == g {
			return true
		}
	}
	return false
}

// better reports whether aggregator g with n ports beats best with m:
// more ports, then lower partner system priority, then lower system MAC,
// then lower key.
func better(g group, n int, best group, m int) bool {
	if n != m {
		return n > m
	}
	if g.prio != best.prio {
		return g.prio < best.prio
	}
	if c := bytes.Compare(g.system[:], best.system[:]); c != 0 {
		return c < 0
	}
	return g.key < best.key
}

// selectAggregator is the selection logic: one active aggregator per
// Actor, kept while it has ports, else the best one; ports facing it are
// selected, the others are not and say why.
func (a *Actor) selectAggregator() {
	for _, p := range a.ports {
		p.candidate, p.reason = a.eligibility(p)
		if p.candidate {
			p.group = group{prio: p.partner.SystemPriority, system: p.partner.System, key: p.partner.Key}
		}
	}
	if a.hasAgg && a.count(a.agg) == 0 {
		a.log.Info("lacp: aggregator has no ports left", "aggregator", a.aggregatorString(a.agg))
		a.hasAgg = false
	}
	if !a.hasAgg || !a.attached(a.agg) {
		// Nothing attached yet (start-up, or the aggregator's ports are
		// still waiting): choose the best; the current one keeps ties.
		var best group
		m := 0
		if a.hasAgg {
			best, m = a.agg, a.count(a.agg)
		}
		for _, p := range a.ports {
			if !p.candidate || p.group == best && m > 0 {
				continue
			}
			if n := a.count(p.group); m == 0 || better(p.group, n, best, m) {
				best, m = p.group, n
			}
		}
		if m > 0 && (!a.hasAgg || best != a.agg) {
			a.agg, a.hasAgg = best, true
			a.log.Info("lacp: aggregator selected", "aggregator", a.aggregatorString(best), "ports", m)
		}
	}
	for _, p := range a.ports {
		sel := p.candidate && a.hasAgg && p.group == a.agg
		if p.candidate && !sel {
			p.reason = reasonOtherSystem
		}
		if sel != p.selected {
			a.log.Info("lacp: port selection", "port", p.name, "selected", sel, "cause", p.reasonOr("partner matches the aggregator"))
		}
		p.selected = sel
	}
}

// reasonOr returns p.reason, or s when there is none.
func (p *port) reasonOr(s string) string {
	if p.reason == "" {
		return s
	}
	return p.reason
}

// aggregatorString formats g for logs.
func (a *Actor) aggregatorString(g group) string {
	return Aggregator{PartnerSystemPriority: g.prio, PartnerSystem: g.system, PartnerKey: g.key}.String()
}

// runMux runs p's mux machine (independent control: collecting once the
// partner is in sync, distributing once it also collects) until it rests,
// then publishes the data-path flags.
func (a *Actor) runMux(p *port, now time.Time) {
	for {
		prev := p.mux
		sel := p.selected && (p.mux == MuxDetached || p.muxGroup == p.group)
		sync := p.partner.State&StateSynchronization != 0
		collecting := p.partner.State&StateCollecting != 0
		switch p.mux {
		case MuxDetached:
			if sel {
				p.mux, p.muxGroup, p.waitWhile = MuxWaiting, p.group, now.Add(AggregateWaitTime)
			}
		case MuxWaiting:
			switch {
			case !sel:
				p.mux = MuxDetached
			case !now.Before(p.waitWhile):
				p.mux = MuxAttached
			}
		case MuxAttached:
			switch {
			case !sel:
				p.mux = MuxDetached
			case sync:
				p.mux = MuxCollecting
			}
		case MuxCollecting:
			switch {
			case !sel:
				p.mux = MuxDetached
			case !sync:
				p.mux = MuxAttached
			case collecting:
				p.mux = MuxDistributing
			}
		case MuxDistributing:
			switch {
			case !sel:
				p.mux = MuxDetached
			case !sync:
				p.mux = MuxAttached
			case !collecting:
				p.mux = MuxCollecting
			}
		}
		if p.mux == prev {
			break
		}
		a.log.Info("lacp: mux machine", "port", p.name, "from", prev.String(), "to", p.mux.String(), "cause", a.muxCause(p, sel, sync, collecting))
	}
	var f uint32
	if p.mux >= MuxCollecting {
		f |= flagCollecting
	}
	if p.mux == MuxDistributing {
		f |= flagDistributing
	}
	p.flags.Store(f)
}

// muxCause explains a mux transition for the log.
func (a *Actor) muxCause(p *port, sel, sync, collecting bool) string {
	switch {
	case !sel:
		return "not selected: " + p.reasonOr("partner changed")
	case p.mux == MuxWaiting:
		return "selected"
	case p.mux == MuxAttached && !sync:
		return "partner not in sync"
	case p.mux == MuxAttached:
		return "wait over"
	case p.mux == MuxCollecting && !collecting:
		return "partner in sync, not collecting"
	case p.mux == MuxCollecting:
		return "partner in sync"
	}
	return "partner in sync and collecting"
}

// runPeriodic is the periodic transmission machine: none when the link is
// down or both ends are passive; every FastPeriodicTime when the partner
// asks for short timeouts, else every SlowPeriodicTime.
func (a *Actor) runPeriodic(p *port, now time.Time) {
	if !p.linkUp || (a.cfg.Mode == Passive && p.partner.State&StateActivity == 0) {
		p.periodicAt = time.Time{}
		return
	}
	every := SlowPeriodicTime
	if p.partner.State&StateTimeout != 0 {
		every = FastPeriodicTime
	}
	switch {
	case p.periodicAt.IsZero():
		p.periodicAt = now.Add(every)
	case p.periodicAt.Sub(now) > every:
		p.periodicAt = now.Add(every) // the partner went from slow to fast
	}
	if !now.Before(p.periodicAt) {
		p.ntt = true
		p.periodicAt = p.periodicAt.Add(every)
		if !p.periodicAt.After(now) {
			p.periodicAt = now.Add(every)
		}
	}
}

// transmit sends a LACPDU on p if one is needed (our information changed,
// the partner has ours wrong, or the periodic timer fired) and allowed:
// link up, one end active, at most txLimit per FastPeriodicTime. A
// LACPDU held back stays pending for the next update.
func (a *Actor) transmit(p *port, now time.Time) {
	me := a.actorInfo(p)
	if me != p.advertised {
		p.ntt = true
	}
	if !p.ntt || !p.linkUp || (a.cfg.Mode == Passive && p.partner.State&StateActivity == 0) {
		return
	}
	if oldest := p.txTimes[p.txNext]; !oldest.IsZero() && now.Sub(oldest) < FastPeriodicTime {
		return
	}
	f := LACPFields{Actor: me, Partner: p.partner}
	n := EncodeLACP(a.buf[:], p.mac, &f)
	a.send(p.id, a.buf[:n])
	p.txTimes[p.txNext] = now
	p.txNext = (p.txNext + 1) % txLimit
	p.advertised, p.ntt = me, false
	p.counters.TxLACPDU++
}
