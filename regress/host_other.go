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

// bed is the Linux testbed; on other systems it is never built, and
// its promisc suite's methods (promiscBed's) are never called.
type bed struct{ promiscBed }

func newBed(context.Context, SetupSpec, int, string, *Commands) (*bed, error) {
	return nil, fmt.Errorf("regress: testbed not implemented on %s", runtime.GOOS)
}

func (b *bed) stop() error { return nil }

func (b *bed) close() {}
