package service

import (
	"net/netip"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/lb"
)

// handle takes one received frame through the steps of the package
// documentation and reports whether it was rewritten for forwarding
// (in place: f's MACs) and must go back out. now is the batch's time.
// It allocates nothing unless it answers ARP or ND.
func (s *Service) handle(f []byte, now time.Time) bool {
	if len(f) < ethLen {
		return false
	}
	e := frame.Ethernet(f)
	switch e.Type() {
	case frame.TypeARP:
		s.arp(e)
		return false
	case frame.TypeIPv6:
		if isND(f[ethLen:]) {
			s.nd(e)
			return false
		}
	}
	if e.Destination() != s.mac {
		return false
	}
	k, ok := lb.FlowKeyOf(f)
	if !ok {
		if t := e.InnerType(); t == frame.TypeIPv4 || t == frame.TypeIPv6 {
			s.c.badIP.Add(1)
		}
		return false
	}
	if !s.isVIP(&k) {
		return false
	}
	id := s.bal.Pick(k, now)
	if id < 0 {
		s.c.noBackend.Add(1)
		return false
	}
	byID := *s.byID.Load()
	if id >= len(byID) || byID[id] == nil {
		s.c.noBackend.Add(1)
		return false
	}
	b := byID[id]
	mac, known := b.MAC()
	if !known {
		s.c.unresolved.Add(1)
		return false
	}
	copy(f[0:6], mac[:])
	copy(f[6:12], s.mac[:])
	b.frames.Add(1)
	b.bytes.Add(uint64(len(f)))
	s.c.frames.Add(1)
	s.c.bytes.Add(uint64(len(f)))
	return true
}

// isVIP reports whether k's destination is a VIP.
func (s *Service) isVIP(k *lb.FlowKey) bool {
	if k.Family == 4 {
		d := [4]byte(k.Dst[:4])
		for _, v := range s.vip4 {
			if v == d {
				return true
			}
		}
		return false
	}
	for _, v := range s.vip6 {
		if v == k.Dst {
			return true
		}
	}
	return false
}

// arp answers a request for an IPv4 VIP and learns a backend's MAC from
// any ARP packet it sends.
func (s *Service) arp(e frame.Ethernet) {
	a, ok := decodeARP(e[ethLen:])
	if !ok {
		s.c.badARP.Add(1)
		return
	}
	sha := a.senderMAC()
	if sha.IsMulticast() || sha.IsZero() {
		s.c.badARP.Add(1)
		return
	}
	s.learn(netip.AddrFrom4(a.senderIP()), sha)
	if a.op() != arpRequest {
		return
	}
	tpa := a.targetIP()
	for _, v := range s.vip4 {
		if v == tpa && tpa != a.senderIP() { // an announcement (sender is the target) needs no answer
			if s.send(arpReplyFrame(a, s.mac, v)) {
				s.c.arpReplies.Add(1)
			}
			return
		}
	}
}

// nd answers a solicitation for an IPv6 VIP and learns a backend's MAC
// from its advertisements and solicitations.
func (s *Service) nd(e frame.Ethernet) {
	m, ok := decodeND(e[ethLen:])
	if !ok {
		s.c.badND.Add(1)
		return
	}
	switch m.typ {
	case icmpv6NA:
		mac := e.Source()
		if m.llOK {
			mac = m.ll
		}
		s.learn(netip.AddrFrom16(m.target), mac)
	case icmpv6NS:
		if m.llOK {
			s.learn(netip.AddrFrom16(m.src), m.ll)
		}
		for _, v := range s.vip6 {
			if v == m.target {
				if s.send(naFrame(&m, e.Source(), s.mac, netip.AddrFrom16(v))) {
					s.c.naReplies.Add(1)
				}
				return
			}
		}
	}
}

// learn records that addr is at mac when addr is a backend's: the first
// MAC makes the backend eligible, a different one replaces the old.
func (s *Service) learn(addr netip.Addr, mac frame.MAC) {
	if mac.IsMulticast() || mac.IsZero() {
		return
	}
	for _, b := range *s.backends.Load() {
		if b.addr != addr {
			continue
		}
		b.seen.Store(s.clk.Now().UnixNano())
		select {
		case b.answered <- struct{}{}:
		default:
		}
		was, known := b.MAC()
		if known && was == mac {
			return
		}
		b.mac.Store(mac.Key() | macKnown)
		if known {
			s.log.Info("lb: backend MAC changed", "lb", s.name, "backend", addr.String(), "from", was.String(), "to", mac.String())
			return
		}
		s.log.Info("lb: backend resolved", "lb", s.name, "backend", addr.String(), "mac", mac.String())
		s.republish()
		return
	}
}
