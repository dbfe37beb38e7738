package service

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// probeLoop checks every backend each check interval until ctx is done.
func (s *Service) probeLoop(ctx context.Context) {
	t := time.NewTicker(s.check.Interval)
	defer t.Stop()
	for {
		s.probeRound(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeRound checks every backend once, all at once, each bounded by the
// check's timeout, records the results and gives the Balancer the new
// states when one changed.
func (s *Service) probeRound(ctx context.Context) {
	bs := *s.backends.Load()
	changed := make([]bool, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		if b.health == nil {
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, s.check.Timeout)
			defer cancel()
			err := s.probe(cctx, b)
			if ctx.Err() != nil {
				return // stopping: not the backend's fault
			}
			changed[i] = b.health.Record(err)
		})
	}
	wg.Wait()
	for _, c := range changed {
		if c {
			s.republish()
			return
		}
	}
}

// prober returns the check of one backend that c describes. Each uses
// the backend's real address, never a VIP.
func (s *Service) prober(c Check) func(ctx context.Context, b *backend) error {
	switch c.Kind {
	case CheckTCP:
		return func(ctx context.Context, b *backend) error {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(b.addr, c.Port).String())
			if err != nil {
				return err
			}
			return conn.Close()
		}
	case CheckHTTP:
		client := &http.Client{
			Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		return func(ctx context.Context, b *backend) error {
			url := "http://" + net.JoinHostPort(b.addr.String(), strconv.Itoa(int(c.Port))) + c.Path
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode > 399 {
				return fmt.Errorf("GET %s: status %s: want 2xx or 3xx", url, resp.Status)
			}
			return nil
		}
	case CheckARP:
		return func(ctx context.Context, b *backend) error {
			select {
			case <-b.answered: // an answer from before this check does not count
			default:
			}
			if !s.ask(b) {
				return fmt.Errorf("cannot send a request for %s", b.addr)
			}
			select {
			case <-b.answered:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("%s: no answer within %v", b.addr, s.check.Timeout)
			}
		}
	}
	return func(context.Context, *backend) error { return nil }
}
