//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// The netns testbeds need Linux network namespaces and veth; elsewhere
// the suites that build them fail at their first instance, and only real
// test hosts (HOSTS=regress.conf) can be measured.

// notHere is the error of a testbed that needs Linux.
func notHere(testbed string) error {
	return fmt.Errorf("regress: %s testbed not implemented on %s", testbed, runtime.GOOS)
}

func measureBulk(context.Context, *bed, BulkConfig) ([]BulkSample, error) {
	return nil, notHere("bulk")
}

func (RFC2889Config) run(context.Context, suiteEnv, *Results) error {
	return notHere("address-caching")
}

func runLB(context.Context, suiteEnv, *LBResults) error {
	return notHere("load-balancing")
}

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

// run refuses: the forwarding-rate testbed needs Linux network
// namespaces and veth.
func (s rateSuite) run(context.Context, suiteEnv, *Results) error { return notHere("forwarding-rate") }

// RunBench is make bench; it needs Linux network namespaces and veth.
func RunBench(BenchConfig) error {
	return fmt.Errorf("the netns testbed is not implemented on %s (Linux network namespaces and veth)", runtime.GOOS)
}
