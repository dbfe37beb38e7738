package service

import (
	"context"
	"net/netip"
	"time"
)

// resolveTick is how often the resolver looks at its backends: the
// interval at which an unresolved backend is asked.
const resolveTick = time.Second

// resolveLoop runs resolveRound every resolveTick, and expires idle
// flows from the connection table, until ctx is done.
func (s *Service) resolveLoop(ctx context.Context) {
	t := time.NewTicker(resolveTick)
	defer t.Stop()
	for {
		s.resolveRound()
		if ct := s.bal.ConnTable(); ct != nil {
			ct.Expire(s.clk.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// resolveRound asks the MAC of every backend that has none, and of those
// not heard from for the resolve interval and not asked since.
func (s *Service) resolveRound() {
	now := s.clk.Now().UnixNano()
	for _, b := range *s.backends.Load() {
		_, known := b.MAC()
		if known && (now-b.seen.Load() < int64(s.resolveEvery) || now-b.asked < int64(s.resolveEvery)) {
			continue
		}
		b.asked = now
		s.ask(b)
	}
}

// ask sends one ARP request or neighbour solicitation for b's MAC, from
// the source address or, asking anonymously, from the unspecified one.
func (s *Service) ask(b *backend) bool {
	src4, src6 := s.source, s.source6
	if s.anonymous {
		src4, src6 = netip.IPv4Unspecified(), netip.IPv6Unspecified()
	}
	if b.addr.Is4() {
		return s.send(arpRequestFrame(s.mac, src4, b.addr))
	}
	return s.send(nsFrame(s.mac, src6, b.addr))
}
