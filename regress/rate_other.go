//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// run refuses: the forwarding-rate testbed needs Linux network
// namespaces and veth.
func (s rateSuite) run(context.Context, suiteEnv, *Results) error { return notHere("forwarding-rate") }

// RunBench is make bench; it needs Linux network namespaces and veth.
func RunBench(BenchConfig) error {
	return fmt.Errorf("the netns testbed is not implemented on %s (Linux network namespaces and veth)", runtime.GOOS)
}
