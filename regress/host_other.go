//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// checkHost refuses: the self-built testbed needs Linux network
// namespaces (real test hosts, regress.conf, work from any system).
func checkHost() error {
	return fmt.Errorf("regress: the self-built testbed is not implemented on %s (it needs Linux network namespaces); name real test hosts with HOSTS=regress.conf", runtime.GOOS)
}

func environment() Environment {
	return Environment{OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
}

func loadavg() string { return "" }

// bed is the Linux testbed; on other systems it is never built.
type bed struct{}

func newBed(context.Context, SetupSpec, int, string, *Commands) (*bed, error) {
	return nil, fmt.Errorf("regress: testbed not implemented on %s", runtime.GOOS)
}

func (b *bed) start(context.Context, Instance, string) error { return nil }

func (b *bed) promiscuity(context.Context) map[string]int { return nil }

func (b *bed) measure(context.Context, string, int, ...string) (Sample, error) { return Sample{}, nil }

func (b *bed) stop() error { return nil }

func (b *bed) close() {}
