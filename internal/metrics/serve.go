package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/swctl/swctl/internal/supervise"
)

// readHeaderTimeout bounds how long a scraper may take to send its
// request, so an idle client cannot hold a connection forever.
const readHeaderTimeout = 5 * time.Second

// Listen opens the metrics endpoint's socket: addr is a loopback
// host:port ("127.0.0.1:9477", "[::1]:9477", "localhost:9477") or the
// path of a unix socket (absolute, created with mode 0600, a stale one
// replaced). Anything else is refused: the counters describe the
// network, and an operator who wants them elsewhere puts a proxy in
// front.
func Listen(addr string) (net.Listener, error) {
	if strings.HasPrefix(addr, "/") {
		if err := os.MkdirAll(filepath.Dir(addr), 0o755); err != nil {
			return nil, fmt.Errorf("metrics %s: %w", addr, err)
		}
		if fi, err := os.Lstat(addr); err == nil && fi.Mode()&os.ModeSocket != 0 {
			os.Remove(addr)
		}
		ln, err := net.Listen("unix", addr)
		if err != nil {
			return nil, fmt.Errorf("metrics %s: %w", addr, err)
		}
		if err := os.Chmod(addr, 0o600); err != nil {
			ln.Close()
			return nil, fmt.Errorf("metrics %s: %w", addr, err)
		}
		return ln, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics %q: want a loopback host:port or a unix socket path: %v", addr, err)
	}
	if host != "localhost" {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("metrics %s: %s is not a loopback address (want 127.0.0.1, ::1, localhost or a unix socket path)", addr, host)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", addr, err)
	}
	return ln, nil
}

// Registry returns a registry holding c alone.
func Registry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	return reg
}

// Serve answers scrapes of c on ln at /metrics until ctx is done.
func Serve(ctx context.Context, ln net.Listener, c *Collector) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry(c), promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	supervise.Go("metrics shutdown", func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	})
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics %s: %w", ln.Addr(), err)
	}
	return nil
}

// Sample is one value of one metric, as `swctl stats` shows it.
type Sample struct {
	// Name is the metric's name; Labels its labels.
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Value is its value.
	Value float64 `json:"value"`
}

// Samples returns every value c has now, sorted by name and labels: what
// a scrape would show, without the text format.
func Samples(c *Collector) ([]Sample, error) {
	mfs, err := Registry(c).Gather()
	if err != nil {
		return nil, err
	}
	var out []Sample
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := Sample{Name: mf.GetName()}
			if len(m.GetLabel()) > 0 {
				s.Labels = map[string]string{}
				for _, l := range m.GetLabel() {
					s.Labels[l.GetName()] = l.GetValue()
				}
			}
			switch {
			case m.GetCounter() != nil:
				s.Value = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				s.Value = m.GetGauge().GetValue()
			}
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
